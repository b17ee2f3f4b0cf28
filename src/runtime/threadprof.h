/* threadprof.h — the threads profile (Go's goroutine profile, for the
 * threads of a C program) and the thread-creation profile (Go's
 * threadcreate).
 *
 * Threads profile: every thread listed in /proc/self/task except cprof's
 * own (those created while cprof's guard was set: the HTTP server, the
 * snapshot writer), each with its stack (threaddump.h; the calling thread
 * unwinds itself), its name (/proc/self/task/TID/comm, as set by
 * pthread_setname_np) and its state (/proc/self/task/TID/status). As Go's:
 * debug=0 profile.proto with sample type goroutine/count, one sample per
 * distinct (stack, thread name) with the string label thread=NAME; debug=1
 * the grouped "goroutine profile: total N" text; debug=2 one block per
 * thread, "thread TID "NAME" [STATE]:", its frames and "created by".
 * A thread whose stack cannot be had gets a one-frame stack naming why:
 * cprof_thread_signal_blocked, cprof_thread_no_answer or
 * cprof_thread_exited.
 *
 * Threadcreate profile: for each live thread created through
 * pthread_create (threadhook.h) since cprof started, the stack that
 * created it (leaf: the function that called pthread_create); sample type
 * threadcreate/count. Counted live: a thread leaves the profile when it
 * ends.
 *
 * All of it runs with the guard set. The threadhook callbacks take one
 * short rt_lock (the thread registry); writers hold it only to copy. */
#ifndef CPROF_THREADPROF_H
#define CPROF_THREADPROF_H

#include <stddef.h>

/* Registers with threadhook; needs unwind_init first (stack capture).
 * max_depth: frames kept per stack (CPROF_DEPTH). 0 or a negative errno. */
int threadprof_init(int max_depth);

/* debug: 0 gzipped profile.proto, 1 grouped text, 2 (threads only) one
 * block per thread. 0 or a negative errno. */
int threadprof_write_threads(int fd, int debug);
int threadprof_write_threadcreate(int fd, int debug);

/* For the index page: the program's threads now, and the threads the
 * threadcreate profile counts. */
size_t threadprof_count_threads(void);
size_t threadprof_count_threadcreate(void);

/* fork: hold / release the registry and table locks; the child forgets
 * the parent's other threads. */
void threadprof_fork_prepare(void);
void threadprof_fork_parent(void);
void threadprof_fork_child(void);

#endif
