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
#include "base/path.h"
#include "demangle.h"
#include "gopclntab.h"

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

#if __has_include(<elfutils/debuginfod.h>)
#include <elfutils/debuginfod.h>
#define HAVE_DEBUGINFOD 1
#endif

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
    gopcln_t *gopcln; /* Go's pc-line table, if the file has one */

    /* libdwfl, set up on first lookup. The callbacks and the path string
     * they point to must live as long as the session. */
    Dwfl_Callbacks cb;
    char *debug_path;
    Dwfl *dwfl;
    Dwfl_Module *mod;
    bool dwfl_failed;

    /* Function symbols sorted by address, the best name of each address
     * first; built on the first name taken from the symbol table. */
    struct sym *syms;
    size_t nsyms;
    bool syms_done;

    /* Per compilation unit, its functions and their address ranges, built
     * on the first address looked up in the unit (open addressing). */
    struct cuidx **cus;
    size_t cmask, cused;

    struct qname *qnames; /* open addressing */
    size_t qmask, qused;

    char **owned; /* strings made here (symbol names without versions) */
    size_t nowned, cowned;
};

/* Qualified names built for C++ functions that DWARF gives no linkage
 * name (internal linkage: anonymous namespaces, static members), keyed by
 * the address of their declaration DIE's data, unique across debug files. */
struct qname {
    const void *die;
    char *name;
};

struct sym {
    uint64_t addr, size;
    const char *name;
    int rank; /* lower is better */
};

/* A subprogram or inlined subroutine with code, and what a frame needs of
 * it, worked out once. */
typedef struct {
    Dwarf_Die die;
    int32_t parent; /* enclosing function node, -1 */
    int tag;
    bool named;
    const char *name, *system_name, *call_file;
    int64_t start_line, call_line;
    bool cxx_source;
} fnode_t;

/* One address range of a node; `up` is the nearest earlier interval that
 * contains this one (ranges nest as the functions do). */
typedef struct {
    uint64_t lo, hi;
    int32_t node, up;
    int32_t depth; /* of the node among function nodes */
} ival_t;

struct cuidx {
    const void *key; /* the unit DIE's data address */
    fnode_t *nodes;
    size_t nnodes;
    ival_t *ivals; /* sorted by lo, outer first */
    size_t nivals;
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

/* Go binaries keep .gopclntab even when stripped of DWARF and symbols. */
static void find_gopclntab(elfobj_t *o)
{
    size_t shstrndx;
    if (elf_getshdrstrndx(o->elf, &shstrndx) != 0)
        return;
    Elf_Scn *pcln = NULL;
    uint64_t text = 0;
    bool have_text = false;
    for (Elf_Scn *scn = elf_nextscn(o->elf, NULL); scn; scn = elf_nextscn(o->elf, scn)) {
        GElf_Shdr sh;
        const char *name;
        if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(o->elf, shstrndx, sh.sh_name)))
            continue;
        if (!strcmp(name, ".gopclntab") && sh.sh_type != SHT_NOBITS)
            pcln = scn;
        else if (!strcmp(name, ".text")) {
            text = sh.sh_addr;
            have_text = true;
        }
    }
    Elf_Data *d = pcln && have_text ? elf_getdata(pcln, NULL) : NULL;
    if (d && d->d_buf && d->d_size)
        gopcln_open(d->d_buf, d->d_size, text, &o->gopcln);
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
    find_gopclntab(o);
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
    gopcln_close(o->gopcln);
    free(o->syms);
    for (size_t i = 0; i < o->nowned; i++)
        free(o->owned[i]);
    free(o->owned);
    for (size_t i = 0; o->cus && i <= o->cmask; i++)
        if (o->cus[i]) {
            free(o->cus[i]->nodes);
            free(o->cus[i]->ivals);
            free(o->cus[i]);
        }
    free(o->cus);
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

char *elfobj_fetch_executable(const char *build_id)
{
#ifdef HAVE_DEBUGINFOD
    const char *urls = getenv("DEBUGINFOD_URLS");
    if (!urls || !*urls || !*build_id)
        return NULL;
    debuginfod_client *c = debuginfod_begin();
    if (!c)
        return NULL;
    char *path = NULL;
    /* Length 0: the id is given as a hex string. */
    int fd = debuginfod_find_executable(c, (const unsigned char *)build_id, 0, &path);
    debuginfod_end(c);
    if (fd < 0) {
        free(path);
        return NULL;
    }
    close(fd);
    return path;
#else
    (void)build_id;
    return NULL;
#endif
}

