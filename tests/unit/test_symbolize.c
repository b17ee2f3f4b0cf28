// links: symbolize
/* test_symbolize.c — the local symbolizer against programs built here.
 *
 * The group setup compiles tests/progs/symbolize_prog.c and
 * symbolize_cxx.cc in several ways (-O1/-O2 PIE, non-PIE, no -g, stripped
 * with a separate debug file) into a temp directory and runs each once: the
 * programs print their call-site addresses and /proc/self/maps r-xp lines,
 * from which each test builds the address-only profile a C profiler writes
 * and checks what symbolize_profile() makes of it. Expected lines come from
 * "@marker" comments in the program sources.
 *
 * CPROF_TEST_DEBUGINFOD_BIN (set by tests/e2e/symbolize_debuginfod.sh) runs
 * only the debuginfod test, against a stripped binary whose debug file (and,
 * when the profile names a path that does not exist, the binary itself)
 * only a debuginfod server has.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tmpname.h"
#include "profile/profile.h"
#include "tool/symbolize/demangle.h"
#include "tool/symbolize/elfobj.h"
#include "tool/symbolize/gopclntab.h"
#include "tool/symbolize/symbolize.h"

/* --- programs and their runs --------------------------------------------------- */

#define MAX_SITES 16
#define MAX_MAPS 32

typedef struct {
    char tag[32];
    uint64_t addr;
} site_t;

typedef struct {
    uint64_t start, end, off;
    char path[PATH_MAX];
} map_t;

typedef struct {
    char bin[PATH_MAX];
    site_t sites[MAX_SITES];
    size_t nsites;
    map_t maps[MAX_MAPS];
    size_t nmaps;
} run_t;

static char top[1024], tmp[256], prog_c[PATH_MAX], prog_cc[PATH_MAX];
static char nobin[300]; /* an empty PPROF_BINARY_PATH */
static run_t r_o1, r_o2, r_nopie, r_nog, r_link, r_bid, r_cxx;

static int sh(const char *fmt, ...)
{
    char cmd[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof(cmd), fmt, ap);
    va_end(ap);
    int r = system(cmd);
    if (r != 0)
        fprintf(stderr, "command failed (%d): %s\n", r, cmd);
    return r;
}

static int run_prog(const char *bin, run_t *r)
{
    memset(r, 0, sizeof(*r));
    snprintf(r->bin, sizeof(r->bin), "%s", bin);
    FILE *f = popen(bin, "r");
    if (!f)
        return -1;
    char line[8192];
    while (fgets(line, sizeof(line), f)) {
        line[strcspn(line, "\n")] = '\0';
        if (!strncmp(line, "site ", 5) && r->nsites < MAX_SITES) {
            site_t *s = &r->sites[r->nsites];
            if (sscanf(line + 5, "%31s %" SCNx64, s->tag, &s->addr) == 2)
                r->nsites++;
        } else if (!strncmp(line, "map ", 4) && r->nmaps < MAX_MAPS) {
            map_t *m = &r->maps[r->nmaps];
            int pos = 0;
            if (sscanf(line + 4, "%" SCNx64 " %" SCNx64 " %" SCNx64 " %n", &m->start, &m->end,
                       &m->off, &pos) >= 3) {
                snprintf(m->path, sizeof(m->path), "%s", line + 4 + pos);
                r->nmaps++;
            }
        }
    }
    return pclose(f) == 0 && r->nsites > 0 && r->nmaps > 0 ? 0 : -1;
}

/* Splits a debug file off bin and strips bin (no .symtab left). */
static int split_debug(const char *bin, const char *debug, bool link)
{
    if (sh("objcopy --only-keep-debug %s %s && strip --strip-all %s", bin, debug, bin))
        return -1;
    if (link && sh("cd %s && objcopy --add-gnu-debuglink=%s %s", tmp, strrchr(debug, '/') + 1,
                   bin))
        return -1;
    return 0;
}

static const char *build_id_of(const char *path)
{
    static char id[256];
    elfobj_t *o;
    char err[256];
    id[0] = '\0';
    if (elfobj_open(path, NULL, &o, err, sizeof(err)) == 0) {
        snprintf(id, sizeof(id), "%s", elfobj_build_id(o));
        elfobj_close(o);
    }
    return id;
}

