/* rt.h — what every part of the runtime shares: the per-thread state (with
 * the recursion guard), the next allocator in the chain, and a small lock.
 *
 * Rules for all of src/runtime:
 * - Code reached from a hook runs with the thread's guard set; any malloc it
 *   makes then goes straight to the next allocator (see allochooks.c).
 * - No lock is held across a call out of cprof (unwinding, the next
 *   allocator, I/O); locks are rt_lock_t, which never allocates and is
 *   invisible to any pthread_mutex interposer.
 * - Tables live in memory cprof maps itself (arena.h), never in the heap of
 *   the profiled program.
 */
#ifndef CPROF_RT_H
#define CPROF_RT_H

#include <stdbool.h>
#include <string.h> /* RT_WARN_VALUE */
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#ifdef __GLIBC__
#include <sys/single_threaded.h>
#endif

#define RT_LIKELY(x) __builtin_expect(!!(x), 1)
#define RT_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define RT_EXPORT __attribute__((visibility("default")))

typedef struct counters counters_t;

/* Per-thread state. initial-exec TLS: reaching it never calls
 * __tls_get_addr, which could allocate. */
typedef struct {
    int64_t next_sample;  /* bytes left before the next sample (Go's nextSample) */
    uint64_t rng;         /* xorshift64* state; 0 = not seeded yet */
    counters_t *stats;    /* this thread's counters (counters.h), or NULL */
    counters_t *fast;     /* the same while the hooks' fast path may count
                           * into it (the next allocator is glibc), else NULL */
    uintptr_t stack_lo;   /* this thread's stack bounds, for the fp and cfi */
    uintptr_t stack_hi;   /*   walks; 0 until the first of them */
    union {
        struct {
            uint32_t guard; /* nonzero while cprof itself runs on this thread */
            uint32_t slow;  /* nonzero while fast is NULL (1 in a new thread) */
        };
        uint64_t gate;      /* both: zero opens the hooks' fast path, one test */
    };
    uint32_t own;         /* nonzero while that is cprof's own work (not a
                           * forward to the next allocator): its allocations
                           * come from the private heap, ownheap.h */
    uint32_t locks;       /* rt_locks this thread holds (and peak.h's bucket
                           * claims): nonzero in a hook means a signal handler
                           * interrupted cprof holding one (no lock is held
                           * across a call out), and that hook must take no
                           * lock (heap.h) */
    uint8_t exited;       /* thread-exit destructors ran: no new stats block */
    uint8_t unwinding;    /* inside libunwind (unwind_capture): a SIGPROF
                             handler must not unwind this thread (cpuring.h) */
    uint8_t stack_once;   /* stack_lo/hi are those of a mapping that is not
                             its own stack: for one walk (stackbounds.h) */
    uintptr_t temp_cand;  /* ~address of this thread's last sampled allocation
                           * (inverted: a leak scan must not take it for a
                           * pointer), and this thread's allocation count */
    uint64_t temp_mark;   /*   right after it: a temporary if freed unchanged */
    int64_t gap_rate;     /* the rate next_sample was drawn at; <= 1: none */
    int64_t taken_rate;   /* the rate of the sample just taken (sampler.h) */
    const struct labelset *labels; /* cprof_labels_push's set, NULL: none;
                                    * read by this thread's handlers (labels.h) */
    uint32_t label_ghosts; /* failed pushes, undone by pops first */
} __attribute__((aligned(64))) rt_thread_t; /* the fast path's fields share a line */

extern __thread rt_thread_t rt_self __attribute__((tls_model("initial-exec")));

/* Enters cprof's own work: sets the guard (its allocations are not the
 * program's) and the private-heap mode. Returns the previous guard for
 * rt_guard_leave; calls pair up. A thread that is cprof's for its whole
 * life enters once and never leaves. (Around a forward to the next
 * allocator, hooks raise the guard alone.) */
static inline uint32_t rt_guard_enter(void)
{
    rt_self.own++;
    return rt_self.guard++;
}

static inline void rt_guard_leave(uint32_t prev)
{
    rt_self.guard = prev;
    rt_self.own--;
}

/* The allocator cprof forwards to (RTLD_NEXT), resolved on first use. */
typedef struct {
    void *(*malloc)(size_t);
    void (*free)(void *);
    void *(*calloc)(size_t, size_t);
    void *(*realloc)(void *, size_t);
    int (*posix_memalign)(void **, size_t, size_t);
    void *(*aligned_alloc)(size_t, size_t);
    void *(*memalign)(size_t, size_t);
    void *(*valloc)(size_t);
    void *(*pvalloc)(size_t);
    size_t (*malloc_usable_size)(void *);
} rt_next_t;

