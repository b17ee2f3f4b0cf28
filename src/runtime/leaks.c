/* leaks.c — the leak scan and the leak profile (see leaks.h).
 *
 * Order of work, so that nothing while the threads are stopped allocates
 * or takes a lock a stopped thread may hold:
 *   1. loaded objects, threads, cprof's own mappings (the suppressions
 *      were read at start);
 *   2. the live map held; its objects copied, sorted, their pages marked;
 *   3. threads stopped; /proc/self/maps read into a buffer made in 1;
 *      roots scanned and the reached objects marked, transitively;
 *   4. threads resumed, the live map let go; the profile built. */
#include "leaks.h"

#include "arena.h"
#include "buckets.h"
#include "glibcheap.h"
#include "heapprof.h"
#include "livemap.h"
#include "ownheap.h"
#include "procmaps.h"
#include "profwriter.h"
#include "rt.h"
#include "unwfds.h"
#include "sampler.h"
#include "stopworld.h"
#include "unwind.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <link.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#ifndef CPROF_NO_LIBUNWIND
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#endif

#define STOP_TIMEOUT_MS 1000
#define PAUSE_BUDGET_US 10000000 /* then the threads resume, the scan incomplete */
#define CHECK_WORDS (1u << 20)   /* words read between two looks at the clock */
#define PAGE_BITS 22    /* the page filter: 4 Mi bits, pages modulo 16 GiB */
#define RED_ZONE 128    /* below the stack pointer, x86-64's leaf scratch */
#define TCB_SPAN 4096   /* glibc's struct pthread and the DTV pointer, above tp */
#define MAX_ROOTS 1024  /* writable segments of loaded objects */
#define MAX_OWN_TEXT 8  /* executable segments of libcprof.so and libcprof-http.so */
#define MAX_OWN_DATA 8  /* their writable segments */
#define SUPP_MAX (1 << 20) /* bytes of a suppressions file read */

/* The registers a call preserves: a program frame's values of them may be
 * saved anywhere in cprof's frames below it. */
#if defined(CPROF_NO_LIBUNWIND)
static const int callee_saved[1]; /* program_frame cannot tell without libunwind */
#elif defined(__x86_64__)
static const int callee_saved[] = {UNW_X86_64_RBX, UNW_X86_64_RBP, UNW_X86_64_R12,
                                   UNW_X86_64_R13, UNW_X86_64_R14, UNW_X86_64_R15};
#elif defined(__aarch64__)
static const int callee_saved[] = {UNW_AARCH64_X19, UNW_AARCH64_X20, UNW_AARCH64_X21,
                                   UNW_AARCH64_X22, UNW_AARCH64_X23, UNW_AARCH64_X24,
                                   UNW_AARCH64_X25, UNW_AARCH64_X26, UNW_AARCH64_X27,
                                   UNW_AARCH64_X28, UNW_AARCH64_X29};
#else
#error "leaks.c: unsupported architecture"
#endif
#define NSAVED (sizeof(callee_saved) / sizeof(callee_saved[0]))

typedef struct {
    uintptr_t lo, hi;
} range_t;

/* What a writable mapping is, for the roots. */
enum {
    RW_ANON = 1,   /* anonymous: the program's, an allocator's, a stack */
    RW_STACK = 2,  /* a known thread's stack: scanned from its pointer up */
    RW_HEAP = 4,   /* [heap], glibc's main arena */
    RW_BLOCKS = 8, /* holds sampled objects */
};

typedef struct {
    uintptr_t addr, end; /* [addr, end); end = addr + 1 for a 0-byte block */
    uintptr_t header;    /* glibc: the next chunk's header, if inside; or 0 */
    uint64_t size;
    uint32_t bucket;
    uint8_t reached;
    uint8_t readable; /* inside writable mappings while stopped: scanned */
} blk_t;

typedef struct {
    blk_t *blk;      /* malloc's sampled objects [0, nblk), then the custom
                      * heaps' [nblk, nblk + ncust): each part sorted */
    size_t nblk;
    size_t ncust;
    uint64_t *pages; /* bit per page (mod 2^PAGE_BITS) holding some object */
    uintptr_t min, span;
    uint32_t *stack; /* objects reached, not yet scanned */
    size_t nstack;
    range_t *excl;   /* cprof's own memory, sorted */
    size_t nexcl;
    range_t roots[MAX_ROOTS];
    size_t nroots;
    range_t own_text[MAX_OWN_TEXT];
    size_t nown;
    range_t own_data[MAX_OWN_DATA];
    size_t nown_data;
    size_t tls_size; /* static TLS of the loaded objects, an upper estimate */
    pid_t *tids;
    size_t ntids;
    char *maps;      /* /proc/self/maps, read while stopped */
    size_t mapscap;
    range_t *rw;     /* its writable mappings */
    uint8_t *rw_flags; /* RW_* of each */
    size_t nrw, rwcap;
    bool all_sampled;
    bool can_copy; /* process_vm_readv works on our own pid */
    bool careful;  /* some thread runs: read through process_vm_readv */
    bool over;     /* past PAUSE_BUDGET_US: nothing more is read */
    int pagemap;   /* /proc/self/pagemap, or -1 */
    uint64_t read; /* bytes of memory read as roots or reached objects */
    int64_t deadline;
    size_t words;  /* read since the clock was last looked at */
} scan_t;

/* One scan at a time. Not an rt_lock: a thread holding one allocates from
 * glibc (allochooks.c), and the scan's buffers must come from cprof's private
 * heap, which is excluded from the roots; anonymous glibc memory would be
 * scanned as a root and reach every sampled object at rates other than 1. */