static int setup(void **state)
{
    (void)state;
    const char *t = getenv("CPROF_TOP");
    char real[PATH_MAX];
    if (!realpath(t ? t : ".", real) || strlen(real) >= sizeof(top))
        return -1;
    memcpy(top, real, strlen(real) + 1);
    snprintf(prog_c, sizeof(prog_c), "%s/tests/progs/symbolize_prog.c", top);
    snprintf(prog_cc, sizeof(prog_cc), "%s/tests/progs/symbolize_cxx.cc", top);
    tmpname(tmp, sizeof(tmp), "cprof-symbolize");
    if (!mkdtemp(tmp))
        return -1;
    /* Nothing from the caller's environment may find files for us. */
    unsetenv("CPROF_DEBUG_FILE_DIRECTORY");
    snprintf(nobin, sizeof(nobin), "%s/empty", tmp);
    if (mkdir(nobin, 0700) != 0)
        return -1;
    setenv("PPROF_BINARY_PATH", nobin, 1);
    if (!getenv("CPROF_TEST_DEBUGINFOD_BIN"))
        unsetenv("DEBUGINFOD_URLS");
    if (getenv("CPROF_TEST_DEBUGINFOD_BIN"))
        return 0;

    char bin[1024], dbg[1024];
    const char *cc = "gcc -g -fno-omit-frame-pointer";
#define BUILD(run, name, flags, src, compiler)                                                 \
    do {                                                                                       \
        snprintf(bin, sizeof(bin), "%s/%s", tmp, name);                                        \
        if (sh("%s %s -o %s %s", compiler, flags, bin, src) || run_prog(bin, run))             \
            return -1;                                                                         \
    } while (0)
    BUILD(&r_o1, "prog_o1", "-O1", prog_c, cc);
    BUILD(&r_o2, "prog_o2", "-O2", prog_c, cc);
    BUILD(&r_nopie, "prog_nopie", "-O1 -no-pie -fno-pie", prog_c, cc);
    BUILD(&r_nog, "prog_nog", "-O1 -g0", prog_c, cc);
    BUILD(&r_cxx, "prog_cxx", "-O1", prog_cc, "g++ -g");

    /* Stripped, debug file found by .gnu_debuglink next to it. */
    snprintf(bin, sizeof(bin), "%s/prog_link", tmp);
    snprintf(dbg, sizeof(dbg), "%s/prog_link.debug", tmp);
    if (sh("%s -O1 -o %s %s", cc, bin, prog_c) || split_debug(bin, dbg, true) ||
        run_prog(bin, &r_link))
        return -1;

    /* Stripped, debug file found by build id under a debug directory. */
    snprintf(bin, sizeof(bin), "%s/prog_bid", tmp);
    snprintf(dbg, sizeof(dbg), "%s/prog_bid.debug", tmp);
    if (sh("%s -O2 -o %s %s", cc, bin, prog_c) || split_debug(bin, dbg, false) ||
        run_prog(bin, &r_bid))
        return -1;
    const char *id = build_id_of(bin);
    if (strlen(id) < 3)
        return -1;
    if (sh("mkdir -p %s/dbg/.build-id/%.2s && mv %s %s/dbg/.build-id/%.2s/%s.debug", tmp, id,
           dbg, tmp, id, id + 2))
        return -1;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    if (strstr(tmp, "/cprof-symbolize."))
        sh("rm -rf %s", tmp);
    return 0;
}

/* Line number of the source line containing marker. */
static int64_t marker_line(const char *src, const char *marker)
{
    FILE *f = fopen(src, "r");
    assert_non_null(f);
    char line[4096];
    int64_t n = 0, found = 0;
    while (fgets(line, sizeof(line), f)) {
        n++;
        if (strstr(line, marker)) {
            found = n;
            break;
        }
    }
    fclose(f);
    assert_true(found > 0);
    return found;
}

/* --- profiles ----------------------------------------------------------------- */

/* The profile a C profiler writes for run r: one mapping per r-xp line
 * (main binary first, build id read from the file, has_* false) and one
 * location per site, in site order (location i + 1 = site i). */
static profile_t *make_profile(const run_t *r)
{
    profile_t *p = profile_new();
    assert_non_null(p);
    assert_int_equal(profile_add_sample_type(p, "inuse_space", "bytes"), 0);
    for (size_t i = 0; i < r->nmaps; i++) {
        profile_mapping_t *m = profile_add_mapping(p);
        assert_non_null(m);
        m->id = i + 1;
        m->memory_start = r->maps[i].start;
        m->memory_limit = r->maps[i].end;
        m->file_offset = r->maps[i].off;
        m->filename = profile_intern(p, r->maps[i].path);
        m->build_id = profile_intern(p, r->maps[i].path[0] == '/' ? build_id_of(r->maps[i].path)
                                                                   : "");
    }
    uint64_t ids[MAX_SITES];
    for (size_t i = 0; i < r->nsites; i++) {
        profile_location_t *l = profile_add_location(p, NULL, 0);
        assert_non_null(l);
        l->id = i + 1;
        l->address = r->sites[i].addr;
        for (size_t k = 0; k < r->nmaps; k++)
            if (l->address >= r->maps[k].start && l->address < r->maps[k].end)
                l->mapping_id = k + 1;
        ids[i] = l->id;
    }
    int64_t v = 1;
    assert_non_null(profile_add_sample(p, ids, r->nsites, &v));
    assert_int_equal(profile_index(p), 0);
    return p;
}

