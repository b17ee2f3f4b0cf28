/* elfobj.c — an ELF file opened for symbolization (see elfobj.h): headers
 * and build id through libelf, addresses to functions and lines through
 * libdwfl/libdw.
 *
 * Each object gets a Dwfl session of its own holding exactly one module,
 * reported at its link-time addresses (bias 0). That keeps lookups in the
 * file's own address space — the caller subtracts the mapping's bias once —
 * and lets objects be opened, cached and closed independently.
 */
#include "elfobj.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PAGE 4096u /* mappings start at page boundaries of the profiled host */

typedef struct {
    uint64_t vaddr, offset, filesz, memsz;
    bool exec;
} segment_t;

struct elfobj {
    char *path;
    int fd;
    Elf *elf;
    char build_id[2 * 64 + 1];
    segment_t *segs; /* PT_LOAD entries, in file order */
    size_t nsegs;

    /* libdwfl, set up on first lookup. The callbacks and the path string
     * they point to must live as long as the session. */
    Dwfl_Callbacks cb;
    char *debug_path;
    Dwfl *dwfl;
    Dwfl_Module *mod;
    bool dwfl_failed;

    /* Function symbols by address, best name of each address first; built
     * on the first name taken from the symbol table. */
    struct alias *aliases;
    size_t naliases;
    bool aliases_done;

    struct qname *qnames; /* open addressing */
    size_t qmask, qused;
};

/* Qualified names built for C++ functions that DWARF gives no linkage
 * name (internal linkage: anonymous namespaces, static members), keyed by
 * the address of their declaration DIE's data, unique across debug files. */
struct qname {
    const void *die;
    char *name;
};

struct alias {
    uint64_t addr;
    const char *name;
    int rank; /* lower is better */
};

/* Go's error strings start lower case ("no such file or directory"). */
static void errno_msg(char *err, size_t errlen, const char *what, const char *path, int e)
{
    char m[128];
    snprintf(m, sizeof(m), "%s", strerror(e));
    if (m[0] >= 'A' && m[0] <= 'Z' && !(m[1] >= 'A' && m[1] <= 'Z'))
        m[0] = (char)(m[0] - 'A' + 'a');
    snprintf(err, errlen, "%s %s: %s", what, path, m);
}

static int read_headers(elfobj_t *o, char *err, size_t errlen)
{
    GElf_Ehdr eh;
    if (elf_kind(o->elf) != ELF_K_ELF || !gelf_getehdr(o->elf, &eh)) {
        snprintf(err, errlen, "%s: not an ELF object file", o->path);
        return -ENOEXEC;
    }
    const void *id = NULL;
    ssize_t n = dwelf_elf_gnu_build_id(o->elf, &id);
    if (n > 0 && (size_t)n * 2 < sizeof(o->build_id))
        for (ssize_t i = 0; i < n; i++)
            snprintf(o->build_id + 2 * i, 3, "%02x", ((const unsigned char *)id)[i]);

    size_t nph = 0;
    if (elf_getphdrnum(o->elf, &nph) != 0)
        nph = 0;
    o->segs = calloc(nph ? nph : 1, sizeof(*o->segs));
    if (!o->segs) {
        snprintf(err, errlen, "%s: out of memory", o->path);
        return -ENOMEM;
    }
    for (size_t i = 0; i < nph; i++) {
        GElf_Phdr ph;
        if (!gelf_getphdr(o->elf, (int)i, &ph) || ph.p_type != PT_LOAD)
            continue;
        o->segs[o->nsegs++] = (segment_t){ph.p_vaddr, ph.p_offset, ph.p_filesz, ph.p_memsz,
                                          (ph.p_flags & PF_X) != 0};
    }
    return 0;
}

