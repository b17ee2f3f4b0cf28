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

/* The entry of page, reading want entries from it on a miss. */
static uint64_t entry(pagemap_t *pm, uintptr_t page, size_t want)
{
    if (page - pm->first >= pm->n) {
        pm->n = 0;
        if (pm->fd < 0)
            return 0;
        want = want < PAGEMAP_AHEAD ? PAGEMAP_AHEAD : want > PAGEMAP_WINDOW ? PAGEMAP_WINDOW : want;
        ssize_t got = pread(pm->fd, pm->e, want * 8, (off_t)(page * 8));
        if (got < 8) /* the read may reach past the address space's end */
            got = pread(pm->fd, pm->e, 8, (off_t)(page * 8));
        if (got < 8)
            return 0;
        pm->first = page;
        pm->n = (size_t)got / 8;
    }
    return pm->e[page - pm->first];
}

uint64_t pagemap_entry(pagemap_t *pm, uintptr_t a)
{
    return entry(pm, a / PAGEMAP_PAGE, 1);
}

void pagemap_measure(pagemap_t *pm, uintptr_t lo, uintptr_t hi, uint64_t *res, uint64_t *swap)
{
    *res = *swap = 0;
    for (uintptr_t a = lo; a < hi; a += PAGEMAP_PAGE) {
        uint64_t e = entry(pm, a / PAGEMAP_PAGE, (hi - a + PAGEMAP_PAGE - 1) / PAGEMAP_PAGE);
        if (e >> 63)
            *res += PAGEMAP_PAGE;
        else if ((e >> 62) & 1)
            *swap += PAGEMAP_PAGE;
    }
}

uint64_t pagemap_absent_tail(pagemap_t *pm, uintptr_t lo, uintptr_t hi, uint64_t *swap)
{
    *swap = 0;
    uintptr_t a = hi;
    while (a > lo) {
        /* a window's read ending at a, its pages visited downwards */
        uintptr_t wlo = a - lo > PAGEMAP_WINDOW * PAGEMAP_PAGE ? a - PAGEMAP_WINDOW * PAGEMAP_PAGE : lo;
        entry(pm, wlo / PAGEMAP_PAGE, (a - wlo) / PAGEMAP_PAGE);
        for (; a > wlo; a -= PAGEMAP_PAGE) {
            uint64_t e = entry(pm, (a - PAGEMAP_PAGE) / PAGEMAP_PAGE, 1);
            if (e >> 63)
                return hi - a;
            if ((e >> 62) & 1)
                *swap += PAGEMAP_PAGE;
        }
    }
    return hi - a;
}

uint64_t pagemap_resident_bytes(pagemap_t *pm, uintptr_t lo, uintptr_t hi)
{
    uint64_t res = 0;
    for (uintptr_t a = lo; a < hi;) {
        uintptr_t next = (a / PAGEMAP_PAGE + 1) * PAGEMAP_PAGE, end = next < hi ? next : hi;
        if (entry(pm, a / PAGEMAP_PAGE, (hi - a + PAGEMAP_PAGE - 1) / PAGEMAP_PAGE) >> 63)
            res += end - a;
        a = end;
    }
    return res;
}