static const profile_location_t *site_loc(const profile_t *p, const run_t *r, const char *tag)
{
    for (size_t i = 0; i < r->nsites; i++)
        if (!strcmp(r->sites[i].tag, tag))
            return profile_location_by_id(p, i + 1);
    fail_msg("no site %s", tag);
    return NULL;
}

static const profile_function_t *line_fn(const profile_t *p, const profile_location_t *l,
                                         uint32_t i)
{
    assert_true(i < l->n_lines);
    const profile_function_t *f = profile_function_by_id(p, l->lines[i].function_id);
    assert_non_null(f);
    return f;
}

/* Line i of l is function name in file (NULL: any) at line (-1: any). */
static void expect_frame(const profile_t *p, const profile_location_t *l, uint32_t i,
                         const char *name, const char *file, int64_t line)
{
    const profile_function_t *f = line_fn(p, l, i);
    assert_string_equal(p->strings[f->name], name);
    if (file)
        assert_string_equal(p->strings[f->filename], file);
    if (line >= 0)
        assert_int_equal(l->lines[i].line, line);
}

/* Every function is found by its id's index entry, not by the scan a
 * lookup falls back to: symbolize_profile indexes what it adds (the
 * driver, the graph and the reports look functions up by id). */
static void assert_fns_indexed(const profile_t *p)
{
    for (size_t i = 0; i < p->n_functions; i++) {
        uint64_t id = p->functions[i].id;
        assert_true(id < p->n_fn_index);
        assert_int_equal(p->fn_index ? p->fn_index[id] : id, i + 1);
    }
}

/* stderr of symbolize_profile, captured into a file. */
static char captured[8192];

static int symbolize_capture(profile_t *p, const char *mode, const char *binary)
{
    char path[PATH_MAX], err[256] = "";
    snprintf(path, sizeof(path), "%s/stderr.txt", tmp);
    fflush(stderr);
    int saved = dup(2), fd = open(path, O_CREAT | O_TRUNC | O_RDWR, 0600);
    assert_true(saved >= 0 && fd >= 0);
    dup2(fd, 2);
    symbolize_opts_t o = {mode, binary};
    int rc = symbolize_profile(p, &o, err, sizeof(err));
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    ssize_t n = pread(fd, captured, sizeof(captured) - 1, 0);
    captured[n > 0 ? n : 0] = '\0';
    close(fd);
    if (captured[0])
        fprintf(stderr, "[symbolize stderr]\n%s", captured);
    if (rc != 0)
        fprintf(stderr, "symbolize_profile: %d %s\n", rc, err);
    return rc;
}

/* --- C programs --------------------------------------------------------------- */

/* plain_func's call site and the inline frame of outer_func, with the
 * source file and lines from DWARF. */
static void check_c_program(const run_t *r)
{
    profile_t *p = make_profile(r);
    assert_int_equal(symbolize_capture(p, NULL, NULL), 0);
    assert_string_equal(captured, "");
    assert_true(p->n_functions > 0);
    assert_fns_indexed(p);

    const profile_location_t *l = site_loc(p, r, "plain");
    assert_int_equal(l->n_lines, 1);
    expect_frame(p, l, 0, "plain_func", prog_c, marker_line(prog_c, "@plain-call"));
    assert_int_equal(line_fn(p, l, 0)->start_line, marker_line(prog_c, "@plain-decl"));
    assert_string_equal(p->strings[line_fn(p, l, 0)->system_name], "plain_func");

    l = site_loc(p, r, "inline");
    assert_int_equal(l->n_lines, 2);
    expect_frame(p, l, 0, "inlined_leaf", prog_c, marker_line(prog_c, "@inline-call"));
    expect_frame(p, l, 1, "outer_func", prog_c, marker_line(prog_c, "@outer-call"));
    assert_int_equal(line_fn(p, l, 0)->start_line, marker_line(prog_c, "@inlined-decl"));
    assert_int_equal(line_fn(p, l, 1)->start_line, marker_line(prog_c, "@outer-decl"));

    const profile_mapping_t *m = &p->mappings[0];
    assert_true(m->has_functions && m->has_filenames && m->has_line_numbers &&
                m->has_inline_frames);
    profile_free(p);
}

static void test_c_pie_O1(void **state)
{
    (void)state;
    check_c_program(&r_o1);
}

static void test_c_pie_O2(void **state)
{
    (void)state;
    check_c_program(&r_o2);
}

static void test_c_nopie(void **state)
{
    (void)state;
    check_c_program(&r_nopie);
}

/* No DWARF: names from .symtab (static functions too), no files or lines;
 * the inline frame is gone with the DWARF. */
