/* cpu_stress.c — a program that gives a CPU profiler's signal handler
 * every chance to break it, and checks its own results:
 *   - malloc threads: allocate (malloc, calloc, realloc), fill, verify and
 *     free blocks of random sizes as fast as they can, so that under
 *     CPROF_RATE=1 the signal keeps landing inside the heap profiler's
 *     unwinder and inside the allocator;
 *   - a pipe: one thread writes a pseudo-random byte stream, another reads
 *     and checksums it (blocking read/write, restarted by SA_RESTART);
 *   - a file thread: write, fsync, read back and compare, nanosleep and
 *     poll with short timeouts (interfaces the kernel never restarts);
 *   - a thread storm: short-lived threads that each burn a little CPU, so
 *     that timers are made and deleted while threads come and go;
 *   - a fork: a child that allocates and exits while all this runs.
 * Every system call that fails with EINTR is counted and retried.
 *
 *   cpu_stress SECONDS [STOPFILE]
 *
 * runs SECONDS, the fork half-way; with STOPFILE, after the fork it runs on
 * until that file exists (a test's requests then decide how long it runs,
 * not the speed of a loaded machine).
 *
 * Prints "pipe <bytes> <sum>" from both ends (they must match), the
 * number of blocks verified, "eintr <call> <count>" lines and "ok"; exits
 * non-zero on any mismatch. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NMALLOC 3
#define SLOTS 256

static volatile int stop;
static int bad;
static uint64_t verified;
enum { E_READ, E_WRITE, E_NANOSLEEP, E_POLL, E_FSYNC, E_WAIT, E_N };
static const char *const ename[E_N] = {"read", "write", "nanosleep", "poll", "fsync", "waitpid"};
static uint64_t eintr[E_N];
static const char *dir;

static void count_eintr(int which)
{
    __atomic_add_fetch(&eintr[which], 1, __ATOMIC_RELAXED);
}

static uint64_t xorshift(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* --- malloc ----------------------------------------------------------------- */

typedef struct {
    unsigned char *p;
    size_t n;
    unsigned char tag;
} block_t;

__attribute__((noinline)) static void check_block(const block_t *b)
{
    for (size_t i = 0; i < b->n; i++) {
        if (b->p[i] != (unsigned char)(b->tag + i)) {
            __atomic_store_n(&bad, 1, __ATOMIC_RELAXED);
            return;
        }
    }
    __atomic_add_fetch(&verified, 1, __ATOMIC_RELAXED);
}

__attribute__((noinline)) static void fill_block(block_t *b)
{
    for (size_t i = 0; i < b->n; i++)
        b->p[i] = (unsigned char)(b->tag + i);
}

static void *malloc_worker(void *arg)
{
    uint64_t rng = (uintptr_t)arg * 0x9e3779b97f4a7c15ull + 1;
    block_t slot[SLOTS] = {{0}};
    while (!stop) {
        block_t *b = &slot[xorshift(&rng) % SLOTS];
        if (b->p) {
            check_block(b);
            if (xorshift(&rng) % 4 == 0) { /* grow it, keeping the contents */
                size_t n = b->n * 2 + 1;
                unsigned char *q = realloc(b->p, n);
                if (!q)
                    continue;
                b->p = q;
                b->n = n;
                check_block(&(block_t){q, n / 2, b->tag});
                fill_block(b);
                continue;
            }
            free(b->p);
            b->p = NULL;
        }
        b->n = 1 + xorshift(&rng) % 2048;
        b->tag = (unsigned char)xorshift(&rng);
        b->p = xorshift(&rng) % 3 ? malloc(b->n) : calloc(1, b->n);
        if (b->p)
            fill_block(b);
    }
    for (int i = 0; i < SLOTS; i++) {
        if (slot[i].p)
            check_block(&slot[i]);
        free(slot[i].p);
    }
    return NULL;
}

/* --- pipe --------------------------------------------------------------------- */

static int pipefd[2];
static uint64_t sent_bytes, sent_sum, got_bytes, got_sum;

static void *pipe_writer(void *arg)
{
    (void)arg;
    uint64_t rng = 12345;
    unsigned char buf[3000];
    while (!stop) {
        size_t n = 1 + xorshift(&rng) % sizeof(buf);
        for (size_t i = 0; i < n; i++) {
            buf[i] = (unsigned char)xorshift(&rng);
            sent_sum = sent_sum * 31 + buf[i];
        }
        for (size_t off = 0; off < n;) {
            ssize_t w = write(pipefd[1], buf + off, n - off);
            if (w < 0 && errno == EINTR) {
                count_eintr(E_WRITE);
                continue;
            }
            if (w <= 0) {
                bad = 1;
                return NULL;
            }
            off += (size_t)w;
        }
        sent_bytes += n;
    }
    close(pipefd[1]);
    return NULL;
}

static void *pipe_reader(void *arg)
{
    (void)arg;
    unsigned char buf[4096];
    for (;;) {
        ssize_t r = read(pipefd[0], buf, sizeof(buf));
        if (r < 0 && errno == EINTR) {
            count_eintr(E_READ);
            continue;
        }
        if (r < 0)
            bad = 1;
        if (r <= 0)
            break;
        for (ssize_t i = 0; i < r; i++)
            got_sum = got_sum * 31 + buf[i];
        got_bytes += (uint64_t)r;
    }
    return NULL;
}

/* --- file, sleeps, polls --------------------------------------------------------- */

