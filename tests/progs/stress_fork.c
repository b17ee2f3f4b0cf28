/* stress_fork.c — a fork storm under the profiler. The parent keeps 2
 * threads allocating while it forks argv[1] children (default 40) in quick
 * succession; each child allocates in child_work() and exits with exit()
 * (so it writes its own profile); every 4th child instead execs this
 * program again ("stress_fork --exec-child"), which allocates in
 * exec_child_work() under the inherited LD_PRELOAD. The parent checks every
 * child's status, allocates in parent_work(), and prints
 *   PARENT <pid>
 *   CHILD <pid> fork|exec
 *   TRUTH <function> <alloc_objects> <alloc_bytes> <inuse_objects> <inuse_bytes>
 * Each child prints its own truth line to the file CHILD_DIR/<pid>.truth
 * when CHILD_DIR is set. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

static inline void *E(void *p)
{
    __asm__ volatile("" : : "g"(p) : "memory");
    return p;
}

static void *kept[1000];
static int nkept;
static volatile int stop;

static void child_truth(const char *fn, long ao, long ab, long io, long ib)
{
    const char *dir = getenv("CHILD_DIR");
    if (!dir)
        return;
    char path[4096];
    snprintf(path, sizeof(path), "%s/%d.truth", dir, (int)getpid());
    FILE *f = fopen(path, "w");
    if (!f)
        exit(3);
    fprintf(f, "TRUTH %s %ld %ld %ld %ld\n", fn, ao, ab, io, ib);
    fclose(f);
}

/* 200 x 1000 bytes, half kept. */
NOINLINE void child_work(void)
{
    for (int i = 0; i < 200; i++) {
        void *p = E(malloc(1000));
        if (i % 2)
            free(p);
        else
            kept[nkept++] = p;
    }
    child_truth(__func__, 200, 200000, 100, 100000);
}

/* 300 x 700 bytes, a third kept. */
NOINLINE void exec_child_work(void)
{
    for (int i = 0; i < 300; i++) {
        void *p = E(malloc(700));
        if (i % 3)
            free(p);
        else
            kept[nkept++] = p;
    }
    child_truth(__func__, 300, 210000, 100, 70000);
}

NOINLINE void parent_work(void)
{
    for (int i = 0; i < 50; i++)
        kept[nkept++] = E(malloc(4000));
    printf("TRUTH parent_work 50 200000 50 200000\n");
}

NOINLINE void background_alloc(void)
{
    void *p[8];
    for (int k = 0; k < 8; k++)
        p[k] = E(malloc(64 + (size_t)k * 100));
    for (int k = 0; k < 8; k++)
        free(p[k]);
}

static void *background(void *arg)
{
    (void)arg;
    while (!__atomic_load_n(&stop, __ATOMIC_RELAXED))
        background_alloc();
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--exec-child") == 0) {
        exec_child_work();
        return 0;
    }
    int n = argc > 1 ? atoi(argv[1]) : 40;
    printf("PARENT %d\n", (int)getpid());
    pthread_t bg[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&bg[i], NULL, background, NULL);
    pid_t *pids = calloc((size_t)n, sizeof(*pids));
    int bad = 0;
    for (int i = 0; i < n; i++) {
        fflush(stdout);
        pid_t pid = fork();
        if (pid < 0) {
            perror("fork");
            return 1;
        }
        if (pid == 0) {
            if (i % 4 == 3) {
                execl("/proc/self/exe", argv[0], "--exec-child", (char *)NULL);
                _exit(126);
            }
            child_work();
            exit(0);
        }
        pids[i] = pid;
    }
    for (int i = 0; i < n; i++) {
        int st;
        if (waitpid(pids[i], &st, 0) != pids[i] || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            fprintf(stderr, "child %d: status %#x\n", (int)pids[i], st);
            bad = 1;
        }
        printf("CHILD %d %s\n", (int)pids[i], i % 4 == 3 ? "exec" : "fork");
    }
    __atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
    for (int i = 0; i < 2; i++)
        pthread_join(bg[i], NULL);
    parent_work();
    free(pids);
    return bad;
}
