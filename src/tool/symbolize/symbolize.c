/* symbolize.c — local symbolization of a profile (see symbolize.h).
 *
 * The steps follow go tool pprof (fetch.go locateBinaries, then
 * symbolizer.go Symbolize) so that the same profiles give the same names
 * and the same warnings, with these differences on purpose:
 *   - object files are checked by GNU build id (Go's reader reports none,
 *     so a wrong binary passes silently and PPROF_BINARY_PATH never
 *     matches a mapping that has a build id — pprof-format.md §5.3);
 *   - addresses are translated the way the loader placed the file (bias
 *     from the mapping's file offset), for PIE, non-PIE and libraries;
 *   - inline frames are expanded, functions without DWARF are named from
 *     .symtab/.dynsym, and separate debug files and debuginfod are used;
 *     debuginfod also supplies executables missing here, by build id.
 *
 * Cost: every distinct (object, address) pair is looked up once; objects
 * are opened once per call, whatever number of mappings name them.
 */
#include "symbolize.h"

#include "base/path.h"

#include <ctype.h>
#include <errno.h>
#include <glob.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "tool/symbolize/demangle.h"
#include "tool/symbolize/elfobj.h"
#include "base/hash.h"

#define MAX_FRAMES 64 /* inline depth kept per address */

enum { HAS_FUNC = 1, HAS_FILE = 2, HAS_LINE = 4 };

/* A distinct address of one object and what it resolved to. */
typedef struct {
    uint64_t addr;
    profile_line_t *lines; /* profile storage; NULL: nothing found */
    uint32_t n;
    uint8_t flags; /* HAS_* of the frames */
    bool used;
} addr_slot_t;

/* An object file, opened (or failed) once per call, keyed by path. */
typedef struct {
    char *path;
    elfobj_t *obj; /* NULL when opening failed: see msg */
    char *msg;
    addr_slot_t *slots;
    size_t mask, used;
} module_t;

typedef struct {
    int64_t name, system_name, filename, start_line;
    uint64_t id; /* 0: empty slot */
} fn_slot_t;

typedef struct {
    profile_t *p;
    char *debug_path; /* NULL: elfutils' default */
    module_t *mods;
    size_t nmods, capmods;
    fn_slot_t *fns;
    size_t fmask, fused;
    uint64_t next_fn_id;
    size_t first_new_fn; /* functions from here on were made by this call */
    bool fast;
    demangle_mode_t demangle;
    char *err;
    size_t errlen;
} ctx_t;

static int oom(ctx_t *c)
{
    snprintf(c->err, c->errlen, "symbolize: out of memory");
    return -ENOMEM;
}

/* --- object files ----------------------------------------------------------- */

/* Index of the module for path in c->mods, opening the file the first time;
 * -1 when out of memory. */
static ssize_t module_get(ctx_t *c, const char *path)
{
    for (size_t i = 0; i < c->nmods; i++)
        if (!strcmp(c->mods[i].path, path))
            return (ssize_t)i;
    if (c->nmods == c->capmods) {
        size_t nc = c->capmods ? 2 * c->capmods : 16;
        module_t *m = realloc(c->mods, nc * sizeof(*m));
        if (!m)
            return -1;
        c->mods = m;
        c->capmods = nc;
    }
    module_t *m = &c->mods[c->nmods];
    memset(m, 0, sizeof(*m));
    if (!(m->path = strdup(path)))
        return -1;
    char msg[512];
    int r = elfobj_open(path, c->debug_path, &m->obj, msg, sizeof(msg));
    /* /proc/PID/maps marks replaced files "(deleted)"; the file may be back
     * under its name (a rebuild), which the build-id check then judges. */
    static const char del[] = " (deleted)";
    size_t n = strlen(path), dl = sizeof(del) - 1;
    if (r < 0 && r != -ENOMEM && n > dl && !strcmp(path + n - dl, del)) {
        char *plain = strndup(path, n - dl);
        char m2[512];
        if (plain && elfobj_open(plain, c->debug_path, &m->obj, m2, sizeof(m2)) == 0)
            r = 0;
        free(plain);
    }
    if (r < 0 && !(m->msg = strdup(msg))) {
        free(m->path);
        return -1;
    }
    return (ssize_t)c->nmods++;
}

