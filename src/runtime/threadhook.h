/* threadhook.h — the runtime's one interposition of pthread_create, shared
 * by every part of cprof that must know when threads start and end (the
 * thread and thread-creation profiles, the CPU profile's per-thread
 * timers). Parts register callbacks here; nothing else in cprof may
 * define pthread_create.
 *
 * For each thread the program creates with pthread_create (also through
 * std::thread, which calls it), after at least one client registered:
 *   on_create  runs in the creating thread, before the real pthread_create;
 *              what it returns (a "cookie", may be NULL) is handed to the
 *              other callbacks of that thread;
 *   on_failed  runs in the creating thread if pthread_create then fails;
 *   on_start   runs in the new thread before its start routine;
 *   on_exit    runs in the thread when it ends: its start routine returned,
 *              it called pthread_exit, or it was cancelled (from a
 *              thread-specific-data destructor, so after the thread's
 *              cleanup handlers and C++ thread_local destructors).
 * `internal` says the creator ran cprof's own code (its guard was set): the
 * thread is one of cprof's (the HTTP server, the snapshot writer), which
 * profiles hide as Go hides its system goroutines.
 *
 * Rules for callbacks: they run with the guard set (their allocations go
 * to the next allocator, unprofiled); they must not create threads, must
 * not block for long, and hold no lock when they return. Not called in
 * signal handlers. Threads not made by pthread_create after registration —
 * the main thread, threads that existed before, raw clone() — get no
 * callbacks; a client that needs them lists /proc/self/task.
 *
 * The wrapper (cprof_thread_start) reaches the start routine by a tail
 * call: it leaves no frame in the new thread's stacks. */
#ifndef CPROF_THREADHOOK_H
#define CPROF_THREADHOOK_H

#include <stdbool.h>
#include <stdint.h>

#define THREADHOOK_MAX_CLIENTS 8

typedef struct {
    void *(*on_create)(bool internal);
    void (*on_failed)(void *cookie);
    void (*on_start)(void *cookie, bool internal);
    void (*on_exit)(void *cookie, bool internal);
} threadhook_client_t;

/* Adds a client (any callback may be NULL); clients are never removed, and
 * *c must live for the whole process. Thread-safe. 0, -ENOSPC when
 * THREADHOOK_MAX_CLIENTS are registered, or -EAGAIN when no thread-exit key
 * can be created. */
int threadhook_register(const threadhook_client_t *c);

/* In on_create and on_start: the program's start routine of the thread
 * being created or starting (after that, the last one seen). */
uintptr_t threadhook_routine(void);

/* Whether tid is one of cprof's own threads now alive (created through the
 * hook with the guard set, once a client is registered; at most 32 are
 * remembered). Lock-free; not for signal handlers. */
bool threadhook_internal_tid(int32_t tid);

#endif