/* --- address translation ---------------------------------------------------- */

/* The segment a mapping of file bytes [offset, offset + size) was made
 * for (size 0: unknown). pprof's ProgramHeadersForMapping lists the
 * candidates: the segments overlapping those bytes, except one whose first
 * page lies above offset (the mapping shows an earlier segment) and one
 * the mapping starts inside of, covering less than a page of it and
 * reaching a page past it (it shows a later one). Segments share file
 * pages: lld starts the executable segment in the read-only one's last
 * page, so an r-xp mapping at offset 0 overlaps both. pprof then takes the
 * candidate holding each address's file offset; a profile's addresses are
 * code, so that is the executable candidate. */
static const segment_t *mapped_segment(const elfobj_t *o, uint64_t offset, uint64_t size)
{
    uint64_t map_limit = offset + (size ? size : 1);
    const segment_t *found = NULL;
    for (size_t i = 0; i < o->nsegs; i++) {
        const segment_t *s = &o->segs[i];
        /* A segment without file bytes may claim any offset. */
        if (s->filesz == 0)
            continue;
        uint64_t seg_limit = s->offset + s->memsz;
        if (offset >= seg_limit || s->offset >= map_limit)
            continue;
        uint64_t in_page = s->vaddr & (PAGE - 1);
        if (offset < (s->offset > in_page ? s->offset - in_page : 0))
            continue;
        if (size && offset > s->offset && seg_limit < offset + PAGE &&
            map_limit >= seg_limit + PAGE)
            continue;
        if (!found || (s->exec && !found->exec))
            found = s;
    }
    return found;
}

