/* pages.h — mapping a block's pages written, at once (base).
 *
 * A large table read at random before its pages are written faults each
 * page twice: once for the shared zero page, then a copy-on-write that
 * also flushes the other threads' TLBs. Mapping them written up front is
 * one system call (MADV_POPULATE_WRITE, Linux 5.14) or one write per page.
 * No allocation, no lock: the runtime uses it too. */
#ifndef CPROF_BASE_PAGES_H
#define CPROF_BASE_PAGES_H

#include <stddef.h>

/* Maps every page that [p, p + size) touches written; the bytes keep their
 * values. */
void pages_populate(void *p, size_t size);

#endif
