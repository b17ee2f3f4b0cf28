/* dump_oom — allocates until malloc fails, for CPROF_DUMP_OOM
 * (tests/e2e/dump_oom.sh); run under ulimit -v. eat_memory takes blocks
 * of 1 MiB and writes to each, eat_small blocks of 100 KiB, in turns, until
 * one returns NULL; then the program prints "NULL after N MiB in M small
 * blocks" (the ground truth of what it held), asks for 1 MiB once more
 * (NULL again: a second failure), frees them all, checks that it can
 * allocate again, and exits 0. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX 100000
static void *volatile held[MAX]; /* volatile: the blocks are kept */

__attribute__((noinline)) static void *eat_memory(void)
{
    void *p = malloc(1 << 20);
    if (p)
        memset(p, 1, 4096);
    return p;
}

__attribute__((noinline)) static void *eat_small(void)
{
    return malloc(100 << 10);
}

int main(void)
{
    int n = 0, big = 0, small = 0;
    while (n < MAX) {
        void *p = n % 2 ? eat_small() : eat_memory();
        if (!p)
            break;
        held[n++] = p;
        if (n % 2)
            big++;
        else
            small++;
    }
    printf("NULL after %d MiB in %d small blocks\n", big, small);
    void *more = eat_memory();
    printf("%s\n", more ? "then got 1 MiB" : "NULL again");
    free(more);
    for (int i = 0; i < n; i++)
        free(held[i]);
    void *again = malloc(1 << 20);
    printf("%s\n", again ? "allocates again" : "still NULL");
    free(again);
    return n < MAX && again ? 0 : 1;
}
