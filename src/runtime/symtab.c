/* symtab.c — function symbols of the loaded objects (see symtab.h). */
#include "symtab.h"

#include "rt.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* rt_iterate_phdr (rt.h) in libcprof.so, where this runs on the program's
 * threads; libcprof-http.so links this object without rt.c (the weak
 * reference is NULL there), and runs it on cprof's own threads, which
 * take no CPU-profile or dump signal. */
__attribute__((weak, visibility("hidden"))) int
rt_iterate_phdr(int (*cb)(struct dl_phdr_info *, size_t, void *), void *arg);

static int iterate_phdr(int (*cb)(struct dl_phdr_info *, size_t, void *), void *arg)
{
    return rt_iterate_phdr ? rt_iterate_phdr(cb, arg) : dl_iterate_phdr(cb, arg);
}

#define MAX_SYMS_PER_OBJECT (64u << 20) /* entries of one symbol table read */
#define MAX_STRTAB (1u << 30)           /* bytes of one string table read */
#define MAX_NOTE 65536                  /* bytes of one note segment read */
#define BUILD_ID_MAX 64

typedef struct {
    uint64_t addr, size; /* process addresses */
    uint32_t name;       /* offset in the object's pool */
    uint8_t rank;        /* binding: 0 global, 1 weak, 2 local */
    bool hidden;         /* a non-default symbol version (compat alias) */
} sym_t;

typedef struct {
    uint64_t lo, hi;
} range_t;

typedef struct {
    char *path;     /* file to read, or NULL (vDSO) */
    uint64_t bias;  /* load bias: process address - ELF address */
    range_t *ranges; /* executable segments */
    size_t nranges;
    uint8_t build_id[BUILD_ID_MAX];
    size_t build_id_len; /* 0: none in memory */
    sym_t *syms;
    size_t nsyms, cap;
    char *pool; /* NUL-terminated names */
    size_t pool_len, pool_cap;
    bool loaded; /* syms read: at the first lookup in the object */
    bool picked; /* a symtab_lookup_many passed over its symbols */
} obj_t;

struct symtab {
    obj_t *objs;
    size_t n, cap;
    struct names *kept; /* names the last symtab_lookup_many found */
    unsigned long long adds, subs; /* dl_iterate_phdr's counters when built */
};

/* --- building one object's table -------------------------------------- */

static int rank_of(unsigned char info)
{
    switch (ELF64_ST_BIND(info)) {
    case STB_GLOBAL: return 0;
    case STB_WEAK: return 1;
    default: return 2;
    }
}

static bool is_function(const ElfW(Sym) *s)
{
    unsigned type = ELF64_ST_TYPE(s->st_info);
    return (type == STT_FUNC || type == STT_GNU_IFUNC) && s->st_shndx != SHN_UNDEF &&
           s->st_value != 0;
}

/* The length of a symbol's name as kept, 0 when it is not kept (empty,
 * or not terminated within maxlen). A version suffix (.symtab of a
 * library: "free@@GLIBC_2.2.5", or "cfree@GLIBC_2.2.5" for a compat alias)
 * is cut off; a single '@' marks the alias hidden, as versym's bit does. */
static size_t name_len(const char *name, size_t maxlen, bool *hidden)
{
    size_t len = strnlen(name, maxlen);
    if (len == maxlen)
        return 0;
    const char *at = memchr(name, '@', len);
    if (at) {
        *hidden = *hidden || at[1] != '@';
        len = (size_t)(at - name);
    }
    return len;
}

static size_t underscores(const char *s)
{
    size_t n = 0;
    while (s[n] == '_')
        n++;
    return n;
}

/* Among aliases (one address), the name a reader expects first: a default
 * version before a compat alias (free, not cfree), fewer leading
 * underscores (getpid, not __getpid), a global before a weak before a
 * local binding, then by name, so the choice never depends on the table's
 * order. Names are the kept lengths' prefixes of x and y. */
