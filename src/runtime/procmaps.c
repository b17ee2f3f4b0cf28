/* procmaps.c — executable mappings and build ids (see procmaps.h). */
#include "procmaps.h"

#include "rt.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

char *procmaps_slurp(const char *path, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    size_t cap = 16384, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        if (n + 1 >= cap) {
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
        ssize_t r = read(fd, buf + n, cap - n - 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        n += (size_t)r;
    }
    close(fd);
    if (buf) {
        buf[n] = '\0';
        if (len)
            *len = n;
    }
    return buf;
}

typedef struct {
    procmap_t *maps;
    size_t n;
} note_ctx_t;

static void hex(char *out, const unsigned char *d, size_t n)
{
    static const char digits[] = "0123456789abcdef";
    if (n > 20)
        n = 20;
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[d[i] >> 4];
        out[2 * i + 1] = digits[d[i] & 15];
    }
    out[2 * n] = '\0';
}

/* Finds NT_GNU_BUILD_ID in the loaded object's PT_NOTE segments and gives
 * it to every mapping that lies in the object's PT_LOAD segments. */
static int note_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    note_ctx_t *c = arg;
    char id[41] = "";
    for (int i = 0; i < info->dlpi_phnum && !id[0]; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_NOTE)
            continue;
        const char *p = (const char *)(info->dlpi_addr + ph->p_vaddr);
        const char *end = p + ph->p_memsz;
        while (p + sizeof(ElfW(Nhdr)) <= end) {
            const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
            const char *name = p + sizeof(*nh);
            const char *desc = name + ((nh->n_namesz + 3) & ~3u);
            if (desc + nh->n_descsz > end)
                break;
            if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 && !memcmp(name, "GNU", 4)) {
                hex(id, (const unsigned char *)desc, nh->n_descsz);
                break;
            }
            p = desc + ((nh->n_descsz + 3) & ~3u);
        }
    }
    if (!id[0])
        return 0;
    /* A segment's mapping starts at its first page: lld starts the
     * executable segment inside a page (the read-only one's last), so the
     * r-xp mapping begins below p_vaddr. */
    uint64_t page_mask = ~((uint64_t)sysconf(_SC_PAGESIZE) - 1);
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        uint64_t hi = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
        uint64_t lo = (info->dlpi_addr + ph->p_vaddr) & page_mask;
        for (size_t j = 0; j < c->n; j++)
            if (c->maps[j].start >= lo && c->maps[j].start < hi)
                memcpy(c->maps[j].build_id, id, sizeof(id));
    }
    return 0;
}

/* The kernel marks a file removed since it was mapped; the name is still
 * the one to look the binary up by. */
static void strip_deleted(char *path)
{
    size_t n = strlen(path);
    if (n > 10 && strcmp(path + n - 10, " (deleted)") == 0)
        path[n - 10] = '\0';
}

static int cmp_start(const void *a, const void *b)
{
    const procmap_t *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

int procmaps_read(procmap_t **out, size_t *n_out)
{
    char *text = procmaps_slurp("/proc/self/maps", NULL);
    if (!text)
        return -errno ? -errno : -ENOMEM;
    char exe[4096];
    ssize_t el = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    exe[el > 0 ? el : 0] = '\0';
    strip_deleted(exe);

    size_t cap = 64, n = 0;
    procmap_t *m = malloc(cap * sizeof(*m));
    for (char *line = text, *next; m && line && *line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        unsigned long long start, end, off;
        char perms[5];
        int pos = 0;
        if (sscanf(line, "%llx-%llx %4s %llx %*s %*s%n", &start, &end, perms, &off, &pos) < 4 ||
            perms[2] != 'x')
            continue;
        const char *path = line + pos;
        while (*path == ' ')
            path++;
        if (!*path) /* anonymous executable memory (JITs): no file to name */
            continue;
        if (n == cap) {
            procmap_t *nm = realloc(m, cap * 2 * sizeof(*m));
            if (!nm)
                break;
            m = nm;
            cap *= 2;
        }
        m[n] = (procmap_t){.start = start, .limit = end, .offset = off, .path = strdup(path)};
        if (!m[n].path)
            break;
        strip_deleted(m[n].path);
        n++;
    }
    free(text);
    if (!m)
        return -ENOMEM;
    qsort(m, n, sizeof(*m), cmp_start);
    note_ctx_t ctx = {m, n};
    rt_iterate_phdr(note_cb, &ctx);
    /* The main executable first (stable: its own segments keep order). */
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (exe[0] && strcmp(m[i].path, exe) == 0) {
            procmap_t tmp = m[i];
            memmove(&m[k + 1], &m[k], (i - k) * sizeof(*m));
            m[k++] = tmp;
        }
    }
    *out = m;
    *n_out = n;
    return 0;
}

void procmaps_free(procmap_t *m, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(m[i].path);
    free(m);
}

const procmap_t *procmaps_find(const procmap_t *m, size_t n, uint64_t addr)
{
    for (size_t i = 0; i < n; i++)
        if (addr >= m[i].start && addr < m[i].limit)
            return &m[i];
    return NULL;
}

ssize_t procmaps_read_small(const char *path, char *buf, size_t cap)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, cap - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    return n;
}

int procmaps_task_signal(pid_t tid, int sig)
{
    char path[64], buf[2048];
    snprintf(path, sizeof(path), "/proc/self/task/%d/status", (int)tid);
    if (procmaps_read_small(path, buf, sizeof(buf)) < 0)
        return -1;
    const char *st = strstr(buf, "\nState:");
    if (st && (strstr(st, "\tZ") == st + 7 || strstr(st, "\tX") == st + 7))
        return -1;
    int r = 0;
    const char *blk = strstr(buf, "\nSigBlk:"), *pnd = strstr(buf, "\nSigPnd:");
    if (blk && (strtoull(blk + 8, NULL, 16) >> (sig - 1)) & 1)
        r |= PROCMAPS_SIG_BLOCKED;
    if (pnd && (strtoull(pnd + 8, NULL, 16) >> (sig - 1)) & 1)
        r |= PROCMAPS_SIG_PENDING;
    return r;
}
