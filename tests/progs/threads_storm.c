/* threads_storm.c — threads profiles taken while threads come and go: 4
 * threads create and join short-lived threads without pause, 200 more wait
 * in pause(), and main takes 50 threads profiles (debug 0, 1, 2 in turn),
 * then one grouped text into FILE. Prints the mean and worst time per
 * profile. Exits 1 if a profile fails. Linked with -lcprof. */
#include <cprof.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static volatile int stop;

static void *nop(void *arg)
{
    return arg;
}

static void *churn(void *arg)
{
    (void)arg;
    while (!stop) {
        pthread_t t;
        if (pthread_create(&t, NULL, nop, NULL) == 0)
            pthread_join(t, NULL);
    }
    return NULL;
}

__attribute__((noinline)) void idle_forever(void)
{
    for (;;)
        pause();
}

static void *idle(void *arg)
{
    (void)arg;
    idle_forever();
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, churn, NULL);
    for (int i = 0; i < 200; i++) {
        pthread_t x;
        if (pthread_create(&x, NULL, idle, NULL) != 0)
            return 1;
    }
    int fd = open("/dev/null", O_WRONLY);
    double worst = 0, sum = 0;
    for (int i = 0; i < 50; i++) {
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        int rc = cprof_threads_profile_write_fd(fd, i % 3);
        clock_gettime(CLOCK_MONOTONIC, &b);
        double d = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
        sum += d;
        worst = d > worst ? d : worst;
        if (rc != 0) {
            fprintf(stderr, "profile %d: %d\n", i, rc);
            return 1;
        }
    }
    stop = 1;
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    int out = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (out < 0 || cprof_threads_profile_write_fd(out, 1) != 0)
        return 1;
    printf("50 profiles, 200 idle threads, 4 churning: mean %.1f ms, worst %.1f ms\n", sum / 50 * 1e3,
           worst * 1e3);
    return 0;
}
