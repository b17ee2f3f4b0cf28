/* pagemap.c — residency from /proc/self/pagemap (see pagemap.h). */
#include "pagemap.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

int pagemap_open(pagemap_t *pm)
{
    pm->n = 0;
    pm->first = 0;
    pm->fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
    return pm->fd < 0 ? -errno : 0;
}

void pagemap_close(pagemap_t *pm)
{
    if (pm->fd >= 0)
        close(pm->fd);
    pm->fd = -1;
    pm->n = 0;
}

uint64_t pagemap_entry(pagemap_t *pm, uintptr_t a)
{
    uintptr_t page = a / PAGEMAP_PAGE;
    if (page - pm->first >= pm->n) {
        pm->n = 0;
        if (pm->fd < 0)
            return 0;
        ssize_t got = pread(pm->fd, pm->e, sizeof(pm->e), (off_t)(page * 8));
        if (got < 8) /* the window may end where the address space does */
            got = pread(pm->fd, pm->e, 8, (off_t)(page * 8));
        if (got < 8)
            return 0;
        pm->first = page;
        pm->n = (size_t)got / 8;
    }
    return pm->e[page - pm->first];
}

void pagemap_measure(pagemap_t *pm, uintptr_t lo, uintptr_t hi, uint64_t *res, uint64_t *swap)
{
    *res = *swap = 0;
    for (uintptr_t a = lo; a < hi; a += PAGEMAP_PAGE) {
        uint64_t e = pagemap_entry(pm, a);
        if (e >> 63)
            *res += PAGEMAP_PAGE;
        else if ((e >> 62) & 1)
            *swap += PAGEMAP_PAGE;
    }
}

uint64_t pagemap_resident_bytes(pagemap_t *pm, uintptr_t lo, uintptr_t hi)
{
    uint64_t res = 0;
    for (uintptr_t a = lo; a < hi;) {
        uintptr_t next = (a / PAGEMAP_PAGE + 1) * PAGEMAP_PAGE, end = next < hi ? next : hi;
        if (pagemap_entry(pm, a) >> 63)
            res += end - a;
        a = end;
    }
    return res;
}