extern rt_next_t rt_next __attribute__((visibility("hidden")));

/* Set once at resolve (allochooks.c) when the next allocator is glibc's and
 * its blocks were seen to carry glibc's chunk header. */
extern bool rt_glibc_chunks __attribute__((visibility("hidden")));

/* Usable size of a block of the next allocator (0 if it cannot tell).
 * glibc: read from the chunk header in the word before the block (the
 * size with three flag bits; usable is the size less 8, or less 16 for an
 * mmapped chunk), which is what its malloc_usable_size returns for a
 * block in use, without the call and the check of the next chunk: two
 * calls per malloc/free pair, the largest part of cprof's cost at the
 * default rate. Otherwise the allocator's function, guarded: it may
 * allocate (tcmalloc's first call builds an object with operator new),
 * which must not come back into the hooks. */
static inline size_t rt_glibc_usable_of(size_t h)
{
    return (h & ~(size_t)7) - 8 - ((h & 2) << 2); /* IS_MMAPPED (2): 16 */
}

static inline size_t rt_glibc_usable(const void *p)
{
    return rt_glibc_usable_of(((const size_t *)p)[-1]);
}

/* Set in the word before every block of cprof's own heaps (the bootstrap
 * buffer's, the private heap's), where a glibc block has its chunk size:
 * glibc's chunk sizes are multiples of 16 (MALLOC_ALIGNMENT, x86-64 and
 * arm64), so this bit is clear there. free's fast path, which has read
 * that word for the usable size anyway, tells cprof's blocks apart with
 * one test instead of two range compares (about 9 instructions a free).
 * A glibc with another alignment would only send some frees to the slow
 * path, which compares the ranges. */
#define RT_CPROF_BLOCK ((size_t)8)

static inline size_t rt_usable_size(void *p)
{
    if (RT_LIKELY(rt_glibc_chunks))
        return rt_glibc_usable(p);
    if (!rt_next.malloc_usable_size)
        return 0;
    rt_self.guard++;
    size_t n = rt_next.malloc_usable_size(p);
    rt_self.guard--;
    return n;
}

/* --- futex and clock: the runtime's one copy of each ------------------- */

/* Sleeps while the 32-bit word at w holds v, at most timeout_ns (< 0: no
 * limit); returns on a wake, a change, a signal or the timeout (callers
 * re-check their condition). Private futexes; both async-signal-safe. */
void rt_futex_wait(void *w, uint32_t v, int64_t timeout_ns);
void rt_futex_wake(void *w, int n); /* wakes up to n waiters (INT32_MAX: all) */

/* CLOCK_MONOTONIC in nanoseconds (the vDSO: no syscall, signal-safe). */
static inline int64_t rt_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* dl_iterate_phdr(cb, arg) with the signals whose handlers unwind blocked
 * (SIGPROF and those of rt_loader_block), as libunwind blocks signals
 * around its own calls. glibc's loader lock is a recursive mutex, which a
 * handler re-enters while its thread holds it (cprof's CPU and threads
 * handlers do: libunwind looks unwind rules up through dl_iterate_phdr),
 * but not in the few instructions where the thread has taken the lock
 * word without yet being its owner, or gave up ownership without yet
 * releasing the word: a handler there waits for its own thread forever
 * (seen at rate 1 with a CPU profile: a sample during the cfi walk's
 * dl_iterate_phdr). A signal that comes meanwhile is taken as this
 * returns, with the thread's stack whole. Not every signal: a leak scan
 * counts a thread that blocks its stop signal as missed (stopworld.c).
 * Two system calls a call. Every call cprof makes goes through here
 * (tests/e2e/runtime_symbols.sh, test_rt). The program's own calls are
 * not covered: a CPU sample in those instructions of theirs still waits
 * forever (seen with a thread calling dl_iterate_phdr in a loop, 10 kHz). */
struct dl_phdr_info;
int rt_iterate_phdr(int (*cb)(struct dl_phdr_info *, size_t, void *), void *arg);
/* Adds sig to what rt_iterate_phdr blocks: a signal whose handler unwinds
 * with libunwind (the threads profile's). */
void rt_loader_block(int sig);

/* Starts a cprof thread running fn(NULL), named name, that takes none of
 * the program's signals (it is created with every signal blocked); into
 * *th, or detached when th is NULL. 0 or a negative errno. Not for hooks
 * or handlers. */
int rt_spawn(void *th, void *(*fn)(void *), const char *name);

/* In a spin-wait loop: tells the core (x86's pause), a no-op elsewhere. */
static inline void rt_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