int elfobj_open(const char *path, const char *debug_path, elfobj_t **out, char *err,
                size_t errlen)
{
    *out = NULL;
    elf_version(EV_CURRENT);
    elfobj_t *o = calloc(1, sizeof(*o));
    if (o)
        o->fd = -1;
    if (!o || !(o->path = strdup(path)) ||
        !(o->debug_path = strdup(debug_path ? debug_path : ELFOBJ_DEFAULT_DEBUG_PATH))) {
        snprintf(err, errlen, "%s: out of memory", path);
        elfobj_close(o);
        return -ENOMEM;
    }
    o->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (o->fd < 0) {
        int e = errno;
        errno_msg(err, errlen, "open", path, e);
        elfobj_close(o);
        return -e;
    }
    struct stat st;
    if (fstat(o->fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        int e = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
        errno_msg(err, errlen, "open", path, e);
        elfobj_close(o);
        return -e;
    }
    o->elf = elf_begin(o->fd, ELF_C_READ_MMAP, NULL);
    if (!o->elf) {
        snprintf(err, errlen, "%s: %s", path, elf_errmsg(-1));
        elfobj_close(o);
        return -ENOEXEC;
    }
    int r = read_headers(o, err, errlen);
    if (r < 0) {
        elfobj_close(o);
        return r;
    }
    *out = o;
    return 0;
}

void elfobj_close(elfobj_t *o)
{
    if (!o)
        return;
    if (o->dwfl)
        dwfl_end(o->dwfl);
    if (o->elf)
        elf_end(o->elf);
    if (o->fd >= 0)
        close(o->fd);
    free(o->segs);
    free(o->aliases);
    for (size_t i = 0; o->qnames && i <= o->qmask; i++)
        free(o->qnames[i].name);
    free(o->qnames);
    free(o->debug_path);
    free(o->path);
    free(o);
}

const char *elfobj_build_id(const elfobj_t *o)
{
    return o->build_id;
}

/* --- address translation ---------------------------------------------------- */

int elfobj_bias(const elfobj_t *o, uint64_t start, uint64_t limit, uint64_t offset,
                uint64_t *bias, char *err, size_t errlen)
{
    if (start == 0 && limit == 0) {
        *bias = 0;
        return 0;
    }
    const segment_t *x = NULL; /* first executable segment */
    for (size_t i = 0; i < o->nsegs && !x; i++)
        if (o->segs[i].exec)
            x = &o->segs[i];

    /* As the loader mapped it: memory_start shows file offset `offset`,
     * which lies in segment s at virtual address s->vaddr + (offset -
     * s->offset). The kernel maps whole pages, so the segment's first page
     * starts below p_offset. */
    for (size_t i = 0; i < o->nsegs; i++) {
        const segment_t *s = &o->segs[i];
        uint64_t first = s->offset & ~(uint64_t)(PAGE - 1);
        if (offset < first || offset >= s->offset + (s->filesz ? s->filesz : 1))
            continue;
        uint64_t b = start - (s->vaddr + (offset - s->offset));
        /* Accept it only if it puts code inside the mapping: profiles
         * carry executable mappings, and a wrong offset (0 for an r-xp
         * range, as some writers record) would put the code elsewhere. */
        if (!x || limit <= start ||
            (x->vaddr + b < limit && x->vaddr + x->memsz + b > start)) {
            *bias = b;
            return 0;
        }
        break;
    }
    if (!x) {
        snprintf(err, errlen, "%s: no executable segment", o->path);
        return -ENOEXEC;
    }
    /* go tool pprof's rule: memory_start is the executable segment's start
     * (its first page when memory_start is page aligned). */
    uint64_t v = (start & (PAGE - 1)) ? x->vaddr : x->vaddr & ~(uint64_t)(PAGE - 1);
    *bias = start - v;
    return 0;
}

/* --- DWARF and symbols -------------------------------------------------------- */

static int setup_dwfl(elfobj_t *o)
{
    if (o->mod)
        return 0;
    if (o->dwfl_failed)
        return -ENOEXEC;
    o->cb.find_elf = dwfl_build_id_find_elf;
    o->cb.find_debuginfo = dwfl_standard_find_debuginfo;
    o->cb.section_address = dwfl_offline_section_address;
    o->cb.debuginfo_path = &o->debug_path;
    o->dwfl = dwfl_begin(&o->cb);
    int fd = o->dwfl ? dup(o->fd) : -1;
    if (fd >= 0) {
        dwfl_report_begin(o->dwfl);
        const char *base = strrchr(o->path, '/');
        /* ET_DYN at base 0 "relative to p_vaddr": module addresses are the
         * file's own p_vaddr addresses, even for a prelinked library. */
        o->mod = dwfl_report_elf(o->dwfl, base ? base + 1 : o->path, o->path, fd, 0, true);
        if (!o->mod)
            close(fd);
        dwfl_report_end(o->dwfl, NULL, NULL);
    }
    if (!o->mod) {
        o->dwfl_failed = true;
        return -ENOEXEC;
    }
    return 0;
}

static const char *die_string(Dwarf_Die *die, unsigned name)
{
    Dwarf_Attribute a;
    if (!dwarf_attr_integrate(die, name, &a))
        return NULL;
    return dwarf_formstring(&a);
}

static bool is_cxx(Dwarf_Die *die)
{
    Dwarf_Die cu;
    if (!dwarf_diecu(die, &cu, NULL, NULL))
        return false;
    int lang = dwarf_srclang(&cu);
    return lang == DW_LANG_C_plus_plus || lang == DW_LANG_C_plus_plus_03 ||
           lang == DW_LANG_C_plus_plus_11 || lang == DW_LANG_C_plus_plus_14;
}

static size_t qhash(const void *p, size_t mask)
{
    uint64_t h = (uint64_t)(uintptr_t)p * 0x9e3779b97f4a7c15ull;
    return (size_t)(h >> 20) & mask;
}

static const char *qname_put(elfobj_t *o, const void *die, char *name)
{
    if ((o->qused + 1) * 2 > (o->qmask + 1) || !o->qnames) {
        size_t ns = o->qnames ? 2 * (o->qmask + 1) : 64;
        struct qname *t = calloc(ns, sizeof(*t));
        if (!t) {
            free(name);
            return NULL;
        }
        for (size_t i = 0; o->qnames && i <= o->qmask; i++) {
            if (!o->qnames[i].die)
                continue;
            size_t h = qhash(o->qnames[i].die, ns - 1);
            while (t[h].die)
                h = (h + 1) & (ns - 1);
            t[h] = o->qnames[i];
        }
        free(o->qnames);
        o->qnames = t;
        o->qmask = ns - 1;
    }
    size_t h = qhash(die, o->qmask);
    while (o->qnames[h].die)
        h = (h + 1) & o->qmask;
    o->qnames[h] = (struct qname){die, name};
    o->qused++;
    return name;
}

/* "ns::(anonymous namespace)::f" for a C++ function DWARF names "f": the
 * names of the namespaces and classes around its declaration. */
static const char *qualified_name(elfobj_t *o, Dwarf_Die *die, const char *name)
{
    Dwarf_Die decl = *die, next;
    Dwarf_Attribute a;
    for (int hops = 0; hops < 8; hops++) {
        if ((!dwarf_attr(&decl, DW_AT_abstract_origin, &a) &&
             !dwarf_attr(&decl, DW_AT_specification, &a)) ||
            !dwarf_formref_die(&a, &next))
            break;
        decl = next;
    }
    for (size_t h = o->qnames ? qhash(decl.addr, o->qmask) : 0; o->qnames && o->qnames[h].die;
         h = (h + 1) & o->qmask)
        if (o->qnames[h].die == decl.addr)
            return o->qnames[h].name;

    Dwarf_Die *sc = NULL;
    int n = dwarf_getscopes_die(&decl, &sc);
    size_t len = strlen(name) + 1;
    for (int i = n - 1; i >= 1; i--) {
        const char *s = dwarf_diename(&sc[i]);
        len += (s ? strlen(s) : 24) + 2;
    }
    char *q = malloc(len);
    if (!q) {
        free(sc);
        return name;
    }
    size_t w = 0;
    for (int i = n - 1; i >= 1; i--) {
        int tag = dwarf_tag(&sc[i]);
        const char *s = dwarf_diename(&sc[i]);
        if (tag == DW_TAG_namespace && (!s || !*s))
            s = "(anonymous namespace)";
        else if (tag != DW_TAG_namespace && tag != DW_TAG_class_type &&
                 tag != DW_TAG_structure_type && tag != DW_TAG_union_type)
            continue;
        if (!s)
            continue;
        w += (size_t)snprintf(q + w, len - w, "%s::", s);
    }
    snprintf(q + w, len - w, "%s", name);
    free(sc);
    const char *r = qname_put(o, decl.addr, q);
    return r ? r : name;
}

/* Names of a subprogram or inlined subroutine, through abstract_origin and
 * specification. The linker name is DW_AT_linkage_name when there is one
 * (C++; also C functions renamed with asm labels, as glibc's __GI_*
 * aliases), else DW_AT_name — qualified with its namespaces and classes
 * for C++. The shown name is the linker name when it is mangled
 * (demangling derives the readable one), else DW_AT_name. */
static void die_names(elfobj_t *o, Dwarf_Die *die, elfobj_frame_t *f)
{
    const char *link = die_string(die, DW_AT_linkage_name);
    if (!link)
        link = die_string(die, DW_AT_MIPS_linkage_name);
    const char *name = die_string(die, DW_AT_name);
    if (!link && name && is_cxx(die)) {
        name = qualified_name(o, die, name);
        f->cxx_source = true;
    }
    f->system_name = link ? link : name;
    f->name = link && (!name || !strncmp(link, "_Z", 2)) ? link : name;
}

static int64_t die_udata(Dwarf_Die *die, unsigned name)
{
    Dwarf_Attribute a;
    Dwarf_Word w;
    if (!dwarf_attr(die, name, &a) || dwarf_formudata(&a, &w) != 0)
        return -1;
    return (int64_t)w;
}

/* The file named by an inlined subroutine's DW_AT_call_file, an index into
 * its unit's line table. */
static const char *call_file(Dwarf_Die *die)
{
    int64_t idx = die_udata(die, DW_AT_call_file);
    Dwarf_Die cu;
    Dwarf_Files *files;
    size_t nfiles;
    if (idx < 0 || !dwarf_diecu(die, &cu, NULL, NULL) ||
        dwarf_getsrcfiles(&cu, &files, &nfiles) != 0 || (size_t)idx >= nfiles)
        return NULL;
    return dwarf_filesrc(files, (size_t)idx, NULL, NULL);
}

static bool same(const char *a, const char *b)
{
    return a == b || (a && b && !strcmp(a, b));
}

/* Frames from the DWARF scopes holding addr (innermost first), at most max
 * of them; returns how many were stored. The line of the innermost frame
 * is the line table's; each outer frame's line is the call site of the
 * inlined frame inside it. */
static size_t dwarf_frames(elfobj_t *o, uint64_t addr, elfobj_frame_t *fr, size_t max)
{
    Dwarf_Addr bias = 0;
    Dwarf_Die *cu = dwfl_module_addrdie(o->mod, addr, &bias);
    const char *file = NULL;
    int line = 0;
    Dwfl_Line *l = dwfl_module_getsrc(o->mod, addr);
    if (l)
        file = dwfl_lineinfo(l, NULL, &line, NULL, NULL, NULL);
    size_t n = 0;
    Dwarf_Die *scopes = NULL, *chain = NULL;
    /* dwarf_getscopes lists, after an inlined subroutine, the scopes of its
     * abstract definition; the physical nesting of the innermost scope is
     * what dwarf_getscopes_die gives (eu-addr2line -i does the same). */
    int ns = cu ? dwarf_getscopes(cu, addr - bias, &scopes) : 0;
    int nc = ns > 0 ? dwarf_getscopes_die(&scopes[0], &chain) : 0;
    for (int i = 0; i < nc && max; i++) {
        Dwarf_Die *d = &chain[i];
        int tag = dwarf_tag(d);
        if (tag != DW_TAG_subprogram && tag != DW_TAG_inlined_subroutine &&
            tag != DW_TAG_entry_point)
            continue;
        int decl = 0;
        if (dwarf_decl_line(d, &decl) != 0)
            decl = 0;
        elfobj_frame_t f = {.file = file, .line = line, .start_line = decl};
        die_names(o, d, &f);
        /* GCC describes some functions (glibc's aliased ones) as an inline
         * copy of themselves "called" from their own first line: one frame. */
        elfobj_frame_t *prev = n ? &fr[n - 1] : NULL;
        if (prev && line == decl && same(prev->name, f.name) &&
            same(prev->system_name, f.system_name)) {
            /* keep the inner frame, which has the real line */
        } else {
            /* Deeper inlining than max: the innermost frames and the real
             * function are kept, the middle is lost. */
            fr[n < max ? n : max - 1] = f;
            if (n < max)
                n++;
        }
        if (tag != DW_TAG_inlined_subroutine) {
            /* The real function: where the ELF symbol is this function's,
             * its mangled name says more (the parameters) than DWARF's
             * source spelling of an internal-linkage C++ function. */
            Dwarf_Addr entry;
            elfobj_frame_t *last = &fr[n - 1];
            if (last->cxx_source && dwarf_entrypc(d, &entry) == 0) {
                GElf_Off off;
                GElf_Sym sym;
                const char *s = dwfl_module_addrinfo(o->mod, addr, &off, &sym, NULL, NULL, NULL);
                if (s && !strncmp(s, "_Z", 2) && addr - off == entry + bias) {
                    last->name = last->system_name = s;
                    last->cxx_source = false;
                }
            }
            break;
        }
        file = call_file(d);
        int64_t cl = die_udata(d, DW_AT_call_line);
        line = cl > 0 ? (int)cl : 0;
    }
    free(chain);
    free(scopes);
    if (n == 0 && max && file) {
        /* Lines without a function (assembler): a nameless frame that the
         * symbol table names. */
        fr[0] = (elfobj_frame_t){.file = file, .line = line};
        n = 1;
    }
    return n;
}

/* Among symbols at one address (glibc: malloc and __libc_malloc, printf
 * and _IO_printf), the one a reader knows: fewest leading underscores,
 * then global before weak before local. */
static int alias_rank(const char *name, const GElf_Sym *sym)
{
    int u = 0;
    while (name[u] == '_')
        u++;
    int b = GELF_ST_BIND(sym->st_info);
    return u * 4 + (b == STB_GLOBAL ? 0 : b == STB_WEAK ? 1 : 2);
}

static int alias_cmp(const void *a, const void *b)
{
    const struct alias *x = a, *y = b;
    if (x->addr != y->addr)
        return x->addr < y->addr ? -1 : 1;
    if (x->rank != y->rank)
        return x->rank - y->rank;
    return strcmp(x->name, y->name);
}

static void build_aliases(elfobj_t *o)
{
    o->aliases_done = true;
    int n = dwfl_module_getsymtab(o->mod);
    if (n <= 0 || !(o->aliases = malloc((size_t)n * sizeof(*o->aliases))))
        return;
    for (int i = 1; i < n; i++) {
        GElf_Sym sym;
        GElf_Addr a;
        const char *name = dwfl_module_getsym_info(o->mod, i, &sym, &a, NULL, NULL, NULL);
        int t = GELF_ST_TYPE(sym.st_info);
        if (!name || !*name || sym.st_shndx == SHN_UNDEF || (t != STT_FUNC && t != STT_GNU_IFUNC))
            continue;
        o->aliases[o->naliases++] = (struct alias){a, name, alias_rank(name, &sym)};
    }
    qsort(o->aliases, o->naliases, sizeof(*o->aliases), alias_cmp);
}

/* The preferred name of the function symbol starting at addr, or NULL. */
static const char *best_alias(elfobj_t *o, uint64_t addr)
{
    if (!o->aliases_done)
        build_aliases(o);
    size_t lo = 0, hi = o->naliases;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (o->aliases[mid].addr < addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < o->naliases && o->aliases[lo].addr == addr ? o->aliases[lo].name : NULL;
}

int elfobj_lookup(elfobj_t *o, uint64_t addr, int flags, elfobj_frame_t *frames, size_t max)
{
    if (setup_dwfl(o) < 0)
        return -ENOEXEC;
    size_t n = 0;
    if (!(flags & ELFOBJ_SYMTAB_ONLY))
        n = dwarf_frames(o, addr, frames, max);
    /* The outermost frame's name from .symtab/.dynsym when DWARF has none
     * (no debug info, assembler, crt files). */
    if (max && (n == 0 || !frames[n - 1].name)) {
        GElf_Off off;
        GElf_Sym sym;
        const char *s = dwfl_module_addrinfo(o->mod, addr, &off, &sym, NULL, NULL, NULL);
        const char *best = s ? best_alias(o, addr - off) : NULL;
        if (best)
            s = best;
        if (s && *s) {
            if (n == 0)
                frames[n++] = (elfobj_frame_t){.name = s};
            frames[n - 1].name = frames[n - 1].system_name = s;
        }
    }
    return (int)n;
}
