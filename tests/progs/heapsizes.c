/* heapsizes.c — stacks that allocate several sizes, for checking that the
 * default-rate estimate scales each size by its own sampling probability.
 *
 * site_onestack: one malloc call allocates 1,000,000 objects of 16 bytes,
 * each freed at once (temporaries), and 8 of 64 MiB, every other one kept
 * (the first freed at once: the heap's peak stays at the end).
 * site_mixed: one malloc call allocates objects of 32, 1024 and 65536 bytes,
 * interleaved, and drops them all (leaks).
 * Then, with nothing allocated in between, it writes through cprof's API
 * (found with dlsym: the program runs preloaded) the heap profile as
 * profile.proto and as debug=1 text, the peak and the leak profiles into
 * DIR/heap.pb.gz, heap.txt, peak.pb.gz, leak.pb.gz.
 * Prints "SIZE <function> <objects> <size> <live> <temporaries> <leaked>"
 * per function and size (live: at the writes, leaked among them), and "ok"
 * last. Usage: heapsizes DIR */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

static inline void *E(void *p)
{
    __asm__ volatile("" : : "g"(p) : "memory");
    return p;
}

#define N_SMALL 1000000
#define SMALL 16
#define N_LARGE 8
#define LARGE (64 << 20)

static void *large[N_LARGE / 2];

NOINLINE void site_onestack(void)
{
    long small = 0, k = 0;
    for (long i = 0; i < N_SMALL + N_LARGE; i++) {
        int big = i % (N_SMALL / N_LARGE) == 1000 && k < N_LARGE;
        void *p = E(malloc(big ? LARGE : SMALL)); /* the one call */
        if (!big)
            free(p), small++;
        else if (k++ % 2)
            large[k / 2 - 1] = p;
        else
            free(p);
    }
    printf("SIZE %s %ld %d 0 %ld 0\n", __func__, small, SMALL, small);
    printf("SIZE %s %ld %d %ld %ld 0\n", __func__, k, LARGE, k / 2, k / 2);
}

NOINLINE void site_mixed(void)
{
    static const size_t sizes[3] = {32, 1024, 65536};
    long n[3] = {0, 0, 0};
    for (long i = 0; i < 210300; i++) {
        int c = i % 701 == 0 ? 2 : i % 21 == 1 ? 1 : 0;
        E(malloc(sizes[c])); /* the one call; the block is dropped */
        n[c]++;
    }
    for (int c = 0; c < 3; c++)
        printf("SIZE %s %ld %zu %ld 0 %ld\n", __func__, n[c], sizes[c], n[c], n[c]);
}

static int write_to(const char *dir, const char *name, const char *api, int debug)
{
    int (*fn)(int, int) = (int (*)(int, int))dlsym(RTLD_DEFAULT, api);
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int rc = fn && fd >= 0 ? fn(fd, debug) : -1;
    if (fd >= 0 && close(fd) != 0)
        rc = -1;
    if (rc != 0)
        fprintf(stderr, "heapsizes: %s: %s failed (%d)\n", path, api, rc);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: heapsizes DIR\n");
        return 2;
    }
    setvbuf(stdout, NULL, _IONBF, 0); /* no buffer allocated between the writes */
    site_onestack();
    site_mixed();
    const char *d = argv[1];
    if (write_to(d, "heap.pb.gz", "cprof_heap_profile_write_fd", 0) ||
        write_to(d, "heap.txt", "cprof_heap_profile_write_fd", 1) ||
        write_to(d, "peak.pb.gz", "cprof_peak_profile_write_fd", 0) ||
        write_to(d, "leak.pb.gz", "cprof_leak_profile_write_fd", 0))
        return 1;
    for (int k = 0; k < N_LARGE / 2; k++)
        free(large[k]);
    printf("ok\n");
    return 0;
}