static void test_c_symtab_only(void **state)
{
    (void)state;
    profile_t *p = make_profile(&r_nog);
    assert_int_equal(symbolize_capture(p, NULL, NULL), 0);
    const profile_location_t *l = site_loc(p, &r_nog, "plain");
    assert_int_equal(l->n_lines, 1);
    expect_frame(p, l, 0, "plain_func", "", 0);
    l = site_loc(p, &r_nog, "inline");
    assert_int_equal(l->n_lines, 1);
    expect_frame(p, l, 0, "outer_func", "", 0);
    assert_true(p->mappings[0].has_functions);
    assert_false(p->mappings[0].has_filenames);
    assert_false(p->mappings[0].has_line_numbers);
    profile_free(p);
}

/* libc without its debug file: names from .dynsym (the preferred alias). */
static void test_libc_dynsym(void **state)
{
    (void)state;
    setenv("CPROF_DEBUG_FILE_DIRECTORY", "/nonexistent", 1);
    profile_t *p = make_profile(&r_o1);
    assert_int_equal(symbolize_capture(p, NULL, NULL), 0);
    unsetenv("CPROF_DEBUG_FILE_DIRECTORY");
    const profile_location_t *l = site_loc(p, &r_o1, "libc-malloc");
    assert_int_equal(l->n_lines, 1);
    expect_frame(p, l, 0, "malloc", "", 0);
    const profile_mapping_t *m = profile_mapping_by_id(p, l->mapping_id);
    assert_non_null(strstr(p->strings[m->filename], "libc.so"));
    assert_true(m->has_functions);
    profile_free(p);
}

/* libc with its debug file (Debian's libc6-dbg), when installed: main's
 * caller is the static __libc_start_call_main, which .dynsym lacks. */
static void test_libc_debuginfo(void **state)
{
    (void)state;
    profile_t *p = make_profile(&r_o1);
    const profile_location_t *l = site_loc(p, &r_o1, "libc-caller");
    const profile_mapping_t *m = profile_mapping_by_id(p, l->mapping_id);
    const char *id = p->strings[m->build_id];
    char dbg[PATH_MAX];
    snprintf(dbg, sizeof(dbg), "/usr/lib/debug/.build-id/%.2s/%s.debug", id, id + 2);
    if (strlen(id) < 3 || access(dbg, R_OK) != 0) {
        profile_free(p);
        skip();
    }
    assert_int_equal(symbolize_capture(p, NULL, NULL), 0);
    l = site_loc(p, &r_o1, "libc-caller");
    assert_true(l->n_lines >= 1);
    const profile_function_t *f = line_fn(p, l, l->n_lines - 1);
    assert_string_equal(p->strings[f->name], "__libc_start_call_main");
    assert_true(l->lines[l->n_lines - 1].line > 0);
    assert_non_null(strstr(p->strings[f->filename], ".h"));
    profile_free(p);
}

/* Stripped binary: DWARF and .symtab from prog_link.debug via
 * .gnu_debuglink. */
static void test_stripped_debuglink(void **state)
{
    (void)state;
    check_c_program(&r_link);
}

/* Stripped binary: the debug file is found by build id under
 * CPROF_DEBUG_FILE_DIRECTORY/.build-id/. */
static void test_stripped_build_id_dir(void **state)
{
    (void)state;
    char dir[512];
    snprintf(dir, sizeof(dir), "%s/dbg", tmp);
    /* Without the directory: only .dynsym, which has nothing of ours. */
    profile_t *p = make_profile(&r_bid);
    assert_int_equal(symbolize_capture(p, NULL, NULL), 0);
    assert_int_equal(site_loc(p, &r_bid, "plain")->n_lines, 0);
    profile_free(p);

    setenv("CPROF_DEBUG_FILE_DIRECTORY", dir, 1);
    check_c_program(&r_bid);
    unsetenv("CPROF_DEBUG_FILE_DIRECTORY");
}

/* Mappings recorded differently from /proc/PID/maps' r-xp line: offset 0
 * for the executable range (go tool pprof's reading: start = executable
 * segment), and one mapping from the file's first page over all of it
 * (offset 0 correct: the loader's reading). Both symbolize. */
static void test_mapping_conventions(void **state)
{
    (void)state;
    run_t r = r_o1;
    assert_int_equal(r.maps[0].off, 0x1000); /* gcc's PIE layout: r--p, then r-xp */
    r.maps[0].off = 0;
    check_c_program(&r);
    r = r_o1;
    r.maps[0].start -= 0x1000;
    r.maps[0].off = 0;
    check_c_program(&r);
}

/* --- C++ -------------------------------------------------------------------- */

