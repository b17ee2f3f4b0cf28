/* unwind_stacks.c — allocations where the cfi walk must give up or see
 * the loader move (tests/e2e/unwind_exact.sh):
 *   reload LIBA LIBB dlclose|bypass  calls into LIBA, unloads it (through
 *       dlclose, then 70000 more of the C library, or the C library's own
 *       dlclose, which cprof does not see), loads LIBB at its address and
 *       calls into it;
 *   stacks  allocates on a makecontext stack, in a handler on a
 *       sigaltstack, in a thread on a pthread_attr_setstack stack, and in a
 *       forked child after other threads walked. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

static void *volatile sink;

static __attribute__((noinline)) void leaf(int n)
{
    sink = malloc(16 + (size_t)n);
    free(sink);
}

static __attribute__((noinline)) void rec(int n)
{
    leaf(n);
    if (n)
        rec(n - 1);
    __asm__ volatile("" ::: "memory");
}

static __attribute__((noinline)) void cb(void)
{
    rec(2);
}

typedef void entry_fn(void (*)(void));

static entry_fn *open_entry(const char *path, void **handle)
{
    *handle = dlopen(path, RTLD_NOW);
    entry_fn *e = *handle ? (entry_fn *)dlsym(*handle, "entry") : NULL;
    if (!e) {
        fprintf(stderr, "unwind_stacks: %s: %s\n", path, dlerror());
        exit(1);
    }
    return e;
}

static int reload(const char *a, const char *b, const char *how)
{
    void *ha, *hb;
    /* Looked up first: loaded later, it could take liba's place. */
    void *libc = dlopen("libc.so.6", RTLD_NOW);
    int (*real)(void *) = libc ? (int (*)(void *))dlvsym(libc, "dlclose", "GLIBC_2.34") : NULL;
    entry_fn *ea = open_entry(a, &ha);
    for (int i = 0; i < 20; i++)
        ea(cb);
    if (strcmp(how, "bypass") == 0) {
        if (!real) {
            printf("no versioned dlclose\n");
            return 0;
        }
        real(ha);
    } else {
        dlclose(ha);
        /* Past 2^16 dlcloses (the C library's, never unloaded): an older
         * cprof kept 16 bits of generation, and liba's rules came back. */
        for (int i = 0; i < 70000; i++)
            if (libc)
                dlclose(dlopen("libc.so.6", RTLD_NOW));
    }
    entry_fn *eb = open_entry(b, &hb);
    /* cprof looks at the loader's unload count every 256th walk of a
     * thread (and at every rule computed): more walks than that pass
     * before libb's code is walked. */
    for (int i = 0; i < 300; i++)
        leaf(i);
    printf("same address: %s\n", eb == ea ? "yes" : "no");
    for (int i = 0; i < 20; i++)
        eb(cb);
    return 0;
}

static ucontext_t main_ctx, co_ctx;

static void coroutine(void)
{
    for (int i = 0; i < 50; i++) {
        rec(i % 7);
        swapcontext(&co_ctx, &main_ctx);
    }
}

static void on_signal(int sig)
{
    (void)sig;
    rec(3);
}

static void *worker(void *arg)
{
    (void)arg;
    for (int i = 0; i < 50; i++)
        rec(i % 5);
    return NULL;
}

/* volatile: getcontext returns twice, as setjmp does */
static int coroutines(void)
{
    size_t size = 64 << 10;
    for (volatile int round = 0; round < 4; round++) {
        char *stack = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (stack == MAP_FAILED)
            return 1;
        getcontext(&co_ctx);
        co_ctx.uc_stack.ss_sp = stack;
        co_ctx.uc_stack.ss_size = size;
        co_ctx.uc_link = &main_ctx;
        makecontext(&co_ctx, coroutine, 0);
        for (volatile int i = 0; i < 51; i++) {
            swapcontext(&main_ctx, &co_ctx);
            rec(i % 3);
        }
        munmap(stack, size);
    }
    return 0;
}

static int stacks(void)
{
    if (coroutines() != 0)
        return 1;

    stack_t ss = {.ss_sp = malloc(1 << 16), .ss_size = 1 << 16};
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_ONSTACK;
    if (!ss.ss_sp || sigaltstack(&ss, NULL) != 0 || sigaction(SIGUSR1, &sa, NULL) != 0)
        return 1;
    for (int i = 0; i < 20; i++) {
        raise(SIGUSR1);
        rec(2);
    }

    pthread_attr_t attr;
    size_t tsize = 256 << 10;
    void *tstack = mmap(NULL, tsize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    pthread_t t[4];
    if (tstack == MAP_FAILED || pthread_attr_init(&attr) != 0 ||
        pthread_attr_setstack(&attr, tstack, tsize) != 0 ||
        pthread_create(&t[0], &attr, worker, NULL) != 0)
        return 1;
    pthread_join(t[0], NULL);

    /* Threads that walked and are gone from the child. */
    for (int i = 1; i < 4; i++)
        if (pthread_create(&t[i], NULL, worker, NULL) != 0)
            return 1;
    pid_t pid = fork();
    if (pid == 0) {
        for (int i = 0; i < 50; i++)
            rec(i % 6);
        for (int i = 0; i < 4; i++)
            if (pthread_create(&t[i], NULL, worker, NULL) != 0)
                _exit(1);
        for (int i = 0; i < 4; i++)
            pthread_join(t[i], NULL);
        _exit(0); /* one check report: the parent's */
    }
    for (int i = 1; i < 4; i++)
        pthread_join(t[i], NULL);
    int status;
    if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
        return 1;
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 5 && strcmp(argv[1], "reload") == 0)
        return reload(argv[2], argv[3], argv[4]);
    if (argc == 2 && strcmp(argv[1], "stacks") == 0)
        return stacks();
    fprintf(stderr, "usage: unwind_stacks reload LIBA LIBB dlclose|bypass | stacks\n");
    return 2;
}