static void modules_free(ctx_t *c)
{
    for (size_t i = 0; i < c->nmods; i++) {
        elfobj_close(c->mods[i].obj);
        free(c->mods[i].path);
        free(c->mods[i].msg);
        free(c->mods[i].slots);
    }
    free(c->mods);
}

/* --- functions ------------------------------------------------------------ */

static int fn_grow(ctx_t *c)
{
    size_t ns = c->fns ? 2 * (c->fmask + 1) : 1024;
    fn_slot_t *t = calloc(ns, sizeof(*t));
    if (!t)
        return -ENOMEM;
    for (size_t i = 0; c->fns && i <= c->fmask; i++) {
        fn_slot_t *s = &c->fns[i];
        if (!s->id)
            continue;
        size_t h = hash_mix64((uint64_t)s->system_name * 31 + (uint64_t)s->filename * 7 +
                       (uint64_t)s->start_line) & (ns - 1);
        while (t[h].id)
            h = (h + 1) & (ns - 1);
        t[h] = *s;
    }
    free(c->fns);
    c->fns = t;
    c->fmask = ns - 1;
    return 0;
}

/* Id of the Function {name, system name, file, start line}, added if new
 * (pprof keys the functions it creates the same way). 0 when out of
 * memory. */
static uint64_t function_id(ctx_t *c, const elfobj_frame_t *fr, const char *file, int64_t start)
{
    const char *name = fr->name, *sys = fr->system_name;
    int64_t f = 0;
    if (file && *file) {
        char *cp = path_clean(file);
        if (!cp)
            return 0;
        f = profile_intern(c->p, cp);
        free(cp);
    }
    int64_t n = profile_intern(c->p, name), y = profile_intern(c->p, sys ? sys : name);
    if (n < 0 || y < 0 || f < 0)
        return 0;
    if ((c->fused + 1) * 2 > c->fmask + 1 && fn_grow(c) < 0)
        return 0;
    size_t h = hash_mix64((uint64_t)y * 31 + (uint64_t)f * 7 + (uint64_t)start) & c->fmask;
    for (; c->fns[h].id; h = (h + 1) & c->fmask) {
        fn_slot_t *s = &c->fns[h];
        if (s->name == n && s->system_name == y && s->filename == f && s->start_line == start)
            return s->id;
    }
    /* The shown name, demangled here once per function: pprof's pass over
     * all functions (demangle_functions) would mangle the source spelling
     * of DWARF names ("(anonymous namespace)" looks like parameters). */
    int64_t shown = c->demangle == DEMANGLE_NONE ? y : n; /* none: linker names */
    char *d = fr->cxx_source           ? demangle_simplify(name, c->demangle)
              : demangle_is_mangled(name) ? demangle_symbol(name, c->demangle)
                                        : demangle_c_name(name, c->demangle);
    if (d) {
        shown = profile_intern(c->p, d);
        free(d);
        if (shown < 0)
            return 0;
    }
    profile_function_t *fn = profile_add_function(c->p);
    if (!fn)
        return 0;
    fn->id = c->next_fn_id++;
    fn->name = shown;
    fn->system_name = y;
    fn->filename = f;
    fn->start_line = start;
    c->fns[h] = (fn_slot_t){n, y, f, start, fn->id};
    c->fused++;
    return fn->id;
}

/* --- addresses ------------------------------------------------------------ */

static int slots_grow(module_t *m)
{
    size_t ns = m->slots ? 2 * (m->mask + 1) : 1024;
    addr_slot_t *t = calloc(ns, sizeof(*t));
    if (!t)
        return -ENOMEM;
    for (size_t i = 0; m->slots && i <= m->mask; i++) {
        if (!m->slots[i].used)
            continue;
        size_t h = hash_mix64(m->slots[i].addr) & (ns - 1);
        while (t[h].used)
            h = (h + 1) & (ns - 1);
        t[h] = m->slots[i];
    }
    free(m->slots);
    m->slots = t;
    m->mask = ns - 1;
    return 0;
}

/* The lines for file address addr of module m, looked up once. NULL when
 * out of memory (*rc = -ENOMEM). */
