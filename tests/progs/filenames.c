/* filenames.c — a program whose heap profile names it: keeps 64 blocks
 * of 4096 bytes from keep_blocks, prints what it kept, exits 0. The test
 * (tool_filenames.sh) renames its mapping in the profile. */
#include <stdio.h>
#include <stdlib.h>

#define N 64
#define SIZE 4096

static void *kept[N]; /* read back below: the blocks stay reachable */

__attribute__((noinline)) static void keep_blocks(void)
{
    for (int i = 0; i < N; i++)
        kept[i] = malloc(SIZE);
}

int main(void)
{
    keep_blocks();
    size_t total = 0;
    for (int i = 0; i < N; i++)
        total += kept[i] ? SIZE : 0;
    printf("kept %zu bytes\n", total);
    return total == (size_t)N * SIZE ? 0 : 1;
}
