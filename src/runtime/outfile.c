/* outfile.c — output paths opened as os.Create would (see outfile.h). */
#include "outfile.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Removes "BASE.tmp.PID[.N]" in dir for every PID that no longer runs: a
 * process killed between its open and its rename leaves these behind. */
static void remove_stale(const char *dir, const char *base)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    size_t blen = strlen(base);
    struct dirent *e;
    while ((e = readdir(d))) {
        const char *n = e->d_name;
        if (strncmp(n, base, blen) != 0 || strncmp(n + blen, ".tmp.", 5) != 0)
            continue;
        char *end;
        long pid = strtol(n + blen + 5, &end, 10);
        if (end == n + blen + 5 || pid <= 0 || pid > INT_MAX || pid == getpid())
            continue;
        if (*end == '.') {
            const char *seq = end + 1;
            strtoull(seq, &end, 10);
            if (end == seq)
                continue;
        }
        if (*end == '\0' && kill((pid_t)pid, 0) < 0 && errno == ESRCH)
            unlinkat(dirfd(d), n, 0);
    }
    closedir(d);
}

/* The temporary beside f->path, made and opened; stale ones removed. */
static int open_atomic(outfile_t *f, uint64_t seq, mode_t mode)
{
    char *slash = strrchr(f->path, '/');
    if (slash == f->path) {
        remove_stale("/", slash + 1);
    } else {
        *slash = '\0';
        remove_stale(f->path, slash + 1);
        *slash = '/';
    }
    snprintf(f->tmp, sizeof(f->tmp), "%s.tmp.%d.%llu", f->path, (int)getpid(),
             (unsigned long long)seq);
    f->fd = open(f->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (f->fd < 0)
        return -errno;
    if (mode)
        (void)fchmod(f->fd, mode & 07777); /* the file keeps its mode, as with O_TRUNC */
    f->atomic = true;
    return 0;
}

static int open_path(outfile_t *f, const char *path, uint64_t seq)
{
    f->fd = -1;
    f->atomic = false;
    f->tmp[0] = '\0';
    /* Absolute: a CPU profile is renamed at its end, after any chdir. */
    size_t n;
    if (path[0] != '/' && getcwd(f->path, sizeof(f->path)) &&
        (n = strlen(f->path)) + strlen(path) + 2 <= sizeof(f->path)) {
        f->path[n] = '/';
        strcpy(f->path + n + 1, path);
    } else if (strlen(path) < sizeof(f->path)) {
        strcpy(f->path, path);
    } else {
        return -ENAMETOOLONG;
    }
    struct stat st;
    if (lstat(f->path, &st) < 0) {
        if (errno != ENOENT)
            return -errno;
        return open_atomic(f, seq, 0);
    }
    if (S_ISLNK(st.st_mode)) {
        char real[PATH_MAX];
        if (!realpath(f->path, real)) {
            if (errno != ENOENT)
                return -errno;
            /* A dangling link: its target is created through it. */
            f->fd = open(f->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
            return f->fd < 0 ? -errno : 0;
        }
        if (strlen(real) >= sizeof(f->path))
            return -ENAMETOOLONG;
        strcpy(f->path, real);
        if (stat(f->path, &st) < 0) {
            if (errno != ENOENT)
                return -errno;
            return open_atomic(f, seq, 0);
        }
    }
    if (S_ISREG(st.st_mode))
        return open_atomic(f, seq, st.st_mode);
    if (S_ISDIR(st.st_mode))
        return -EISDIR;
    if (S_ISSOCK(st.st_mode))
        return -EOPNOTSUPP;
    if (S_ISBLK(st.st_mode))
        return -ENOTBLK;
    /* A character device or a FIFO. Non-blocking open: a FIFO nobody reads
     * fails (ENXIO) instead of hanging the program. The descriptor stays
     * non-blocking (it is this open's own, not the program's): writers wait
     * for a slow reader up to a deadline (base/fdio.h), so a reader that
     * stops reading cannot hang the program's exit. */
    f->fd = open(f->path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (f->fd < 0)
        return errno == ENXIO && !S_ISFIFO(st.st_mode) ? -ENODEV : -errno;
    return 0;
}

int outfile_open(outfile_t *f, const char *path, uint64_t seq)
{
    int rc = open_path(f, path, seq);
    struct stat st;
    if (rc == 0 && fstat(f->fd, &st) == 0) {
        f->dev = st.st_dev;
        f->ino = st.st_ino;
    }
    return rc;
}

static bool same_file(const outfile_t *f, int fd)
{
    struct stat st;
    return fd >= 0 && fstat(fd, &st) == 0 && st.st_dev == f->dev && st.st_ino == f->ino;
}

int outfile_fd(outfile_t *f)
{
    if (f->fd < 0 || same_file(f, f->fd))
        return f->fd < 0 ? -EBADF : f->fd;
    /* Appended to: what was written before stays. Non-blocking as at the
     * first open, for a FIFO whose reader went away. */
    int fd = open(f->atomic ? f->tmp : f->path, O_WRONLY | O_APPEND | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    if (!same_file(f, fd)) {
        close(fd);
        return -ESTALE; /* the path leads elsewhere now */
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0)
        fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    f->fd = fd;
    return fd;
}

int outfile_nopipe(int (*fn)(void *arg), void *arg)
{
    sigset_t pipe, old, pending;
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE);
    sigpending(&pending);
    bool was_pending = sigismember(&pending, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe, &old);
    int rc = fn(arg);
    if (rc == -EPIPE && !was_pending) {
        /* Take back the SIGPIPE our write raised before unblocking. */
        const struct timespec zero = {0, 0};
        while (sigtimedwait(&pipe, NULL, &zero) == SIGPIPE)
            ;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
}

typedef struct {
    outfile_t *f;
    int (*write)(int fd, void *arg);
    void *arg;
} owrite_t;

static int write_open(void *arg)
{
    owrite_t *w = arg;
    int fd = outfile_fd(w->f);
    return fd < 0 ? fd : w->write(fd, w->arg);
}

int outfile_write(outfile_t *f, int (*write)(int fd, void *arg), void *arg)
{
    owrite_t w = {f, write, arg};
    return outfile_nopipe(write_open, &w);
}

int outfile_close(outfile_t *f, int rc)
{
    if (f->fd < 0)
        return rc;
    /* Only if it is still the file: else the number is the program's. */
    if (same_file(f, f->fd) && close(f->fd) < 0 && rc == 0)
        rc = -errno;
    f->fd = -1;
    if (f->atomic) {
        if (rc == 0 && rename(f->tmp, f->path) < 0)
            rc = -errno;
        if (rc < 0)
            unlink(f->tmp);
    }
    return rc;
}

void outfile_drop(outfile_t *f)
{
    if (same_file(f, f->fd))
        close(f->fd);
    f->fd = -1;
}

const char *outfile_strerror(int rc)
{
    switch (rc) {
    case -EISDIR:
        return "it is a directory";
    case -EOPNOTSUPP:
        return "it is a socket (profiles go to files, character devices and FIFOs)";
    case -ENOTBLK:
        return "it is a block device (profiles go to files, character devices and FIFOs)";
    case -ENXIO:
        return "it is a FIFO that no process has open for reading";
    case -EPIPE:
        return "the reader of the FIFO or pipe went away";
    case -ETIMEDOUT:
        return "its reader stopped reading (gave up after 5 s)";
    default:
        return strerror(-rc);
    }
}
