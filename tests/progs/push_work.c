/* push_work.c — a program for the push tests (tests/e2e/push.sh): rounds of
 * CPU work (spin) and allocations (churn, some kept live), until the file
 * argv[1] exists or, with "-", for argv[2] rounds; then it prints how many
 * rounds it did and exits. At most 120 s, so a broken test ends. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define KEPT 256

static void *kept[KEPT];
static volatile unsigned long sink;

static __attribute__((noinline)) void spin(void)
{
    unsigned long x = sink;
    for (int i = 0; i < 2000000; i++)
        x = x * 6364136223846793005ul + 1442695040888963407ul;
    sink = x;
}

static __attribute__((noinline)) void churn(int round)
{
    for (int i = 0; i < 64; i++) {
        char *p = malloc(1000 + (size_t)i * 16);
        if (!p)
            exit(3);
        memset(p, round, 64);
        sink += (unsigned char)p[i];
        int k = (round * 64 + i) % KEPT;
        free(kept[k]);
        kept[k] = p;
    }
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    long rounds = argc > 2 ? atol(argv[2]) : 0;
    time_t start = time(NULL);
    long done = 0;
    for (;;) {
        if (strcmp(argv[1], "-") == 0 ? done >= rounds : access(argv[1], F_OK) == 0)
            break;
        if (time(NULL) - start > 120) {
            fprintf(stderr, "push_work: gave up after 120 s\n");
            return 4;
        }
        spin();
        churn((int)done);
        done++;
    }
    printf("rounds %ld\n", done);
    return 0;
}
