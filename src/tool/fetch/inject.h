/* inject.h — making a running process call functions of its own, for
 * `cprof attach` (attach.h): ptrace one thread (PTRACE_SEIZE, so the
 * process is never stopped as a whole), stop it where a call into the C
 * library cannot deadlock against itself (not inside libc, the loader,
 * libstdc++, libgcc or libcprof.so, unless waiting in libc in a blocking
 * system call a program makes itself: read, poll, select, epoll_wait,
 * nanosleep, wait4, accept, recv, pause, sigtimedwait, a futex wait on a
 * word outside those objects; never after mmap, brk, openat... which may
 * be malloc's or dlopen's with their locks held; never with SIGSEGV
 * blocked, as in a SIGSEGV handler: see below), save its registers
 * (general and the whole x87/SSE/AVX state), run calls with the System V
 * x86-64 convention on its stack, below the red zone, each returning to
 * address 0 (the SIGSEGV at rip 0 that follows is caught and never
 * delivered), and put everything back before detaching: registers, the
 * return-address word, and the interrupted system call, which the kernel
 * restarts.
 *
 * Every other signal that arrives for the thread meanwhile, SIGSEGV of a
 * handler's included, is delivered to it and the call goes on. While
 * a thread is held, the tool blocks SIGINT, SIGTERM, SIGHUP and SIGQUIT:
 * dying with the target's registers changed would crash it.
 *
 * Errors: negative errno with one phrase in err; after any failure the
 * thread is restored and detached (inject_close), and keeps running.
 * Restoring writes back only what was read, and only once a call changed
 * it: a refusal before any call leaves every register untouched. */
#ifndef CPROF_TOOL_INJECT_H
#define CPROF_TOOL_INJECT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct inject inject_t;

/* The process's memory map (/proc/PID/maps), read into lines. */
typedef struct {
    uint64_t start, end, offset;
    char perms[5];
    char *path; /* "" for anonymous mappings */
} inject_map_t;

int inject_maps(pid_t pid, inject_map_t **out, size_t *n, char *err, size_t errlen);
void inject_maps_free(inject_map_t *m, size_t n);

/* The mapped object whose file name (after the last '/', and after
 * "memfd:" for a memfd) starts with prefix, or NULL. */
const inject_map_t *inject_find_object(const inject_map_t *m, size_t n, const char *prefix);

/* The run-time address in pid of the dynamic symbol sym of the object that
 * obj maps (its ELF file read through /proc/PID/root). 0 or -ENOENT. */
int inject_symbol(pid_t pid, const inject_map_t *m, size_t n, const inject_map_t *obj,
                  const char *sym, uint64_t *addr);

/* Seizes thread pid and stops it at a safe point (see above). m: the map,
 * to tell where the thread stands. */
int inject_open(pid_t pid, const inject_map_t *m, size_t n, inject_t **out, char *err,
                size_t errlen);

/* Seconds inject_call waits for the call to return. */
#define INJECT_CALL_TIMEOUT 10

/* Calls fn(args[0..nargs-1]) (at most 6 integer or pointer arguments) in
 * the held thread; *ret gets rax. -ETIMEDOUT: the call has not returned
 * within INJECT_CALL_TIMEOUT seconds and still runs; the thread can then
 * be neither detached (the call would return to address 0 and crash the
 * process) nor put back (whatever locks the call took would stay held):
 * only inject_wait, or inject_close, which abandons the call. */
int inject_call(inject_t *t, uint64_t fn, const uint64_t *args, int nargs, uint64_t *ret,
                char *err, size_t errlen);

/* Waits without a deadline for the call inject_call timed out on, with
 * SIGINT, SIGTERM, SIGHUP and SIGQUIT let through: they end cprof, which
 * releases the thread inside the call, and the process crashes when the
 * call returns. */
int inject_wait(inject_t *t, uint64_t *ret, char *err, size_t errlen);

int inject_write(inject_t *t, uint64_t addr, const void *buf, size_t len);
int inject_read(inject_t *t, uint64_t addr, void *buf, size_t len);

/* Restores the thread and detaches. 0, or a negative errno with err set
 * (the process may then be harmed: say so). */
int inject_close(inject_t *t, char *err, size_t errlen);

#endif
