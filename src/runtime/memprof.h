/* memprof.h — the memory profile (CPROF_MEMORY_PROFILE, /debug/pprof/memory,
 * cprof_memory_profile_write*): the whole process's memory, every byte of
 * /proc/self/smaps given to one class, so that the samples add up to the
 * process's Rss and Size as smaps_rollup reports them at the same moment.
 *
 * Sample types resident_space/bytes (the default), virtual_space/bytes and
 * swap_space/bytes; every sample has the string label class=CLASS:
 *   heap       the live sampled allocations, their stacks, scaled as the
 *              heap profile scales them; resident part from pagemap;
 *   heap-free  what glibc's malloc holds freed (its arenas' bytes less the
 *              chunks in use, from the exact counters: glibcheap.h; the
 *              untouched pages at the main heap's end, its top chunk's,
 *              not resident, the other free chunks resident), its
 *              arenas' reserved tails;
 *   allocator  the rest of the allocator's memory: chunk headers and
 *              rounding, and the estimate's error at rates above 1;
 *   mmap       anonymous memory nothing else explains (no mmap hook yet:
 *              one frame naming the mapping, not its caller's stack);
 *   stack      thread stacks, one sample per thread (label thread=NAME);
 *   code       the loaded objects' segments (their bss too), by object;
 *   file       other file mappings, by path;
 *   cprof      cprof's own arenas, private heap and loaded objects;
 *   other      the rest, by mapping ([vdso], guard pages...).
 * Classes without stacks have one synthetic frame naming the mapping,
 * object or thread.
 *
 * Where mappings merged in the kernel (an mmap beside cprof's arena), the
 * parts are told apart by address and measured with /proc/self/pagemap;
 * what a mapping's smaps line counts beyond its measured parts goes to the
 * mapping's own class, so every mapping's total is exactly its smaps line.
 *
 * Runs with the guard set in an ordinary thread (it allocates and reads
 * /proc); the live map's stripes are held only while it is copied. */
#ifndef CPROF_MEMPROF_H
#define CPROF_MEMPROF_H

/* debug 0: gzipped profile.proto; 1: each class's totals and each sample
 * without a stack, as text. 0 or a negative errno. */
int memprof_write(int fd, int debug);

#endif
