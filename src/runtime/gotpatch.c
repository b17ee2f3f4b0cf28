/* gotpatch.c — rewriting the GOT slots of loaded modules (see gotpatch.h).
 *
 * A module's slots are found from its dynamic section: the PLT relocations
 * (DT_JMPREL) and the others (DT_RELA) of type JUMP_SLOT or GLOB_DAT, each
 * naming a symbol of DT_SYMTAB, and the function pointers in data that the
 * loader set to one of them (R_X86_64_64: `void *(*xmlMalloc)(size_t) =
 * malloc`, and the program's copy of such a variable), as a preload would
 * have bound them. glibc relocates the d_ptr entries of the
 * dynamic section in memory; a value below the load address is taken as
 * not relocated (the vDSO's, other loaders').
 *
 * A module another thread is loading right now is listed by
 * dl_iterate_phdr before the loader has relocated it: writing its slots
 * then would be overwritten, and making its RELRO pages read-only again
 * would fault the loader. So a module whose RELRO pages are still writable
 * (as /proc/self/maps says) is left for a later pass (gotpatch_modules_changed
 * reports it). x86-64 only (RELA, its relocation types). */
#include "gotpatch.h"

#include "arena.h"
#include "procmaps.h"
#include "rt.h"
#include "symtab.h"

#include <elf.h>
#include <errno.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define LOG_MAX 65536 /* slots ever changed: modules x hooked names */

typedef struct {
    void **slot;
    void *old;
} logent_t;

static logent_t *log_ents; /* arena memory, mapped on the first pass */
static size_t log_n;
static bool pending;                     /* a module was left for later */
static unsigned long long seen_adds = 0; /* dl_iterate_phdr counters last seen */
static unsigned long long seen_subs = 0;

typedef struct {
    uintptr_t base;
    const ElfW(Sym) *symtab;
    const char *strtab;
    const ElfW(Rela) *rel[2];
    size_t nrel[2];
    uintptr_t relro_lo, relro_hi; /* page-aligned, as the loader protects it */
} dyn_t;

static uintptr_t dyn_ptr(uintptr_t base, uintptr_t v)
{
    return v < base ? base + v : v;
}

/* The module's tables; false for a module without them. */
static bool read_dyn(const struct dl_phdr_info *info, dyn_t *d)
{
    memset(d, 0, sizeof(*d));
    d->base = info->dlpi_addr;
    const ElfW(Dyn) *dyn = NULL;
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_DYNAMIC)
            dyn = (const ElfW(Dyn) *)(d->base + ph->p_vaddr);
        if (ph->p_type == PT_GNU_RELRO) {
            d->relro_lo = (d->base + ph->p_vaddr) & ~(page - 1);
            d->relro_hi = (d->base + ph->p_vaddr + ph->p_memsz) & ~(page - 1);
        }
    }
    if (!dyn)
        return false;
    for (; dyn->d_tag != DT_NULL; dyn++) {
        uintptr_t v = dyn->d_un.d_ptr;
        switch (dyn->d_tag) {
        case DT_SYMTAB: d->symtab = (const ElfW(Sym) *)dyn_ptr(d->base, v); break;
        case DT_STRTAB: d->strtab = (const char *)dyn_ptr(d->base, v); break;
        case DT_JMPREL: d->rel[0] = (const ElfW(Rela) *)dyn_ptr(d->base, v); break;
        case DT_PLTRELSZ: d->nrel[0] = dyn->d_un.d_val / sizeof(ElfW(Rela)); break;
        case DT_RELA: d->rel[1] = (const ElfW(Rela) *)dyn_ptr(d->base, v); break;
        case DT_RELASZ: d->nrel[1] = dyn->d_un.d_val / sizeof(ElfW(Rela)); break;
        }
    }
    return d->symtab && d->strtab;
}

static bool skipped_module(const char *name)
{
    const char *base = strrchr(name, '/');
    base = base ? base + 1 : name;
    return strncmp(base, "ld-linux", 8) == 0 || strncmp(base, "linux-vdso", 10) == 0 ||
           strncmp(base, "ld-", 3) == 0;
}

/* Calls fn(slot, sym index, data) for each slot of d whose symbol is in
 * syms; data: a pointer in the module's data (R_X86_64_64, or a copied
 * variable, R_X86_64_COPY, holding the function or its hook), not a GOT
 * entry. */