static const addr_slot_t *resolve(ctx_t *c, module_t *m, uint64_t addr, int *rc)
{
    if ((m->used + 1) * 2 > m->mask + 1 && slots_grow(m) < 0) {
        *rc = oom(c);
        return NULL;
    }
    size_t h = hash_mix64(addr) & m->mask;
    for (; m->slots[h].used; h = (h + 1) & m->mask)
        if (m->slots[h].addr == addr)
            return &m->slots[h];
    addr_slot_t *s = &m->slots[h];
    *s = (addr_slot_t){.addr = addr, .used = true};
    m->used++;

    elfobj_frame_t fr[MAX_FRAMES];
    int n = elfobj_lookup(m->obj, addr, c->fast ? ELFOBJ_SYMTAB_ONLY : 0, fr, MAX_FRAMES);
    if (n <= 0)
        return s;
    profile_line_t lines[MAX_FRAMES];
    uint32_t k = 0;
    for (int i = 0; i < n; i++) {
        /* A frame with no name at all would print as an empty function:
         * leave it out, the mapping's [name] says more. */
        if (!fr[i].name)
            continue;
        uint64_t id = function_id(c, &fr[i], c->fast ? NULL : fr[i].file,
                                  c->fast ? 0 : fr[i].start_line);
        if (!id) {
            *rc = oom(c);
            return NULL;
        }
        lines[k++] = (profile_line_t){id, c->fast ? 0 : fr[i].line};
        s->flags |= HAS_FUNC;
        if (!c->fast && fr[i].file)
            s->flags |= HAS_FILE;
        if (!c->fast && fr[i].line)
            s->flags |= HAS_LINE;
    }
    if (k == 0)
        return s;
    s->lines = profile_alloc(c->p, k * sizeof(*lines));
    if (!s->lines) {
        *rc = oom(c);
        return NULL;
    }
    memcpy(s->lines, lines, k * sizeof(*lines));
    s->n = k;
    return s;
}

/* --- finding the object files ------------------------------------------------ */

/* dir/a[/b], without doubled slashes (Go's filepath.Join, minus cleaning). */
static char *join(const char *dir, const char *a, const char *b)
{
    size_t n = strlen(dir) + strlen(a) + (b ? strlen(b) : 0) + 3;
    char *r = malloc(n);
    if (!r)
        return NULL;
    size_t dl = strlen(dir);
    while (dl > 1 && dir[dl - 1] == '/')
        dl--;
    while (*a == '/')
        a++;
    snprintf(r, n, "%.*s/%s%s%s", (int)dl, dir, a, b ? "/" : "", b ? b : "");
    return r;
}

static bool same_build_id(const char *a, const char *b)
{
    return !strcasecmp(a, b);
}

/* Tries one candidate path for mapping m: 1 if it is taken (the mapping
 * now names it), 0 if not, -ENOMEM. */
static int try_candidate(ctx_t *c, profile_mapping_t *m, const char *path)
{
    ssize_t i = module_get(c, path);
    if (i < 0)
        return oom(c);
    module_t *mod = &c->mods[i];
    if (!mod->obj)
        return 0;
    const char *want = c->p->strings[m->build_id], *have = elfobj_build_id(mod->obj);
    if (*want && !same_build_id(want, have)) {
        fprintf(stderr, "Ignoring local file %s: build-id mismatch (%s != %s)\n", path, want,
                have);
        return 0;
    }
    int64_t s = profile_intern(c->p, path);
    if (s < 0)
        return oom(c);
    m->filename = s;
    return 1;
}

/* pprof's locateBinaries: each mapping's file is looked for on
 * PPROF_BINARY_PATH (default $HOME/pprof/binaries) by build id and name. */