static int alias_cmp(bool hx, int rx, const char *x, size_t lx, bool hy, int ry, const char *y,
                     size_t ly)
{
    if (hx != hy)
        return hx ? 1 : -1;
    size_t ux = underscores(x), uy = underscores(y);
    if (ux != uy)
        return ux < uy ? -1 : 1;
    if (rx != ry)
        return rx - ry;
    int c = memcmp(x, y, lx < ly ? lx : ly);
    return c ? c : (lx > ly) - (lx < ly);
}

/* Appends a symbol. */
static int add_sym(obj_t *o, uint64_t addr, uint64_t size, int rank, bool hidden,
                   const char *name, size_t maxlen)
{
    size_t len = name_len(name, maxlen, &hidden);
    if (len == 0)
        return 0;
    if (o->nsyms == o->cap) {
        size_t cap = o->cap ? o->cap * 2 : 256;
        sym_t *s = realloc(o->syms, cap * sizeof(*s));
        if (!s)
            return -ENOMEM;
        o->syms = s;
        o->cap = cap;
    }
    if (o->pool_len + len + 1 > o->pool_cap) {
        size_t cap = o->pool_cap ? o->pool_cap * 2 : 4096;
        while (cap < o->pool_len + len + 1)
            cap *= 2;
        if (cap > UINT32_MAX)
            return -ENOMEM;
        char *p = realloc(o->pool, cap);
        if (!p)
            return -ENOMEM;
        o->pool = p;
        o->pool_cap = cap;
    }
    memcpy(o->pool + o->pool_len, name, len);
    o->pool[o->pool_len + len] = '\0';
    o->syms[o->nsyms++] = (sym_t){addr, size, (uint32_t)o->pool_len, (uint8_t)rank, hidden};
    o->pool_len += len + 1;
    return 0;
}

/* --- the functions of a few addresses, without a table --------------- */

/* The symbol finish() would keep with the highest address in one gap
 * between the addresses looked up, so far. */
typedef struct {
    uint64_t addr, size; /* size: the largest any alias at addr declares */
    const char *name;    /* in the reader's buffer, then in the names kept */
    size_t len;
    int rank;
    bool hidden, set;
} best_t;

/* One pass over an object's symbols for the sorted, distinct addresses
 * pcs[0..n): best[j] is taken among the symbols in (pcs[j-1], pcs[j]], so
 * the function of pcs[j] is the last set best[k], k <= j, the symbol a
 * binary search of the sorted table finds. */
typedef struct {
    const uint64_t *pcs;
    best_t *best;
    size_t n;
    size_t last;        /* the gap of the symbol offered last */
    bool named;         /* a symbol with a name was seen (load's f.nsyms > 0) */
    struct names *kept; /* the bests' names, copied before the reader's buffers go */
} pick_t;

struct names {
    struct names *next;
    char s[];
};

static void offer(pick_t *pk, uint64_t addr, uint64_t size, int rank, bool hidden,
                  const char *name, size_t maxlen)
{
    /* The first pc at or above addr: the last symbol's, as tables list
     * most functions in address order, else a binary search. */
    size_t lo = pk->last, hi = pk->n;
    if (!(lo < hi ? addr <= pk->pcs[lo] && (lo == 0 || pk->pcs[lo - 1] < addr)
                  : addr > pk->pcs[lo - 1])) {
        lo = 0;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (pk->pcs[mid] < addr)
                lo = mid + 1;
            else
                hi = mid;
        }
        pk->last = lo;
    }
    best_t *b = lo < pk->n ? &pk->best[lo] : NULL;
    bool beaten = !b || (b->set && addr < b->addr);
    if (beaten && pk->named)
        return;
    size_t len = name_len(name, maxlen, &hidden);
    if (len == 0)
        return;
    pk->named = true;
    if (beaten)
        return;
    if (b->set && addr == b->addr) {
        if (b->size > size)
            size = b->size;
        if (alias_cmp(hidden, rank, name, len, b->hidden, b->rank, b->name, b->len) >= 0) {
            b->size = size;
            return;
        }
    }
    *b = (best_t){addr, size, name, len, rank, hidden, true};
}