static void each_slot(const dyn_t *d, const gotpatch_sym_t *syms, size_t n,
                      void (*fn)(void **slot, size_t sym, bool data, const dyn_t *d, void *arg),
                      void *arg)
{
#if defined(__x86_64__)
    for (int t = 0; t < 2; t++) {
        for (size_t i = 0; d->rel[t] && i < d->nrel[t]; i++) {
            const ElfW(Rela) *r = &d->rel[t][i];
            unsigned type = ELF64_R_TYPE(r->r_info);
            const ElfW(Sym) *sym = &d->symtab[ELF64_R_SYM(r->r_info)];
            void **slot = (void **)(d->base + r->r_offset);
            if (type == R_X86_64_COPY && sym->st_size == sizeof(void *)) {
                /* The program's copy of a library's variable (xmllint's
                 * xmlFree): known by the function it points to. */
                void *v = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
                for (size_t k = 0; v && k < n; k++) {
                    if (v == syms[k].orig || v == syms[k].hook) {
                        fn(slot, k, true, d, arg);
                        break;
                    }
                }
                continue;
            }
            bool data = type == R_X86_64_64 && r->r_addend == 0;
            if (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT && !data)
                continue;
            const char *name = d->strtab + sym->st_name;
            for (size_t k = 0; k < n; k++) {
                if (name[0] == syms[k].name[0] && strcmp(name, syms[k].name) == 0) {
                    fn(slot, k, data, d, arg);
                    break;
                }
            }
        }
    }
#else
    (void)d, (void)syms, (void)n, (void)fn, (void)arg;
#endif
}

/* Replaces expect by v in a slot, lifting the RELRO protection around the
 * store. A compare-and-swap: a data slot is the program's variable, which
 * it may set at the same moment (xmlMemSetup); its value then stands. */
static bool write_slot(void **slot, void *expect, void *v, const dyn_t *d)
{
    uintptr_t a = (uintptr_t)slot, page = (uintptr_t)sysconf(_SC_PAGESIZE);
    bool ro = a >= d->relro_lo && a < d->relro_hi;
    void *pg = (void *)(a & ~(page - 1));
    if (ro && mprotect(pg, page, PROT_READ | PROT_WRITE) < 0)
        return false;
    bool swapped =
        __atomic_compare_exchange_n(slot, &expect, v, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
    if (ro)
        mprotect(pg, page, PROT_READ);
    return swapped;
}

/* Whether [lo, hi) is mapped writable now, per /proc/self/maps text. */
static bool range_writable(const char *maps, uintptr_t lo, uintptr_t hi)
{
    for (const char *line = maps; line && *line;) {
        char *end; /* "START-END rw-p ..." */
        uintptr_t s = strtoull(line, &end, 16);
        uintptr_t e = strtoull(end + 1, &end, 16);
        if (s < hi && e > lo && end[2] == 'w')
            return true;
        line = strchr(line, '\n');
        if (line)
            line++;
    }
    return false;
}

typedef struct {
    const gotpatch_sym_t *syms;
    size_t n;
    const char *maps;
    int changed;
    bool full;
} apply_t;

static void apply_slot(void **slot, size_t k, bool data, const dyn_t *d, void *arg)
{
    apply_t *a = arg;
    void *old = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    /* A pointer in data is the program's variable (libxml2's xmlMalloc):
     * routed only while it still holds what the loader put there. */
    if (old == a->syms[k].hook || a->full || (data && old != a->syms[k].orig))
        return;
    if (log_n == LOG_MAX) {
        a->full = true;
        return;
    }
    log_ents[log_n] = (logent_t){slot, old};
    if (write_slot(slot, old, a->syms[k].hook, d)) {
        log_n++;
        a->changed++;
    }
}

static int apply_module(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    apply_t *a = arg;
    dyn_t d;
    if (skipped_module(info->dlpi_name) || !read_dyn(info, &d))
        return 0;
    if (d.relro_hi > d.relro_lo && (!a->maps || range_writable(a->maps, d.relro_lo, d.relro_hi))) {
        pending = true; /* still being relocated (or cannot tell): later */
        return 0;
    }
    each_slot(&d, a->syms, a->n, apply_slot, a);
    return 0;
}

int gotpatch_apply(const gotpatch_sym_t *syms, size_t n)
{
    if (!log_ents && !(log_ents = arena_map(LOG_MAX * sizeof(logent_t))))
        return -ENOMEM;
    apply_t a = {.syms = syms, .n = n, .maps = procmaps_slurp("/proc/self/maps", NULL)};
    pending = false;
    gotpatch_modules_changed(); /* the counters as of this pass */
    rt_iterate_phdr(apply_module, &a);
    free((void *)a.maps);
    return a.full ? -ENOMEM : a.changed;
}

typedef struct {
    const gotpatch_sym_t *syms;
    size_t n;
    int restored;
} restore_t;

static void restore_slot(void **slot, size_t k, bool data, const dyn_t *d, void *arg)
{
    (void)data;
    restore_t *r = arg;
    if (r->syms[k].keep || __atomic_load_n(slot, __ATOMIC_ACQUIRE) != r->syms[k].hook)
        return;
    for (size_t i = log_n; i-- > 0;) { /* the latest entry for the slot */
        if (log_ents[i].slot == slot) {
            if (write_slot(slot, r->syms[k].hook, log_ents[i].old, d))
                r->restored++;
            return;
        }
    }
}

static int restore_module(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    restore_t *r = arg;
    dyn_t d;
    if (!skipped_module(info->dlpi_name) && read_dyn(info, &d))
        each_slot(&d, r->syms, r->n, restore_slot, r);
    return 0;
}

int gotpatch_restore(const gotpatch_sym_t *syms, size_t n)
{
    restore_t r = {.syms = syms, .n = n};
    if (log_ents)
        rt_iterate_phdr(restore_module, &r);
    return r.restored;
}

static int counters(struct dl_phdr_info *info, size_t size, void *arg)
{
    unsigned long long *c = arg;
    if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs)) {
        c[0] = info->dlpi_adds;
        c[1] = info->dlpi_subs;
    }
    return 1; /* the counters are the same in every entry: one is enough */
}

