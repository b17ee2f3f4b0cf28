/* memprof.c — the memory profile (see memprof.h). */
#include "memprof.h"

#include "arena.h"
#include "buckets.h"
#include "glibcheap.h"
#include "heapprof.h"
#include "labels.h"
#include "livemap.h"
#include "memstats.h"
#include "mmaphooks.h"
#include "ownheap.h"
#include "pagemap.h"
#include "procmaps.h"
#include "profwriter.h"
#include "rt.h"
#include "base/err.h"
#include "runtime/symtab.h"
#include "sampler.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#define PAGE 4096ull
#define OWN_HEAP "[cprof private heap]"
#define ANON "[anonymous mapping]"

enum { C_HEAP, C_HEAP_FREE, C_ALLOCATOR, C_MMAP, C_STACK, C_FILE, C_CODE, C_CPROF, C_OTHER,
       C_POOL /* the allocator's memory, split into the first three at the end */ };
static const char *const class_names[] = {"heap", "heap-free", "allocator", "mmap", "stack",
                                          "file", "code", "cprof", "other", "pool"};

/* One mapping of /proc/self/smaps; bytes. */
typedef struct {
    uintptr_t lo, hi;
    char perms[5];
    bool file;         /* backed by a file (inode != 0) */
    bool pool;         /* anonymous, holds a sampled object: the allocator's */
    const char *path;  /* in the smaps buffer, NUL-terminated; "" anonymous */
    uint64_t rss, swap;
} vma_t;

/* Where samples go: a class and a name (its synthetic frame), or for heap
 * samples a bucket. Values: resident, virtual, swap. */
typedef struct {
    int cls;
    char name[160];
    char thread[64]; /* the stack class's label thread=NAME */
    const uintptr_t *pcs; /* a sampled mmap's stack (mmaphooks.h), or NULL */
    uint32_t depth;
    int64_t v[3];
} owner_t;

/* A custom heap's sampled object (customheap.h): its bytes lie inside
 * memory counted already, a sampled malloc block's (block: that block's
 * bucket) or a mapping's, and are taken out of it. */
typedef struct {
    uintptr_t addr;
    uint64_t size, resident;
    uint32_t bucket, block; /* block: UINT32_MAX if none holds it */
} cobj_t;

/* A known range inside anonymous memory, carved out of its mapping. */
typedef struct {
    uintptr_t lo, hi;
    size_t owner;
} range_t;

typedef struct {
    vma_t *vma;
    size_t nvma, capvma;
    owner_t *own;
    size_t nown, capown;
    range_t *rng;
    size_t nrng, caprng;
    cobj_t *cobj;       /* the custom heaps' sampled objects */
    size_t ncobj, capcobj;
    range_t *chunk;     /* glibc's mmapped chunks found, maybe twice */
    size_t nchunk, capchunk;
    uint64_t heaps_size; /* glibc's other arenas' heaps, their sizes */
    pagemap_t pm;
    size_t own_sample;  /* the sample of cprof's private heap, SIZE_MAX: none */
    int64_t resident;   /* the samples' resident total */
} mem_t;

/* --- smaps ------------------------------------------------------------- */

static uint64_t kb_field(const char *line, const char *key)
{
    size_t n = strlen(key);
    if (strncmp(line, key, n) != 0)
        return UINT64_MAX;
    return strtoull(line + n, NULL, 10) * 1024;
}

/* Parses smaps in place: a header line per mapping ("lo-hi perms offset
 * dev inode path"), then "Key: N kB" lines. */
static int parse_smaps(mem_t *m, char *buf)
{
    for (char *line = buf, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        bool header = (*line >= '0' && *line <= '9') || (*line >= 'a' && *line <= 'f');
        if (header) {
            if (err_grow((void **)&m->vma, &m->capvma, m->nvma + 1, sizeof(*m->vma)) < 0)
                return -ENOMEM;
            vma_t *v = &m->vma[m->nvma++];
            memset(v, 0, sizeof(*v));
            char *p = line;
            v->lo = strtoull(p, &p, 16);
            v->hi = strtoull(p + 1, &p, 16);
            while (*p == ' ')
                p++;
            memcpy(v->perms, p, 4);
            p += 4;
            strtoull(p, &p, 16);         /* offset */
            while (*p == ' ')
                p++;
            p = strchr(p, ' ');          /* dev */
            unsigned long long inode = p ? strtoull(p, &p, 10) : 0;
            while (p && *p == ' ')
                p++;
            v->file = inode != 0;
            v->path = p ? p : "";
            continue;
        }
        if (!m->nvma)
            continue;
        vma_t *v = &m->vma[m->nvma - 1];
        uint64_t x;
        if ((x = kb_field(line, "Rss:")) != UINT64_MAX)
            v->rss = x;
        else if ((x = kb_field(line, "Swap:")) != UINT64_MAX)
            v->swap = x;
    }
    return 0;
}

/* --- owners and ranges --------------------------------------------------- */

/* The owner of class cls named name (thread: its label), made if new;
 * name NULL: always a new one. SIZE_MAX when out of memory. */