/* Copies the bests' names out of the reader's buffers; 0 or -ENOMEM. */
static int keep_names(pick_t *pk)
{
    size_t total = 0;
    for (size_t j = 0; j < pk->n; j++)
        total += pk->best[j].set ? pk->best[j].len + 1 : 0;
    struct names *k = malloc(sizeof(*k) + total);
    if (!k)
        return -ENOMEM;
    char *p = k->s;
    for (size_t j = 0; j < pk->n; j++) {
        best_t *b = &pk->best[j];
        if (!b->set)
            continue;
        memcpy(p, b->name, b->len);
        p[b->len] = '\0';
        b->name = p;
        p += b->len + 1;
    }
    k->next = NULL;
    pk->kept = k;
    return 0;
}

/* A symbol a reader found: into o's table, or offered to pk. */
static int take(obj_t *o, pick_t *pk, uint64_t addr, uint64_t size, int rank, bool hidden,
                const char *name, size_t maxlen)
{
    if (!pk)
        return add_sym(o, addr, size, rank, hidden, name, maxlen);
    offer(pk, addr, size, rank, hidden, name, maxlen);
    return 0;
}

/* The GNU build id in a note area. */
static size_t find_build_id(const uint8_t *p, size_t len, uint8_t *out)
{
    size_t off = 0;
    while (off + sizeof(ElfW(Nhdr)) <= len) {
        ElfW(Nhdr) nh;
        memcpy(&nh, p + off, sizeof(nh));
        size_t name_at = off + sizeof(nh);
        size_t desc_at = name_at + ((nh.n_namesz + 3) & ~3u);
        size_t next = desc_at + ((nh.n_descsz + 3) & ~3u);
        if (next > len || next <= off)
            break;
        if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
            memcmp(p + name_at, "GNU", 4) == 0 && nh.n_descsz > 0 &&
            nh.n_descsz <= BUILD_ID_MAX) {
            memcpy(out, p + desc_at, nh.n_descsz);
            return nh.n_descsz;
        }
        off = next;
    }
    return 0;
}

/* A pointer of a loaded object's dynamic section: relocated by the loader
 * for ordinary objects, left relative for the vDSO. */
static uint64_t dyn_ptr(uint64_t v, uint64_t bias)
{
    return v < bias ? v + bias : v;
}

size_t symtab_dynsym_count(const uint32_t *hash, const uint32_t *gnu)
{
    if (hash)
        return hash[1];
    if (!gnu)
        return 0;
    uint32_t nbuckets = gnu[0], symoffset = gnu[1], bloom = gnu[2];
    const uint32_t *buckets = gnu + 4 + bloom * (sizeof(ElfW(Addr)) / 4);
    const uint32_t *chain = buckets + nbuckets;
    uint32_t last = 0;
    for (uint32_t i = 0; i < nbuckets; i++)
        if (buckets[i] > last)
            last = buckets[i];
    if (last < symoffset)
        return symoffset;
    while (!(chain[last - symoffset] & 1))
        last++;
    return (size_t)last + 1;
}

/* Copies the function symbols of a loaded object's .dynsym into o, or
 * offers them to pk (caller holds the loader lock, so the image stays
 * mapped). */
