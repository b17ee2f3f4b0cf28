// leakroots.c — blocks whose only pointer lies where LeakSanitizer and
// valgrind's memcheck look but a narrower scan would not, each beside a few
// blocks truly dropped (the leaks). Usage: leakroots MODE, MODE one of
//   mmap     kept only through anonymous memory the program mapped itself
//   joined   threads created and joined: their stacks (with the DTV glibc
//            allocated for them) stay cached, kept only from there
//   early    kept only in a block allocated before cprof started
//            (leakroots_early.c's constructor)
//   threads  200 threads, the last 50 blocking every signal, each keeping
//            a block on its stack only; also 4 threads already joined
//   rtsig    one thread that handles every real-time signal
//   freed    nothing kept; each dropped block was pointed to by a block
//            freed since (stale pointers in free memory are no roots):
//            2 dropped by main, 3 by a thread joined since (in its own
//            arena, its cached stack holding what it left there)
// Prints "MODE: kept K, dropped D" and exits 0; the dropped blocks are
// DROP_N blocks of DROP_SIZE bytes, allocated in drop_blocks.
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define DROP_N 5
#define DROP_SIZE 3000
#define NTHREADS 200
#define NMASKED 50

extern void **early_holder; /* leakroots_early.c */

void **mapped;                  /* not static: the compiler keeps the stores */
static int never[2];            /* a pipe nobody writes: threads wait on it */
static sem_t ready;
static pid_t masked_tids[NMASKED];
static __thread char tls_mark[64];

static inline void *escape(void *p)
{
    __asm__ volatile("" : : "g"(p) : "memory");
    return p;
}

/* n of the dropped blocks; held: each first pointed to by a holder block
 * that is freed at the end (glibc's free lists overwrite its first two
 * words, not the pointer at its fifth). */
__attribute__((noinline)) static void drop_blocks(int n, int held)
{
    void **holders[DROP_N] = {NULL};
    for (int i = 0; i < n; i++) {
        char *b = escape(memset(malloc(DROP_SIZE), i, DROP_SIZE));
        if (held && (holders[i] = malloc(8 * sizeof(void *))))
            holders[i][4] = escape(b);
    }
    for (int i = 0; i < n; i++)
        free(escape(holders[i]));
}

static void *dropping_thread(void *arg)
{
    drop_blocks((int)(uintptr_t)arg, 1);
    return NULL;
}

/* The dead stack below main keeps what malloc's callers left there (cprof's
 * hook unwinds with the block's address in its frames); the exit path's
 * frames cover it later with slots they may never write, which a scan
 * reads as roots. memcheck runs without those frames: clear them. */
__attribute__((noinline)) static void scrub_stack(void)
{
    char dead[1 << 16];
    explicit_bzero(dead, sizeof(dead));
    escape(dead);
}

static void on_signal(int sig)
{
    (void)sig;
}

static void *joined_thread(void *arg)
{
    tls_mark[0] = (char)(uintptr_t)arg; /* the thread's TLS is used */
    return escape(tls_mark);
}

static void *waiting_thread(void *arg)
{
    char *volatile kept = malloc(256 + (size_t)(uintptr_t)arg);
    if ((uintptr_t)arg >= NTHREADS - NMASKED)
        masked_tids[(uintptr_t)arg - (NTHREADS - NMASKED)] = (pid_t)syscall(SYS_gettid);
    sem_post(&ready);
    char c;
    while (read(never[0], &c, 1) != 0) /* until the process exits */
        ;
    return kept;
}

/* A thread that blocks the stop signal is read from where it sleeps in the
 * kernel: wait until it sleeps there. */
static void wait_in_read(pid_t tid)
{
    char path[64], buf[64];
    snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", (int)tid);
    for (int i = 0; i < 60000; i++) { /* 60 s at most */
        FILE *f = fopen(path, "re");
        size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
        if (f)
            fclose(f);
        buf[n] = '\0';
        if (buf[0] >= '0' && buf[0] <= '9' && atol(buf) == SYS_read)
            return;
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
}

static int join_some(int n)
{
    for (int i = 0; i < n; i++) {
        pthread_t t;
        if (pthread_create(&t, NULL, joined_thread, (void *)(uintptr_t)i) != 0 ||
            pthread_join(t, NULL) != 0)
            return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    int kept = 0;
    /* Not a heap buffer: glibc may hand the program a reused chunk whose
     * stale free-list pointer, its low byte overwritten by the output,
     * points into a dropped block. */
    static char outbuf[256];
    setvbuf(stdout, outbuf, _IOLBF, sizeof(outbuf));
    if (strcmp(mode, "mmap") == 0) {
        mapped = mmap(NULL, 1 << 16, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (mapped == MAP_FAILED)
            return 1;
        for (kept = 0; kept < 40; kept++)
            mapped[kept * 7] = malloc(1000);
    } else if (strcmp(mode, "joined") == 0) {
        if (join_some(8) < 0)
            return 1;
    } else if (strcmp(mode, "early") == 0) {
        if (!early_holder)
            return 1;
        for (kept = 0; kept < 30; kept++)
            early_holder[kept] = malloc(500);
    } else if (strcmp(mode, "threads") == 0) {
        if (join_some(4) < 0 || pipe(never) < 0 || sem_init(&ready, 0, 0) < 0)
            return 1;
        pthread_attr_t a;
        pthread_attr_init(&a);
        pthread_attr_setstacksize(&a, 256 << 10);
        sigset_t all, old;
        sigfillset(&all);
        for (kept = 0; kept < NTHREADS; kept++) {
            pthread_t t;
            if (kept == NTHREADS - NMASKED)
                pthread_sigmask(SIG_SETMASK, &all, &old);
            if (pthread_create(&t, &a, waiting_thread, (void *)(uintptr_t)kept) != 0)
                return 1;
        }
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        for (int i = 0; i < NTHREADS; i++)
            while (sem_wait(&ready) != 0)
                ;
        for (int i = 0; i < NMASKED; i++)
            wait_in_read(masked_tids[i]);
    } else if (strcmp(mode, "rtsig") == 0) {
        for (int s = SIGRTMIN; s <= SIGRTMAX; s++)
            signal(s, on_signal);
    } else if (strcmp(mode, "freed") == 0) {
        pthread_t t;
        if (pthread_create(&t, NULL, dropping_thread, (void *)(uintptr_t)3) != 0 ||
            pthread_join(t, NULL) != 0)
            return 1;
        drop_blocks(2, 1);
    } else {
        fprintf(stderr, "usage: leakroots mmap|joined|early|threads|rtsig|freed\n");
        return 2;
    }
    if (strcmp(mode, "freed") != 0)
        drop_blocks(DROP_N, 0);
    scrub_stack();
    printf("%s: kept %d, dropped %d\n", mode, kept, DROP_N);
    return 0;
}
