/* stack_moves.c — a thread cprof did not see start (made with the C
 * library's own pthread_create, as threads that ran before cprof attach)
 * whose first sampled allocations run on a makecontext stack; that stack
 * is unmapped, and a smaller one mapped where it began, with a frame
 * chain leading into the old stack's range (unmapped now); then
 * allocations on the new stack and on the thread's own (tests/e2e/
 * unwind_moves.sh). Argument "fork": instead, such a thread forks before
 * any allocation, and the child (its only thread runs on that thread's
 * stack, though its tid is its pid) allocates. Each site allocates N
 * blocks of its own size and frees them; prints a line, exits 0. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <sys/mman.h>
#include <ucontext.h>

#define N 1000
#define BIG (256 << 10)  /* the first coroutine's stack */
#define SMALL (64 << 10) /* the second's, at the same address */

static void *volatile sink;
static ucontext_t main_ctx, co_ctx;

/* Each site calls malloc itself: the profile's leaf names the stack. */
#define ALLOC_N(size)                                                                          \
    for (int i = 0; i < N; i++) {                                                              \
        sink = malloc(size);                                                                   \
        free(sink);                                                                            \
    }

static __attribute__((noinline)) void on_first(void) { ALLOC_N(100) }
static __attribute__((noinline)) void on_second(void) { ALLOC_N(200) }
static __attribute__((noinline)) void on_thread(void) { ALLOC_N(300) }
static __attribute__((noinline)) void on_child(void) { ALLOC_N(400) }

static void run_on(char *stack, size_t size, void (*fn)(void), uintptr_t frame)
{
    if (getcontext(&co_ctx) != 0)
        exit(3);
    co_ctx.uc_stack.ss_sp = stack;
    co_ctx.uc_stack.ss_size = size;
    co_ctx.uc_link = &main_ctx;
    makecontext(&co_ctx, fn, 0);
#ifdef __x86_64__
    /* The coroutine's outermost frame links to frame: a frame-pointer
     * chain that ends in another mapping's range, as a stale one may. */
    if (frame)
        co_ctx.uc_mcontext.gregs[REG_RBP] = (greg_t)frame;
#else
    (void)frame;
#endif
    if (swapcontext(&main_ctx, &co_ctx) != 0)
        exit(4);
}

static void *thread_main(void *arg)
{
    (void)arg;
    char *big = mmap(NULL, BIG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (big == MAP_FAILED)
        exit(5);
    run_on(big, BIG, on_first, 0);
    munmap(big, BIG);
    char *small = mmap(big, SMALL, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (small != big)
        exit(6);
    run_on(small, SMALL, on_second, (uintptr_t)big + BIG / 2);
    munmap(small, SMALL);
    on_thread();
    return NULL;
}

static void *fork_main(void *arg)
{
    (void)arg;
    pid_t pid = fork();
    if (pid == 0) {
        on_child();
        exit(0); /* its profile at exit */
    }
    int st;
    if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
        exit(7);
    return NULL;
}

int main(int argc, char **argv)
{
    int forks = argc > 1 && strcmp(argv[1], "fork") == 0;
    /* The C library's pthread_create, not an interposed one. */
    void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
    int (*create)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *) =
        libc ? (int (*)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *))dlsym(
                   libc, "pthread_create")
             : NULL;
    pthread_t t;
    if (!create || create(&t, NULL, forks ? fork_main : thread_main, NULL) != 0 || pthread_join(t, NULL) != 0)
        return 2;
    printf("stack_moves%s: done\n", forks ? " fork" : "");
    return 0;
}
