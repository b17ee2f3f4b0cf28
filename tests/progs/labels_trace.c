/* labels_trace.c — trace regions under labels: two threads each begin
 * REGIONS regions "handle" in a task, every other one under
 * kind=a / kind=b and worker=N labels, the rest with no label; traced to
 * argv[1] through cprof_trace_start. Prints "ok N" (regions begun). */
#include "cprof.h"

#include <pthread.h>
#include <stdio.h>

#define REGIONS 20

static void *worker(void *arg)
{
    const char *w = arg;
    long n = 0;
    uint64_t task = cprof_trace_task_begin(0, "requests");
    if (cprof_labels_push("worker", w))
        return NULL;
    for (int i = 0; i < REGIONS; i++) {
        int labeled = i % 2 == 0;
        if (labeled && cprof_labels_push("kind", i % 4 ? "b" : "a"))
            return NULL;
        if (!labeled && cprof_labels_push("kind", "x") == 0)
            cprof_labels_pop(); /* a push and pop leave nothing behind */
        if (!labeled)
            cprof_labels_pop(); /* the worker label too, for this region */
        n += cprof_trace_region_begin(task, "handle") == 0;
        cprof_trace_region_end(task, "handle");
        if (labeled)
            cprof_labels_pop();
        else
            cprof_labels_push("worker", w);
    }
    cprof_labels_pop();
    cprof_trace_task_end(task);
    return (void *)n;
}

int main(int argc, char **argv)
{
    if (argc != 2 || cprof_trace_start(argv[1]) != 0)
        return 1;
    pthread_t t1, t2;
    void *n1, *n2;
    if (pthread_create(&t1, NULL, worker, "1") || pthread_create(&t2, NULL, worker, "2"))
        return 1;
    pthread_join(t1, &n1);
    pthread_join(t2, &n2);
    if (cprof_trace_stop() != 0)
        return 1;
    printf("ok %ld\n", (long)n1 + (long)n2);
    return 0;
}