static void cxx_names(const char *mode, const char *method, const char *tmpl, const char *anon)
{
    profile_t *p = make_profile(&r_cxx);
    assert_int_equal(symbolize_capture(p, mode, NULL), 0);
    expect_frame(p, site_loc(p, &r_cxx, "method"), 0, method, prog_cc, -1);
    expect_frame(p, site_loc(p, &r_cxx, "template"), 0, tmpl, prog_cc, -1);
    expect_frame(p, site_loc(p, &r_cxx, "anon"), 0, anon, prog_cc, -1);
    const profile_function_t *f = line_fn(p, site_loc(p, &r_cxx, "method"), 0);
    assert_string_equal(p->strings[f->system_name], "_ZN2ns5Klass6methodEi");
    profile_free(p);
}

static void test_cxx_demangle(void **state)
{
    (void)state;
    cxx_names(NULL, "ns::Klass::method", "ns::Klass::tm", "ns::(anonymous namespace)::anon");
    cxx_names("demangle=templates", "ns::Klass::method", "ns::Klass::tm<long>",
              "ns::(anonymous namespace)::anon");
    cxx_names("demangle=full", "ns::Klass::method(int)", "long ns::Klass::tm<long>(long)",
              "ns::(anonymous namespace)::anon(int)");
    cxx_names("demangle=none", "_ZN2ns5Klass6methodEi", "_ZN2ns5Klass2tmIlEET_S2_",
              "_ZN2ns12_GLOBAL__N_14anonEi");
}

/* pprof's simplification, on names (no program needed). */
static void expect_demangled(const char *sym, demangle_mode_t mode, const char *want)
{
    char *d = demangle_symbol(sym, mode);
    assert_string_equal(d ? d : sym, want);
    free(d);
}

static void test_demangle_modes(void **state)
{
    (void)state;
    const char *s = "_ZNKSt6vectorIiSaIiEE4sizeEv";
    expect_demangled(s, DEMANGLE_DEFAULT, "std::vector::size");
    expect_demangled(s, DEMANGLE_TEMPLATES, "std::vector<int, std::allocator<int> >::size");
    expect_demangled(s, DEMANGLE_FULL, "std::vector<int, std::allocator<int> >::size() const");
    expect_demangled(s, DEMANGLE_NONE, s);
    /* Operators are names, not brackets. */
    expect_demangled("_ZN1AltERKS_", DEMANGLE_DEFAULT, "A::operator<");
    expect_demangled("_ZN1AclEi", DEMANGLE_DEFAULT, "A::operator()");
    expect_demangled("_ZlsRSoRK1A", DEMANGLE_DEFAULT, "operator<<");
    expect_demangled("_ZN1AcviEv", DEMANGLE_DEFAULT, "A::operator int");
    /* Clone suffixes go in every mode; return types with the parameters. */
    expect_demangled("_Z3fooi.cold", DEMANGLE_FULL, "foo(int)");
    expect_demangled("_Z3fooi.constprop.0", DEMANGLE_DEFAULT, "foo");
    expect_demangled("_Z1fIiET_S0_", DEMANGLE_TEMPLATES, "f<int>");
    /* Not a function: left whole. */
    expect_demangled("_ZTV1A", DEMANGLE_DEFAULT, "vtable for A");
    expect_demangled("_ZN2ns3varE", DEMANGLE_DEFAULT, "ns::var");
    /* C names stay; demangled-looking names get pprof's heuristic. */
    expect_demangled("malloc", DEMANGLE_DEFAULT, "malloc");
    expect_demangled("ns::f<int>(int)", DEMANGLE_DEFAULT, "ns::f");
    expect_demangled("ns::f<int>(int)", DEMANGLE_TEMPLATES, "ns::f<int>");
    expect_demangled("main.(*T).M", DEMANGLE_DEFAULT, "main.(*T).M");
    /* Each mark alone makes a name look demangled ("::", a bracket);
     * Go's generics and Java's ".<" do not. */
    expect_demangled("ns::f(int)", DEMANGLE_DEFAULT, "ns::f");
    expect_demangled("f[2](int)", DEMANGLE_DEFAULT, "f[2]");
    expect_demangled("f>(int)", DEMANGLE_DEFAULT, "f>");
    expect_demangled("pkg.F[...](int)", DEMANGLE_DEFAULT, "pkg.F[...]");
    expect_demangled("pkg.F[int]).m(x)", DEMANGLE_DEFAULT, "pkg.F[int]).m(x)");
    expect_demangled("a.<init>(int)", DEMANGLE_DEFAULT, "a.<init>(int)");
    expect_demangled("f(int)", DEMANGLE_DEFAULT, "f(int)");

    /* GCC clones of C functions: shown under the function's own name. */
    char *d = demangle_c_name("f.constprop.0.isra.0", DEMANGLE_DEFAULT);
    assert_string_equal(d, "f");
    free(d);
    d = demangle_c_name("g.cold", DEMANGLE_FULL);
    assert_string_equal(d, "g");
    free(d);
    assert_null(demangle_c_name("f.part.0", DEMANGLE_NONE));
    assert_null(demangle_c_name("pkg.part", DEMANGLE_DEFAULT)); /* a Go name */
    assert_null(demangle_c_name("plain", DEMANGLE_DEFAULT));
}