static int locate_binaries(ctx_t *c)
{
    const char *sp = getenv("PPROF_BINARY_PATH");
    char *def = NULL;
    if (!sp || !*sp) {
        const char *home = getenv("HOME");
        if (!home)
            return 0;
        if (!(def = join(home, "pprof", "binaries")))
            return oom(c);
        sp = def;
    }
    char *paths = strdup(sp);
    if (!paths) {
        free(def);
        return oom(c);
    }
    int rc = 0;
    for (size_t mi = 0; mi < c->p->n_mappings && rc >= 0; mi++) {
        profile_mapping_t *m = &c->p->mappings[mi];
        char *file = strdup(c->p->strings[m->filename]);
        const char *bid = c->p->strings[m->build_id];
        if (!file) {
            rc = oom(c);
            break;
        }
        char bb[4096];
        const char *base = *file ? path_base(file, bb, sizeof(bb)) : "";
        char *save = NULL;
        char *work = strdup(paths);
        if (!work) {
            free(file);
            rc = oom(c);
            break;
        }
        for (char *dir = strtok_r(work, ":", &save); dir && rc == 0;
             dir = strtok_r(NULL, ":", &save)) {
            /* The candidates, in pprof's order. */
            char *cand[4] = {NULL, NULL, NULL, NULL};
            glob_t g = {0};
            bool have_glob = false;
            if (*bid) {
                cand[0] = *base ? join(dir, bid, base) : NULL;
                char *pat = join(dir, bid, "*");
                if (pat && glob(pat, 0, NULL, &g) == 0)
                    have_glob = true;
                free(pat);
                cand[1] = *file ? join(dir, file, bid) : NULL;
            }
            if (*file) {
                cand[2] = join(dir, base, NULL);
                cand[3] = join(dir, file, NULL);
            }
            if (cand[0])
                rc = try_candidate(c, m, cand[0]);
            for (size_t k = 0; have_glob && rc == 0 && k < g.gl_pathc; k++)
                rc = try_candidate(c, m, g.gl_pathv[k]);
            for (int k = 1; k < 4 && rc == 0; k++)
                if (cand[k])
                    rc = try_candidate(c, m, cand[k]);
            if (have_glob)
                globfree(&g);
            for (int k = 0; k < 4; k++)
                free(cand[k]);
        }
        if (rc > 0)
            rc = 0;
        free(work);
        free(file);
    }
    free(paths);
    free(def);
    return rc;
}

/* --- the mappings to symbolize -------------------------------------------------- */

/* "http://...", "https://...": a source URL, not an object file. */
static bool is_http_url(const char *file)
{
    const char *colon = strchr(file, ':');
    if (!colon || colon == file || !isalpha((unsigned char)file[0]))
        return false;
    for (const char *q = file; q < colon; q++)
        if (!isalnum((unsigned char)*q) && *q != '+' && *q != '-' && *q != '.')
            return false;
    char scheme[32];
    size_t n = (size_t)(colon - file) < sizeof(scheme) - 1 ? (size_t)(colon - file)
                                                            : sizeof(scheme) - 1;
    for (size_t i = 0; i < n; i++)
        scheme[i] = (char)tolower((unsigned char)file[i]);
    scheme[n] = '\0';
    return strstr(scheme, "http") != NULL;
}

/* The module of the executable debuginfod has for build id bid: its index,
 * -1 if there is none, -2 when out of memory. */
static ssize_t fetched_module(ctx_t *c, const char *bid)
{
    char *path = elfobj_fetch_executable(bid);
    if (!path)
        return -1;
    ssize_t k = module_get(c, path);
    free(path);
    if (k < 0)
        return -2;
    if (!c->mods[k].obj || !same_build_id(bid, elfobj_build_id(c->mods[k].obj)))
        return -1;
    return k;
}

typedef struct {
    ssize_t mod; /* -1: not symbolized */
    uint64_t bias;
} mstate_t;

/* Decides, for every mapping that a location uses, whether and from which
 * object it is symbolized (pprof's newMapping), printing its warnings. */
