/* launch.c — running a program with libcprof.so preloaded (see launch.h). */
#include "tool/fetch/launch.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

int launch_find_runtime(char *path, size_t n, char *err, size_t errlen)
{
    char exe[PATH_MAX];
    ssize_t l = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (l <= 0) {
        snprintf(err, errlen, "cannot find the cprof binary: /proc/self/exe: %s", strerror(errno));
        return -1;
    }
    exe[l] = '\0';
    char *slash = strrchr(exe, '/');
    if (slash)
        *slash = '\0';
    static const char *const rel[] = {"libcprof.so", "../lib/libcprof.so"};
    for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
        char cand[PATH_MAX + 32], real[PATH_MAX];
        snprintf(cand, sizeof(cand), "%s/%s", exe, rel[i]);
        if (access(cand, R_OK) == 0 && realpath(cand, real)) {
            if (strchr(real, ' ') || strchr(real, ':')) {
                snprintf(err, errlen, "%s: LD_PRELOAD cannot name a path with spaces or colons",
                         real);
                return -1;
            }
            snprintf(path, n, "%s", real);
            return 0;
        }
    }
    snprintf(err, errlen, "cannot find libcprof.so in %s or %s/../lib", exe, exe);
    return -1;
}

/* environ with name=value set (replacing name), into a new array. */
static char **env_set(char **env, const char *name, const char *value, char **store)
{
    size_t nl = strlen(name), n = 0;
    while (env[n])
        n++;
    char **out = malloc((n + 2) * sizeof(*out));
    if (!out || asprintf(store, "%s=%s", name, value) < 0) {
        free(out);
        *store = NULL;
        return NULL;
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (!(strncmp(env[i], name, nl) == 0 && env[i][nl] == '='))
            out[k++] = env[i];
    out[k++] = *store;
    out[k] = NULL;
    return out;
}

int launch_spawn(char *const argv[], const char *rate, const char *runtime, const char *dir,
                 pid_t *pid, char *err, size_t errlen)
{
    /* The runtime expands % in CPROF_HEAP_PROFILE: the directory's own
     * percent signs are doubled. */
    char pattern[PATH_MAX * 2 + 32];
    size_t k = 0;
    for (const char *c = dir; *c && k + 3 < sizeof(pattern); c++) {
        if (*c == '%')
            pattern[k++] = '%';
        pattern[k++] = *c;
    }
    pattern[k] = '\0';
    snprintf(pattern + k, sizeof(pattern) - k, "/heap.%%p.pb.gz");

    const char *old = getenv("LD_PRELOAD");
    char preload[PATH_MAX * 2];
    if (old && *old)
        snprintf(preload, sizeof(preload), "%s %s", runtime, old);
    else
        snprintf(preload, sizeof(preload), "%s", runtime);

    char *s1 = NULL, *s2 = NULL, *s3 = NULL;
    char **e1 = env_set(environ, "LD_PRELOAD", preload, &s1);
    char **e2 = e1 ? env_set(e1, "CPROF_HEAP_PROFILE", pattern, &s2) : NULL;
    char **e3 = e2 && rate ? env_set(e2, "CPROF_RATE", rate, &s3) : NULL;
    char **env = rate ? e3 : e2;
    int rc = 0;
    if (!env) {
        snprintf(err, errlen, "out of memory");
        rc = -ENOMEM;
    } else {
        posix_spawnattr_t at;
        posix_spawnattr_init(&at);
        sigset_t def;
        sigemptyset(&def);
        sigaddset(&def, SIGINT);
        sigaddset(&def, SIGQUIT);
        sigaddset(&def, SIGTERM);
        sigaddset(&def, SIGHUP);
        posix_spawnattr_setsigdefault(&at, &def);
        posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGDEF);
        int e = posix_spawnp(pid, argv[0], NULL, &at, argv, env);
        posix_spawnattr_destroy(&at);
        if (e) {
            snprintf(err, errlen, "%s: %s", argv[0], strerror(e));
            rc = -e;
        }
    }
    free(e1);
    free(e2);
    free(e3);
    free(s1);
    free(s2);
    free(s3);
    return rc;
}

static volatile sig_atomic_t child_pid;

static void forward(int sig)
{
    if (child_pid > 0)
        kill((pid_t)child_pid, sig);
}

int launch_wait(pid_t pid, int *signo)
{
    struct sigaction ign = {0}, fwd = {0}, oint, oquit, oterm, ohup;
    ign.sa_handler = SIG_IGN;
    fwd.sa_handler = forward;
    sigemptyset(&ign.sa_mask);
    sigemptyset(&fwd.sa_mask);
    child_pid = pid;
    sigaction(SIGINT, &ign, &oint);
    sigaction(SIGQUIT, &ign, &oquit);
    sigaction(SIGTERM, &fwd, &oterm);
    sigaction(SIGHUP, &fwd, &ohup);
    int st = 0;
    pid_t r;
    do
        r = waitpid(pid, &st, 0);
    while (r < 0 && errno == EINTR);
    sigaction(SIGINT, &oint, NULL);
    sigaction(SIGQUIT, &oquit, NULL);
    sigaction(SIGTERM, &oterm, NULL);
    sigaction(SIGHUP, &ohup, NULL);
    child_pid = 0;
    *signo = 0;
    if (r < 0)
        return 125;
    if (WIFSIGNALED(st)) {
        *signo = WTERMSIG(st);
        return 128 + WTERMSIG(st);
    }
    return WEXITSTATUS(st);
}

int launch_move(const char *from, const char *to)
{
    /* Only a regular file (or a new name) is replaced by the rename; a
     * symlink, a device or a FIFO is written through, as os.Create would. */
    struct stat st;
    bool through = lstat(to, &st) == 0 && !S_ISREG(st.st_mode);
    if (!through && rename(from, to) == 0)
        return 0;
    if (!through && errno != EXDEV)
        return -errno;
    int in = open(from, O_RDONLY | O_CLOEXEC);
    if (in < 0)
        return -errno;
    int out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (out < 0) {
        int e = errno;
        close(in);
        return -e;
    }
    char buf[65536];
    ssize_t n;
    int rc = 0;
    while ((n = read(in, buf, sizeof(buf))) != 0) {
        if (n < 0) {
            if (errno == EINTR)
                continue;
            rc = -errno;
            break;
        }
        for (ssize_t w = 0; w < n;) {
            ssize_t m = write(out, buf + w, (size_t)(n - w));
            if (m < 0) {
                if (errno == EINTR)
                    continue;
                rc = -errno;
                break;
            }
            w += m;
        }
        if (rc)
            break;
    }
    close(in);
    if (close(out) < 0 && rc == 0)
        rc = -errno;
    if (rc == 0)
        unlink(from);
    return rc;
}