static void *file_worker(void *arg)
{
    (void)arg;
    char path[4096];
    snprintf(path, sizeof(path), "%s/stress.%d", dir, (int)getpid());
    unsigned char out[65536], in[65536];
    uint64_t rng = 777;
    while (!stop) {
        for (size_t i = 0; i < sizeof(out); i++)
            out[i] = (unsigned char)xorshift(&rng);
        int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
        if (fd < 0) {
            bad = 1;
            break;
        }
        for (size_t off = 0; off < sizeof(out);) {
            ssize_t w = write(fd, out + off, sizeof(out) - off);
            if (w < 0 && errno == EINTR) {
                count_eintr(E_WRITE);
                continue;
            }
            if (w <= 0) {
                bad = 1;
                break;
            }
            off += (size_t)w;
        }
        while (fsync(fd) < 0 && errno == EINTR)
            count_eintr(E_FSYNC);
        size_t got = 0;
        while (got < sizeof(in)) {
            ssize_t r = pread(fd, in + got, sizeof(in) - got, (off_t)got);
            if (r < 0 && errno == EINTR) {
                count_eintr(E_READ);
                continue;
            }
            if (r <= 0)
                break;
            got += (size_t)r;
        }
        close(fd);
        if (got != sizeof(in) || memcmp(in, out, sizeof(in)) != 0)
            bad = 1;
        struct timespec ts = {0, 1000000}, rem;
        while (nanosleep(&ts, &rem) < 0 && errno == EINTR) {
            count_eintr(E_NANOSLEEP);
            ts = rem;
        }
        struct pollfd p = {.fd = pipefd[0], .events = 0};
        if (poll(&p, 1, 1) < 0 && errno == EINTR)
            count_eintr(E_POLL);
    }
    unlink(path);
    return NULL;
}

/* --- thread storm ------------------------------------------------------------------ */

__attribute__((noinline)) static void *short_lived(void *arg)
{
    volatile uint64_t x = (uintptr_t)arg;
    for (int i = 0; i < 200000; i++)
        x = x * 6364136223846793005ull + 1;
    free(malloc(100));
    return NULL;
}

static void *storm(void *arg)
{
    (void)arg;
    while (!stop) {
        pthread_t t[4];
        int n = 0;
        for (int i = 0; i < 4; i++)
            if (pthread_create(&t[n], NULL, short_lived, (void *)(uintptr_t)i) == 0)
                n++;
        for (int i = 0; i < n; i++)
            pthread_join(t[i], NULL);
    }
    return NULL;
}

/* --- main ---------------------------------------------------------------------------- */

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 3 || atof(argv[1]) <= 0) {
        fprintf(stderr, "usage: %s SECONDS [STOPFILE]\n", argv[0]);
        return 2;
    }
    const char *stopfile = argc == 3 ? argv[2] : NULL;
    double seconds = atof(argv[1]);
    dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    if (pipe(pipefd) < 0)
        return 1;
    pthread_t mw[NMALLOC], pw, pr, fw, st;
    for (int i = 0; i < NMALLOC; i++)
        pthread_create(&mw[i], NULL, malloc_worker, (void *)(uintptr_t)(i + 1));
    pthread_create(&pw, NULL, pipe_writer, NULL);
    pthread_create(&pr, NULL, pipe_reader, NULL);
    pthread_create(&fw, NULL, file_worker, NULL);
    pthread_create(&st, NULL, storm, NULL);

    struct timespec half = {(time_t)(seconds / 2), (long)((seconds / 2 - (time_t)(seconds / 2)) * 1e9)};
    while (nanosleep(&half, &half) < 0 && errno == EINTR)
        count_eintr(E_NANOSLEEP);
    pid_t child = fork();
    if (child == 0) {
        for (int i = 0; i < 10000; i++)
            free(malloc(64 + i % 1000));
        exit(0);
    }
    int status = 0;
    while (child > 0 && waitpid(child, &status, 0) < 0 && errno == EINTR)
        count_eintr(E_WAIT);
    if (child < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "fork child failed (status %#x)\n", status);
        bad = 1;
    }
    half = (struct timespec){(time_t)(seconds / 2), (long)((seconds / 2 - (time_t)(seconds / 2)) * 1e9)};
    if (stopfile)
        half = (struct timespec){0, 50000000};
    do {
        while (nanosleep(&half, &half) < 0 && errno == EINTR)
            count_eintr(E_NANOSLEEP);
        half = (struct timespec){0, 50000000};
    } while (stopfile && access(stopfile, F_OK) != 0);

    stop = 1;
    for (int i = 0; i < NMALLOC; i++)
        pthread_join(mw[i], NULL);
    pthread_join(pw, NULL);
    pthread_join(pr, NULL);
    pthread_join(fw, NULL);
    pthread_join(st, NULL);
    printf("pipe sent %llu %llu\n", (unsigned long long)sent_bytes, (unsigned long long)sent_sum);
    printf("pipe got %llu %llu\n", (unsigned long long)got_bytes, (unsigned long long)got_sum);
    printf("verified %llu\n", (unsigned long long)verified);
    for (int i = 0; i < E_N; i++)
        printf("eintr %s %llu\n", ename[i], (unsigned long long)eintr[i]);
    if (bad || sent_bytes != got_bytes || sent_sum != got_sum || verified == 0) {
        printf("FAILED\n");
        return 1;
    }
    printf("ok\n");
    return 0;
}