static int scan_busy;
static int all_sampled = -1; /* -1 until the first rate is noted */
static const char *supp_path;
static char **supp;          /* fnmatch patterns, NULL-terminated */

void leaks_note_rate(long long rate)
{
    if (all_sampled < 0)
        all_sampled = rate == 1;
    else if (rate != 1)
        all_sampled = 0;
}

void leaks_fork_child(void)
{
    scan_busy = 0;
    stopworld_fork_child();
}

static void read_suppressions(void);

void leaks_set_suppressions(const char *path)
{
    supp_path = path;
    read_suppressions();
}

/* --- suppressions -------------------------------------------------------- */

/* LSan's pattern as an fnmatch one: unanchored ends match anything. */
static char *supp_pattern(const char *p, size_t len)
{
    bool head = len && p[0] == '^', tail = len > (size_t)head && p[len - 1] == '$';
    const char *body = p + head;
    size_t blen = len - head - tail;
    char *out = malloc(blen + 3);
    if (out)
        snprintf(out, blen + 3, "%s%.*s%s", head ? "" : "*", (int)blen, body, tail ? "" : "*");
    return out;
}

/* Reads at most SUPP_MAX bytes of the suppressions file. Anything but a
 * regular file is refused: /dev/zero never ends, a FIFO blocks. */
static void read_suppressions(void)
{
    if (!supp_path)
        return;
    int fd = open(supp_path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    const char *why = NULL, *sep = " is ";
    if (fd < 0 || fstat(fd, &st) < 0)
        why = strerror(errno), sep = ": ";
    else if (S_ISDIR(st.st_mode))
        why = "a directory";
    else if (!S_ISREG(st.st_mode))
        why = "not a regular file (a device, FIFO or socket)";
    else if (st.st_size == 0)
        why = "empty";
    size_t cap = why ? 0 : st.st_size > SUPP_MAX ? SUPP_MAX : (size_t)st.st_size;
    char *buf = why ? NULL : malloc(cap + 1);
    size_t len = 0;
    ssize_t got;
    while (buf && len < cap &&
           ((got = read(fd, buf + len, cap - len)) > 0 || (got < 0 && errno == EINTR)))
        len += got > 0 ? (size_t)got : 0;
    if (fd >= 0)
        close(fd);
    if (!why && !buf)
        why = strerror(ENOMEM), sep = ": ";
    if (why) {
        rt_warn("CPROF_LEAK_SUPPRESS=%s%s%s; no leak is suppressed", supp_path, sep, why);
        return;
    }
    buf[len] = '\0';
    if (st.st_size > SUPP_MAX)
        rt_warn("CPROF_LEAK_SUPPRESS=%s: only its first %d bytes are read", supp_path, SUPP_MAX);
    size_t n = 0, ncap = 0;
    for (char *save = NULL, *s = strtok_r(buf, "\n", &save); s; s = strtok_r(NULL, "\n", &save)) {
        char *e;
        while (*s == ' ' || *s == '\t')
            s++;
        for (e = s + strlen(s); e > s && strchr(" \t\r", e[-1]); e--)
            ;
        *e = '\0';
        if (!*s || *s == '#')
            continue;
        if (strncmp(s, "leak:", 5) != 0 || !s[5])
            continue; /* LSan's other kinds do not apply */
        if (n + 2 > ncap) {
            char **m = realloc(supp, (ncap = ncap ? ncap * 2 : 8) * sizeof(*supp));
            if (!m)
                break;
            supp = m;
        }
        if ((supp[n] = supp_pattern(s + 5, strlen(s + 5))))
            supp[++n] = NULL;
    }
    free(buf);
    if (!n)
        rt_warn("CPROF_LEAK_SUPPRESS=%s holds no leak:PATTERN line; no leak is suppressed",
                supp_path);
}

static bool supp_match(const char *s)
{
    for (char **p = supp; p && *p && *s; p++)
        if (fnmatch(*p, s, 0) == 0)
            return true;
    return false;
}

/* Whether a frame of the stack names a suppressed function or object. */
static bool suppressed(stacknames_t *names, const uintptr_t *pcs, uint32_t depth)
{
    static char *(*demangle)(const char *, char *, size_t *, int *);
    static bool looked;
    if (!supp || !supp[0])
        return false;
    if (!looked) {
        demangle = (char *(*)(const char *, char *, size_t *, int *))dlsym(RTLD_DEFAULT,
                                                                           "__cxa_demangle");
        looked = true;
    }
    for (uint32_t i = 0; i < depth; i++) {
        char fn[1024], where[1024];
        stacknames_frame(names, pcs[i] - 1, fn, sizeof(fn), where, sizeof(where));
        char *cut = strstr(fn, "+0x");
        if (cut)
            *cut = '\0';
        if ((cut = strrchr(where, '+')))
            *cut = '\0';
        if (supp_match(fn) || supp_match(where))
            return true;
        int st = -1;
        char *d = demangle && fn[0] ? demangle(fn, NULL, NULL, &st) : NULL;
        bool m = d && st == 0 && supp_match(d);
        free(d);
        if (m)
            return true;
    }
    return false;
}

/* --- before the stop ------------------------------------------------------ */

static int read_tids(scan_t *s)
{
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return -errno;
    size_t cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        if (s->ntids == cap) {
            pid_t *m = realloc(s->tids, (cap = cap ? cap * 2 : 64) * sizeof(*m));
            if (!m) {
                closedir(d);
                return -ENOMEM;
            }
            s->tids = m;
        }
        s->tids[s->ntids++] = (pid_t)atoi(e->d_name);
    }
    closedir(d);
    return 0;
}

/* The writable segments of every loaded object but cprof's own (its
 * tables point at every sampled object), and the static TLS size. */