/* --- finding binaries ---------------------------------------------------------- */

/* The recorded path is gone: warning in pprof's words, addresses kept. */
static void test_missing_binary(void **state)
{
    (void)state;
    profile_t *p = make_profile(&r_o1);
    int64_t bid = p->mappings[0].build_id;
    p->mappings[0].filename = profile_intern(p, "/nonexistent/dir/heapc");
    assert_int_equal(symbolize_capture(p, NULL, NULL), 0);
    char want[512];
    snprintf(want, sizeof(want),
             "Local symbolization failed for heapc (build ID %s): open /nonexistent/dir/heapc: "
             "no such file or directory\n",
             p->strings[bid]);
    assert_non_null(strstr(captured, want));
    assert_non_null(strstr(captured, "Some binary filenames not available."));
    const profile_location_t *l = site_loc(p, &r_o1, "plain");
    assert_int_equal(l->n_lines, 0);
    assert_int_equal(l->address, r_o1.sites[0].addr);
    assert_false(p->mappings[0].has_functions);
    /* Other mappings (libc) are still symbolized. */
    assert_true(site_loc(p, &r_o1, "libc-malloc")->n_lines > 0);
    profile_free(p);
}

/* A file at the recorded path with another build id is not used. */
static void test_build_id_mismatch(void **state)
{
    (void)state;
    profile_t *p = make_profile(&r_o1);
    p->mappings[0].build_id = profile_intern(p, "0123456789abcdef0123456789abcdef01234567");
    assert_int_equal(symbolize_capture(p, NULL, NULL), 0);
    assert_non_null(strstr(captured, "Local symbolization failed for prog_o1 (build ID "
                                     "0123456789abcdef0123456789abcdef01234567): build ID "
                                     "mismatch"));
    assert_non_null(strstr(captured, r_o1.bin));
    assert_int_equal(site_loc(p, &r_o1, "plain")->n_lines, 0);
    assert_false(p->mappings[0].has_functions);
    profile_free(p);
}

/* `cprof BINARY PROFILE`: BINARY replaces mapping[0]'s file. */
static void test_binary_override(void **state)
{
    (void)state;
    profile_t *p = make_profile(&r_o1);
    p->mappings[0].filename = profile_intern(p, "/nonexistent/prog_o1");
    assert_int_equal(symbolize_capture(p, NULL, r_o1.bin), 0);
    assert_string_equal(captured, "");
    assert_string_equal(p->strings[p->mappings[0].filename], r_o1.bin);
    expect_frame(p, site_loc(p, &r_o1, "plain"), 0, "plain_func", prog_c, -1);
    profile_free(p);

    /* ... but not when its build id is not the mapping's. */
    p = make_profile(&r_o1);
    assert_int_equal(symbolize_capture(p, NULL, r_o2.bin), 0);
    assert_non_null(strstr(captured, "build ID mismatch"));
    assert_int_equal(site_loc(p, &r_o1, "plain")->n_lines, 0);
    profile_free(p);
}

/* PPROF_BINARY_PATH: DIR/<build id>/<basename> and DIR/<basename>; the
 * mapping then names the file found. */
static void test_pprof_binary_path(void **state)
{
    (void)state;
    char dir[512], where[PATH_MAX];
    snprintf(dir, sizeof(dir), "%s/bp", tmp);
    char id[256];
    snprintf(id, sizeof(id), "%s", build_id_of(r_o1.bin));
    assert_int_equal(sh("mkdir -p %s/%s && cp %s %s/%s/prog_o1", dir, id, r_o1.bin, dir, id), 0);
    setenv("PPROF_BINARY_PATH", dir, 1);
    profile_t *p = make_profile(&r_o1);
    p->mappings[0].filename = profile_intern(p, "/build/machine/prog_o1");
    assert_int_equal(symbolize_capture(p, NULL, NULL), 0);
    snprintf(where, sizeof(where), "%s/%s/prog_o1", dir, id);
    assert_string_equal(p->strings[p->mappings[0].filename], where);
    expect_frame(p, site_loc(p, &r_o1, "inline"), 1, "outer_func", prog_c, -1);
    profile_free(p);

    /* By base name, with a build-id check: prog_o2 is not prog_o1. */
    assert_int_equal(sh("rm -rf %s/%s && cp %s %s/prog_o1", dir, id, r_o2.bin, dir), 0);
    p = make_profile(&r_o1);
    p->mappings[0].filename = profile_intern(p, "/build/machine/prog_o1");
    assert_int_equal(symbolize_capture(p, NULL, NULL), 0);
    assert_non_null(strstr(captured, "Ignoring local file"));
    assert_non_null(strstr(captured, "build-id mismatch"));
    assert_string_equal(p->strings[p->mappings[0].filename], "/build/machine/prog_o1");
    assert_int_equal(site_loc(p, &r_o1, "plain")->n_lines, 0);
    profile_free(p);
    setenv("PPROF_BINARY_PATH", nobin, 1);
}