static int read_loaded_dynsym(obj_t *o, pick_t *pk, const struct dl_phdr_info *info)
{
    const ElfW(Dyn) *dyn = NULL;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
            dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
    if (!dyn)
        return 0;
    uint64_t symtab = 0, strtab = 0, strsz = 0, hash = 0, gnu = 0, versym = 0;
    uint64_t syment = sizeof(ElfW(Sym));
    for (; dyn->d_tag != DT_NULL; dyn++) {
        switch (dyn->d_tag) {
        case DT_SYMTAB: symtab = dyn_ptr(dyn->d_un.d_ptr, info->dlpi_addr); break;
        case DT_STRTAB: strtab = dyn_ptr(dyn->d_un.d_ptr, info->dlpi_addr); break;
        case DT_STRSZ: strsz = dyn->d_un.d_val; break;
        case DT_SYMENT: syment = dyn->d_un.d_val; break;
        case DT_HASH: hash = dyn_ptr(dyn->d_un.d_ptr, info->dlpi_addr); break;
        case DT_GNU_HASH: gnu = dyn_ptr(dyn->d_un.d_ptr, info->dlpi_addr); break;
        case DT_VERSYM: versym = dyn_ptr(dyn->d_un.d_ptr, info->dlpi_addr); break;
        }
    }
    if (!symtab || !strtab || syment != sizeof(ElfW(Sym)))
        return 0;
    size_t n = symtab_dynsym_count((const uint32_t *)hash, (const uint32_t *)gnu);
    const ElfW(Sym) *syms = (const ElfW(Sym) *)symtab;
    const char *strs = (const char *)strtab;
    const uint16_t *vs = (const uint16_t *)versym;
    for (size_t i = 0; i < n && i < MAX_SYMS_PER_OBJECT; i++) {
        if (!is_function(&syms[i]) || syms[i].st_name >= strsz)
            continue;
        int rc = take(o, pk, syms[i].st_value + info->dlpi_addr, syms[i].st_size,
                      rank_of(syms[i].st_info), vs && (vs[i] & 0x8000), strs + syms[i].st_name,
                      strsz - syms[i].st_name);
        if (rc < 0)
            return rc;
    }
    return pk ? keep_names(pk) : 0;
}

static bool pread_all(int fd, void *buf, size_t len, uint64_t off)
{
    for (size_t done = 0; done < len;) {
        ssize_t r = pread(fd, (char *)buf + done, len - done, (off_t)(off + done));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return false;
        done += (size_t)r;
    }
    return true;
}

/* The build id of an ELF file, from its PT_NOTE segments. */
static size_t file_build_id(int fd, const ElfW(Ehdr) *eh, uint8_t *out)
{
    if (eh->e_phentsize != sizeof(ElfW(Phdr)) || eh->e_phnum == 0 || eh->e_phnum > 4096)
        return 0;
    ElfW(Phdr) *ph = malloc(eh->e_phnum * sizeof(*ph));
    if (!ph || !pread_all(fd, ph, eh->e_phnum * sizeof(*ph), eh->e_phoff)) {
        free(ph);
        return 0;
    }
    size_t n = 0;
    for (int i = 0; i < eh->e_phnum && n == 0; i++) {
        if (ph[i].p_type != PT_NOTE || ph[i].p_filesz == 0 || ph[i].p_filesz > MAX_NOTE)
            continue;
        uint8_t *note = malloc(ph[i].p_filesz);
        if (note && pread_all(fd, note, ph[i].p_filesz, ph[i].p_offset))
            n = find_build_id(note, ph[i].p_filesz, out);
        free(note);
    }
    free(ph);
    return n;
}

/* Reads o's function symbols from its file into o (empty on entry), or
 * offers them to pk; -ENOENT when the file is not the loaded object (build
 * id differs) or has no usable symbol table. */