/* --- lock: a futex lock (uncontended: one atomic exchange) ------------- */

typedef struct {
    int state; /* 0 free, 1 held, 2 held with waiters */
} rt_lock_t;

#define RT_LOCK_INIT {0}

void rt_lock_slow(rt_lock_t *l);
void rt_unlock_wake(rt_lock_t *l);

static inline void rt_lock(rt_lock_t *l)
{
    rt_self.locks++;
    __atomic_signal_fence(__ATOMIC_SEQ_CST); /* counted before held, for a handler */
    int expected = 0;
    if (!__atomic_compare_exchange_n(&l->state, &expected, 1, false, __ATOMIC_ACQUIRE,
                                     __ATOMIC_RELAXED))
        rt_lock_slow(l);
}

static inline void rt_unlock(rt_lock_t *l)
{
    if (__atomic_exchange_n(&l->state, 0, __ATOMIC_RELEASE) == 2)
        rt_unlock_wake(l);
    __atomic_signal_fence(__ATOMIC_SEQ_CST); /* released before uncounted */
    rt_self.locks--;
}

/* Whether the process has one thread (glibc's __libc_single_threaded:
 * with one thread glibc's malloc skips its arena lock too): pthread_create
 * clears it before the new thread exists, so while it is set no other
 * thread can take a lock, nor appear inside a critical section of this
 * one (a signal handler may not call pthread_create: it is not
 * async-signal-safe). false where it is unknown (musl). */
static inline bool rt_one_thread(void)
{
#ifdef __GLIBC__
    return __libc_single_threaded;
#else
    return false;
#endif
}

/* rt_lock for rate 1's paths, and rt_unlock_hot with what it returned:
 * with one thread only the count (a handler still sees the lock as held),
 * no atomic instruction. A locked instruction waits for every earlier
 * load and store, so it took the misses around it into the hook: on
 * this Xeon, the live map's lock and unlock held 49% of livemap_remove's
 * samples (perf, python3 at rate 1). Lock and unlock in one call, with
 * no thread created between: the same lock taken with rt_lock elsewhere
 * (livemap_lock_all, fork's handlers) is then never held at the same
 * time by another thread either. */
static inline bool rt_lock_hot(rt_lock_t *l)
{
    if (!rt_one_thread()) {
        rt_lock(l);
        return true;
    }
    rt_self.locks++;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    return false;
}

static inline void rt_unlock_hot(rt_lock_t *l, bool locked)
{
    if (locked) {
        rt_unlock(l);
        return;
    }
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    rt_self.locks--;
}

/* *p += v for a counter of rate 1's paths: one instruction, which a signal
 * handler on this thread cannot split, and with one thread without the
 * lock prefix (rt_lock_hot says why); an atomic add elsewhere. */
static inline void rt_add_hot(uint64_t *p, uint64_t v)
{
#if defined(__x86_64__)
    if (rt_one_thread()) {
        __asm__("addq %1, %0" : "+m"(*p) : "er"(v));
        return;
    }
#endif
    __atomic_add_fetch(p, v, __ATOMIC_RELAXED);
}

/* A weak compare-and-swap of *p from *expected to desired (acquire and
 * release), as rt_add_hot: one instruction, without the lock prefix with
 * one thread. */
static inline bool rt_cas_hot(uint64_t *p, uint64_t *expected, uint64_t desired)
{
#if defined(__x86_64__)
    if (rt_one_thread()) {
        bool ok;
        __asm__("cmpxchgq %3, %1" : "=@ccz"(ok), "+m"(*p), "+a"(*expected) : "r"(desired));
        return ok;
    }
#endif
    return __atomic_compare_exchange_n(p, expected, desired, true, __ATOMIC_ACQ_REL,
                                       __ATOMIC_ACQUIRE);
}

/* Prints "cprof: <message>\n" to stderr with write(2): no stdio, no malloc.
 * When the program has closed fd 2 (coreutils close it from atexit, before
 * cprof's exit-time messages), to the copy rt_warn_init took. */
void rt_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A user's value in a message, cut to RT_WARN_VALUE_MAX characters (with
 * "..."), so that the line keeps what follows it — what is accepted, what
 * happens instead: "%.*s%s" takes RT_WARN_VALUE(value). */
#define RT_WARN_VALUE_MAX 80
#define RT_WARN_VALUE(v)                                                                           \
    RT_WARN_VALUE_MAX, (v), (strlen(v) > RT_WARN_VALUE_MAX ? "..." : "")

/* Keeps a copy of fd 2 for rt_warn: at start, before any message. */
void rt_warn_init(void);

#endif