static int choose_mappings(ctx_t *c, mstate_t *ms, bool force)
{
    profile_t *p = c->p;
    bool *used = calloc(p->n_mappings ? p->n_mappings : 1, sizeof(*used));
    if (!used)
        return oom(c);
    for (size_t i = 0; i < p->n_locations; i++) {
        const profile_mapping_t *m = profile_mapping_by_id(p, p->locations[i].mapping_id);
        if (m)
            used[m - p->mappings] = true;
    }
    bool missing = false;
    int rc = 0;
    for (size_t mi = 0; mi < p->n_mappings && rc == 0; mi++) {
        profile_mapping_t *m = &p->mappings[mi];
        ms[mi].mod = -1;
        if (!used[mi])
            continue;
        if (!force && (m->has_functions || m->has_filenames || m->has_line_numbers))
            continue;
        const char *file = p->strings[m->filename], *bid = p->strings[m->build_id];
        if (!*file) {
            if (mi == 0)
                fprintf(stderr, "Main binary filename not available.\n");
            else
                missing = true;
            continue;
        }
        if (profile_mapping_unsymbolizable(file) || (!*bid && is_http_url(file)))
            continue;
        char name[1024], bb[1024];
        const char *base = path_base(file, bb, sizeof(bb));
        if (*bid)
            snprintf(name, sizeof(name), "%s (build ID %s)", base, bid);
        else
            snprintf(name, sizeof(name), "%s", base);
        ssize_t k = module_get(c, file);
        if (k < 0) {
            rc = oom(c);
            break;
        }
        /* Not here, or not this build: debuginfod may have it by build id. */
        const char *have = c->mods[k].obj ? elfobj_build_id(c->mods[k].obj) : "";
        if (*bid && (!c->mods[k].obj || (*have && !same_build_id(bid, have)))) {
            ssize_t f = fetched_module(c, bid);
            if (f == -2) {
                rc = oom(c);
                break;
            }
            if (f >= 0)
                k = f;
        }
        module_t *mod = &c->mods[k];
        if (!mod->obj) {
            fprintf(stderr, "Local symbolization failed for %s: %s\n", name, mod->msg);
            missing = true;
            continue;
        }
        have = elfobj_build_id(mod->obj);
        if (*bid && *have && !same_build_id(bid, have)) {
            /* pprof's words, then which file had which id. */
            fprintf(stderr,
                    "Local symbolization failed for %s: build ID mismatch (%s has build ID %s)\n",
                    name, file, have);
            continue;
        }
        char msg[512];
        if (elfobj_bias(mod->obj, m->memory_start, m->memory_limit, m->file_offset,
                        &ms[mi].bias, msg, sizeof(msg)) < 0) {
            fprintf(stderr, "Local symbolization failed for %s: %s\n", name, msg);
            continue;
        }
        ms[mi].mod = k;
    }
    if (missing && rc == 0)
        fprintf(stderr, "Some binary filenames not available. Symbolization may be incomplete.\n"
                        "Try setting PPROF_BINARY_PATH to the search path for local binaries.\n");
    free(used);
    return rc;
}

static int symbolize_locations(ctx_t *c, mstate_t *ms)
{
    profile_t *p = c->p;
    for (size_t i = 0; i < p->n_functions; i++)
        if (p->functions[i].id >= c->next_fn_id)
            c->next_fn_id = p->functions[i].id + 1;
    if (c->next_fn_id == 0)
        c->next_fn_id = 1;
    for (size_t i = 0; i < p->n_locations; i++) {
        profile_location_t *l = &p->locations[i];
        const profile_mapping_t *cm = profile_mapping_by_id(p, l->mapping_id);
        if (!cm)
            continue;
        size_t mi = (size_t)(cm - p->mappings);
        if (ms[mi].mod < 0)
            continue;
        int rc = 0;
        const addr_slot_t *s = resolve(c, &c->mods[ms[mi].mod], l->address - ms[mi].bias, &rc);
        if (!s)
            return rc;
        if (!s->n)
            continue; /* nothing known: the location keeps what it had */
        /* The location gets its own copy: later passes may edit lines. */
        profile_line_t *lines = profile_alloc(p, s->n * sizeof(*lines));
        if (!lines)
            return oom(c);
        memcpy(lines, s->lines, s->n * sizeof(*lines));
        l->lines = lines;
        l->n_lines = s->n;
        l->is_folded = false;
        profile_mapping_t *m = &p->mappings[mi];
        m->has_functions |= (s->flags & HAS_FUNC) != 0;
        m->has_filenames |= (s->flags & HAS_FILE) != 0;
        m->has_line_numbers |= (s->flags & HAS_LINE) != 0;
        m->has_inline_frames = true;
    }
    return 0;
}

/* pprof's Demangle, for the functions the profile came with: names equal
 * to their system name (or all, when forced) get the demangled/simplified
 * form of the system name. */
static int demangle_functions(ctx_t *c, demangle_mode_t mode, bool force)
{
    profile_t *p = c->p;
    for (size_t i = 0; i < c->first_new_fn; i++) {
        profile_function_t *f = &p->functions[i];
        if (force && f->name && f->system_name)
            f->name = f->system_name;
        if (f->name && f->name != f->system_name &&
            strcmp(p->strings[f->name], p->strings[f->system_name]) != 0)
            continue; /* already demangled */
        char *d = demangle_symbol(p->strings[f->system_name], mode);
        if (!d) {
            f->name = f->system_name;
            continue;
        }
        int64_t s = profile_intern(p, d);
        free(d);
        if (s < 0)
            return oom(c);
        f->name = s;
    }
    return 0;
}