static int read_file_syms(obj_t *o, pick_t *pk)
{
    int fd = open(o->path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    int rc = -ENOENT;
    ElfW(Ehdr) eh;
    ElfW(Shdr) *sh = NULL;
    ElfW(Sym) *chunk = NULL;
    char *strs = NULL;
    uint16_t *vs = NULL;
    if (!pread_all(fd, &eh, sizeof(eh), 0) || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
        eh.e_ident[EI_CLASS] != (sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32) ||
        eh.e_shentsize != sizeof(ElfW(Shdr)) || eh.e_shoff == 0)
        goto out;
    if (o->build_id_len) {
        uint8_t id[BUILD_ID_MAX];
        size_t n = file_build_id(fd, &eh, id);
        if (n != o->build_id_len || memcmp(id, o->build_id, n) != 0)
            goto out; /* replaced on disk since it was loaded */
    }
    size_t shnum = eh.e_shnum;
    if (shnum == 0) { /* extended numbering: the count is in section 0 */
        ElfW(Shdr) s0;
        if (!pread_all(fd, &s0, sizeof(s0), eh.e_shoff))
            goto out;
        shnum = s0.sh_size;
    }
    if (shnum == 0 || shnum > (1u << 20))
        goto out;
    sh = malloc(shnum * sizeof(*sh));
    if (!sh) {
        rc = -ENOMEM;
        goto out;
    }
    if (!pread_all(fd, sh, shnum * sizeof(*sh), eh.e_shoff))
        goto out;
    const ElfW(Shdr) *tab = NULL;
    for (size_t i = 0; i < shnum && !tab; i++)
        if (sh[i].sh_type == SHT_SYMTAB)
            tab = &sh[i];
    for (size_t i = 0; i < shnum && !tab; i++)
        if (sh[i].sh_type == SHT_DYNSYM)
            tab = &sh[i];
    if (!tab || tab->sh_entsize != sizeof(ElfW(Sym)) || tab->sh_link >= shnum)
        goto out;
    const ElfW(Shdr) *st = &sh[tab->sh_link];
    if (st->sh_type != SHT_STRTAB || st->sh_size == 0 || st->sh_size > MAX_STRTAB)
        goto out;
    strs = malloc(st->sh_size + 1);
    if (!strs) {
        rc = -ENOMEM;
        goto out;
    }
    if (!pread_all(fd, strs, st->sh_size, st->sh_offset))
        goto out;
    strs[st->sh_size] = '\0';
    size_t nsyms = tab->sh_size / sizeof(ElfW(Sym));
    if (nsyms > MAX_SYMS_PER_OBJECT)
        nsyms = MAX_SYMS_PER_OBJECT;
    /* .dynsym's versions: bit 15 marks a hidden (non-default) version. */
    for (size_t i = 0; i < shnum && !vs && tab->sh_type == SHT_DYNSYM; i++) {
        if (sh[i].sh_type != SHT_GNU_versym || &sh[sh[i].sh_link] != tab ||
            sh[i].sh_size != nsyms * sizeof(uint16_t))
            continue;
        vs = malloc(sh[i].sh_size);
        if (vs && !pread_all(fd, vs, sh[i].sh_size, sh[i].sh_offset)) {
            free(vs);
            vs = NULL;
        }
    }
    enum { CHUNK = 4096 };
    chunk = malloc(CHUNK * sizeof(*chunk));
    if (!chunk) {
        rc = -ENOMEM;
        goto out;
    }
    for (size_t i = 0; i < nsyms; i += CHUNK) {
        size_t k = nsyms - i < CHUNK ? nsyms - i : CHUNK;
        if (!pread_all(fd, chunk, k * sizeof(*chunk), tab->sh_offset + i * sizeof(*chunk)))
            goto out;
        for (size_t j = 0; j < k; j++) {
            const ElfW(Sym) *s = &chunk[j];
            if (!is_function(s) || s->st_name >= st->sh_size)
                continue;
            bool hidden = vs && (vs[i + j] & 0x8000);
            if (take(o, pk, s->st_value + o->bias, s->st_size, rank_of(s->st_info), hidden,
                     strs + s->st_name, st->sh_size - s->st_name) < 0) {
                rc = -ENOMEM;
                goto out;
            }
        }
    }
    rc = pk ? keep_names(pk) : 0;
out:
    free(vs);
    free(chunk);
    free(strs);
    free(sh);
    close(fd);
    return rc;
}

/* By address; among aliases, alias_cmp's order. */
static int by_addr(const void *a, const void *b, void *arg)
{
    const sym_t *x = a, *y = b;
    const char *pool = arg;
    if (x->addr != y->addr)
        return x->addr < y->addr ? -1 : 1;
    const char *nx = pool + x->name, *ny = pool + y->name;
    return alias_cmp(x->hidden, x->rank, nx, strlen(nx), y->hidden, y->rank, ny, strlen(ny));
}

/* Sorts o's symbols by address: a stable radix sort, one pass per byte
 * in which addresses differ (3 for a few MiB of code), then each run of
 * aliases by by_addr. qsort_r alone took 420 M of the 532 M instructions
 * of reading 400,000 symbols (bench/http_symbols.sh). Out of memory:
 * qsort_r. */
static void sort_syms(obj_t *o)
{
    size_t n = o->nsyms;
    uint64_t lo = UINT64_MAX, hi = 0;
    for (size_t i = 0; i < n; i++) {
        lo = o->syms[i].addr < lo ? o->syms[i].addr : lo;
        hi = o->syms[i].addr > hi ? o->syms[i].addr : hi;
    }
    sym_t *tmp = n > 64 ? malloc(n * sizeof(*tmp)) : NULL;
    if (!tmp) {
        qsort_r(o->syms, n, sizeof(*o->syms), by_addr, o->pool);
        return;
    }
    sym_t *src = o->syms, *dst = tmp;
    for (unsigned shift = 0; shift < 64 && (hi - lo) >> shift; shift += 8) {
        size_t count[257] = {0};
        for (size_t i = 0; i < n; i++)
            count[((src[i].addr - lo) >> shift & 0xff) + 1]++;
        for (size_t d = 1; d < 257; d++)
            count[d] += count[d - 1];
        for (size_t i = 0; i < n; i++)
            dst[count[(src[i].addr - lo) >> shift & 0xff]++] = src[i];
        sym_t *t = src;
        src = dst;
        dst = t;
    }
    if (src != o->syms)
        memcpy(o->syms, src, n * sizeof(*src));
    free(tmp);
    for (size_t a = 0, b; a < n; a = b) {
        for (b = a + 1; b < n && o->syms[b].addr == o->syms[a].addr; b++)
            ;
        if (b - a > 1)
            qsort_r(o->syms + a, b - a, sizeof(*o->syms), by_addr, o->pool);
    }
}

/* Sorts by address; among aliases keeps the first name by_addr orders,
 * with the largest size any of them declares. */
static void finish(obj_t *o)
{
    if (o->nsyms == 0)
        return;
    sort_syms(o);
    size_t w = 0;
    for (size_t r = 0; r < o->nsyms; r++) {
        if (w > 0 && o->syms[w - 1].addr == o->syms[r].addr) {
            if (o->syms[r].size > o->syms[w - 1].size)
                o->syms[w - 1].size = o->syms[r].size;
            continue;
        }
        o->syms[w++] = o->syms[r];
    }
    o->nsyms = w;
}

/* --- the whole table ----------------------------------------------------- */

typedef struct {
    symtab_t *t;
    int rc;
} build_ctx_t;

static int collect(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    build_ctx_t *c = arg;
    symtab_t *t = c->t;
    if (t->n == 0 && t->adds == 0 && t->subs == 0) {
        t->adds = info->dlpi_adds;
        t->subs = info->dlpi_subs;
    }
    size_t nx = 0;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_LOAD && (info->dlpi_phdr[i].p_flags & PF_X))
            nx++;
    if (nx == 0)
        return 0;
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 32;
        obj_t *o = realloc(t->objs, cap * sizeof(*o));
        if (!o) {
            c->rc = -ENOMEM;
            return 1;
        }
        t->objs = o;
        t->cap = cap;
    }
    obj_t *o = &t->objs[t->n];
    memset(o, 0, sizeof(*o));
    o->bias = info->dlpi_addr;
    o->ranges = calloc(nx, sizeof(*o->ranges));
    const char *name = info->dlpi_name;
    if (t->n == 0 && (!name || !*name))
        name = "/proc/self/exe"; /* the main program, even moved or deleted */
    o->path = name && strchr(name, '/') ? strdup(name) : NULL;
    t->n++;
    if (!o->ranges) {
        c->rc = -ENOMEM;
        return 1;
    }
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
            o->ranges[o->nranges].lo = info->dlpi_addr + ph->p_vaddr;
            o->ranges[o->nranges].hi = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
            o->nranges++;
        } else if (ph->p_type == PT_NOTE && !o->build_id_len) {
            o->build_id_len = find_build_id((const uint8_t *)(info->dlpi_addr + ph->p_vaddr),
                                            ph->p_memsz, o->build_id);
        }
    }
    return 0;
}

