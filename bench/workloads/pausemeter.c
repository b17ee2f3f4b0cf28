/* pausemeter.c — how long a program is held up: the main thread sleeps
 * 100 us at a time for SECONDS seconds and prints the longest gap between
 * two wake-ups beyond the sleep, in microseconds. bench/attach.sh runs it
 * alone and with a cprof attach in the middle (the attach stops the main
 * thread for its injected calls).
 *   pausemeter SECONDS */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    double secs = argc > 1 ? atof(argv[1]) : 3, end = now() + secs, worst = 0;
    struct timespec nap = {0, 100000};
    for (double t = now(); t < end;) {
        nanosleep(&nap, NULL);
        double u = now();
        if (u - t > worst)
            worst = u - t;
        t = u;
    }
    printf("%.0f\n", (worst - 100e-6) * 1e6);
    return 0;
}