int elfobj_bias(const elfobj_t *o, uint64_t start, uint64_t limit, uint64_t offset,
                uint64_t *bias, char *err, size_t errlen)
{
    /* Nothing is ever mapped at 0: a mapping starting there is a made-up
     * one (no mapping in the profile, legacy formats: 0/-1/0) and means
     * link-time addresses, as in pprof. */
    if (start == 0) {
        *bias = 0;
        return 0;
    }
    const segment_t *x = NULL; /* first executable segment */
    for (size_t i = 0; i < o->nsegs && !x; i++)
        if (o->segs[i].exec)
            x = &o->segs[i];

    /* As the loader mapped it: the segment the mapping was made for, s,
     * puts file offset `offset` at memory_start, so file offset f shows at
     * memory_start + (f - offset) and s's file address of f is s->vaddr +
     * (f - s->offset) (pprof's GetBase). */
    const segment_t *s = mapped_segment(o, offset, limit > start ? limit - start : 0);
    if (s) {
        uint64_t b = start - offset + s->offset - s->vaddr;
        /* Accept it only if it puts code inside the mapping: profiles
         * carry executable mappings, and a wrong offset (0 for an r-xp
         * range, as some writers record) would put the code elsewhere. */
        if (!x || limit <= start ||
            (x->vaddr + b < limit && x->vaddr + x->memsz + b > start)) {
            *bias = b;
            return 0;
        }
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
        char bb[256];
        /* ET_DYN at base 0 "relative to p_vaddr": module addresses are the
         * file's own p_vaddr addresses, even for a prelinked library. */
        o->mod = dwfl_report_elf(o->dwfl, path_base(o->path, bb, sizeof(bb)), o->path, fd, 0, true);
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

const char *elfobj_debug_file(elfobj_t *o)
{
    Dwarf_Addr bias;
    const char *debug = NULL;
    if (setup_dwfl(o) < 0 || !dwfl_module_getdwarf(o->mod, &bias))
        return NULL;
    dwfl_module_info(o->mod, NULL, NULL, NULL, NULL, NULL, NULL, &debug);
    return debug && strcmp(debug, o->path) != 0 ? debug : NULL;
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

/* Hash of a pointer into debug data (DIEs are keyed by their address). */
static size_t ptr_hash(const void *p, size_t mask)
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
            size_t h = ptr_hash(o->qnames[i].die, ns - 1);
            while (t[h].die)
                h = (h + 1) & (ns - 1);
            t[h] = o->qnames[i];
        }
        free(o->qnames);
        o->qnames = t;
        o->qmask = ns - 1;
    }
    size_t h = ptr_hash(die, o->qmask);
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
    for (size_t h = o->qnames ? ptr_hash(decl.addr, o->qmask) : 0; o->qnames && o->qnames[h].die;
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
    /* A mangled linkage name (C++, Rust) demangles to the full path that
     * DW_AT_name lacks ("boxed<4096>" for Rust's r::inner::boxed::<4096>). */
    f->name = link && (!name || demangle_is_mangled(link)) ? link : name;
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

/* --- symbol tables ------------------------------------------------------------ */

static int underscores(const char *name)
{
    int u = 0;
    while (name[u] == '_')
        u++;
    return u;
}

/* Among symbols at one address (glibc: malloc and __libc_malloc, printf
 * and _IO_printf), the one a reader knows: fewest leading underscores,
 * then global before weak before local. */
static int sym_rank(const char *name, const GElf_Sym *sym)
{
    int b = GELF_ST_BIND(sym->st_info);
    return underscores(name) * 4 + (b == STB_GLOBAL ? 0 : b == STB_WEAK ? 1 : 2);
}

static int sym_cmp(const void *a, const void *b)
{
    const struct sym *x = a, *y = b;
    if (x->addr != y->addr)
        return x->addr < y->addr ? -1 : 1;
    if (x->rank != y->rank)
        return x->rank - y->rank;
    return strcmp(x->name, y->name);
}

/* A symbol's name without the version glibc's .symtab spells into it
 * ("__libc_start_main@@GLIBC_2.34"); NULL when out of memory. */
static const char *unversioned(elfobj_t *o, const char *name)
{
    const char *at = strchr(name, '@');
    if (!at || at == name)
        return name;
    if (o->nowned == o->cowned) {
        size_t nc = o->cowned ? 2 * o->cowned : 16;
        char **t = realloc(o->owned, nc * sizeof(*t));
        if (!t)
            return NULL;
        o->owned = t;
        o->cowned = nc;
    }
    char *c = strndup(name, (size_t)(at - name));
    if (c)
        o->owned[o->nowned++] = c;
    return c;
}

/* libdwfl's own address-to-symbol search scans the whole table each time;
 * a sorted copy makes it a binary search. */
static void build_syms(elfobj_t *o)
{
    o->syms_done = true;
    int n = dwfl_module_getsymtab(o->mod);
    if (n <= 0 || !(o->syms = malloc((size_t)n * sizeof(*o->syms))))
        return;
    for (int i = 1; i < n; i++) {
        GElf_Sym sym;
        GElf_Addr a;
        const char *name = dwfl_module_getsym_info(o->mod, i, &sym, &a, NULL, NULL, NULL);
        int t = GELF_ST_TYPE(sym.st_info);
        if (!name || !*name || sym.st_shndx == SHN_UNDEF || (t != STT_FUNC && t != STT_GNU_IFUNC))
            continue;
        if (!(name = unversioned(o, name)))
            continue;
        o->syms[o->nsyms++] = (struct sym){a, sym.st_size, name, sym_rank(name, &sym)};
    }
    qsort(o->syms, o->nsyms, sizeof(*o->syms), sym_cmp);
}

/* The function symbol containing addr, best-named; NULL if none. *start is
 * the symbol's address. */
static const char *symbol_at(elfobj_t *o, uint64_t addr, uint64_t *start)
{
    if (!o->syms_done)
        build_syms(o);
    size_t lo = 0, hi = o->nsyms;
    while (lo < hi) { /* first symbol above addr */
        size_t mid = lo + (hi - lo) / 2;
        if (o->syms[mid].addr <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    /* Walk back over a few address groups: a sized symbol may cover addr
     * from below a smaller one that ends before it. Within a group (one
     * address), the best-named symbol comes first. */
    bool sizeless = false;
    size_t i = lo;
    for (int groups = 0; i > 0 && groups < 8; groups++) {
        uint64_t a = o->syms[i - 1].addr;
        size_t g = i - 1;
        while (g > 0 && o->syms[g - 1].addr == a)
            g--;
        for (size_t k = g; k < i; k++) {
            if (o->syms[k].size && addr - a < o->syms[k].size) {
                /* Aliases without a size name the same code. */
                *start = a;
                return o->syms[g].name;
            }
            if (!o->syms[k].size && groups == 0)
                sizeless = true;
        }
        i = g;
    }
    if (!sizeless)
        return NULL;
    /* Sizeless symbols (assembler) end where libdwfl says: at the next
     * symbol of their section. Rare, so its slower search is fine. */
    GElf_Off off;
    GElf_Sym sym;
    const char *s = dwfl_module_addrinfo(o->mod, addr, &off, &sym, NULL, NULL, NULL);
    if (!s || !*s)
        return NULL;
    *start = addr - off;
    return unversioned(o, s);
}

/* --- DWARF: functions by address, per unit -------------------------------------- */

static int ival_cmp(const void *a, const void *b)
{
    const ival_t *x = a, *y = b;
    if (x->lo != y->lo)
        return x->lo < y->lo ? -1 : 1;
    if (x->hi != y->hi)
        return x->hi > y->hi ? -1 : 1; /* outer first */
    if (x->depth != y->depth)
        return x->depth - y->depth; /* an inlined body spanning its caller */
    return y->node - x->node; /* aliases (assembler): the first DIE last */
}

static bool descend_into(int tag)
{
    switch (tag) {
    case DW_TAG_compile_unit: case DW_TAG_partial_unit: case DW_TAG_namespace:
    case DW_TAG_class_type: case DW_TAG_structure_type: case DW_TAG_union_type:
    case DW_TAG_subprogram: case DW_TAG_inlined_subroutine: case DW_TAG_entry_point:
    case DW_TAG_lexical_block: case DW_TAG_try_block: case DW_TAG_catch_block:
    case DW_TAG_module:
        return true;
    }
    return false;
}

#define GROW(arr, n, cap)                                                                 \
    ((n) < (cap) ? 0                                                                      \
                 : ((cap) = (cap) ? 2 * (cap) : 64,                                       \
                    (arr = reallocarray_or_free(arr, (cap), sizeof(*(arr)))) ? 0 : -ENOMEM))

static void *reallocarray_or_free(void *p, size_t n, size_t size)
{
    void *q = reallocarray(p, n, size);
    if (!q)
        free(p);
    return q;
}

/* One walk over the unit's DIE tree: every function with code becomes a
 * node, each of its address ranges an interval. Replaces walking the tree
 * for every address (dwarf_getscopes), which dominates on big profiles. */
static struct cuidx *build_cu(Dwarf_Die *cudie)
{
    struct cuidx *ix = calloc(1, sizeof(*ix));
    struct item {
        Dwarf_Die die;
        int32_t parent, depth;
    } *stack = NULL;
    size_t nstack = 0, cstack = 0, cnodes = 0, civals = 0;
    Dwarf_Die child;
    if (!ix)
        return NULL;
    ix->key = cudie->addr;
    if (dwarf_child(cudie, &child) == 0) {
        if (GROW(stack, nstack, cstack) < 0)
            goto oom;
        stack[nstack++] = (struct item){child, -1, 0};
    }
    while (nstack) {
        struct item it = stack[--nstack];
        Dwarf_Die sib;
        if (dwarf_siblingof(&it.die, &sib) == 0) {
            if (GROW(stack, nstack, cstack) < 0)
                goto oom;
            stack[nstack++] = (struct item){sib, it.parent, it.depth};
        }
        int tag = dwarf_tag(&it.die);
        int32_t me = it.parent, depth = it.depth;
        if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine ||
            tag == DW_TAG_entry_point) {
            Dwarf_Addr base, lo, hi;
            ptrdiff_t off = 0;
            bool has = false;
            while ((off = dwarf_ranges(&it.die, off, &base, &lo, &hi)) > 0) {
                if (hi <= lo)
                    continue;
                if (!has) {
                    if (GROW(ix->nodes, ix->nnodes, cnodes) < 0)
                        goto oom;
                    ix->nodes[ix->nnodes] = (fnode_t){.die = it.die, .parent = it.parent, .tag = tag};
                    me = (int32_t)ix->nnodes++;
                    depth = it.depth + 1;
                    has = true;
                }
                if (GROW(ix->ivals, ix->nivals, civals) < 0)
                    goto oom;
                ix->ivals[ix->nivals++] = (ival_t){lo, hi, me, -1, depth};
            }
        }
        if (descend_into(tag) && dwarf_child(&it.die, &child) == 0) {
            if (GROW(stack, nstack, cstack) < 0)
                goto oom;
            stack[nstack++] = (struct item){child, me, depth};
        }
    }
    free(stack);
    qsort(ix->ivals, ix->nivals, sizeof(*ix->ivals), ival_cmp);
    /* Containment links, with a stack of the intervals still open. */
    int32_t *open = malloc((ix->nivals ? ix->nivals : 1) * sizeof(*open));
    if (!open) {
        stack = NULL;
        goto oom;
    }
    size_t nopen = 0;
    for (size_t i = 0; i < ix->nivals; i++) {
        while (nopen && ix->ivals[open[nopen - 1]].hi <= ix->ivals[i].lo)
            nopen--;
        ix->ivals[i].up = nopen ? open[nopen - 1] : -1;
        open[nopen++] = (int32_t)i;
    }
    free(open);
    return ix;
oom:
    free(stack);
    free(ix->nodes);
    free(ix->ivals);
    free(ix);
    return NULL;
}

static struct cuidx *cu_index(elfobj_t *o, Dwarf_Die *cudie)
{
    for (size_t h = o->cus ? ptr_hash(cudie->addr, o->cmask) : 0; o->cus && o->cus[h];
         h = (h + 1) & o->cmask)
        if (o->cus[h]->key == cudie->addr)
            return o->cus[h];
    if (!o->cus || (o->cused + 1) * 2 > o->cmask + 1) {
        size_t ns = o->cus ? 2 * (o->cmask + 1) : 64;
        struct cuidx **t = calloc(ns, sizeof(*t));
        if (!t)
            return NULL;
        for (size_t i = 0; o->cus && i <= o->cmask; i++) {
            if (!o->cus[i])
                continue;
            size_t h = ptr_hash(o->cus[i]->key, ns - 1);
            while (t[h])
                h = (h + 1) & (ns - 1);
            t[h] = o->cus[i];
        }
        free(o->cus);
        o->cus = t;
        o->cmask = ns - 1;
    }
    struct cuidx *ix = build_cu(cudie);
    if (!ix)
        return NULL;
    size_t h = ptr_hash(ix->key, o->cmask);
    while (o->cus[h])
        h = (h + 1) & o->cmask;
    o->cus[h] = ix;
    o->cused++;
    return ix;
}

/* The interval of the innermost function node whose code contains pc
 * (DWARF address), -1 if none. */
static int32_t ival_at(const struct cuidx *ix, uint64_t pc)
{
    size_t lo = 0, hi = ix->nivals;
    while (lo < hi) { /* first interval starting above pc */
        size_t mid = lo + (hi - lo) / 2;
        if (ix->ivals[mid].lo <= pc)
            lo = mid + 1;
        else
            hi = mid;
    }
    /* Every interval holding pc contains the last one starting at or below
     * it, so they are that one and its ancestors. */
    for (int32_t i = (int32_t)lo - 1; i >= 0; i = ix->ivals[i].up)
        if (pc < ix->ivals[i].hi)
            return i;
    return -1;
}

static void node_names(elfobj_t *o, fnode_t *n, Dwarf_Addr bias)
{
    if (n->named)
        return;
    n->named = true;
    elfobj_frame_t f = {0};
    die_names(o, &n->die, &f);
    int decl = 0;
    if (dwarf_decl_line(&n->die, &decl) != 0)
        decl = 0;
    n->name = f.name;
    n->system_name = f.system_name;
    n->cxx_source = f.cxx_source;
    n->start_line = decl;
    if (n->tag == DW_TAG_inlined_subroutine) {
        n->call_file = call_file(&n->die);
        int64_t cl = die_udata(&n->die, DW_AT_call_line);
        n->call_line = cl > 0 ? cl : 0;
        return;
    }
    /* A real function of internal linkage, DWARF-named in source spelling:
     * where the ELF symbol at its entry is mangled, it says more (the
     * parameters). */
    Dwarf_Addr entry;
    uint64_t start;
    const char *s;
    if (n->cxx_source && dwarf_entrypc(&n->die, &entry) == 0 &&
        (s = symbol_at(o, entry + bias, &start)) && start == entry + bias && !strncmp(s, "_Z", 2)) {
        n->name = n->system_name = s;
        n->cxx_source = false;
    }
}

/* Frames from DWARF for addr (innermost first), at most max of them;
 * returns how many were stored. The line of the innermost frame is the
 * line table's; each outer frame's line is the call site of the inlined
 * frame inside it. */
static size_t dwarf_frames(elfobj_t *o, uint64_t addr, elfobj_frame_t *fr, size_t max)
{
    Dwarf_Addr bias = 0;
    Dwarf_Die *cu = dwfl_module_addrdie(o->mod, addr, &bias);
    const char *file = NULL;
    int line = 0;
    Dwfl_Line *l = dwfl_module_getsrc(o->mod, addr);
    if (l)
        file = dwfl_lineinfo(l, NULL, &line, NULL, NULL, NULL);
    struct cuidx *ix = cu ? cu_index(o, cu) : NULL;
    int32_t i = ix ? ival_at(ix, addr - bias) : -1;
    int32_t k = i >= 0 ? ix->ivals[i].node : -1;
    /* Assembler DWARF has one subprogram per alias of a function, all with
     * the same range: the name a reader knows, as for symbols. */
    if (i >= 0) {
        const ival_t *v = &ix->ivals[i];
        int32_t g0 = i, g1 = i;
        while (g0 > 0 && ix->ivals[g0 - 1].lo == v->lo && ix->ivals[g0 - 1].hi == v->hi &&
               ix->ivals[g0 - 1].depth == v->depth)
            g0--;
        while ((size_t)g1 + 1 < ix->nivals && ix->ivals[g1 + 1].lo == v->lo &&
               ix->ivals[g1 + 1].hi == v->hi && ix->ivals[g1 + 1].depth == v->depth)
            g1++;
        for (int32_t j = g0; j <= g1 && g0 < g1; j++) {
            fnode_t *a = &ix->nodes[ix->ivals[j].node], *b = &ix->nodes[k];
            node_names(o, a, bias);
            node_names(o, b, bias);
            if (a->name && (!b->name || underscores(a->name) < underscores(b->name) ||
                            (underscores(a->name) == underscores(b->name) &&
                             ix->ivals[j].node < k)))
                k = ix->ivals[j].node;
        }
    }
    size_t n = 0;
    for (; k >= 0 && max; k = ix->nodes[k].parent) {
        fnode_t *nd = &ix->nodes[k];
        node_names(o, nd, bias);
        elfobj_frame_t f = {nd->name, nd->system_name, file, line, nd->start_line, nd->cxx_source};
        /* GCC describes some functions (glibc's aliased ones) as an inline
         * copy of themselves "called" from their own first line: one frame. */
        elfobj_frame_t *prev = n ? &fr[n - 1] : NULL;
        if (!(prev && line == nd->start_line && same(prev->name, f.name) &&
              same(prev->system_name, f.system_name))) {
            /* Deeper inlining than max: the innermost frames and the real
             * function are kept, the middle is lost. */
            fr[n < max ? n : max - 1] = f;
            if (n < max)
                n++;
        }
        if (nd->tag != DW_TAG_inlined_subroutine)
            break;
        file = nd->call_file;
        line = (int)nd->call_line;
    }
    if (n == 0 && max && file) {
        /* Lines without a function (assembler): a nameless frame that the
         * symbol table names. */
        fr[0] = (elfobj_frame_t){.file = file, .line = line};
        n = 1;
    }
    return n;
}

int elfobj_lookup(elfobj_t *o, uint64_t addr, int flags, elfobj_frame_t *frames, size_t max)
{
    if (setup_dwfl(o) < 0)
        return -ENOEXEC;
    size_t n = 0;
    if (!(flags & ELFOBJ_SYMTAB_ONLY))
        n = dwarf_frames(o, addr, frames, max);
    /* Go code without DWARF: names and lines from .gopclntab. */
    if (max && n == 0 && o->gopcln) {
        const char *fn, *file;
        int64_t line;
        if (gopcln_lookup(o->gopcln, addr, &fn, &file, &line) == 0) {
            frames[n++] = (elfobj_frame_t){.name = fn, .system_name = fn};
            if (!(flags & ELFOBJ_SYMTAB_ONLY)) {
                frames[0].file = file;
                frames[0].line = line;
            }
        }
    }
    /* The outermost frame's name from .symtab/.dynsym when DWARF has none
     * (no debug info, assembler, crt files). */
    if (max && (n == 0 || !frames[n - 1].name)) {
        uint64_t start;
        const char *s = symbol_at(o, addr, &start);
        if (s && *s) {
            if (n == 0)
                frames[n++] = (elfobj_frame_t){.name = s};
            frames[n - 1].name = frames[n - 1].system_name = s;
        }
    }
    return (int)n;
}
