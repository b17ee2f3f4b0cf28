// heaplife.c — allocations with known lifetimes, for the temporary, peak
// and leak profiles. Usage: heaplife small|big [hold]
//   small: sizes for CPROF_RATE=1 (exact checks);
//   big:   sizes for the default rate (each site holds megabytes).
//   hold:  after the work, prints "READY" and waits for a line on stdin
//          (the HTTP tests fetch profiles meanwhile).
// The lifetimes, in order:
//   keep_steady   kept by a global array until exit (reachable)
//   temp_blocks   each freed right after it is allocated (temporaries)
//   spike         a burst freed again: the peak is the spike plus what
//                 was live then (steady, dropped)
//   drop_blocks   allocated during the spike, last pointer dropped (leaks)
//   heap_children reachable only through another heap block (holder)
//   thread_block  reachable only from another thread's stack
//   masked_block  the same, in a thread that blocks every signal (the
//                 scan cannot stop it: it reads where it sleeps)
//   interior_block reachable only through a pointer into its middle
// Prints "TRUTH kind function objects bytes" lines: kind is TEMP (temporaries),
// PEAK (live at the peak), LEAK (unreachable at exit) or KEPT (reachable at
// exit: never in the leak profile).
#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

typedef struct {
    int steady_n, steady_size, temp_n, temp_size, spike_n, spike_size, drop_n, drop_size;
    int child_n, child_size, thread_size, interior_size, masked_size;
} sizes_t;

static const sizes_t small = {100, 1000, 1000, 200, 50, 100000, 20, 3000, 10, 5000, 7000, 11000,
                              13000};
static const sizes_t big = {10000, 1000, 1000000, 200, 600, 100000, 3334, 3000,
                            10, 1 << 20, 2 << 20, 2 << 20, 2 << 20};
static const sizes_t *z;

/* Not static: the compiler must keep every store to them. */
void **steady;               /* the global that keeps the steady set */
void **holder;               /* a heap block pointing to the children */
char *interior;              /* points into the middle of its block */
static int never[2];         /* a pipe nobody writes: the thread waits on it */
static sem_t thread_ready;
static volatile pid_t masked_tid;

// Keeps the compiler from deleting malloc/free pairs.
static inline void *escape(void *p)
{
    __asm__ volatile("" : : "g"(p) : "memory");
    return p;
}

__attribute__((noinline)) static void keep_steady(void)
{
    steady = malloc(sizeof(void *) * (size_t)z->steady_n);
    for (int i = 0; i < z->steady_n; i++)
        steady[i] = escape(malloc((size_t)z->steady_size));
}

__attribute__((noinline)) static void temp_blocks(void)
{
    for (int i = 0; i < z->temp_n; i++) {
        char *p = escape(malloc((size_t)z->temp_size));
        p[0] = 1;
        free(p);
    }
}

/* The dropped pointers are written to a volatile slot and overwritten, so
 * no copy is left in a register or on the stack. */
__attribute__((noinline)) static void drop_blocks(void)
{
    static void *volatile last;
    for (int i = 0; i < z->drop_n; i++) {
        last = malloc((size_t)z->drop_size);
        memset(last, 0, 16);
    }
    last = NULL;
}

__attribute__((noinline)) static void spike(void)
{
    void **s = escape(malloc(sizeof(void *) * (size_t)z->spike_n));
    for (int i = 0; i < z->spike_n; i++)
        s[i] = escape(malloc((size_t)z->spike_size));
    drop_blocks();
    for (int i = 0; i < z->spike_n; i++)
        free(s[i]);
    free(s);
}

__attribute__((noinline)) static void heap_children(void)
{
    holder = malloc(sizeof(void *) * (size_t)z->child_n);
    for (int i = 0; i < z->child_n; i++)
        holder[i] = escape(malloc((size_t)z->child_size));
}