static size_t owner(mem_t *m, int cls, const char *name, const char *thread)
{
    for (size_t i = 0; name && i < m->nown; i++)
        if (m->own[i].cls == cls && strcmp(m->own[i].name, name) == 0 &&
            strcmp(m->own[i].thread, thread ? thread : "") == 0)
            return i;
    if (m->nown == m->capown) {
        size_t cap = m->capown ? m->capown * 2 : 64;
        owner_t *o = realloc(m->own, cap * sizeof(*o));
        if (!o)
            return SIZE_MAX;
        m->own = o;
        m->capown = cap;
    }
    owner_t *o = &m->own[m->nown];
    memset(o, 0, sizeof(*o));
    o->cls = cls;
    snprintf(o->name, sizeof(o->name), "%s", name ? name : "");
    snprintf(o->thread, sizeof(o->thread), "%s", thread ? thread : "");
    return m->nown++;
}

static int add_range(mem_t *m, uintptr_t lo, uintptr_t hi, size_t own)
{
    if (own == SIZE_MAX)
        return -ENOMEM;
    if (lo >= hi)
        return 0;
    if (err_grow((void **)&m->rng, &m->caprng, m->nrng + 1, sizeof(*m->rng)) < 0)
        return -ENOMEM;
    m->rng[m->nrng++] = (range_t){lo, hi, own};
    return 0;
}

/* A glibc mmapped chunk: the allocator's, and counted as such. */
static int add_chunk(mem_t *m, uintptr_t lo, uintptr_t hi)
{
    if (err_grow((void **)&m->chunk, &m->capchunk, m->nchunk + 1, sizeof(*m->chunk)) < 0)
        return -ENOMEM;
    m->chunk[m->nchunk++] = (range_t){lo, hi, 0};
    return add_range(m, lo, hi, owner(m, C_POOL, "", NULL));
}

static const char *base_of(const char *path)
{
    const char *b = strrchr(path, '/');
    return b ? b + 1 : path;
}

static bool is_cprof_object(const char *path)
{
    const char *b = base_of(path);
    return strncmp(b, "libcprof.so", 11) == 0 || strncmp(b, "libcprof-http.so", 16) == 0;
}

/* Each loaded object's segments, from its first page to its bss's end:
 * code by object (cprof's own: cprof). */
static int add_object(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    mem_t *m = arg;
    const char *name = info->dlpi_name && *info->dlpi_name ? info->dlpi_name : NULL;
    char exe[512];
    if (!name) {
        ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
        exe[n > 0 ? n : 0] = '\0';
        name = exe;
    }
    bool ours = is_cprof_object(name);
    size_t own = owner(m, ours ? C_CPROF : C_CODE, name, NULL);
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        uintptr_t lo = (info->dlpi_addr + ph->p_vaddr) & ~(uintptr_t)(PAGE - 1);
        uintptr_t hi = (info->dlpi_addr + ph->p_vaddr + ph->p_memsz + PAGE - 1) & ~(uintptr_t)(PAGE - 1);
        if (add_range(m, lo, hi, own) < 0)
            return 1;
    }
    return 0;
}

static size_t read_self(uintptr_t addr, void *buf, size_t len)
{
    struct iovec l = {buf, len}, r = {(void *)addr, len};
    ssize_t n = process_vm_readv(getpid(), &l, 1, &r, 1, 0);
    return n > 0 ? (size_t)n : 0;
}

static size_t read_mem(void *arg, uintptr_t addr, void *buf, size_t len)
{
    (void)arg;
    return read_self(addr, buf, len);
}

/* The vma holding a, or NULL. */
static vma_t *vma_of(mem_t *m, uintptr_t a)
{
    size_t lo = 0, hi = m->nvma;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (m->vma[mid].hi <= a)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < m->nvma && m->vma[lo].lo <= a ? &m->vma[lo] : NULL;
}

/* Thread stacks: the main one is [stack]; another's is the mapping holding
 * its stack pointer (this thread's own, or the one /proc reports for a
 * thread in a system call), from the guard page up, at most glibc's
 * default stack size when the kernel merged it with what lies above. */
static int add_stacks(mem_t *m)
{
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return -errno;
    size_t maxstack = 8 << 20;
#ifdef __GLIBC__
    pthread_attr_t a;
    if (pthread_getattr_default_np(&a) == 0) {
        pthread_attr_getstacksize(&a, &maxstack);
        pthread_attr_destroy(&a);
    }
#endif
    pid_t self = gettid(), pid = getpid();
    struct dirent *e;
    int rc = 0;
    while (rc == 0 && (e = readdir(d))) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        pid_t tid = (pid_t)atoi(e->d_name);
        char path[64], comm[64] = "", sys[256];
        snprintf(path, sizeof(path), "/proc/self/task/%d/comm", (int)tid);
        ssize_t n = procmaps_read_small(path, comm, sizeof(comm));
        if (n > 0 && comm[n - 1] == '\n')
            comm[n - 1] = '\0';
        char tname[64];
        snprintf(tname, sizeof(tname), "%s", comm);
        char frame[160];
        snprintf(frame, sizeof(frame), "[stack] %s tid=%d", tname, (int)tid);
        if (tid == pid) { /* the [stack] mapping, added by its own name */
            vma_t *v = NULL;
            for (size_t i = 0; i < m->nvma && !v; i++)
                if (strcmp(m->vma[i].path, "[stack]") == 0)
                    v = &m->vma[i];
            if (v)
                rc = add_range(m, v->lo, v->hi, owner(m, C_STACK, frame, tname));
            continue;
        }
        uintptr_t sp = 0;
        if (tid == self) {
            sp = (uintptr_t)__builtin_frame_address(0);
        } else {
            snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", (int)tid);
            n = procmaps_read_small(path, sys, sizeof(sys));
            /* "nr a1 a2 a3 a4 a5 a6 sp pc" for a thread in a system call */
            char *f[9];
            int nf = 0;
            for (char *p = n > 0 ? sys : NULL, *save; nf < 9 && (p = strtok_r(p, " \n", &save));
                 p = NULL)
                f[nf++] = p;
            if (nf == 9)
                sp = strtoull(f[7], NULL, 16);
        }
        vma_t *v = sp ? vma_of(m, sp) : NULL;
        if (!v)
            continue;
        uintptr_t hi = v->hi;
        if (v > m->vma && v[-1].hi == v->lo && strcmp(v[-1].perms, "---p") == 0 &&
            hi - v->lo > maxstack)
            hi = v->lo + maxstack;
        if (sp >= hi)
            hi = v->hi;
        rc = add_range(m, v->lo, hi, owner(m, C_STACK, frame, tname));
    }
    closedir(d);
    return rc;
}

