/* http_vfork.c — a program with a thread that cannot answer a signal for
 * as long as a test wants: it vforks, and its child waits until
 * COUNTER_FILE.stop exists (a vfork parent sleeps killable only), so a
 * thread dump (/debug/pprof/goroutine?debug=2) keeps cprof's server
 * thread waiting for its answer, up to the dump's timeout. Writes that
 * thread's id to COUNTER_FILE.tid, then "1" to COUNTER_FILE; prints a
 * line and exits 0 once the child has exited.
 *
 *   http_vfork COUNTER_FILE */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char stop[4096];

static int put(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    return f && fputs(text, f) >= 0 && fclose(f) == 0 ? 0 : -1;
}

static void *stuck(void *arg)
{
    char tid[32];
    snprintf(tid, sizeof(tid), "%d\n", (int)gettid());
    if (put((const char *)arg, tid) != 0)
        exit(3);
    pid_t pid = vfork();
    if (pid == 0) {
        /* The child shares the parent's memory: system calls only. */
        struct timespec ts = {0, 10 * 1000 * 1000};
        while (access(stop, F_OK) != 0)
            nanosleep(&ts, NULL);
        _exit(0);
    }
    int st;
    if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
        exit(4);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s COUNTER_FILE\n", argv[0]);
        return 2;
    }
    static char tidfile[4096];
    snprintf(stop, sizeof(stop), "%s.stop", argv[1]);
    snprintf(tidfile, sizeof(tidfile), "%s.tid", argv[1]);
    pthread_t t;
    if (pthread_create(&t, NULL, stuck, tidfile) != 0)
        return 5;
    if (put(argv[1], "1\n") != 0)
        return 6;
    if (pthread_join(t, NULL) != 0)
        return 7;
    printf("http_vfork: done\n");
    return 0;
}
