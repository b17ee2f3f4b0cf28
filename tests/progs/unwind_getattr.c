#define _GNU_SOURCE
/* unwind_getattr.c — a program that asks for its own stack's attributes
 * before allocating anything else, as Rust's runtime does at start-up:
 * glibc's pthread_getattr_np holds the thread's lock while it allocates.
 * Then known allocations from the main thread and from a thread that asks
 * for its own and the main thread's attributes; prints their sum. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_t main_thread;
static char *volatile kept[2]; /* volatile: the blocks stay live and used */

static size_t stack_size(pthread_t th)
{
    pthread_attr_t a;
    size_t size = 0;
    void *addr;
    if (pthread_getattr_np(th, &a) != 0)
        exit(2);
    pthread_attr_getstack(&a, &addr, &size);
    pthread_attr_destroy(&a);
    return size;
}

__attribute__((noinline)) static char *alloc_main(void) { return calloc(1, 12345); }
__attribute__((noinline)) static char *alloc_thread(void) { return calloc(1, 23456); }

static void *run(void *arg)
{
    (void)arg;
    if (!stack_size(pthread_self()) || !stack_size(main_thread))
        exit(3);
    kept[1] = alloc_thread();
    return NULL;
}

int main(void)
{
    main_thread = pthread_self();
    if (!stack_size(main_thread))
        return 4;
    kept[0] = alloc_main();
    pthread_t th;
    if (pthread_create(&th, NULL, run, NULL) != 0 || pthread_join(th, NULL) != 0)
        return 5;
    if (!kept[0] || !kept[1])
        return 6;
    kept[0][12344] = 1;
    kept[1][23455] = 2;
    printf("stacks known, sum %d\n", kept[0][12344] + kept[1][23455]);
    return 0;
}