static int add_object(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    scan_t *s = arg;
    const char *name = info->dlpi_name ? info->dlpi_name : "";
    const char *base = strrchr(name, '/');
    base = base ? base + 1 : name;
    bool ours = strncmp(base, "libcprof.so", 11) == 0 || strncmp(base, "libcprof-http.so", 16) == 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_TLS)
            s->tls_size += ph->p_memsz + ph->p_align;
        if (ours && ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && s->nown < MAX_OWN_TEXT) {
            uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
            s->own_text[s->nown++] = (range_t){lo, lo + ph->p_memsz};
        }
        /* Its bss lies in anonymous memory, scanned whole below. */
        if (ours && ph->p_type == PT_LOAD && (ph->p_flags & PF_W) && s->nown_data < MAX_OWN_DATA) {
            uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
            s->own_data[s->nown_data++] = (range_t){lo & ~(uintptr_t)4095,
                                                    (lo + ph->p_memsz + 4095) & ~(uintptr_t)4095};
        }
        if (ours || ph->p_type != PT_LOAD || !(ph->p_flags & PF_W) || s->nroots == MAX_ROOTS)
            continue;
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        s->roots[s->nroots++] = (range_t){lo, lo + ph->p_memsz};
    }
    return 0;
}

static int by_lo(const void *a, const void *b)
{
    const range_t *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static int by_addr(const void *a, const void *b)
{
    const blk_t *x = a, *y = b;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int read_excluded(scan_t *s)
{
    size_t cap = 256;
    for (;;) {
        range_t *m = realloc(s->excl, (cap + 1 + MAX_OWN_DATA) * sizeof(*m));
        if (!m)
            return -ENOMEM;
        s->excl = m;
        bool complete;
        size_t n = arena_ranges((arena_range_t *)s->excl, cap, &complete);
        if (n < cap || complete) {
            s->nexcl = n;
            break;
        }
        cap *= 2;
    }
    if (ownheap_base)
        s->excl[s->nexcl++] = (range_t){ownheap_base, ownheap_base + ownheap_size};
    for (size_t i = 0; i < s->nown_data; i++)
        s->excl[s->nexcl++] = s->own_data[i];
    qsort(s->excl, s->nexcl, sizeof(*s->excl), by_lo);
    return 0;
}

static void mark_pages(scan_t *s)
{
    const uint64_t mask = (1ull << PAGE_BITS) - 1;
    uintptr_t min = UINTPTR_MAX, max = 0;
    for (size_t i = 0; i < s->nblk + s->ncust; i++) {
        const blk_t *b = &s->blk[i];
        min = b->addr < min ? b->addr : min;
        max = b->end > max ? b->end : max;
        uintptr_t first = b->addr >> 12, last = (b->end - 1) >> 12;
        if (last - first >= mask) {
            memset(s->pages, 0xff, (mask + 1) / 8);
            continue;
        }
        for (uintptr_t pg = first; pg <= last; pg++)
            s->pages[(pg & mask) >> 6] |= 1ull << (pg & 63);
    }
    s->min = min;
    s->span = max > min ? max - min : 0;
}

static bool own_code(const scan_t *s, uintptr_t pc)
{
    for (size_t i = 0; i < s->nown; i++)
        if (pc >= s->own_text[i].lo && pc < s->own_text[i].hi)
            return true;
    return false;
}

/* Where the program's part of this thread's stack starts: the stack
 * pointer of the first frame outside cprof, the caller of the entry point
 * (the public function, the exit destructor, libmicrohttpd's handler
 * call), and that frame's values of the callee-saved registers, which
 * cprof's frames saved somewhere below it. Those frames are not roots:
 * stale locals of the exit path (outfile_write, profwriter_write_file)
 * and the arguments it was given (a path in a block the program dropped)
 * hold pointers the program no longer has. False if libunwind cannot
 * tell; regs holds NSAVED words. */
static __attribute__((noinline)) bool program_frame(const scan_t *s, uintptr_t *sp,
                                                    uintptr_t *regs)
{
#ifdef CPROF_NO_LIBUNWIND /* the musl runtime */
    (void)s, (void)sp, (void)regs, (void)callee_saved, (void)own_code;
    return false;
#else
    unw_context_t ctx;
    unw_cursor_t c;
    unw_word_t pc, v;
    bool found = false;
    /* Flagged: a CPU-profile signal now must not enter libunwind on this
     * thread (cpuring.h). */
    rt_self.unwinding = 1;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    if (unwfds_ok_sigsafe() && unw_getcontext(&ctx) == 0 && unw_init_local(&c, &ctx) == 0 &&
        unw_get_reg(&c, UNW_REG_IP, &pc) == 0 && own_code(s, pc)) {
        for (int depth = 0; depth < UNWIND_MAX_DEPTH && unw_step(&c) > 0; depth++) {
            /* A return address: the call is the byte before it. */
            if (unw_get_reg(&c, UNW_REG_IP, &pc) < 0)
                break;
            if (own_code(s, pc - 1))
                continue;
            unw_word_t frame_sp;
            found = unw_get_reg(&c, UNW_REG_SP, &frame_sp) == 0;
            for (size_t i = 0; i < NSAVED && found; i++) {
                found = unw_get_reg(&c, callee_saved[i], &v) == 0;
                regs[i] = v;
            }
            if (found)
                *sp = frame_sp;
            break;
        }
    }
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    rt_self.unwinding = 0;
    return found;
#endif
}

/* --- while stopped: no allocation, no lock --------------------------------- */

static int64_t mono_us(void)
{
    return rt_now_ns() / 1000;
}

/* Counts n words read; true once the pause is over its budget. */
static bool out_of_time(scan_t *s, size_t n)
{
    if ((s->words += n) >= CHECK_WORDS) {
        s->words = 0;
        s->over = s->over || mono_us() > s->deadline;
    }
    return s->over;
}

/* Marks the object of blk[first, first + n) that holds w, if any. */
static void reach_in(scan_t *s, size_t first, size_t n, uintptr_t w)
{
    size_t lo = first, hi = first + n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->blk[mid].addr <= w)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == first)
        return;
    blk_t *b = &s->blk[lo - 1];
    if (w >= b->end || b->reached || w == b->header)
        return;
    b->reached = 1;
    s->stack[s->nstack++] = (uint32_t)(lo - 1);
}