/* Where a reader puts what it finds (read_loaded_dynsym's o and pk). */
typedef struct {
    obj_t *o;
    pick_t *pk;
} dest_t;

/* The loaded .dynsym of the object d->o stands for, while the loader lock
 * keeps its image mapped (gone since the table was built: none). */
static int loaded_dynsym(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    dest_t *d = arg;
    obj_t *o = d->o;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (info->dlpi_addr == o->bias && ph->p_type == PT_LOAD && (ph->p_flags & PF_X) &&
            o->nranges && info->dlpi_addr + ph->p_vaddr == o->ranges[0].lo)
            return read_loaded_dynsym(o, d->pk, info) < 0 ? -1 : 1;
    }
    return 0;
}

/* Reads o's symbols: the file's table, else the loaded .dynsym. Only the
 * objects a lookup lands in are read: a profile's frames lie in a few of
 * them, and reading and sorting every object's (a program linking ICU:
 * tens of thousands of names) made each profile written at exit cost
 * xmllint 6.6 ms. */
static void load(obj_t *o)
{
    o->loaded = true;
    obj_t f = {.path = o->path, .bias = o->bias, .build_id_len = o->build_id_len};
    memcpy(f.build_id, o->build_id, sizeof(f.build_id));
    if (o->path && read_file_syms(&f, NULL) == 0 && f.nsyms > 0) {
        o->syms = f.syms;
        o->nsyms = f.nsyms;
        o->cap = f.cap;
        o->pool = f.pool;
        o->pool_len = f.pool_len;
        o->pool_cap = f.pool_cap;
    } else {
        free(f.syms);
        free(f.pool);
        dest_t d = {o, NULL};
        if (iterate_phdr(loaded_dynsym, &d) < 0) { /* out of memory: none */
            free(o->syms);
            free(o->pool);
            o->syms = NULL;
            o->pool = NULL;
            o->nsyms = o->cap = o->pool_len = o->pool_cap = 0;
        }
    }
    finish(o);
}