/* --- modes and what is left alone ------------------------------------------------ */

static void test_modes(void **state)
{
    (void)state;
    /* none: nothing at all. */
    profile_t *p = make_profile(&r_o1);
    size_t nstr = p->n_strings;
    assert_int_equal(symbolize_capture(p, "none", NULL), 0);
    assert_int_equal(p->n_functions, 0);
    assert_int_equal(p->n_strings, nstr);
    profile_free(p);

    /* fastlocal: names from the symbol tables, no lines. */
    p = make_profile(&r_o1);
    assert_int_equal(symbolize_capture(p, "fastlocal", NULL), 0);
    const profile_location_t *l = site_loc(p, &r_o1, "inline");
    assert_int_equal(l->n_lines, 1);
    expect_frame(p, l, 0, "outer_func", "", 0);
    assert_true(p->mappings[0].has_functions);
    assert_false(p->mappings[0].has_line_numbers);
    profile_free(p);

    /* Already symbolized mappings are left alone, unless forced. */
    p = make_profile(&r_o1);
    profile_function_t *f = profile_add_function(p);
    f->id = 1;
    f->name = f->system_name = profile_intern(p, "given");
    profile_line_t given = {1, 7};
    profile_location_t *gl = &p->locations[0];
    gl->lines = &given;
    gl->n_lines = 1;
    p->mappings[0].has_functions = true;
    assert_int_equal(symbolize_capture(p, NULL, NULL), 0);
    expect_frame(p, &p->locations[0], 0, "given", NULL, 7);
    assert_fns_indexed(p); /* none added: the first index covers it */
    assert_int_equal(symbolize_capture(p, "force", NULL), 0);
    assert_fns_indexed(p);
    assert_string_not_equal(p->strings[line_fn(p, &p->locations[0], 0)->name], "given");
    profile_free(p);

    /* Unsymbolizable mappings: silently skipped. */
    p = make_profile(&r_o1);
    p->mappings[0].filename = profile_intern(p, "[vdso]");
    assert_int_equal(symbolize_capture(p, NULL, NULL), 0);
    assert_string_equal(captured, "");
    assert_int_equal(site_loc(p, &r_o1, "plain")->n_lines, 0);
    profile_free(p);
}

/* Many locations at few addresses: one Function per function, lines
 * shared by value, and locations of other mappings untouched. */
static void test_many_locations(void **state)
{
    (void)state;
    profile_t *p = make_profile(&r_o1);
    size_t base = p->n_locations;
    for (size_t i = 0; i < 20000; i++) {
        profile_location_t *l = profile_add_location(p, NULL, 0);
        assert_non_null(l);
        l->id = base + i + 1;
        l->mapping_id = 1;
        l->address = r_o1.sites[i % 2].addr;
    }
    assert_int_equal(profile_index(p), 0);
    assert_int_equal(symbolize_capture(p, NULL, NULL), 0);
    /* plain_func, inlined_leaf, outer_func, and libc's two. */
    assert_true(p->n_functions <= 6);
    const profile_location_t *a = profile_location_by_id(p, base + 1);
    const profile_location_t *b = profile_location_by_id(p, base + 2);
    assert_int_equal(a->n_lines, 1);
    assert_int_equal(b->n_lines, 2);
    expect_frame(p, profile_location_by_id(p, base + 20000), 1, "outer_func", prog_c, -1);
    profile_free(p);
}

/* --- .gopclntab ------------------------------------------------------------------- */

/* Go's table is read from untrusted files: random tables behind a valid
 * header (offsets and contents garbage) must give answers or none, never
 * reads outside the buffer (ASan checks that in the sanitizer build). A
 * well-formed one-function table resolves. Real tables: symbolize_go.sh. */