/* --- entry point ----------------------------------------------------------------- */

bool symbolize_parse_mode(const char *mode, symbolize_mode_t *m)
{
    *m = (symbolize_mode_t){.local = true, .remote = true, .demangle = DEMANGLE_DEFAULT};
    if (!mode)
        return true;
    char *s = strdup(mode);
    if (!s)
        return true;
    for (char *q = s; *q; q++)
        *q = (char)tolower((unsigned char)*q);
    bool ok = true;
    char *save = NULL;
    for (char *o = strtok_r(s, ":", &save); o; o = strtok_r(NULL, ":", &save)) {
        if (!strcmp(o, "none") || !strcmp(o, "no")) {
            m->none = true;
            break;
        } else if (!strcmp(o, "local")) {
            m->remote = false;
        } else if (!strcmp(o, "fastlocal")) {
            m->remote = false;
            m->fast = true;
        } else if (!strcmp(o, "remote")) {
            m->local = false;
        } else if (!strcmp(o, "force")) {
            m->force = true;
        } else if (!strncmp(o, "demangle=", 9) && demangle_parse_mode(o + 9) >= 0) {
            m->demangle = (demangle_mode_t)demangle_parse_mode(o + 9);
            if (strcmp(o + 9, "default") != 0)
                m->force = true; /* pprof re-symbolizes to apply a new mode */
        } else {
            ok = false;
        }
    }
    free(s);
    return ok;
}

int symbolize_profile(profile_t *p, const symbolize_opts_t *o, char *err, size_t errlen)
{
    ctx_t c = {.p = p, .err = err, .errlen = errlen};
    symbolize_mode_t mode;
    if (!symbolize_parse_mode(o ? o->mode : NULL, &mode))
        fprintf(stderr, "ignoring unrecognized symbolization option: %s\n"
                        "expecting -symbolize=[local|fastlocal|remote|none][:force]"
                        "[:demangle=[none|full|templates|default]\n",
                o->mode);
    c.fast = mode.fast;
    c.demangle = mode.demangle;
    c.first_new_fn = p->n_functions;
    const char *dd = getenv("CPROF_DEBUG_FILE_DIRECTORY");
    if (dd && *dd) {
        /* Replaces /usr/lib/debug, as gdb's debug-file-directory does. */
        size_t n = strlen(dd) + 16;
        if (!(c.debug_path = malloc(n)))
            return oom(&c);
        snprintf(c.debug_path, n, ":.debug:%s", dd);
    }

    /* A profile without mappings (some Go profiles) gets one, as in pprof,
     * so that BINARY can symbolize it (correct for non-PIE binaries). */
    if (p->n_mappings == 0 && p->n_locations > 0) {
        profile_mapping_t *m = profile_add_mapping(p);
        if (!m) {
            free(c.debug_path);
            return oom(&c);
        }
        m->id = 1;
        for (size_t i = 0; i < p->n_locations; i++)
            p->locations[i].mapping_id = 1;
    }
    int rc = locate_binaries(&c);
    if (rc == 0 && o && o->binary && *o->binary && p->n_mappings > 0) {
        int64_t s = profile_intern(p, o->binary);
        if (s < 0)
            rc = oom(&c);
        else
            p->mappings[0].filename = s;
    }
    /* indexed once the mapping is added (locate_binaries reads none by
     * id): each index reads every location's and function's id */
    if (rc == 0)
        rc = profile_index(p) < 0 ? oom(&c) : 0;

    mstate_t *ms = NULL;
    if (rc == 0 && !mode.none && mode.local) {
        ms = calloc(p->n_mappings ? p->n_mappings : 1, sizeof(*ms));
        rc = ms ? choose_mappings(&c, ms, mode.force) : oom(&c);
        if (rc == 0)
            rc = symbolize_locations(&c, ms);
    }
    if (rc == 0 && !mode.none)
        rc = demangle_functions(&c, mode.demangle, mode.force);
    /* Functions are the only elements added since the index above: a
     * profile given none (strings -top's: 3.9 M instructions a pass) is
     * indexed already. */
    if (rc == 0 && p->n_functions != c.first_new_fn && profile_index(p) < 0)
        rc = oom(&c);
    free(ms);
    free(c.fns);
    modules_free(&c);
    free(c.debug_path);
    return rc;
}
