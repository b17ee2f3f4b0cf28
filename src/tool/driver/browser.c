/* browser.c — starting a viewer for a file or URL. */
#include "tool/driver/browser.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* Runs argv; waits for it (0 if it exited 0; -EIO with its exit status in
 * *status, or 128 + the signal that ended it) or detaches it (double fork:
 * no zombie; 0 if the exec succeeded). -errno of a failed exec. */
static int run(char **argv, bool wait, int *status)
{
    if (wait) {
        pid_t pid;
        int rc = posix_spawnp(&pid, argv[0], NULL, NULL, argv, environ);
        if (rc != 0)
            return -rc;
        int st;
        while (waitpid(pid, &st, 0) < 0)
            if (errno != EINTR)
                return -errno;
        *status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        return *status == 0 ? 0 : -EIO;
    }
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0)
        return -errno;
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(p[0]);
        close(p[1]);
        return -e;
    }
    if (pid == 0) {
        pid_t g = fork();
        if (g == 0) {
            setsid();
            execvp(argv[0], argv);
            int e = errno;
            if (write(p[1], &e, sizeof(e)) < 0)
                _exit(127);
            _exit(127);
        }
        _exit(g < 0 ? 1 : 0);
    }
    close(p[1]);
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    int e = 0;
    ssize_t n;
    while ((n = read(p[0], &e, sizeof(e))) < 0 && errno == EINTR)
        ;
    close(p[0]);
    if (n == (ssize_t)sizeof(e))
        return -e;
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        return -ECHILD;
    return 0;
}

/* One viewer command line ("prog args", "%s" replaced by the target,
 * else the target appended). On failure, what failed goes to why. */
static int try_viewer(const char *cmd, const char *target, bool wait, char *why, size_t whylen)
{
    char *copy = strdup(cmd);
    if (!copy)
        return -ENOMEM;
    char *argv[64];
    int n = 0;
    bool placed = false;
    for (char *t = strtok(copy, " \t"); t && n < 62; t = strtok(NULL, " \t")) {
        if (strcmp(t, "%s") == 0) {
            argv[n++] = (char *)target;
            placed = true;
        } else {
            argv[n++] = t;
        }
    }
    if (n == 0) {
        free(copy);
        return -ENOENT;
    }
    if (!placed)
        argv[n++] = (char *)target;
    argv[n] = NULL;
    int status = 0;
    int rc = run(argv, wait, &status);
    if (rc < 0 && why && whylen > 0) {
        size_t l = 0;
        for (int i = 0; argv[i] && l < whylen; i++)
            l += (size_t)snprintf(why + l, whylen - l, "%s%s", i ? " " : "", argv[i]);
        if (l < whylen && rc == -EIO)
            snprintf(why + l, whylen - l, ": exit status %d", status);
        else if (l < whylen)
            snprintf(why + l, whylen - l, ": %s", strerror(-rc));
    }
    free(copy);
    return rc;
}

int browser_open(const char *target, const char *program, bool wait, char *why, size_t n)
{
    if (program)
        return try_viewer(program, target, wait, why, n);
    int rc = -ENOENT;
    const char *b = getenv("BROWSER");
    if (b && *b) {
        /* $BROWSER: a colon-separated list of commands, tried in turn */
        char *list = strdup(b);
        if (!list)
            return -ENOMEM;
        for (char *save = NULL, *c = strtok_r(list, ":", &save); c;
             c = strtok_r(NULL, ":", &save)) {
            rc = try_viewer(c, target, wait, why, n);
            if (rc != -ENOENT && rc != -EACCES)
                break;
        }
        free(list);
        if (rc != -ENOENT && rc != -EACCES)
            return rc;
    }
    const char *d = getenv("DISPLAY"), *wl = getenv("WAYLAND_DISPLAY");
    if ((d && *d) || (wl && *wl)) {
        static const char *const desk[] = {"xdg-open", "sensible-browser", "chromium",
                                           "firefox", "google-chrome"};
        for (size_t i = 0; i < sizeof(desk) / sizeof(desk[0]); i++) {
            rc = try_viewer(desk[i], target, wait, why, n);
            if (rc != -ENOENT && rc != -EACCES)
                return rc;
        }
    }
    return -ENOENT;
}
