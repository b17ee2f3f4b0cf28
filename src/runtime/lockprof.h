/* lockprof.h — the mutex and block profiles: what the lock hooks
 * (lockhooks.c) record, and the profiles written from it.
 *
 * Mutex profile (Go's SetMutexProfileFraction): a pthread_mutex_lock,
 * timedlock/clocklock or rwlock rd/wr lock that finds the lock taken is a
 * contention event; with rate N, one event in N on average (chosen at
 * random) is recorded: its stack and the nanoseconds the thread waited
 * for the lock. Unlike Go, which charges the delay to the unlocking
 * goroutine's stack, cprof charges it to the waiter's: the function that
 * called pthread_mutex_lock (the leaf of the stack) is the one that waited.
 * Written as Go 1.19 writes it: sample types contentions/count and
 * delay/nanoseconds, period type contentions/count, period 1, and values
 * multiplied by the rate (unbiased estimates); debug=1 is the
 * "--- mutex:" text with the raw numbers and "sampling period=N".
 *
 * Block profile (Go's SetBlockProfileRate): time spent waiting in
 * pthread_cond_wait/timedwait/clockwait, and in the contended lock calls
 * above. With rate R nanoseconds, an event that blocked d >= R ns is always
 * recorded, a shorter one with probability d/R (Go's blocksampled); values
 * are not scaled; debug=1 is the "--- contention:" text.
 *
 * Rates: 0 turns a profile off (the default for both, as in Go); set from
 * CPROF_MUTEX_RATE / CPROF_BLOCK_RATE or the API. Records are kept when a
 * profile is turned off and on again.
 *
 * Threads: the record functions run in the hooks, with the guard set, in
 * any thread (never in a signal handler); a table insert takes the table's
 * rt_lock. Writers run with the guard set and only read counters. */
#ifndef CPROF_LOCKPROF_H
#define CPROF_LOCKPROF_H

#include "rt.h"

#include <stddef.h>
#include <stdint.h>

/* events per sample, and nanoseconds; read relaxed by the hooks (hidden:
 * no GOT load on the hooks' path) */
extern int64_t lockprof_mutex_rate __attribute__((visibility("hidden")));
extern int64_t lockprof_block_rate __attribute__((visibility("hidden")));

/* Who wants the lock hooks: the mutex profile, the block profile, the
 * execution trace (trace.h). 0 (the default) lets every hook forward after
 * this one load. */
enum { LOCKPROF_WATCH_MUTEX = 1, LOCKPROF_WATCH_BLOCK = 2, LOCKPROF_WATCH_TRACE = 4 };
extern uint32_t lockprof_watch __attribute__((visibility("hidden")));

void lockprof_set_mutex_rate(int64_t rate);
void lockprof_set_block_rate(int64_t rate);
/* The trace starts or stops watching the lock hooks. */
void lockprof_watch_trace(bool on);

/* Whether this contention event is one of the 1-in-rate sampled. */
bool lockprof_mutex_take(int64_t rate);
/* Whether a blocking event of delay_ns is sampled at rate ns. */
bool lockprof_block_take(int64_t delay_ns, int64_t rate);

/* Adds one event with its stack (return addresses, leaf first). */
void lockprof_mutex_event(const uintptr_t *pcs, int depth, int64_t delay_ns);
void lockprof_block_event(const uintptr_t *pcs, int depth, int64_t delay_ns);

/* debug 0: gzipped profile.proto; 1: Go's legacy text. 0 or -errno. */
int lockprof_write_mutex(int fd, int debug);
int lockprof_write_block(int fd, int debug);

/* Distinct stacks recorded (the index page's counts). */
size_t lockprof_count_mutex(void);
size_t lockprof_count_block(void);

void lockprof_fork_prepare(void);
void lockprof_fork_release(void);

#endif