/* Forgets what pk was offered. */
static void unpick(pick_t *pk)
{
    memset(pk->best, 0, pk->n * sizeof(*pk->best));
    pk->named = false;
    free(pk->kept);
    pk->kept = NULL;
}

/* Offers o's symbols to pk from where load() would read them. */
static void pick(obj_t *o, pick_t *pk)
{
    if (o->path && read_file_syms(o, pk) == 0 && pk->named)
        return;
    unpick(pk);
    dest_t d = {o, pk};
    if (iterate_phdr(loaded_dynsym, &d) < 0) /* out of memory: none */
        unpick(pk);
}

symtab_t *symtab_build(void)
{
    symtab_t *t = calloc(1, sizeof(*t));
    if (!t)
        return NULL;
    build_ctx_t c = {t, 0};
    iterate_phdr(collect, &c);
    if (c.rc < 0) {
        symtab_free(t);
        return NULL;
    }
    return t;
}

static void forget_names(symtab_t *t)
{
    while (t->kept) {
        struct names *next = t->kept->next;
        free(t->kept);
        t->kept = next;
    }
}

void symtab_free(symtab_t *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->n; i++) {
        free(t->objs[i].path);
        free(t->objs[i].ranges);
        free(t->objs[i].syms);
        free(t->objs[i].pool);
    }
    forget_names(t);
    free(t->objs);
    free(t);
}

static int first_counters(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    unsigned long long *c = arg;
    c[0] = info->dlpi_adds;
    c[1] = info->dlpi_subs;
    return 1;
}

bool symtab_stale(const symtab_t *t)
{
    unsigned long long c[2] = {0, 0};
    iterate_phdr(first_counters, c);
    return c[0] != t->adds || c[1] != t->subs;
}

static symtab_t *shared; /* owned by whoever took it last; NULL while taken */

symtab_t *symtab_take(void)
{
    symtab_t *t = __atomic_exchange_n(&shared, NULL, __ATOMIC_ACQ_REL);
    if (t && symtab_stale(t)) {
        symtab_free(t);
        t = NULL;
    }
    return t ? t : symtab_build();
}

void symtab_put(symtab_t *t)
{
    symtab_free(__atomic_exchange_n(&shared, t, __ATOMIC_ACQ_REL));
}

