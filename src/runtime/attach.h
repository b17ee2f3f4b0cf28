/* attach.h — the runtime's side of `cprof attach PID` / `cprof detach PID`:
 * libcprof.so loaded late into a running program (the tool makes the
 * program call its own dlopen, then these entry points), routing the
 * program's calls to cprof through the GOT (gotpatch.h) instead of a
 * preload.
 *
 * cprof__attach(settings): settings is "key=value" words separated by
 * spaces — rate=BYTES mutex_rate=N block_rate=NS http=HOST:PORT
 * token=TOKEN cpu=FILE module=PATH (every one optional; module: where
 * libcprof-http.so is when not beside libcprof.so, see httpctl.h). It refuses a program that
 * already runs cprof (-EEXIST: preloaded or linked; -EALREADY: attached)
 * or whose malloc is not the C library's (-ENOTSUP: mixing allocators would
 * free one's blocks into the other); then it loads the HTTP module, routes
 * every module's allocation, C++ operator, pthread_create and lock calls
 * to cprof, sets the rates, starts the server and a thread that routes the
 * modules loaded later (a poll of the loader's module counters every
 * 20 ms). Returns the server's port (0 when no http= was given), or a
 * negative errno with everything undone.
 *
 * cprof__detach(): stops the server, the CPU profile and the poller, sets
 * the rates to 0 and writes back the GOT slots, except those of free,
 * realloc, reallocarray and malloc_usable_size: cprof's own memory (its
 * private heap, ownheap.h) may be held by the C library (stdio buffers,
 * time zone data made while cprof wrote a profile) and must keep coming
 * back to cprof when freed. Frees stay counted, so the heap profile of
 * what was sampled stays exact across detach and a later attach; the
 * whole-process counters pause (counters.h) and keep only the frees of
 * sampled blocks. 0, or -ENOTCONN when not attached.
 *
 * Blocks allocated before the attach are unknown to cprof: their frees and
 * reallocs find no live-map entry and take nothing from the profile; the
 * whole-process counters (cprof_stats_t) count calls while attached, and
 * live_bytes / live_objects, which those cannot give, stop at 0
 * (counters_live_bytes). */
#ifndef CPROF_ATTACH_H
#define CPROF_ATTACH_H

int cprof__attach(const char *settings);
int cprof__detach(void);

#endif
