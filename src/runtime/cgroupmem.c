/* cgroupmem.c — the cgroup v2 memory files (see cgroupmem.h). */
#include "cgroupmem.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The file dir/name into buf, NUL-terminated. Its length or -errno. */
static ssize_t read_file(const char *dir, const char *name, char *buf, size_t len)
{
    char path[4200];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    ssize_t n = read(fd, buf, len - 1);
    int e = errno;
    close(fd);
    if (n < 0)
        return -e;
    buf[n] = '\0';
    return n;
}

int cgroupmem_open(cgroupmem_t *c, const char *dir)
{
    char buf[4096];
    if (dir) {
        snprintf(c->dir, sizeof(c->dir), "%s", dir);
    } else {
        if (read_file("/proc/self", "cgroup", buf, sizeof(buf)) < 0)
            return -ENOENT;
        /* The unified hierarchy's line: "0::/path". */
        char *line = strstr(buf, "0::");
        if (line && line != buf && line[-1] != '\n')
            line = NULL;
        if (!line)
            return -ENOENT;
        line += 3;
        line[strcspn(line, "\n")] = '\0';
        snprintf(c->dir, sizeof(c->dir), "/sys/fs/cgroup%s", strcmp(line, "/") == 0 ? "" : line);
    }
    return read_file(c->dir, "memory.current", buf, 64) < 0 ? -ENOENT : 0;
}

/* A value of memory.max or memory.high: bytes, or "max". */
static uint64_t limit_of(const char *s)
{
    return strncmp(s, "max", 3) == 0 ? UINT64_MAX : strtoull(s, NULL, 10);
}

/* The count of key in memory.events ("key N" lines), 0 if absent. */
static uint64_t event(const char *buf, const char *key)
{
    size_t k = strlen(key);
    for (const char *p = buf; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
        if (strncmp(p, key, k) == 0 && p[k] == ' ')
            return strtoull(p + k + 1, NULL, 10);
    return 0;
}

int cgroupmem_read(const cgroupmem_t *c, cgroupmem_state_t *s)
{
    char buf[1024];
    ssize_t rc;
    if ((rc = read_file(c->dir, "memory.current", buf, sizeof(buf))) < 0)
        return (int)rc;
    s->current = strtoull(buf, NULL, 10);
    s->max = read_file(c->dir, "memory.max", buf, sizeof(buf)) < 0 ? UINT64_MAX : limit_of(buf);
    s->high = read_file(c->dir, "memory.high", buf, sizeof(buf)) < 0 ? UINT64_MAX : limit_of(buf);
    if (read_file(c->dir, "memory.events", buf, sizeof(buf)) < 0)
        buf[0] = '\0';
    s->ev_high = event(buf, "high");
    s->ev_max = event(buf, "max");
    s->ev_oom = event(buf, "oom");
    s->ev_oom_kill = event(buf, "oom_kill");
    return 0;
}

bool cgroupmem_crossed(const cgroupmem_state_t *prev, const cgroupmem_state_t *s, double fraction,
                       char *why, size_t whylen)
{
    uint64_t limit = s->max < s->high ? s->max : s->high;
    uint64_t plimit = prev->max < prev->high ? prev->max : prev->high;
    if (limit != UINT64_MAX) {
        double mark = fraction * (double)limit;
        bool was = plimit != UINT64_MAX && (double)prev->current >= fraction * (double)plimit;
        if ((double)s->current >= mark && !was) {
            snprintf(why, whylen, "cgroup memory.current %llu of %s %llu",
                     (unsigned long long)s->current, s->max <= s->high ? "memory.max" : "memory.high",
                     (unsigned long long)limit);
            return true;
        }
    }
    if (s->ev_high > prev->ev_high || s->ev_max > prev->ev_max || s->ev_oom > prev->ev_oom ||
        s->ev_oom_kill > prev->ev_oom_kill) {
        snprintf(why, whylen, "cgroup memory.events high %llu max %llu oom %llu oom_kill %llu",
                 (unsigned long long)s->ev_high, (unsigned long long)s->ev_max,
                 (unsigned long long)s->ev_oom, (unsigned long long)s->ev_oom_kill);
        return true;
    }
    return false;
}
