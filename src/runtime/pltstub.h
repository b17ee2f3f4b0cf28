/* pltstub.h — aarch64 PLT stubs, which carry no call-frame information
 * (the linkers emit no .eh_frame for aarch64's .plt, unlike x86-64's): an
 * interrupted pc there would end the cfi walk of a CPU sample (cfi.h), and
 * libunwind, its fallback, loses the callers of a pac-ret program. A stub
 * never calls, so it is only ever the interrupted frame, and its frame is
 * a leaf's: the return address is in x30, the frame pointer untouched, and
 * the CFA sp itself, except in the lazy-binding header (PLT0) after its
 * `stp x16, x30, [sp, #-16]!`, where it is sp + 16.
 *
 * Owns: recognizing the stubs binutils and lld emit (elfNN-aarch64.c's
 * small PLT entries and PLT0, each with or without a leading `bti c` and a
 * `autia1716`/`autib1716` before the branch) from their instruction words.
 *
 * Pure: reads only the words it is given; no lock, no allocation, so safe
 * in a signal handler. Compiled on every architecture (the unit test runs
 * on the build host); only the aarch64 cfi walk calls it. */
#ifndef CPROF_PLTSTUB_H
#define CPROF_PLTSTUB_H

#include <stddef.h>
#include <stdint.h>

/* code[0..n) are consecutive instruction words, code[at] the one at the
 * interrupted pc. The CFA's offset from sp there (0 or 16) if that word
 * belongs to a PLT stub, else -1. */
int plt_stub_cfa_sigsafe(const uint32_t *code, size_t n, size_t at);

#endif
