/* dump_steps — a heap (or resident set) that grows in steps, for
 * CPROF_DUMP_INUSE and CPROF_DUMP_RSS (tests/e2e/dump_thresholds.sh).
 * Usage: dump_steps inuse|rss DIR STEPS BYTES. Each step allocates BYTES
 * from grow_step (blocks of 65528 bytes, whose usable size glibc makes the
 * same, so the exact live bytes and the profile's agree); in rss mode
 * grow_step also touches every page. After step k the program waits (at
 * most 30 s) until DIR holds k dumps (heap.N.pb.gz), so that each dump
 * sees the heap of its own step; at the end it waits 1.5 s more (past
 * the dump rate limit) so that a dump too many would be written. Prints
 * the resident set at start and after each step ("rss K BYTES"), then
 * "steps STEPS". */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BLOCK 65528

static void *volatile *kept; /* every block, so none is freed or removed */
static size_t n_kept;

static unsigned long long rss(void)
{
    unsigned long long size = 0, res = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f) {
        if (fscanf(f, "%llu %llu", &size, &res) != 2)
            res = 0;
        fclose(f);
    }
    return res * (unsigned long long)sysconf(_SC_PAGESIZE);
}

static int dumps(const char *dir)
{
    int n = 0;
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        unsigned seq;
        char tail[16];
        if (sscanf(e->d_name, "heap.%u.%15s", &seq, tail) == 2 && strcmp(tail, "pb.gz") == 0)
            n++;
    }
    closedir(d);
    return n;
}

__attribute__((noinline)) static void grow_step(size_t bytes, int touch)
{
    for (size_t done = 0; done < bytes; done += BLOCK) {
        void *p = malloc(BLOCK);
        if (!p)
            exit(3);
        if (touch)
            memset(p, 1, BLOCK);
        kept[n_kept++] = p;
    }
}

int main(int argc, char **argv)
{
    if (argc != 5)
        return 2;
    int touch = strcmp(argv[1], "rss") == 0;
    const char *dir = argv[2];
    int steps = atoi(argv[3]);
    size_t bytes = strtoull(argv[4], NULL, 10);
    kept = calloc((size_t)steps * (bytes / BLOCK + 1), sizeof(void *));
    if (!kept)
        return 2;
    printf("rss 0 %llu\n", rss());
    struct timespec ts = {0, 10 * 1000 * 1000};
    for (int k = 1; k <= steps; k++) {
        grow_step(bytes, touch);
        printf("rss %d %llu\n", k, rss());
        for (int i = 0; i < 3000 && dumps(dir) < k; i++)
            nanosleep(&ts, NULL);
    }
    struct timespec rest = {1, 500 * 1000 * 1000};
    nanosleep(&rest, NULL);
    printf("steps %d\n", steps);
    return 0;
}