/* --- attribution ---------------------------------------------------------- */

static int by_lo(const void *a, const void *b)
{
    const range_t *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* The class and name of what a mapping holds beyond its known ranges. */
static size_t default_owner(mem_t *m, const vma_t *v)
{
    const char *p = v->path;
    if (strcmp(p, "[heap]") == 0 || v->pool)
        return owner(m, C_POOL, "", NULL);
    if (v->file)
        return owner(m, strchr(v->perms, 'x') ? C_CODE : C_FILE, p, NULL);
    if (*p == '[' && strncmp(p, "[anon", 5) != 0)
        return owner(m, C_OTHER, p, NULL);
    if (strcmp(v->perms, "---p") == 0)
        return owner(m, C_OTHER, "[reserved or guard]", NULL);
    return owner(m, C_MMAP, *p ? p : ANON, NULL);
}

static void owner_add(mem_t *m, size_t o, uint64_t res, uint64_t virt, uint64_t swap)
{
    m->own[o].v[0] += (int64_t)res;
    m->own[o].v[1] += (int64_t)virt;
    m->own[o].v[2] += (int64_t)swap;
}

/* Gives each mapping's bytes to its ranges (measured) and the rest to its
 * own class, so that the mapping's totals are its smaps line's. */
static int attribute(mem_t *m)
{
    qsort(m->rng, m->nrng, sizeof(*m->rng), by_lo);
    size_t r0 = 0;
    for (size_t i = 0; i < m->nvma; i++) {
        vma_t *v = &m->vma[i];
        size_t def = default_owner(m, v);
        if (def == SIZE_MAX)
            return -ENOMEM;
        while (r0 < m->nrng && m->rng[r0].hi <= v->lo)
            r0++;
        /* one range covering the whole mapping: its smaps line */
        uintptr_t cur = v->lo;
        uint64_t res = 0, virt = 0, swap = 0;
        for (size_t j = r0; j < m->nrng && m->rng[j].lo < v->hi; j++) {
            range_t *r = &m->rng[j];
            uintptr_t lo = r->lo > cur ? r->lo : cur, hi = r->hi < v->hi ? r->hi : v->hi;
            if (lo >= hi)
                continue;
            if (lo == v->lo && hi == v->hi) {
                owner_add(m, r->owner, v->rss, hi - lo, v->swap);
                res = v->rss;
                swap = v->swap;
                virt = hi - lo;
                break;
            }
            uint64_t rr, ss;
            pagemap_measure(&m->pm, lo, hi, &rr, &ss);
            if (res + rr > v->rss)
                rr = v->rss - res;
            if (swap + ss > v->swap)
                ss = v->swap - swap;
            owner_add(m, r->owner, rr, hi - lo, ss);
            res += rr;
            swap += ss;
            virt += hi - lo;
            cur = hi;
        }
        owner_add(m, def, v->rss - res, (v->hi - v->lo) - virt, v->swap - swap);
    }
    return 0;
}

/* --- the heap ---------------------------------------------------------------- */

/* Per bucket: the live sampled objects' scaled bytes (resident, virtual,
 * swap), and their own bytes (resident, virtual): these surely exist.
 * custom: a custom heap's bucket (its label heap=NAME), not the
 * allocator's memory. */
typedef struct {
    int64_t v[3];
    int64_t raw[2];
    bool custom;
} hv_t;

/* Takes up to want[k] (resident, virtual) out of have[k]; returns in
 * want what could not be. */
static void take(int64_t have[2], int64_t want[2])
{
    for (int k = 0; k < 2; k++) {
        int64_t t = want[k] < have[k] ? want[k] : have[k];
        t = t < 0 ? 0 : t;
        have[k] -= t;
        want[k] -= t;
    }
}

/* An object's scaled bytes (resident, virtual), as its bucket scales. */
static void cobj_values(const hv_t *h, const cobj_t *o, int64_t out[2])
{
    const hv_t *b = &h[o->bucket];
    double f = b->raw[1] ? (double)b->v[1] / (double)b->raw[1] : 1;
    out[0] = (int64_t)((double)o->resident * f);
    out[1] = (int64_t)((double)o->size * f);
}

/* Takes the custom objects out of the sampled blocks holding them (the
 * pool's block not declared backing memory: both are samples). */
static void cobj_take_blocks(mem_t *m, hv_t *h)
{
    for (size_t i = 0; i < m->ncobj; i++) {
        cobj_t *o = &m->cobj[i];
        if (o->block == UINT32_MAX)
            continue;
        int64_t want[2];
        cobj_values(h, o, want);
        int64_t have[2] = {h[o->block].v[0], h[o->block].v[1]};
        take(have, want);
        h[o->block].v[0] = have[0];
        h[o->block].v[1] = have[1];
        h[o->bucket].v[0] -= want[0]; /* what the block could not give */
        h[o->bucket].v[1] -= want[1];
    }
}

static hv_t *heap_samples(mem_t *m, size_t *nb, char *note, size_t notelen)
{
    size_t cap = livemap_count() * 9 / 8 + 1024;
    livemap_entry_t *live = malloc(cap * sizeof(*live));
    if (!live)
        return NULL;
    livemap_lock_all();
    size_t n = livemap_copy_locked(live, cap);
    livemap_unlock_all();
    livemap_sort_copy(live, n);
    *nb = buckets_count();
    hv_t *h = calloc(*nb ? *nb : 1, sizeof(*h));
    int64_t *raw = calloc(*nb ? *nb * 3 : 3, sizeof(*raw));
    if (!h || !raw) {
        free(h);
        free(raw);
        free(live);
        return NULL;
    }
    const livemap_entry_t *block = NULL; /* the last malloc block, in address order */
    for (size_t i = 0; i < n; i++) {
        livemap_entry_t *e = &live[i];
        if (e->bucket >= *nb)
            continue;
        uint64_t res = pagemap_resident_bytes(&m->pm, e->addr, e->addr + e->size);
        raw[3 * e->bucket] += 1;
        raw[3 * e->bucket + 1] += (int64_t)e->size;
        raw[3 * e->bucket + 2] += (int64_t)res;
        if (e->custom) { /* inside memory counted already: taken out of it */
            h[e->bucket].custom = true;
            bool in = block && e->addr >= block->addr && e->addr + e->size <= block->addr + block->size;
            if (err_grow((void **)&m->cobj, &m->capcobj, m->ncobj + 1, sizeof(*m->cobj)) < 0)
                break;
            m->cobj[m->ncobj++] = (cobj_t){e->addr, e->size, res, e->bucket,
                                           in ? block->bucket : UINT32_MAX};
            continue;
        }
        block = e;
        /* Another allocator's mapping holding a sampled object is its
         * (jemalloc's extents, tcmalloc's spans). */
        vma_t *v = rt_glibc_chunks ? NULL : vma_of(m, e->addr);
        if (v && !v->file && !*v->path)
            v->pool = true;
        /* glibc's mmapped chunks: the mapping is the allocator's */
        uint64_t hdr[2];
        if (rt_glibc_chunks && e->size >= 64 * 1024 &&
            read_self(e->addr - 16, hdr, sizeof(hdr)) == sizeof(hdr) && (hdr[1] & 2)) {
            uintptr_t lo = e->addr - 16 - hdr[0];
            if (lo % PAGE == 0 && add_chunk(m, lo, lo + (hdr[1] & ~(uint64_t)7)) < 0)
                break;
        }
    }
    free(live);
    int64_t rate = __atomic_load_n(&sampler_rate, __ATOMIC_RELAXED);
    for (size_t b = 0; b < *nb; b++) {
        if (!raw[3 * b])
            continue;
        heap_record_t r;
        memset(&r, 0, sizeof(r));
        heap_record_site(&r, buckets_get((uint32_t)b));
        int64_t c, bytes;
        sampler_scale(raw[3 * b], raw[3 * b + 1], r.rate > 0 ? r.rate : rate, &c, &bytes);
        double f = raw[3 * b + 1] ? (double)bytes / (double)raw[3 * b + 1] : 1;
        h[b].v[1] = bytes;
        h[b].v[0] = (int64_t)((double)raw[3 * b + 2] * f);
        h[b].raw[1] = raw[3 * b + 1];
        h[b].raw[0] = raw[3 * b + 2];
    }
    cobj_take_blocks(m, h);
    snprintf(note, notelen, "%zu live sampled objects", n);
    free(raw);
    return h;
}

#ifdef __GLIBC__ /* musl's malloc keeps no statistics */
/* The bytes of glibc's mmapped chunks, each once. */
static uint64_t chunks_bytes(mem_t *m)
{
    qsort(m->chunk, m->nchunk, sizeof(*m->chunk), by_lo);
    uint64_t sum = 0;
    for (size_t i = 0, hi = 0; i < m->nchunk; i++)
        if (m->chunk[i].lo >= hi) {
            sum += m->chunk[i].hi - m->chunk[i].lo;
            hi = m->chunk[i].hi;
        }
    return sum;
}

#endif

/* glibc's free bytes (resident, virtual, swap): from the counters
 * (glibcheap.h), else mallinfo2's walk (cprof attach). The free chunks
 * were all used once, so resident, except the untouched pages at the
 * main heap's end, which are its top chunk's. */
static void glibc_free(mem_t *m, int64_t fr[3])
{
#ifdef __GLIBC__ /* musl's malloc keeps no statistics */
    uint64_t fb, top = UINT64_MAX;
    if (!glibcheap_free_bytes(m->heaps_size, chunks_bytes(m), mmaphooks_brk_bytes(), &fb)) {
        struct mallinfo2 mi = mallinfo2();
        fb = mi.fordblks;
        top = mi.keepcost;
    }
    uintptr_t brk = (uintptr_t)sbrk(0);
    uint64_t absent = 0, swap = 0;
    for (size_t i = 0; brk != (uintptr_t)-1 && i < m->nvma; i++)
        if (strcmp(m->vma[i].path, "[heap]") == 0 && brk > m->vma[i].lo && brk <= m->vma[i].hi) {
            uintptr_t hi = (brk + PAGE - 1) & ~(uintptr_t)(PAGE - 1), lo = m->vma[i].lo;
            uint64_t most = top < fb ? top : fb;
            if (hi - lo > most)
                lo = (hi - most + PAGE - 1) & ~(uintptr_t)(PAGE - 1);
            absent = pagemap_absent_tail(&m->pm, lo, hi, &swap);
            absent = absent > hi - brk ? absent - (hi - brk) : 0; /* past the break */
        }
    absent = absent < fb ? absent : fb;
    fr[1] = (int64_t)fb;
    fr[0] = (int64_t)(fb - absent);
    fr[2] = (int64_t)(swap < absent ? swap : absent);
#else
    (void)m;
    (void)fr;
#endif
}

/* Takes the custom objects no sampled block holds out of what their
 * memory was attributed to (after attribute): the pool (the block was
 * declared backing memory), a mapping, a static buffer's object. */
static void cobj_take_owners(mem_t *m, hv_t *h)
{
    for (size_t i = 0; i < m->ncobj; i++) {
        cobj_t *o = &m->cobj[i];
        if (o->block != UINT32_MAX)
            continue;
        size_t lo = 0, hi = m->nrng, own = SIZE_MAX;
        while (lo < hi) { /* the last range starting at or below addr */
            size_t mid = (lo + hi) / 2;
            if (m->rng[mid].lo <= o->addr)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo && m->rng[lo - 1].hi > o->addr)
            own = m->rng[lo - 1].owner;
        vma_t *v = own == SIZE_MAX ? vma_of(m, o->addr) : NULL;
        if (v)
            own = default_owner(m, v);
        int64_t want[2];
        cobj_values(h, o, want);
        if (own != SIZE_MAX)
            take(m->own[own].v, want);
        h[o->bucket].v[0] -= want[0];
        h[o->bucket].v[1] -= want[1];
    }
}

/* Splits the allocator's memory (pool: [heap], glibc's arenas and mmapped
 * chunks) into the allocator's free bytes, the heap samples and the rest.
 * Scales the heap samples down should their estimate exceed what is left. */
static void split_pool(mem_t *m, hv_t *h, size_t nb, int64_t out[3][3])
{
    int64_t pool[3] = {0, 0, 0}, heap[3] = {0, 0, 0}, fr[3] = {0, 0, 0};
    memstats_t ms;
    memset(&ms, 0, sizeof(ms));
    if (!rt_glibc_chunks)
        memstats_read_heap(&ms);
    for (size_t i = 0; i < m->nown; i++)
        if (m->own[i].cls == C_POOL)
            for (int k = 0; k < 3; k++)
                pool[k] += m->own[i].v[k];
    for (size_t b = 0; b < nb; b++)
        for (int k = 0; k < 2 && !h[b].custom; k++)
            heap[k] += h[b].v[k];
    if (rt_glibc_chunks)
        glibc_free(m, fr);
    else /* jemalloc, tcmalloc: their own count, resident */
        fr[0] = fr[1] = (int64_t)ms.free_held;
    for (int k = 0; k < 3; k++) {
        /* glibc's free count is exact and lies in the mappings found, the
         * heap's an estimate at rates above 1: the estimate gives way.
         * Another allocator's free bytes may lie in mappings not found
         * (holding no sampled object): there they give way. */
        int64_t hk, fk;
        if (rt_glibc_chunks) {
            fk = fr[k] < pool[k] ? fr[k] : pool[k];
            hk = heap[k] < pool[k] - fk ? heap[k] : pool[k] - fk;
        } else {
            hk = heap[k] < pool[k] ? heap[k] : pool[k];
            fk = fr[k] < pool[k] - hk ? fr[k] : pool[k] - hk;
        }
        hk = hk < 0 ? 0 : hk;
        fk = fk < 0 ? 0 : fk;
        out[0][k] = hk;
        out[1][k] = fk;
        out[2][k] = pool[k] - hk - fk;
        if (k < 2 && heap[k] > hk) { /* the estimate exceeds the room */
            /* What the samples add beyond their own bytes gives way first:
             * a block larger than the rate, sampled for sure, keeps its
             * size. */
            int64_t own = 0;
            for (size_t b = 0; b < nb; b++)
                own += h[b].custom ? 0 : h[b].raw[k];
            double fx = own < hk && heap[k] > own ? (double)(hk - own) / (double)(heap[k] - own) : 0;
            double fo = own > hk ? (double)hk / (double)own : 1;
            for (size_t b = 0; b < nb; b++) {
                if (h[b].custom)
                    continue;
                int64_t extra = h[b].v[k] - h[b].raw[k];
                h[b].v[k] = (int64_t)((double)h[b].raw[k] * fo + (double)(extra > 0 ? extra : 0) * fx);
            }
        }
    }
    /* swap of heap samples is not measured per object: the allocator's */
    out[2][2] += out[0][2];
    out[0][2] = 0;
}

/* glibc's mmapped chunks from a onwards, each the allocator's whether
 * sampled or not: a chunk header (prev_size 0, the size with IS_MMAPPED,
 * whole pages inside v) at a resident page's start; where the kernel
 * merged neighbouring chunks, the next follows the last. Returns where
 * the run ends, or 0 (out of memory). */
static uintptr_t walk_chunks(mem_t *m, const vma_t *v, uintptr_t a)
{
    while (a + 16 <= v->hi) {
        uint64_t e = 0, hdr[2];
        if (!((e = pagemap_entry(&m->pm, a)) >> 63) ||
            read_self(a, hdr, sizeof(hdr)) != sizeof(hdr))
            break;
        uint64_t size = hdr[1] & ~(uint64_t)7;
        if (hdr[0] != 0 || (hdr[1] & 7) != 2 || !size || size % PAGE || size > v->hi - a)
            break;
        if (add_chunk(m, a, a + size) < 0)
            return 0;
        a += size;
    }
    return a;
}

static int by_addr(const void *a, const void *b)
{
    uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;
    return x < y ? -1 : x > y;
}

/* The chunks at v's start and after each known range in v (a sampled
 * chunk, a thread's stack, a sampled mmap, cprof's arena): where the
 * kernel merged something else below them, it hides the first. Each run
 * is walked once: the starts in address order, those inside the run
 * before skipped. */
static int add_mmapped_chunks(mem_t *m, const vma_t *v)
{
    size_t n = 1;
    for (size_t j = 0; j < m->nrng; j++)
        n += m->rng[j].hi > v->lo && m->rng[j].hi < v->hi;
    uintptr_t *start = malloc(n * sizeof(*start));
    if (!start)
        return -ENOMEM;
    start[0] = v->lo;
    for (size_t j = 0, k = 1; j < m->nrng; j++)
        if (m->rng[j].hi > v->lo && m->rng[j].hi < v->hi)
            start[k++] = m->rng[j].hi;
    qsort(start, n, sizeof(*start), by_addr);
    int rc = 0;
    for (size_t i = 0, done = 0; rc == 0 && i < n; i++)
        if (start[i] >= done && !(done = walk_chunks(m, v, start[i])))
            rc = -ENOMEM;
    free(start);
    return rc;
}

/* --- writing ------------------------------------------------------------------ */

static int add_named(profwriter_t *w, const char *frame, const int64_t *v, const char *cls,
                     const char *thread)
{
    profile_t *p = profwriter_profile(w);
    int64_t s = profile_intern(p, frame);
    uint64_t loc = 0;
    for (size_t i = 0; s >= 0 && i < p->n_locations && !loc; i++) {
        profile_location_t *l = &p->locations[i];
        if (!l->mapping_id && !l->address && l->n_lines == 1 &&
            profile_function_by_id(p, l->lines[0].function_id)->name == s)
            loc = l->id;
    }
    if (s >= 0 && !loc) {
        profile_function_t *f = profile_add_function(p);
        if (!f)
            return -ENOMEM;
        f->id = p->n_functions;
        f->name = f->system_name = s;
        profile_line_t line = {.function_id = f->id};
        profile_location_t *l = profile_add_location(p, &line, 1);
        if (!l)
            return -ENOMEM;
        l->id = p->n_locations;
        loc = l->id;
    }
    profile_sample_t *smp = loc ? profile_add_sample(p, &loc, 1, v) : NULL;
    if (!smp)
        return -ENOMEM;
    profile_label_t lb = {.key = profile_intern(p, "class"), .str = profile_intern(p, cls)};
    int rc = profile_sample_add_label(p, smp, &lb);
    if (rc == 0 && thread && *thread) {
        lb = (profile_label_t){.key = profile_intern(p, "thread"), .str = profile_intern(p, thread)};
        rc = profile_sample_add_label(p, smp, &lb);
    }
    return rc;
}

/* The process's Rss as smaps_rollup counts it: a walk of every page
 * table, exact. */
static uint64_t rollup_rss(void)
{
    char buf[4096];
    uint64_t rss = 0;
    if (procmaps_read_small("/proc/self/smaps_rollup", buf, sizeof(buf)) <= 0)
        return 0;
    for (char *l = buf; l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        uint64_t x;
        if ((x = kb_field(l, "Rss:")) != UINT64_MAX)
            rss = x;
    }
    return rss;
}

static int build(mem_t *m, profwriter_t *w)
{
    char note[128] = "";
    size_t nb = 0;
    hv_t *h = heap_samples(m, &nb, note, sizeof(note));
    if (!h)
        return -ENOMEM;
    int rc = 0;
    bool complete = false;
    size_t cap = 256, na = 0;
    arena_range_t *ar = NULL;
    while (!complete && cap <= (1u << 16)) {
        arena_range_t *a = realloc(ar, (cap *= 2) * sizeof(*a));
        if (!a)
            break;
        ar = a;
        na = arena_ranges(ar, cap, &complete);
        if (na < cap) /* all there is: a lost range stays lost */
            break;
    }
    size_t cp = owner(m, C_CPROF, "[cprof arenas]", NULL);
    for (size_t i = 0; ar && i < na && rc == 0; i++)
        rc = add_range(m, ar[i].lo, ar[i].hi, cp);
    free(ar);
    if (rc == 0 && ownheap_base)
        rc = add_range(m, ownheap_base, ownheap_base + ownheap_size,
                       owner(m, C_CPROF, OWN_HEAP, NULL));
    if (rc == 0)
        rc = rt_iterate_phdr(add_object, m) ? -ENOMEM : 0;
    if (rc == 0)
        rc = add_stacks(m);
    /* the program's sampled mmaps, each with its stack */
    uint64_t mdropped = 0;
    size_t nmaps = 0, capmaps = mmaphooks_count() + 64;
    mmap_rec_t *maps = rc == 0 ? malloc(capmaps * sizeof(*maps)) : NULL;
    if (maps)
        nmaps = mmaphooks_copy(maps, capmaps, &mdropped);
    for (size_t i = 0; rc == 0 && i < nmaps; i++) {
        const vma_t *v = vma_of(m, maps[i].lo);
        if (v && v->file)
            continue; /* a file's mapping grown by mremap (mmaphooks.c) */
        size_t o = owner(m, C_MMAP, NULL, NULL);
        if (o != SIZE_MAX) {
            m->own[o].pcs = maps[i].pcs;
            m->own[o].depth = maps[i].depth;
        }
        rc = add_range(m, maps[i].lo, maps[i].hi, o);
    }
    /* glibc's other arenas: their heaps' writable parts are the
     * allocator's (a full heap's merges with the next heap's), the
     * reserved tail above the last held for growth */
    for (size_t i = 0; rc == 0 && rt_glibc_chunks && i < m->nvma; i++) {
        vma_t *v = &m->vma[i];
        if (v->file || strcmp(v->perms, "rw-p") != 0 || *v->path)
            continue;
        rc = add_mmapped_chunks(m, v);
        uintptr_t end = v->lo, a = 0;
        for (uintptr_t h; rc == 0 && (h = glibcheap_next_arena(end, v->hi, read_mem, NULL, &end));) {
            a = h;
            m->heaps_size += glibcheap_heap_size(a, read_mem, NULL);
            rc = add_range(m, a, end, owner(m, C_POOL, "", NULL));
        }
        if (rc == 0 && a && end == v->hi && i + 1 < m->nvma && m->vma[i + 1].lo == v->hi &&
            strcmp(m->vma[i + 1].perms, "---p") == 0)
            rc = add_range(m, m->vma[i + 1].lo, (a + (64ull << 20)) < m->vma[i + 1].hi
                                                    ? a + (64ull << 20) : m->vma[i + 1].hi,
                           owner(m, C_HEAP_FREE, "[glibc arena reserve]", NULL));
    }
    if (rc == 0)
        rc = attribute(m);
    if (rc < 0) {
        free(maps);
        free(h);
        return rc;
    }
    int64_t split[3][3];
    cobj_take_owners(m, h);
    split_pool(m, h, nb, split);

    profile_t *p = profwriter_profile(w);
    if (profile_add_sample_type(p, "resident_space", "bytes") < 0 ||
        profile_add_sample_type(p, "virtual_space", "bytes") < 0 ||
        profile_add_sample_type(p, "swap_space", "bytes") < 0) {
        free(h);
        return -ENOMEM;
    }
    p->default_sample_type = profile_intern(p, "resident_space");
    if (*heap_alloc_wrappers())
        p->drop_frames = profile_intern(p, heap_alloc_wrappers());
    p->period_type.type = profile_intern(p, "space");
    p->period_type.unit = profile_intern(p, "bytes");
    p->period = __atomic_load_n(&sampler_rate, __ATOMIC_RELAXED);
    int64_t tot[3] = {0, 0, 0};
    profile_label_t cls = {.key = profile_intern(p, "class"), .str = profile_intern(p, "heap")};
    for (size_t b = 0; b < nb && rc == 0; b++) {
        if (!h[b].v[1] && !h[b].v[0])
            continue;
        heap_record_t r;
        memset(&r, 0, sizeof(r));
        heap_record_site(&r, buckets_get((uint32_t)b));
        /* the class, then the allocating thread's labels (a custom
         * heap's heap=NAME among them), as in the heap profile */
        profile_label_t l[1 + LABELS_MAX_PAIRS] = {cls};
        int nl = labels_to_profile(p, r.labels, l + 1, LABELS_MAX_PAIRS);
        rc = nl < 0 ? nl : profwriter_add(w, r.pcs, r.depth, h[b].v, l, (size_t)nl + 1);
        for (int k = 0; k < 3; k++)
            tot[k] += h[b].v[k];
    }
    static const char *const pool_frames[3] = {NULL, "[malloc: freed, held]",
                                               "[malloc: metadata]"};
    for (int c = 1; c < 3 && rc == 0; c++) {
        if (split[c][0] || split[c][1] || split[c][2])
            rc = add_named(w, pool_frames[c], split[c], class_names[c], NULL);
        for (int k = 0; k < 3; k++)
            tot[k] += split[c][k];
    }
    for (size_t i = 0; i < m->nown && rc == 0; i++) {
        owner_t *o = &m->own[i];
        if (o->cls == C_POOL || (!o->v[0] && !o->v[1] && !o->v[2]))
            continue;
        profile_label_t ml = {.key = cls.key, .str = profile_intern(p, class_names[o->cls])};
        if (o->pcs)
            rc = profwriter_add(w, o->pcs, o->depth, o->v, &ml, 1);
        else
            rc = add_named(w, o->name, o->v, class_names[o->cls], o->thread);
        if (strcmp(o->name, OWN_HEAP) == 0)
            m->own_sample = p->n_samples - 1;
        for (int k = 0; k < 3; k++)
            tot[k] += o->v[k];
    }
    free(h);
    free(maps);
    if (rc < 0)
        return rc;
    m->resident = tot[0];
    char c[384];
    snprintf(c, sizeof(c),
             "cprof memory: resident %lld, virtual %lld, swap %lld bytes in %zu mappings; "
             "%s; %zu sampled mmaps (%llu dropped)",
             (long long)tot[0], (long long)tot[1], (long long)tot[2], m->nvma,
             note, nmaps, (unsigned long long)mdropped);
    return profile_add_comment(p, c);
}

/* debug=1: each class's totals, then each sample but the heap's (which
 * the proto form has with its stacks) with its frame. */
static int write_text(profwriter_t *w, int fd)
{
    profile_t *p = profwriter_profile(w);
    int64_t tot[C_POOL][3];
    memset(tot, 0, sizeof(tot));
    int64_t key = profile_intern(p, "class");
    for (size_t i = 0; i < p->n_samples; i++) {
        const profile_sample_t *s = &p->samples[i];
        for (size_t j = 0; j < s->n_labels; j++)
            for (int c = 0; c < C_POOL; c++)
                if (s->labels[j].key == key &&
                    strcmp(p->strings[s->labels[j].str], class_names[c]) == 0)
                    for (int k = 0; k < 3; k++)
                        tot[c][k] += s->values[k];
    }
    int64_t all[3] = {0, 0, 0};
    for (int c = 0; c < C_POOL; c++)
        for (int k = 0; k < 3; k++)
            all[k] += tot[c][k];
    if (dprintf(fd, "memory profile: resident %lld virtual %lld swap %lld bytes\n\n%-10s %14s %14s %12s\n",
                (long long)all[0], (long long)all[1], (long long)all[2], "class", "resident",
                "virtual", "swap") < 0)
        return -errno;
    for (int c = 0; c < C_POOL; c++)
        dprintf(fd, "%-10s %14lld %14lld %12lld\n", class_names[c], (long long)tot[c][0],
                (long long)tot[c][1], (long long)tot[c][2]);
    dprintf(fd, "\n%14s %14s %12s  class: frame\n", "resident", "virtual", "swap");
    for (size_t i = 0; i < p->n_samples; i++) {
        const profile_sample_t *s = &p->samples[i];
        const profile_location_t *l = s->n_location_ids == 1
                                          ? profile_location_by_id(p, s->location_ids[0])
                                          : NULL;
        if (!l || l->address || l->n_lines != 1)
            continue;
        const char *cls = "";
        for (size_t j = 0; j < s->n_labels; j++)
            if (s->labels[j].key == key)
                cls = p->strings[s->labels[j].str];
        const profile_function_t *f = profile_function_by_id(p, l->lines[0].function_id);
        dprintf(fd, "%14lld %14lld %12lld  %s: %s\n", (long long)s->values[0],
                (long long)s->values[1], (long long)s->values[2], cls,
                f ? p->strings[f->name] : "?");
    }
    for (size_t i = 0; i < p->n_comments; i++)
        dprintf(fd, "\n# %s\n", p->strings[p->comments[i]]);
    return 0;
}

/* Encoding the profile grows cprof's private heap after smaps was read (a
 * few hundred KiB: the profile, zlib's state). Encoded once to nowhere,
 * the growth is read from smaps_rollup (statm's per-CPU counters are too
 * coarse for a small process: memory_http) and added to cprof's sample, so
 * the profile written (with memory the first encoding freed) adds up to
 * the Rss of the moment it is written. The comment says how much. */
static int settle(mem_t *m, profwriter_t *w)
{
    int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (null < 0)
        return -errno;
    int rc = profwriter_write(w, null);
    close(null);
    int64_t grown = (int64_t)rollup_rss() - m->resident;
    profile_t *p = profwriter_profile(w);
    if (rc < 0 || m->own_sample == SIZE_MAX || grown <= 0)
        return rc;
    p->samples[m->own_sample].values[0] += grown;
    char c[128];
    snprintf(c, sizeof(c), "cprof memory: %lld resident bytes grown while encoding, cprof's",
             (long long)grown);
    return profile_add_comment(p, c);
}

int memprof_write(int fd, int debug)
{
    if (debug != 0 && debug != 1)
        return -EINVAL;
    mem_t m;
    memset(&m, 0, sizeof(m));
    m.own_sample = SIZE_MAX;
    pagemap_open(&m.pm);
    profwriter_t *w = profwriter_new();
    /* The symbol tables the writer names frames with are cprof's memory
     * too: built before smaps is read, so that it counts them. */
    symtab_t *t = symtab_take();
    if (t)
        symtab_put(t);
    size_t len = 0;
    char *smaps = procmaps_slurp("/proc/self/smaps", &len);
    /* Without pagemap (a kernel that refuses it) the known ranges measure
     * nothing and each mapping's bytes go to its own class: still whole. */
    int rc = !w ? -errno : !smaps ? -ENOMEM : 0;
    if (rc == 0)
        rc = parse_smaps(&m, smaps);
    if (rc == 0)
        rc = build(&m, w);
    if (rc == 0 && !debug)
        rc = settle(&m, w);
    if (rc == 0)
        rc = debug ? write_text(w, fd) : profwriter_write(w, fd);
    profwriter_free(w);
    free(smaps);
    free(m.vma);
    free(m.own);
    free(m.rng);
    free(m.chunk);
    free(m.cobj);
    pagemap_close(&m.pm);
    return rc;
}