/* A word into a custom heap's object reaches it and the block that holds
 * it alike (a malloc block, when sampled). */
static void consider(scan_t *s, uintptr_t w)
{
    if (w - s->min >= s->span)
        return;
    uintptr_t pg = (w >> 12) & ((1ull << PAGE_BITS) - 1);
    if (!(s->pages[pg >> 6] >> (pg & 63) & 1))
        return;
    reach_in(s, 0, s->nblk, w);
    if (s->ncust)
        reach_in(s, s->nblk, s->ncust, w);
}

/* Copies [p, p + len) with process_vm_readv: a range a running thread
 * unmapped meanwhile gives a short count, not a fault. Bytes copied. */
static size_t copy_in(uintptr_t p, void *buf, size_t len)
{
    struct iovec l = {buf, len}, r = {(void *)p, len};
    ssize_t n = process_vm_readv(getpid(), &l, 1, &r, 1, 0);
    return n > 0 ? (size_t)n : 0;
}

static void scan_span(scan_t *s, uintptr_t lo, uintptr_t hi)
{
    lo = (lo + 7) & ~(uintptr_t)7;
    /* On this thread's stack below the scan's start, so never a root. */
    uintptr_t buf[2048];
    while (lo + 8 <= hi && !out_of_time(s, 0)) {
        size_t len = hi - lo < sizeof(buf) ? (hi - lo) & ~(size_t)7 : sizeof(buf);
        if (!s->careful) {
            for (uintptr_t p = lo; p < lo + len; p += 8)
                consider(s, *(const uintptr_t *)p);
            s->read += len;
            lo += len;
            out_of_time(s, len / 8);
            continue;
        }
        size_t got = copy_in(lo, buf, len) / 8;
        s->read += got * 8;
        for (size_t i = 0; i < got; i++)
            consider(s, buf[i]);
        lo = got ? lo + got * 8 : (lo | 4095) + 1; /* past an unmapped page */
        out_of_time(s, got ? got : 512);
    }
}

/* The first element of a sorted array (n elements of `stride` bytes)
 * whose end, the uintptr_t at `end_off`, lies above a: for the excluded
 * ranges and the objects alike. */