bool gotpatch_modules_changed(void)
{
    unsigned long long c[2] = {0, 0};
    rt_iterate_phdr(counters, c);
    bool changed = c[0] != seen_adds || c[1] != seen_subs || pending;
    seen_adds = c[0];
    seen_subs = c[1];
    return changed;
}

/* --- a module's exports --------------------------------------------------- */

/* Number of dynamic symbols (symtab.h). */
static size_t count_syms(const ElfW(Dyn) *dyn, uintptr_t base)
{
    const uint32_t *hash = NULL, *gnu = NULL;
    for (const ElfW(Dyn) *e = dyn; e->d_tag != DT_NULL; e++) {
        if (e->d_tag == DT_HASH)
            hash = (const uint32_t *)dyn_ptr(base, e->d_un.d_ptr);
        else if (e->d_tag == DT_GNU_HASH)
            gnu = (const uint32_t *)dyn_ptr(base, e->d_un.d_ptr);
    }
    return symtab_dynsym_count(hash, gnu);
}

typedef struct {
    const void *addr;
    const char *skip;
    gotpatch_sym_t *out;
    size_t max;
    int n;
} exports_t;

static int exports_module(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    exports_t *x = arg;
    const ElfW(Dyn) *dyn = NULL;
    bool mine = false;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        uintptr_t a = (uintptr_t)x->addr;
        if (ph->p_type == PT_LOAD && a >= lo && a < lo + ph->p_memsz)
            mine = true;
        if (ph->p_type == PT_DYNAMIC)
            dyn = (const ElfW(Dyn) *)lo;
    }
    if (!mine)
        return 0;
    dyn_t d;
    if (!dyn || !read_dyn(info, &d))
        return -ENOENT;
    size_t nsyms = count_syms(dyn, d.base), skip = strlen(x->skip);
    for (size_t i = 1; i < nsyms; i++) {
        const ElfW(Sym) *s = &d.symtab[i];
        const char *name = d.strtab + s->st_name;
        if (s->st_shndx == SHN_UNDEF || ELF64_ST_TYPE(s->st_info) != STT_FUNC ||
            ELF64_ST_BIND(s->st_info) == STB_LOCAL || strncmp(name, x->skip, skip) == 0)
            continue;
        if ((size_t)x->n == x->max)
            return -ENOSPC;
        x->out[x->n++] = (gotpatch_sym_t){name, (void *)(d.base + s->st_value), NULL, false};
    }
    return 1;
}

int gotpatch_exports(const void *addr, const char *skip_prefix, gotpatch_sym_t *out, size_t max)
{
    exports_t x = {addr, skip_prefix, out, max, 0};
    int rc = rt_iterate_phdr(exports_module, &x);
    return rc < 0 ? rc : rc == 0 ? -ENOENT : x.n;
}
