/* heapoutput.c — heap profile files (see heapoutput.h). */
#include "heapoutput.h"

#include "config.h"
#include "heapprof.h"
#include "memprof.h"
#include "outfile.h"
#include "peak.h"
#include "profwriter.h"
#include "rt.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int write_snapshot(int (*take)(heap_snapshot_t *s), int fd, int debug)
{
    heap_snapshot_t s;
    int rc = take(&s);
    if (rc == 0) {
        rc = debug ? heap_write_text(fd, &s) : heap_write_proto(fd, &s, NULL);
        heap_snapshot_free(&s);
    }
    return rc;
}

int output_write_heap_fd(int fd, int debug)
{
    return write_snapshot(heap_snapshot, fd, debug);
}

int output_write_peak_fd(int fd, int debug)
{
    return write_snapshot(peak_snapshot, fd, debug);
}

int output_write_heap(const char *pattern)
{
    return profwriter_write_file(pattern, output_write_heap_fd);
}

/* --- periodic snapshots -------------------------------------------------- */

static char periodic_pattern[4096];
static char periodic_memory[4096]; /* the memory profile's, or "" (memprof.h) */
static double periodic_seconds;
static int periodic_stop;
static bool periodic_running; /* a snapshot thread was started in this process */

static void *periodic_main(void *arg)
{
    (void)arg;
    rt_guard_enter(); /* for its whole life: its allocations are cprof's */
    struct timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    while (!__atomic_load_n(&periodic_stop, __ATOMIC_RELAXED)) {
        double t = (double)next.tv_sec + next.tv_nsec / 1e9 + periodic_seconds;
        next.tv_sec = (time_t)t;
        next.tv_nsec = (long)((t - (double)next.tv_sec) * 1e9);
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) == EINTR)
            ;
        if (__atomic_load_n(&periodic_stop, __ATOMIC_RELAXED))
            break;
        uint64_t seq = profwriter_next_seq(); /* one %n for the round's files */
        int rc = profwriter_write_file_seq(periodic_pattern, seq, output_write_heap_fd, NULL, 0);
        if (rc < 0)
            rt_warn("cannot write heap snapshot %s: %s", periodic_pattern, outfile_strerror(rc));
        if (periodic_memory[0] &&
            (rc = profwriter_write_file_seq(periodic_memory, seq, memprof_write, NULL, 0)) < 0)
            rt_warn("cannot write memory snapshot %s: %s", periodic_memory, outfile_strerror(rc));
    }
    return NULL;
}

/* Starts the snapshot thread (signals blocked: the program's handlers
 * never run on it). 0 or -errno. */
static int periodic_spawn(void)
{
    int rc = rt_spawn(NULL, periodic_main, "cprof-snapshot");
    if (rc == 0)
        periodic_running = true;
    return rc;
}

int output_start_periodic(const char *pattern, const char *memory, double seconds)
{
    int rc = config_series_pattern(pattern, periodic_pattern, sizeof(periodic_pattern));
    if (rc == 0 && memory)
        rc = config_series_pattern(memory, periodic_memory, sizeof(periodic_memory));
    if (rc < 0)
        return rc;
    periodic_seconds = seconds;
    return periodic_spawn();
}

void output_stop_periodic(void)
{
    __atomic_store_n(&periodic_stop, 1, __ATOMIC_RELAXED);
}

void output_fork_child(void)
{
    /* The snapshot thread did not come along: a forked worker writes its
     * own series (the pattern's %p is its pid) as the parent does. */
    if (periodic_running && !__atomic_load_n(&periodic_stop, __ATOMIC_RELAXED)) {
        periodic_running = false;
        int rc = periodic_spawn();
        if (rc < 0)
            rt_warn("cannot start the snapshot thread in the forked child (%s); no periodic snapshots",
                    strerror(-rc));
    }
}
