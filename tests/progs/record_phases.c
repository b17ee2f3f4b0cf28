/* record_phases.c — the flight recorder's ground truth (tests/e2e/
 * heap_record.sh): phase A allocates 100 blocks of 1 MiB and frees them
 * all; phase B leaks 10 MiB a second for STEPS steps. Every boundary is
 * logged with its CLOCK_REALTIME (unix seconds, ns) in DIR/truth, with
 * write(2) (no stdio: nothing allocates between the phases but the phases),
 * and "done" is made in DIR; then the program waits for DIR/stop, prints
 * "record_phases done" and exits 0.
 *   record_phases DIR STEPS
 *   record_phases DIR STEPS wait  the same, once DIR/go exists (a viewer
 *                               polling it is ready: webui_window.sh)
 *   record_phases DIR churn N   N pairs of malloc(64)/free in phase_churn,
 *                               then "done" (the ring's bound). */
#include "phases.h"

#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#define MIB (1 << 20)

static void *keep[200];
static int truth_fd;

static void mark(const char *what, int i)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    char line[128];
    int n = snprintf(line, sizeof(line), "%s %d %lld.%09ld\n", what, i, (long long)ts.tv_sec,
                     ts.tv_nsec);
    if (write(truth_fd, line, (size_t)n) != n)
        exit(4);
}

static void pause_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

/* The blocks are written to, and kept in a global: the compiler keeps the
 * allocations. */
__attribute__((noinline)) void phase_a_alloc(int n)
{
    for (int i = 0; i < n; i++) {
        keep[i] = malloc(MIB);
        if (!keep[i])
            exit(5);
        memset(keep[i], i, 64);
    }
}

__attribute__((noinline)) void phase_a_free(int n)
{
    for (int i = 0; i < n; i++)
        free(keep[i]);
}

__attribute__((noinline)) void phase_b_leak(int first, int n)
{
    for (int i = first; i < first + n; i++) {
        keep[i] = malloc(MIB);
        if (!keep[i])
            exit(5);
        memset(keep[i], i, 64);
    }
}

__attribute__((noinline)) void phase_churn(long n)
{
    for (long i = 0; i < n; i++) {
        void *volatile p = malloc(64);
        free(p);
    }
}

int main(int argc, char **argv)
{
    if (argc != 3 && argc != 4)
        return 2;
    phase_dir = argv[1];
    char path[4096];
    snprintf(path, sizeof(path), "%s/truth", phase_dir);
    truth_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (truth_fd < 0)
        return 3;
    pause_ms(100); /* apart from the start's allocations */
    if (strcmp(argv[2], "churn") == 0) {
        mark("C_START", 0);
        phase_churn(atol(argv[3]));
        mark("C_END", 0);
    } else {
        int steps = atoi(argv[2]);
        if (argc == 4 && strcmp(argv[3], "wait") == 0)
            wait_for("go");
        mark("A_START", 0);
        phase_a_alloc(100);
        phase_a_free(100);
        mark("A_END", 0);
        pause_ms(100);
        mark("B_START", 0);
        for (int s = 0; s < steps; s++) {
            if (s)
                pause_ms(1000); /* 10 MiB a second */
            mark("STEP_START", s + 1);
            phase_b_leak(10 * s, 10);
            mark("STEP_END", s + 1);
        }
    }
    touch("done");
    wait_for("stop");
    printf("record_phases done\n");
    return 0;
}