__attribute__((noinline)) static void interior_block(void)
{
    interior = (char *)escape(malloc((size_t)z->interior_size)) + z->interior_size / 2;
}

__attribute__((noinline)) static void *thread_block(void *arg)
{
    (void)arg;
    char *volatile p = malloc((size_t)z->thread_size);
    memset(p, 2, 64);
    sem_post(&thread_ready);
    char c;
    while (read(never[0], &c, 1) != 0) /* waits until the process exits */
        ;
    return p;
}

__attribute__((noinline)) static void *masked_block(void *arg)
{
    (void)arg;
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
    char *volatile p = malloc((size_t)z->masked_size);
    memset(p, 3, 64);
    masked_tid = (pid_t)syscall(SYS_gettid);
    sem_post(&thread_ready);
    char c;
    while (read(never[0], &c, 1) != 0)
        ;
    return p;
}

/* The scan reads the masked thread's stack from where it sleeps in the
 * kernel (/proc/self/task/TID/syscall): on a loaded machine it may not be
 * there yet when the program exits, and its block would look leaked. */
static void wait_masked_reads(void)
{
    char path[64], buf[64];
    snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", (int)masked_tid);
    for (int i = 0; i < 30000; i++) { /* 30 s at most */
        /* open and read: no allocation of the program's own */
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
        if (fd >= 0)
            close(fd);
        buf[n > 0 ? n : 0] = '\0';
        if (buf[0] >= '0' && buf[0] <= '9' && atol(buf) == SYS_read) /* else "running" */
            return;
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
}

int main(int argc, char **argv)
{
    if (argc < 2 || (strcmp(argv[1], "small") && strcmp(argv[1], "big"))) {
        fprintf(stderr, "usage: heaplife small|big [hold]\n");
        return 2;
    }
    z = strcmp(argv[1], "big") == 0 ? &big : &small;
    /* Made before any counted allocation: stdout's buffer and the thread's
     * own blocks are no site of ours. */
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (pipe(never) < 0 || sem_init(&thread_ready, 0, 0) < 0)
        return 1;

    keep_steady();
    temp_blocks();
    spike();
    heap_children();
    interior_block();
    pthread_t th, th2;
    if (pthread_create(&th, NULL, thread_block, NULL) != 0 ||
        pthread_create(&th2, NULL, masked_block, NULL) != 0)
        return 1;
    for (int i = 0; i < 2; i++)
        while (sem_wait(&thread_ready) != 0)
            ;
    wait_masked_reads();

    long sn = z->steady_n, ss = z->steady_size;
    printf("TRUTH TEMP temp_blocks %d %ld\n", z->temp_n, (long)z->temp_n * z->temp_size);
    printf("TRUTH TEMP keep_steady 0 0\nTRUTH TEMP spike 0 0\nTRUTH TEMP drop_blocks 0 0\n");
    printf("TRUTH PEAK keep_steady %ld %ld\n", sn + 1, sn * ss + sn * (long)sizeof(void *));
    printf("TRUTH PEAK spike %d %ld\n", z->spike_n + 1,
           (long)z->spike_n * z->spike_size + z->spike_n * (long)sizeof(void *));
    printf("TRUTH PEAK drop_blocks %d %ld\n", z->drop_n, (long)z->drop_n * z->drop_size);
    printf("TRUTH PEAK temp_blocks 0 0\nTRUTH PEAK heap_children 0 0\n");
    printf("TRUTH LEAK drop_blocks %d %ld\n", z->drop_n, (long)z->drop_n * z->drop_size);
    printf("TRUTH KEPT keep_steady\nTRUTH KEPT heap_children\nTRUTH KEPT interior_block\n"
           "TRUTH KEPT thread_block\nTRUTH KEPT masked_block\n");
    if (argc > 2 && strcmp(argv[2], "hold") == 0) {
        printf("READY\n");
        char line[64];
        if (!fgets(line, sizeof(line), stdin))
            return 0;
    }
    return 0;
}