static size_t first_ending_above(const void *base, size_t n, size_t stride, size_t end_off,
                                 uintptr_t a)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (*(const uintptr_t *)((const char *)base + mid * stride + end_off) <= a)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Scans [lo, hi) but the custom heaps' objects in it: they lie inside
 * memory that is scanned (a pool's block, a static buffer, a mapping) and
 * count only when reached, as malloc's do, so a leaked chain of pool
 * objects is no root of itself. The pool's free space is scanned: its
 * stale pointers may hide a leak, never report a reachable object.
 * Custom objects are taken not to overlap one another. */
static void scan_words(scan_t *s, uintptr_t lo, uintptr_t hi)
{
    const blk_t *c = s->blk + s->nblk;
    size_t i = s->ncust ? first_ending_above(c, s->ncust, sizeof(blk_t), offsetof(blk_t, end), lo)
                        : 0;
    for (; i < s->ncust && c[i].addr < hi && lo < hi; i++) {
        if (c[i].addr > lo)
            scan_span(s, lo, c[i].addr);
        lo = c[i].end > lo ? c[i].end : lo;
    }
    if (lo < hi)
        scan_span(s, lo, hi);
}

/* Scans a root range, then everything it reached. */
static void scan_root(scan_t *s, uintptr_t lo, uintptr_t hi)
{
    scan_words(s, lo, hi);
    while (s->nstack) {
        uint32_t i = s->stack[--s->nstack];
        const blk_t *b = &s->blk[i];
        if (!b->readable)
            continue;
        if (i < s->nblk)
            scan_words(s, b->addr, b->addr + b->size);
        else
            scan_span(s, b->addr, b->addr + b->size);
    }
}

/* Scans [lo, hi) as a root, skipping cprof's memory and the sampled
 * objects (which count only when reached). */
static void scan_unsampled(scan_t *s, uintptr_t lo, uintptr_t hi)
{
    size_t e = first_ending_above(s->excl, s->nexcl, sizeof(range_t), offsetof(range_t, hi), lo);
    size_t b = first_ending_above(s->blk, s->nblk, sizeof(blk_t), offsetof(blk_t, end), lo);
    uintptr_t cur = lo;
    while (cur < hi) {
        uintptr_t hole_lo = hi, hole_hi = hi;
        if (e < s->nexcl && s->excl[e].lo < hole_lo) {
            hole_lo = s->excl[e].lo;
            hole_hi = s->excl[e].hi;
        }
        if (b < s->nblk && s->blk[b].addr < hole_lo) {
            hole_lo = s->blk[b].addr;
            hole_hi = s->blk[b].end;
        }
        if (hole_lo > cur)
            scan_root(s, cur, hole_lo < hi ? hole_lo : hi);
        if (hole_hi > cur)
            cur = hole_hi;
        if (e < s->nexcl && s->excl[e].hi <= cur)
            e++;
        if (b < s->nblk && s->blk[b].end <= cur)
            b++;
    }
}

static uintptr_t hex(const char **p)
{
    uintptr_t v = 0;
    for (;; (*p)++) {
        char c = **p;
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (d < 0)
            return v;
        v = v << 4 | (uintptr_t)d;
    }
}

/* /proc/self/maps into s->maps, its writable mappings into s->rw. */
static void read_maps_stopped(scan_t *s)
{
    s->nrw = 0;
    int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    size_t len = 0;
    ssize_t n;
    while (len + 1 < s->mapscap && (n = read(fd, s->maps + len, s->mapscap - 1 - len)) > 0)
        len += (size_t)n;
    close(fd);
    s->maps[len] = '\0';
    for (const char *p = s->maps; *p && s->nrw < s->rwcap;) {
        const char *eol = strchr(p, '\n');
        if (!eol)
            break; /* a truncated last line */
        uintptr_t lo = hex(&p);
        p++;
        uintptr_t hi = hex(&p);
        p++;
        if (p[0] == 'r' && p[1] == 'w') {
            /* fields: perms offset dev inode path */
            const char *q = p;
            for (int f = 0; f < 3 && q < eol; f++) {
                while (q < eol && *q != ' ')
                    q++;
                while (q < eol && *q == ' ')
                    q++;
            }
            bool anon = q < eol && *q == '0' && (q[1] == ' ' || q + 1 == eol);
            const char *path = q;
            while (path < eol && *path != ' ')
                path++;
            while (path < eol && *path == ' ')
                path++;
            anon = anon && (path == eol || *path == '[');
            if (anon && path < eol && strncmp(path, "[heap]", 6) != 0 &&
                strncmp(path, "[stack]", 7) != 0 && strncmp(path, "[anon:", 6) != 0)
                anon = false; /* [vvar] and the like */
            s->rw_flags[s->nrw] = (anon ? RW_ANON : 0) |
                                  (anon && strncmp(path, "[heap]", 6) == 0 ? RW_HEAP : 0);
            s->rw[s->nrw++] = (range_t){lo, hi};
        }
        p = eol + 1;
    }
}

/* Which objects lie inside the writable mappings just read (a stale
 * live-map entry may name memory unmapped since), and their glibc next
 * chunk header, read only then. Both arrays are sorted by address. */
static void check_blocks_stopped(scan_t *s, size_t first, size_t nb, bool custom)
{
    size_t j = 0;
    for (size_t i = first; i < first + nb; i++) {
        blk_t *b = &s->blk[i];
        while (j < s->nrw && s->rw[j].hi <= b->addr)
            j++;
        if (j == s->nrw)
            break;
        if (s->rw[j].lo > b->addr)
            continue;
        size_t k = j;
        while (s->rw[k].hi < b->end && k + 1 < s->nrw && s->rw[k + 1].lo == s->rw[k].hi)
            k++;
        b->readable = s->rw[k].hi >= b->end;
        if (custom) /* no allocator's heap: a pool may be anywhere */
            continue;
        if (b->readable)
            s->rw_flags[j] |= RW_BLOCKS;
        /* A block of glibc ends 8 bytes into the next chunk, whose address
         * glibc keeps (its top chunk, its bins): that address alone is
         * not a pointer to the block. */
        uintptr_t h[2] = {0, 0}; /* the chunk header, then where the block would be */
        if (b->readable && rt_glibc_chunks && b->addr - 8 >= s->rw[j].lo &&
            (s->careful ? copy_in(b->addr - 8, h, 8) == 8
                        : (h[0] = ((const uintptr_t *)b->addr)[-1], true))) {
            uintptr_t next = b->addr + rt_glibc_usable(&h[1]) - 8;
            b->header = next < b->end ? next : 0;
        }
    }
}

static const range_t *rw_of(const scan_t *s, uintptr_t a)
{
    for (size_t i = 0; i < s->nrw; i++)
        if (a >= s->rw[i].lo && a < s->rw[i].hi)
            return &s->rw[i];
    return NULL;
}

typedef struct {
    uintptr_t sp, tp;
    const uintptr_t *regs;
    size_t nregs;
    bool red_zone; /* interrupted: the words just below sp may be live */
} thr_t;

/* One thread's roots: registers, stack from sp up, static TLS if apart. */
static void scan_thread(scan_t *s, const thr_t *t)
{
    if (t->regs)
        scan_root(s, (uintptr_t)t->regs, (uintptr_t)(t->regs + t->nregs));
    const range_t *st = rw_of(s, t->sp);
    if (st) {
        uintptr_t lo = !t->red_zone ? t->sp : t->sp - st->lo > RED_ZONE ? t->sp - RED_ZONE : st->lo;
        scan_root(s, lo, st->hi);
    }
    const range_t *tl = rw_of(s, t->tp);
    if (tl && !(st && tl == st && t->tp >= t->sp)) {
        uintptr_t lo = t->tp - tl->lo > s->tls_size ? t->tp - s->tls_size : tl->lo;
        uintptr_t hi = tl->hi - t->tp > TCB_SPAN ? t->tp + TCB_SPAN : tl->hi;
        scan_root(s, lo, hi);
    }
}

/* The stack pointer of a thread that was not stopped (it blocks the
 * signal), from /proc/self/task/TID/syscall ("NR args... SP PC" while it
 * sleeps in the kernel, "running" otherwise); 0 if unknown. No
 * allocation: runs while the others are stopped. */
static uintptr_t missed_sp(pid_t tid)
{
    char path[64], buf[256];
    snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", (int)tid);
    if (procmaps_read_small(path, buf, sizeof(buf)) < 0 || buf[0] < '-' || buf[0] > '9')
        return 0;
    char *tok[9];
    int nt = 0;
    for (char *save = NULL, *t = strtok_r(buf, " \n", &save); t && nt < 9; t = strtok_r(NULL, " \n", &save))
        tok[nt++] = t;
    return nt >= 3 ? (uintptr_t)strtoull(tok[nt - 2], NULL, 16) : 0;
}

/* The process's thread count (/proc/self/stat), or -1. No allocation. */
static long count_threads(void)
{
    char buf[1024];
    if (procmaps_read_small("/proc/self/stat", buf, sizeof(buf)) < 0)
        return -1;
    const char *p = strrchr(buf, ')'); /* the name may hold anything */
    for (int f = 2; p && f < 20; f++)  /* num_threads is field 20 */
        p = strchr(p + 1, ' ');
    return p ? strtol(p + 1, NULL, 10) : -1;
}

/* Marks the mapping holding sp as a stack scanned from its pointer;
 * false if sp is in none. */
static bool mark_stack(scan_t *s, uintptr_t sp)
{
    const range_t *r = rw_of(s, sp);
    if (r)
        s->rw_flags[r - s->rw] |= RW_STACK;
    return r != NULL;
}

/* Pagemap entries (Documentation/admin-guide/mm/pagemap.rst): a page ever
 * populated is present or swapped. A page never touched reads as zeros (so
 * holds no pointer, and reading it would allocate page tables for
 * nothing); a userfaultfd range not filled is not present either (reading
 * it would block). A guard region (MADV_GUARD_INSTALL, whose reading
 * faults) is a swap-like marker: bit 58 since Linux 6.15, nothing to tell
 * it before (then process_vm_readv steps past it, scan_mapping). */
#define PM_PRESENT ((uint64_t)1 << 63)
#define PM_SWAP ((uint64_t)1 << 62)
#define PM_GUARD ((uint64_t)1 << 58)
static bool pm_populated(uint64_t e)
{
    return (e & PM_PRESENT) || (e & (PM_SWAP | PM_GUARD)) == PM_SWAP;
}

/* Calls fn on each run of pages of [lo, hi) ever populated; pages are
 * 4 KiB (x86-64 and arm64 with 4 KiB pages; a bigger page is 4 KiB entries
 * alike in pagemap). False if pagemap cannot be read (then nothing). */
static bool populated_runs(scan_t *s, uintptr_t lo, uintptr_t hi,
                           void (*fn)(scan_t *, uintptr_t, uintptr_t))
{
    if (s->pagemap < 0)
        return false;
    uint64_t pm[512]; /* 2 MiB of memory per read */
    uintptr_t run = 0; /* start of the current run, 0 if none */
    for (uintptr_t pg = lo & ~(uintptr_t)4095; pg < hi && !out_of_time(s, 0);) {
        size_t want = (hi - pg + 4095) / 4096;
        want = want < 512 ? want : 512;
        ssize_t n = pread(s->pagemap, pm, want * 8, (off_t)(pg / 4096 * 8));
        if (n < 8)
            break; /* unmapped meanwhile: the rest is gone */
        for (size_t i = 0; i < (size_t)n / 8; i++, pg += 4096) {
            if (pm_populated(pm[i])) {
                if (!run)
                    run = pg > lo ? pg : lo;
            } else if (run) {
                fn(s, run, pg);
                run = 0;
            }
        }
        out_of_time(s, (size_t)n); /* a read of pagemap costs as many words */
    }
    if (run && !s->over)
        fn(s, run, hi);
    return true;
}

/* A whole mapping's roots, only where it was ever populated (see
 * pm_populated), read through process_vm_readv, which steps past a page
 * that faults (a guard region pagemap does not tell). Without
 * process_vm_readv, read directly only what pagemap says populated; without
 * either, not read at all, as reading could kill the program. */
static void scan_mapping(scan_t *s, uintptr_t lo, uintptr_t hi)
{
    bool careful = s->careful;
    s->careful = s->can_copy;
    if (!populated_runs(s, lo, hi, scan_unsampled) && s->can_copy)
        scan_unsampled(s, lo, hi);
    s->careful = careful;
}

/* Whether the page holding a was ever populated (see pm_populated). */
static bool populated(const scan_t *s, uintptr_t a)
{
    uint64_t e;
    return s->pagemap >= 0 && pread(s->pagemap, &e, 8, (off_t)(a / 4096 * 8)) == 8 &&
           pm_populated(e);
}

/* For glibcheap.h's walks, which probe anywhere in a mapping. */
static size_t read_mem(void *arg, uintptr_t a, void *buf, size_t len)
{
    const scan_t *s = arg;
    if (s->careful || s->can_copy)
        return copy_in(a, buf, len);
    if (!len || !populated(s, a) || !populated(s, a + len - 1))
        return 0;
    memcpy(buf, (const void *)a, len);
    return len;
}

/* A chunk of glibc's main heap in use since before cprof started: a root,
 * unless it is a sampled object (then its slack is no root either). */
static void scan_early_chunk(void *arg, uintptr_t lo, uintptr_t hi)
{
    scan_t *s = arg;
    size_t b = first_ending_above(s->blk, s->nblk, sizeof(blk_t), offsetof(blk_t, end), lo);
    if (b < s->nblk && s->blk[b].addr == lo)
        return;
    scan_unsampled(s, lo, hi);
}

/* Anonymous memory that is no known thread's stack: the program's own
 * mappings, cached stacks of joined threads, the loader's blocks, and the
 * allocators' heaps. At a rate other than 1, all of it outside the sampled
 * objects: unsampled objects lie there. At rate 1 the allocators' heaps
 * hold only sampled objects and freed memory (stale pointers, no roots),
 * and for glibc the blocks made before cprof started, which are roots;
 * another allocator's heaps are told by the sampled objects they hold. */
static void scan_anon(scan_t *s, size_t i)
{
    uintptr_t lo = s->rw[i].lo, hi = s->rw[i].hi, a, end;
    if (!s->all_sampled) {
        scan_mapping(s, lo, hi);
    } else if (!rt_glibc_chunks) {
        if (!(s->rw_flags[i] & RW_BLOCKS))
            scan_mapping(s, lo, hi);
    } else if (s->rw_flags[i] & RW_HEAP) {
        glibcheap_early_chunks(lo, hi, read_mem, s, scan_early_chunk, s);
    } else {
        for (; (a = glibcheap_next_arena(lo, hi, read_mem, s, &end)); lo = end)
            scan_mapping(s, lo, a);
        scan_mapping(s, lo, hi);
    }
}

/* Everything the stop is for. self: the scanning thread's roots. Returns
 * the threads stopped, or a negative errno if none could be (then nothing
 * is scanned: the threads run). */
static int scan_stopped(scan_t *s, const thr_t *self, int *missed)
{
    int stopped = stopworld_stop(s->tids, s->ntids, STOP_TIMEOUT_MS);
    if (stopped < 0)
        return stopped;
    s->deadline = mono_us() + PAUSE_BUDGET_US;
    *missed = 0;
    for (size_t i = 0; i < s->ntids; i++)
        *missed += !stopworld_slot(i) && s->tids[i] != (pid_t)gettid();
    /* A thread that runs (missed, or started after the list was read) may
     * unmap memory while it is read: read it through process_vm_readv. */
    s->careful = s->can_copy && (*missed || count_threads() != (long)s->ntids);
    read_maps_stopped(s);
    check_blocks_stopped(s, 0, s->nblk, false);
    check_blocks_stopped(s, s->nblk, s->ncust, true);
    for (size_t i = 0; i < s->nroots; i++)
        scan_root(s, s->roots[i].lo, s->roots[i].hi);
    scan_thread(s, self);
    mark_stack(s, self->sp);
    for (size_t i = 0; i < s->ntids; i++) {
        const sw_slot_t *sl = stopworld_slot(i);
        if (!sl) {
            if (s->tids[i] == (pid_t)gettid())
                continue;
            /* Not stopped: its stack from where it sleeps, if it does,
             * without its registers (a stack not known is scanned whole
             * below, as anonymous memory). */
            thr_t t = {missed_sp(s->tids[i]), 0, NULL, 0, true};
            if (t.sp && mark_stack(s, t.sp))
                scan_thread(s, &t);
            continue;
        }
        thr_t t = {sl->sp, sl->tp, sl->regs, SW_NREGS, true};
        scan_thread(s, &t);
        mark_stack(s, sl->sp);
    }
    for (size_t i = 0; i < s->nrw; i++)
        if ((s->rw_flags[i] & (RW_ANON | RW_STACK)) == RW_ANON)
            scan_anon(s, i);
    stopworld_resume();
    return stopped;
}

/* --- the profile ------------------------------------------------------------ */

static void scan_free(scan_t *s)
{
    free(s->blk);
    free(s->pages);
    free(s->stack);
    free(s->excl);
    free(s->tids);
    free(s->maps);
    free(s->rw);
    free(s->rw_flags);
    if (s->pagemap >= 0)
        close(s->pagemap);
}

/* Prepares, scans, and fills the snapshot: recs count the unreachable
 * objects (suppressed ones left out), the comment the rest. self_sp: where
 * this thread's stack is scanned from should libunwind not find the
 * program's frame. */
static int scan(heap_snapshot_t *out, uintptr_t self_sp)
{
    scan_t s;
    memset(&s, 0, sizeof(s));
    s.all_sampled = all_sampled == 1;
    s.pagemap = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
    int64_t t0 = mono_us();
    rt_iterate_phdr(add_object, &s);
    int rc = read_tids(&s);
    if (rc == 0)
        rc = read_excluded(&s);
    s.tls_size += 2048; /* glibc's static TLS surplus */
    uintptr_t regs[NSAVED];
    thr_t self = {self_sp, (uintptr_t)pthread_self(), NULL, 0, false};
    if (program_frame(&s, &self.sp, regs)) {
        self.regs = regs;
        self.nregs = NSAVED;
    }
    size_t maplen = 0;
    char *m = procmaps_slurp("/proc/self/maps", &maplen);
    free(m);
    s.mapscap = maplen * 2 + 65536;
    s.rwcap = s.mapscap / 32;
    s.maps = malloc(s.mapscap);
    s.rw = malloc(s.rwcap * sizeof(*s.rw));
    s.rw_flags = malloc(s.rwcap);
    s.pages = calloc(1, (1ull << PAGE_BITS) / 8);
    if (rc == 0 && (!s.maps || !s.rw || !s.rw_flags || !s.pages))
        rc = -ENOMEM;
    if (rc < 0) {
        scan_free(&s);
        return rc;
    }

    size_t cap = livemap_count() * 9 / 8 + 1024;
    s.blk = malloc(cap * sizeof(*s.blk));
    s.stack = malloc(cap * sizeof(*s.stack));
    livemap_entry_t *live = malloc(cap * sizeof(*live));
    if (!s.blk || !s.stack || !live) {
        free(live);
        scan_free(&s);
        return -ENOMEM;
    }
    livemap_lock_all();
    size_t n = livemap_copy_locked(live, cap);
    /* malloc's objects first, then the custom heaps': two sorted parts */
    size_t k = 0, c = n;
    for (size_t i = 0; i < n; i++) {
        uintptr_t a = live[i].addr, end = a + (live[i].size ? live[i].size : 1);
        s.blk[live[i].custom ? --c : k++] = (blk_t){a, end, 0, live[i].size, live[i].bucket, 0, 0};
    }
    free(live);
    s.nblk = k;
    s.ncust = n - k;
    qsort(s.blk, s.nblk, sizeof(*s.blk), by_addr);
    qsort(s.blk + s.nblk, s.ncust, sizeof(*s.blk), by_addr);
    mark_pages(&s);

    uintptr_t probe = 1, copied = 0;
    s.can_copy = copy_in((uintptr_t)&probe, &copied, sizeof(probe)) == sizeof(probe) && copied == 1;
    int missed = 0;
    int64_t t1 = mono_us();
    int stopped = scan_stopped(&s, &self, &missed);
    int64_t t2 = mono_us();
    livemap_unlock_all();

    out->rate = __atomic_load_n(&sampler_rate, __ATOMIC_RELAXED);
    out->temp = false;
    out->resident = false;
    out->n = buckets_count();
    out->recs = calloc(out->n ? out->n : 1, sizeof(*out->recs));
    int64_t *reach = calloc(out->n ? out->n * 2 : 2, sizeof(*reach));
    if (!out->recs || !reach) {
        free(reach);
        scan_free(&s);
        heap_snapshot_free(out);
        return -ENOMEM;
    }
    for (size_t i = 0; i < n; i++) { /* both parts */
        const blk_t *b = &s.blk[i];
        if (b->bucket >= out->n || stopped < 0 || s.over)
            continue;
        if (b->reached) {
            reach[2 * b->bucket]++;
            reach[2 * b->bucket + 1] += (int64_t)b->size;
            continue;
        }
        heap_record_t *r = &out->recs[b->bucket];
        r->alloc_objects++;
        r->alloc_bytes += (int64_t)b->size;
    }
    scan_free(&s);
    stacknames_t *names = supp && supp[0] ? stacknames_new() : NULL;
    int64_t lo = 0, lb = 0, so = 0, ro = 0, rb = 0, elo = 0, elb = 0, ero = 0, erb = 0;
    for (size_t i = 0; i < out->n; i++) {
        heap_record_t *r = &out->recs[i];
        bucket_t *bk = buckets_get((uint32_t)i);
        heap_record_site(r, bk);
        int64_t c, bytes, rate = heap_record_rate(out, r);
        if (reach[2 * i]) {
            ro += reach[2 * i];
            rb += reach[2 * i + 1];
            sampler_scale(reach[2 * i], reach[2 * i + 1], rate, &c, &bytes);
            ero += c;
            erb += bytes;
        }
        if (!r->alloc_objects)
            continue;
        if (names && suppressed(names, r->pcs, r->depth)) {
            so += r->alloc_objects;
            r->alloc_objects = r->alloc_bytes = 0;
            continue;
        }
        r->inuse_objects = r->alloc_objects;
        r->inuse_bytes = r->alloc_bytes;
        lo += r->alloc_objects;
        lb += r->alloc_bytes;
        sampler_scale(r->alloc_objects, r->alloc_bytes, rate, &c, &bytes);
        elo += c;
        elb += bytes;
    }
    if (names)
        stacknames_free(names);
    free(reach);
    if (stopped < 0) {
        snprintf(out->comment, sizeof(out->comment),
                 "cprof leaks: not scanned: the threads could not be stopped (%s)",
                 strerror(-stopped));
        return 0;
    }
    if (s.over) {
        snprintf(out->comment, sizeof(out->comment),
                 "cprof leaks: incomplete: the threads resumed after %d ms of scan, so no object "
                 "is known unreachable; %d threads stopped, %d missed",
                 PAUSE_BUDGET_US / 1000, stopped, missed);
        return 0;
    }
    snprintf(out->comment, sizeof(out->comment),
             "cprof leaks: %lld unreachable sampled objects, %lld bytes (estimated %lld objects, "
             "%lld bytes); %lld suppressed; reachable: %lld sampled objects, %lld bytes "
             "(estimated %lld objects, %lld bytes); %s scan; %d threads stopped, %d missed; "
             "%llu bytes read; paused %.1f ms, scan %.1f ms",
             (long long)lo, (long long)lb, (long long)elo, (long long)elb, (long long)so,
             (long long)ro, (long long)rb, (long long)ero, (long long)erb,
             all_sampled == 1 ? "exact (every allocation sampled)"
                              : "conservative (unsampled memory counted as roots)",
             stopped, missed, (unsigned long long)s.read,
             (double)(t2 - t1) / 1000, (double)(mono_us() - t0) / 1000);
    return 0;
}

__attribute__((noinline)) int leaks_write(int fd, int debug)
{
#ifndef __GLIBC__
    (void)fd, (void)debug;
    return -ENOTSUP; /* the musl build: see CPROF_LEAK_PROFILE in config.c */
#endif
    /* Should libunwind not find the program's frame (scan), the scan of
     * this thread's stack starts at a local here, cprof's frames above
     * included, and the caller's registers are spilled into this frame:
     * more roots, never fewer. */
    __builtin_unwind_init();
    volatile uintptr_t marker = 0;
    uintptr_t self_sp = (uintptr_t)&marker;
    while (__atomic_exchange_n(&scan_busy, 1, __ATOMIC_ACQUIRE)) {
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    heap_snapshot_t s;
    memset(&s, 0, sizeof(s));
    int rc = scan(&s, self_sp);
    __atomic_store_n(&scan_busy, 0, __ATOMIC_RELEASE);
    if (rc == 0) {
        rc = debug ? heap_write_text(fd, &s) : heap_write_proto(fd, &s, NULL);
        heap_snapshot_free(&s);
    }
    return rc;
}
