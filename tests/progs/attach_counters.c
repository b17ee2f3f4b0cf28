/* attach_counters.c — traffic on both sides of a cprof detach, for the
 * whole-process counters (tests/e2e/attach_counters.sh):
 *   attach_counters DIR
 * allocates PRE blocks, writes DIR/ready and waits for DIR/go (attached at
 * rate 1 meanwhile); allocates KEEP blocks and churns, writes DIR/a and
 * waits for DIR/b (detached meanwhile); frees half of the kept blocks,
 * churns, allocates blocks it keeps, writes DIR/bdone and waits for DIR/c
 * (attached again); frees the PRE blocks, allocates BIG blocks, writes
 * DIR/cdone; waits for DIR/finish, frees everything and prints a
 * checksum. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "phases.h"

#define KEEP 1000      /* 1000-byte blocks allocated while attached */
#define CHURN 100000   /* malloc/free pairs on each side */
#define LATER 300      /* blocks allocated while detached, kept */
#define PRE 2000       /* 10000-byte blocks from before the attach */
#define BIG 3          /* 4 MiB blocks: sampled at the default rate */

static char *kept[KEEP], *later[LATER], *pre[PRE], *big[BIG];
static unsigned long sum;

static char *block(size_t n, int v)
{
    char *p = malloc(n);
    if (!p)
        exit(4);
    memset(p, v, n);
    return p;
}

static void churn(void)
{
    for (int i = 0; i < CHURN; i++) {
        char *p = block(100, i);
        sum += (unsigned char)p[99];
        free(p);
    }
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: attach_counters DIR\n");
        return 2;
    }
    phase_dir = argv[1];
    for (int i = 0; i < PRE; i++)
        pre[i] = block(10000, i);
    touch("ready");
    wait_for("go");
    for (int i = 0; i < KEEP; i++)
        kept[i] = block(1000, i);
    churn();
    touch("a");
    wait_for("b");
    for (int i = 0; i < KEEP / 2; i++) {
        sum += (unsigned char)kept[i][0];
        free(kept[i]);
        kept[i] = NULL;
    }
    churn();
    for (int i = 0; i < LATER; i++)
        later[i] = block(2000, i);
    touch("bdone");
    wait_for("c");
    for (int i = 0; i < PRE; i++) {
        sum += (unsigned char)pre[i][9999];
        free(pre[i]);
    }
    for (int i = 0; i < BIG; i++)
        big[i] = block(4 << 20, i);
    touch("cdone");
    wait_for("finish");
    for (int i = 0; i < BIG; i++) {
        sum += (unsigned char)big[i][12345];
        free(big[i]);
    }
    for (int i = 0; i < KEEP; i++)
        if (kept[i]) {
            sum += (unsigned char)kept[i][999];
            free(kept[i]);
        }
    for (int i = 0; i < LATER; i++) {
        sum += (unsigned char)later[i][1999];
        free(later[i]);
    }
    printf("checksum %lu\n", sum);
    return 0;
}
