/* attachns.c — a target in other namespaces (see attachns.h). */
#include "tool/ui/attachns.h"

#include "base/err.h"
#include "base/fdio.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static bool same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
}

bool attachns_other(pid_t pid, const char *ns)
{
    char mine[64], its[64];
    snprintf(mine, sizeof(mine), "/proc/self/ns/%s", ns);
    snprintf(its, sizeof(its), "/proc/%d/ns/%s", (int)pid, ns);
    struct stat s;
    return stat(its, &s) == 0 && !same_file(mine, its);
}

bool attachns_sees(pid_t pid, const char *path)
{
    char its[PATH_MAX + 32];
    snprintf(its, sizeof(its), "/proc/%d/root%s", (int)pid, path);
    return same_file(path, its);
}

int attachns_fill(pid_t pid, int fd, const char *src, char *err, size_t errlen)
{
    char dst[64];
    snprintf(dst, sizeof(dst), "/proc/%d/fd/%d", (int)pid, fd);
    int in = open(src, O_RDONLY | O_CLOEXEC);
    if (in < 0)
        return err_fmt(err, errlen, -errno, "%s: %s", src, strerror(errno));
    int out = open(dst, O_WRONLY | O_TRUNC | O_CLOEXEC);
    if (out < 0) {
        int e = errno;
        close(in);
        return err_fmt(err, errlen, -e, "%s: %s", dst, strerror(e));
    }
    char buf[65536];
    ssize_t r;
    int rc = 0;
    while (rc == 0 && (r = read(in, buf, sizeof(buf))) != 0) {
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0 || fdio_write_all(out, buf, (size_t)r, FDIO_STALL_MS) < 0)
            rc = err_fmt(err, errlen, -EIO, "copying %s into %s failed", src, dst);
    }
    close(in);
    if (close(out) < 0 && rc == 0)
        rc = err_fmt(err, errlen, -EIO, "copying %s into %s failed", src, dst);
    return rc;
}

int attachns_memfd(pid_t pid, const char *name)
{
    char dir[64], want[PATH_MAX];
    snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)pid);
    snprintf(want, sizeof(want), "/memfd:%s (deleted)", name);
    DIR *d = opendir(dir);
    int found = -1;
    for (struct dirent *e; d && found < 0 && (e = readdir(d));) {
        char link[sizeof(dir) + sizeof(e->d_name) + 1], target[PATH_MAX];
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        snprintf(link, sizeof(link), "%s/%s", dir, e->d_name);
        ssize_t l = readlink(link, target, sizeof(target) - 1);
        if (l <= 0)
            continue;
        target[l] = '\0';
        if (strcmp(target, want) == 0)
            found = atoi(e->d_name);
    }
    if (d)
        closedir(d);
    return found;
}