static void test_gopclntab_hostile(void **state)
{
    (void)state;
    enum { N = 512 };
    uint8_t *buf = malloc(N); /* exact size: ASan sees any overrun */
    assert_non_null(buf);
    unsigned seed = 12345;
    for (int iter = 0; iter < 3000; iter++) {
        for (int i = 0; i < N; i++)
            buf[i] = (uint8_t)(rand_r(&seed) >> 7);
        static const uint32_t magics[] = {0xfffffff0, 0xfffffff1, 0xfffffffa};
        uint32_t m = magics[iter % 3];
        memcpy(buf, &m, 4);
        buf[4] = buf[5] = 0;
        buf[6] = 1;
        buf[7] = iter & 1 ? 8 : 4;
        /* Small offsets so that lookups get past the header checks. */
        for (int w = 0; w < 8; w++) {
            uint64_t v = (uint64_t)(rand_r(&seed) % (w < 2 ? 8 : N));
            memcpy(buf + 8 + w * buf[7], &v, buf[7]);
        }
        gopcln_t *t;
        if (gopcln_open(buf, N, 0x1000, &t) != 0)
            continue;
        for (int k = 0; k < 50; k++) {
            const char *fn, *file;
            int64_t line;
            if (gopcln_lookup(t, 0x1000 + (uint64_t)(rand_r(&seed) % 4096), &fn, &file, &line) ==
                0) {
                assert_true(fn >= (const char *)buf && fn < (const char *)buf + N);
                assert_true(!file || (file >= (const char *)buf && file < (const char *)buf + N));
            }
        }
        gopcln_close(t);
    }

    /* One function "main.f" at .text+0x10..0x30 in file "f.go", line 7. */
    memset(buf, 0, N);
    uint32_t magic = 0xfffffff0;
    memcpy(buf, &magic, 4);
    buf[6] = 1;
    buf[7] = 8;
    uint64_t words[8] = {1, 1, 0, 100, 120, 130, 140, 200};
    memcpy(buf + 8, words, sizeof(words));
    memcpy(buf + 100, "main.f", 7);
    memset(buf + 120, 0, 4);          /* cutab[0] = offset 0 in filetab */
    memcpy(buf + 130, "f.go", 5);     /* filetab */
    const uint8_t pcfile[] = {2, 0x20, 0}, pcln[] = {16, 0x20, 0};
    memcpy(buf + 141, pcfile, 3);     /* file 0 (zig-zag +1 from -1) */
    memcpy(buf + 144, pcln, 3);       /* line 7 (zig-zag +8 from -1) */
    uint32_t functab[3] = {0x10, 16, 0x30}; /* entry, _func offset, end */
    memcpy(buf + 200, functab, sizeof(functab));
    uint32_t fn[10] = {0x10, 0, 0, 0, 0, 1, 4, 0, 0, 0}; /* pcfile 1, pcln 4 (pctab+) */
    memcpy(buf + 216, fn, sizeof(fn));
    gopcln_t *t;
    assert_int_equal(gopcln_open(buf, N, 0x1000, &t), 0);
    const char *name, *file;
    int64_t line;
    assert_int_equal(gopcln_lookup(t, 0x1020, &name, &file, &line), 0);
    assert_string_equal(name, "main.f");
    assert_string_equal(file, "f.go");
    assert_int_equal(line, 7);
    assert_int_equal(gopcln_lookup(t, 0x1030, &name, &file, &line), -ENOENT);
    assert_int_equal(gopcln_lookup(t, 0x100f, &name, &file, &line), -ENOENT);
    gopcln_close(t);
    free(buf);
}

/* --- debuginfod (driven by tests/e2e/symbolize_debuginfod.sh) --------------------- */

static void test_debuginfod(void **state)
{
    (void)state;
    const char *bin = getenv("CPROF_TEST_DEBUGINFOD_BIN");
    if (!bin || !getenv("DEBUGINFOD_URLS"))
        skip();
    run_t r;
    assert_int_equal(run_prog(bin, &r), 0);
    check_c_program(&r);

    /* The executable itself gone: fetched from debuginfod by build id. */
    profile_t *p = make_profile(&r);
    p->mappings[0].filename = profile_intern(p, "/nonexistent/where/it/ran");
    assert_int_equal(symbolize_capture(p, NULL, NULL), 0);
    assert_string_equal(captured, "");
    expect_frame(p, site_loc(p, &r, "inline"), 1, "outer_func", prog_c,
                 marker_line(prog_c, "@outer-call"));
    assert_string_equal(p->strings[p->mappings[0].filename], "/nonexistent/where/it/ran");
    profile_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_c_pie_O1),
        cmocka_unit_test(test_c_pie_O2),
        cmocka_unit_test(test_c_nopie),
        cmocka_unit_test(test_c_symtab_only),
        cmocka_unit_test(test_libc_dynsym),
        cmocka_unit_test(test_libc_debuginfo),
        cmocka_unit_test(test_mapping_conventions),
        cmocka_unit_test(test_stripped_debuglink),
        cmocka_unit_test(test_stripped_build_id_dir),
        cmocka_unit_test(test_cxx_demangle),
        cmocka_unit_test(test_demangle_modes),
        cmocka_unit_test(test_missing_binary),
        cmocka_unit_test(test_build_id_mismatch),
        cmocka_unit_test(test_binary_override),
        cmocka_unit_test(test_pprof_binary_path),
        cmocka_unit_test(test_modes),
        cmocka_unit_test(test_many_locations),
        cmocka_unit_test(test_gopclntab_hostile),
        cmocka_unit_test(test_debuginfod),
    };
    if (getenv("CPROF_TEST_DEBUGINFOD_BIN"))
        cmocka_set_test_filter("test_debuginfod");
    return cmocka_run_group_tests(tests, setup, teardown);
}