const char *symtab_lookup(symtab_t *t, uint64_t addr)
{
    uint64_t start;
    return symtab_lookup_sym(t, addr, &start);
}

/* The object whose executable segments hold addr, or NULL. */
static obj_t *object_of(symtab_t *t, uint64_t addr)
{
    for (size_t i = 0; i < t->n; i++) {
        obj_t *o = &t->objs[i];
        for (size_t r = 0; r < o->nranges; r++)
            if (addr >= o->ranges[r].lo && addr < o->ranges[r].hi)
                return o;
    }
    return NULL;
}

/* The function containing addr in o's table (read). */
static const char *lookup_in(const obj_t *o, uint64_t addr, uint64_t *start)
{
    size_t lo = 0, hi = o->nsyms; /* first symbol above addr */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (o->syms[mid].addr <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return NULL;
    const sym_t *s = &o->syms[lo - 1];
    /* A sized symbol must contain addr; an unsized one (assembly) reaches
     * up to the next symbol. */
    if (s->size && addr >= s->addr + s->size)
        return NULL;
    *start = s->addr;
    return o->pool + s->name;
}

const char *symtab_lookup_sym(symtab_t *t, uint64_t addr, uint64_t *start)
{
    obj_t *o = object_of(t, addr);
    if (!o)
        return NULL;
    if (!o->loaded)
        load(o);
    return lookup_in(o, addr, start);
}

typedef struct {
    uint64_t addr;
    size_t obj, i; /* t->objs[obj], addrs[i] */
} want_t;

static int by_obj_addr(const void *a, const void *b)
{
    const want_t *x = a, *y = b;
    if (x->obj != y->obj)
        return x->obj < y->obj ? -1 : 1;
    return (x->addr > y->addr) - (x->addr < y->addr);
}

int symtab_lookup_many(symtab_t *t, const uint64_t *addrs, size_t n, const char **names,
                       uint64_t *starts)
{
    want_t *w = malloc(n * sizeof(*w) + 1);
    uint64_t *pcs = malloc(n * sizeof(*pcs) + 1);
    best_t *best = calloc(n + 1, sizeof(*best));
    int rc = w && pcs && best ? 0 : -ENOMEM;
    size_t nw = 0;
    forget_names(t); /* a table kept between writes holds one write's */
    for (size_t i = 0; i < n; i++) {
        names[i] = NULL;
        starts[i] = 0;
        obj_t *o = rc == 0 ? object_of(t, addrs[i]) : NULL;
        /* A table that serves a second profile (snapshots, HTTP fetches)
         * will serve more: read the object once rather than pass over its
         * symbols at every write. */
        if (o && o->picked && !o->loaded)
            load(o);
        if (o && o->loaded)
            names[i] = lookup_in(o, addrs[i], &starts[i]);
        else if (o)
            w[nw++] = (want_t){addrs[i], (size_t)(o - t->objs), i};
    }
    if (nw)
        qsort(w, nw, sizeof(*w), by_obj_addr);
    for (size_t a = 0, b; a < nw; a = b) {
        size_t m = 0;
        for (b = a; b < nw && w[b].obj == w[a].obj; b++)
            if (m == 0 || pcs[m - 1] != w[b].addr)
                pcs[m++] = w[b].addr;
        pick_t pk = {pcs, best, m, 0, false, NULL};
        pick(&t->objs[w[a].obj], &pk);
        t->objs[w[a].obj].picked = true;
        const best_t *cur = best[0].set ? &best[0] : NULL;
        for (size_t k = a, j = 0; k < b; k++) {
            while (pcs[j] != w[k].addr)
                if (best[++j].set)
                    cur = &best[j];
            /* As lookup_in: a sized symbol must contain the address. */
            if (cur && (!cur->size || w[k].addr < cur->addr + cur->size)) {
                names[w[k].i] = cur->name;
                starts[w[k].i] = cur->addr;
            }
        }
        if (pk.kept) {
            pk.kept->next = t->kept;
            t->kept = pk.kept;
        }
        memset(best, 0, m * sizeof(*best));
    }
    free(w);
    free(pcs);
    free(best);
    return rc;
}
