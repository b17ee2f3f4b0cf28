/* pagemap.h — which pages of the process's memory are resident or
 * swapped, from /proc/self/pagemap (Documentation/admin-guide/mm/
 * pagemap.rst: bit 63 present, bit 62 swapped), for the memory profile
 * (memprof.h) and the heap profile's resident_space (heapprof.h).
 *
 * Entries are read into a window: a miss reads the pages the range asks
 * for, at least PAGEMAP_AHEAD and at most PAGEMAP_WINDOW (2 MiB of memory),
 * so objects visited in address order cost one pread per window, and
 * scattered ones a small read each, not 4 KiB. Pages are 4 KiB (x86-64,
 * arm64 with 4 KiB pages; a bigger page reads as 4 KiB entries alike).
 *
 * A pagemap_t belongs to one caller: no lock, nothing shared; it reads a
 * file, so not from a signal handler. Without pagemap (a kernel that
 * refuses it) every page reads as not resident. */
#ifndef CPROF_PAGEMAP_H
#define CPROF_PAGEMAP_H

#include <stdint.h>
#include <sys/types.h>

#define PAGEMAP_PAGE 4096ull
#define PAGEMAP_WINDOW 512
#define PAGEMAP_AHEAD 32

typedef struct {
    int fd;            /* /proc/self/pagemap, or -1 */
    uintptr_t first;   /* page number of e[0] */
    size_t n;          /* entries of e read, 0: none */
    uint64_t e[PAGEMAP_WINDOW];
} pagemap_t;

/* 0, or -errno (then fd is -1 and every page reads as absent). */
int pagemap_open(pagemap_t *pm);
void pagemap_close(pagemap_t *pm);

/* The entry of the page holding a; 0 if it cannot be read. */
uint64_t pagemap_entry(pagemap_t *pm, uintptr_t a);

/* Resident and swapped bytes of [lo, hi), whole pages (lo, hi aligned). */
void pagemap_measure(pagemap_t *pm, uintptr_t lo, uintptr_t hi, uint64_t *res, uint64_t *swap);

/* The bytes of the last pages of [lo, hi) (aligned) that are not
 * resident, up to the last resident one; those swapped also in *swap. */
uint64_t pagemap_absent_tail(pagemap_t *pm, uintptr_t lo, uintptr_t hi, uint64_t *swap);

/* The resident bytes of [lo, hi) at byte granularity: each page's share
 * of the range, so an object in half a resident page counts its bytes. */
uint64_t pagemap_resident_bytes(pagemap_t *pm, uintptr_t lo, uintptr_t hi);

#endif
