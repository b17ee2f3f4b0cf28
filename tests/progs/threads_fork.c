/* threads_fork.c — the thread profiles in a fork child: main starts three
 * threads in spawn_sleepers and one in spawn_forker; that thread forks, and
 * the child (where only it lives on) writes DIR/child.threads (debug=2) and
 * DIR/child.threadcreate (debug=1); the parent, once the forker has ended,
 * writes DIR/parent.threadcreate. Linked with -lcprof. */
#include <cprof.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *dir;

static void write_to(const char *name, int (*fn)(int, int), int debug)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || fn(fd, debug) != 0)
        _exit(1);
    close(fd);
}

static void *sleeper(void *arg)
{
    (void)arg;
    for (;;)
        pause();
    return NULL;
}

__attribute__((noinline)) void fork_and_profile(void)
{
    pid_t p = fork();
    if (p == 0) {
        write_to("child.threads", cprof_threads_profile_write_fd, 2);
        write_to("child.threadcreate", cprof_threadcreate_profile_write_fd, 1);
        _exit(0);
    }
    int status;
    if (p < 0 || waitpid(p, &status, 0) != p || !WIFEXITED(status) || WEXITSTATUS(status))
        exit(1);
}

static void *forker(void *arg)
{
    (void)arg;
    fork_and_profile();
    return NULL;
}

__attribute__((noinline)) void spawn_sleepers(void)
{
    pthread_t t;
    for (int i = 0; i < 3; i++)
        if (pthread_create(&t, NULL, sleeper, NULL) != 0)
            exit(1);
}

__attribute__((noinline)) void spawn_forker(void)
{
    pthread_t t;
    if (pthread_create(&t, NULL, forker, NULL) != 0 || pthread_join(t, NULL) != 0)
        exit(1);
}

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    dir = argv[1];
    spawn_sleepers();
    spawn_forker();
    write_to("parent.threadcreate", cprof_threadcreate_profile_write_fd, 1);
    return 0;
}
