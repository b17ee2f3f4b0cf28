/* mmaphooks.h — the program's anonymous mappings with their stacks, for
 * the memory profile's mmap class (memprof.h): mmap, mmap64, munmap,
 * mremap, brk and sbrk are interposed, and an anonymous mapping the
 * program makes (or what it grows the break by) is sampled by its bytes
 * with the heap's sampler (every one at CPROF_RATE=1) and kept with its
 * stack until it is unmapped (or the break shrinks over it).
 *
 * Only the program's own calls count: a call with the guard set (cprof's
 * own, and the allocator's, which the malloc hooks call guarded) is
 * forwarded and nothing else; glibc's malloc and thread stacks map memory
 * through libc's internal calls, which no interposition sees. A hook
 * forwards to the next definition (dlsym(RTLD_NEXT), resolved by
 * mmaphooks_init in cprof's constructor; a raw system call before that).
 *
 * munmap (and a MAP_FIXED mmap or an mremap over a kept range) trims or
 * splits what it covers; mremap moves a kept mapping's range, and what it
 * grows a mapping not kept by is sampled as new bytes. The table
 * (MMAPHOOKS_MAX entries in arena memory) takes one rt_lock, held only for
 * its own updates and copies, and around fork (pthread_atfork). When it is
 * full a new sample is dropped (counted). Not for signal handlers. */
#ifndef CPROF_MMAPHOOKS_H
#define CPROF_MMAPHOOKS_H

#include <stddef.h>
#include <stdint.h>

#define MMAPHOOKS_MAX 4096
#define MMAPHOOKS_DEPTH 32

typedef struct {
    uintptr_t lo, hi;    /* the range still mapped */
    int64_t rate;        /* the rate it was sampled at */
    uint32_t depth;
    uintptr_t pcs[MMAPHOOKS_DEPTH]; /* return addresses, leaf first */
} mmap_rec_t;

/* In cprof's constructor, guarded: finds the next mmap functions. */
void mmaphooks_init(void);

/* The bytes the program itself moved the break by, net of its shrinks:
 * every call counted, sampled or not (glibc's free bytes, glibcheap.h). */
int64_t mmaphooks_brk_bytes(void);

/* The kept mappings now (a hint for mmaphooks_copy's buffer). */
size_t mmaphooks_count(void);

/* Copies up to max kept mappings into out; returns how many, and in
 * *dropped the samples dropped for want of room. */
size_t mmaphooks_copy(mmap_rec_t *out, size_t max, uint64_t *dropped);

#endif
