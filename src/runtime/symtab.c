/* symtab.c — function symbols of the loaded objects (see symtab.h). */
#include "symtab.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
} obj_t;

struct symtab {
    obj_t *objs;
    size_t n, cap;
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

/* Appends a symbol. A name with a version suffix (.symtab of a library:
 * "free@@GLIBC_2.2.5", or "cfree@GLIBC_2.2.5" for a compat alias) loses
 * it; a single '@' marks the alias hidden, as versym's bit does. */
static int add_sym(obj_t *o, uint64_t addr, uint64_t size, int rank, bool hidden,
                   const char *name, size_t maxlen)
{
    size_t len = strnlen(name, maxlen);
    if (len == 0 || len == maxlen)
        return 0;
    const char *at = memchr(name, '@', len);
    if (at) {
        hidden = hidden || at[1] != '@';
        len = (size_t)(at - name);
        if (len == 0)
            return 0;
    }
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

/* Copies the function symbols of a loaded object's .dynsym (caller holds
 * the loader lock, so the image stays mapped). */
static int read_loaded_dynsym(obj_t *o, const struct dl_phdr_info *info)
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
        int rc = add_sym(o, syms[i].st_value + info->dlpi_addr, syms[i].st_size,
                         rank_of(syms[i].st_info), vs && (vs[i] & 0x8000),
                         strs + syms[i].st_name, strsz - syms[i].st_name);
        if (rc < 0)
            return rc;
    }
    return 0;
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

/* Reads o's function symbols from its file into o (empty on entry);
 * -ENOENT when the file is not the loaded object (build id differs) or has
 * no usable symbol table. */
static int read_file_syms(obj_t *o)
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
            if (add_sym(o, s->st_value + o->bias, s->st_size, rank_of(s->st_info), hidden,
                        strs + s->st_name, st->sh_size - s->st_name) < 0) {
                rc = -ENOMEM;
                goto out;
            }
        }
    }
    rc = 0;
out:
    free(vs);
    free(chunk);
    free(strs);
    free(sh);
    close(fd);
    return rc;
}

static size_t underscores(const char *s)
{
    size_t n = 0;
    while (s[n] == '_')
        n++;
    return n;
}

/* By address; among aliases, the name a reader expects: a default version
 * before a compat alias (free, not cfree), fewer leading underscores
 * (getpid, not __getpid), a global before a weak before a local binding,
 * then by name, so the choice never depends on the table's order. */
static int by_addr(const void *a, const void *b, void *arg)
{
    const sym_t *x = a, *y = b;
    const char *pool = arg;
    if (x->addr != y->addr)
        return x->addr < y->addr ? -1 : 1;
    if (x->hidden != y->hidden)
        return x->hidden ? 1 : -1;
    size_t ux = underscores(pool + x->name), uy = underscores(pool + y->name);
    if (ux != uy)
        return ux < uy ? -1 : 1;
    if (x->rank != y->rank)
        return x->rank - y->rank;
    return strcmp(pool + x->name, pool + y->name);
}

/* Sorts by address; among aliases keeps the first name by_addr orders,
 * with the largest size any of them declares. */
static void finish(obj_t *o)
{
    if (o->nsyms == 0)
        return;
    qsort_r(o->syms, o->nsyms, sizeof(*o->syms), by_addr, o->pool);
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

/* The loaded .dynsym of the object o stands for, while the loader lock
 * keeps its image mapped (gone since the table was built: none). */
static int loaded_dynsym(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    obj_t *o = arg;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (info->dlpi_addr == o->bias && ph->p_type == PT_LOAD && (ph->p_flags & PF_X) &&
            o->nranges && info->dlpi_addr + ph->p_vaddr == o->ranges[0].lo)
            return read_loaded_dynsym(o, info) < 0 ? -1 : 1;
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
    if (o->path && read_file_syms(&f) == 0 && f.nsyms > 0) {
        o->syms = f.syms;
        o->nsyms = f.nsyms;
        o->cap = f.cap;
        o->pool = f.pool;
        o->pool_len = f.pool_len;
        o->pool_cap = f.pool_cap;
    } else {
        free(f.syms);
        free(f.pool);
        if (dl_iterate_phdr(loaded_dynsym, o) < 0) { /* out of memory: none */
            free(o->syms);
            free(o->pool);
            o->syms = NULL;
            o->pool = NULL;
            o->nsyms = o->cap = o->pool_len = o->pool_cap = 0;
        }
    }
    finish(o);
}

symtab_t *symtab_build(void)
{
    symtab_t *t = calloc(1, sizeof(*t));
    if (!t)
        return NULL;
    build_ctx_t c = {t, 0};
    dl_iterate_phdr(collect, &c);
    if (c.rc < 0) {
        symtab_free(t);
        return NULL;
    }
    return t;
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
    dl_iterate_phdr(first_counters, c);
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

const char *symtab_lookup_sym(symtab_t *t, uint64_t addr, uint64_t *start)
{
    for (size_t i = 0; i < t->n; i++) {
        obj_t *o = &t->objs[i];
        bool in = false;
        for (size_t r = 0; r < o->nranges && !in; r++)
            in = addr >= o->ranges[r].lo && addr < o->ranges[r].hi;
        if (!in)
            continue;
        if (!o->loaded)
            load(o);
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
        /* A sized symbol must contain addr; an unsized one (assembly)
         * reaches up to the next symbol. */
        if (s->size && addr >= s->addr + s->size)
            return NULL;
        *start = s->addr;
        return o->pool + s->name;
    }
    return NULL;
}
