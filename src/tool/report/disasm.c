/* disasm.c — annotated assembly from nm and objdump (see disasm.h).
 *
 * Why binutils' programs rather than a disassembler library: go tool pprof
 * runs exactly these, so the symbol ranges, the instruction text and the
 * file:line marks are the ones it prints, and the oracle tests compare
 * byte for byte; objdump also reads separate debug files for the lines. */
#include "tool/report/disasm.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "base/path.h"
#include "tool/graph/measure.h"
#include "tool/report/dot.h"
#include "tool/symbolize/demangle.h"
#include "tool/symbolize/elfobj.h"

int64_t disasm_flat(const disasm_inst_t *i)
{
    return i->flat_div ? i->flat / i->flat_div : i->flat;
}

int64_t disasm_cum(const disasm_inst_t *i)
{
    return i->cum_div ? i->cum / i->cum_div : i->cum;
}

/* Runs a binutils program; its stdout, or NULL with pprof's message. */
static char *run(char *const argv[], char *err, size_t errlen)
{
    sbuf_t out = {0}, errs = {0};
    int st = dot_run_filter(argv, NULL, 0, &out, &errs);
    if (st == -ENOENT) {
        snprintf(err, errlen, "cannot disasm: no %s tool available", argv[0]);
    } else if (st < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0 || out.oom) {
        sbuf_t a = {0};
        for (int i = 0; argv[i]; i++)
            sb_printf(&a, "%s%s", i ? " " : "[", argv[i]);
        snprintf(err, errlen, "%s]: %s", sb_cstr(&a),
                 st < 0 ? strerror(-st) : WIFEXITED(st) ? "exit status" : "signal");
        if (st >= 0 && WIFEXITED(st))
            snprintf(err + strlen(err), errlen - strlen(err), " %d", WEXITSTATUS(st));
        sb_free(&a);
    } else {
        sb_free(&errs);
        return sb_steal(&out);
    }
    sb_free(&out);
    sb_free(&errs);
    return NULL;
}

/* --- symbols: pprof's findSymbols over `nm -n` ---------------------------------- */

static bool is_xdigit(char c)
{
    return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f');
}

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}


typedef struct {
    disasm_sym_t *v;
    size_t n, cap;
} syms_t;

static bool push_sym(syms_t *s, const disasm_sym_t *x)
{
    if (s->n == s->cap) {
        size_t c = s->cap ? 2 * s->cap : 16;
        disasm_sym_t *nv = realloc(s->v, c * sizeof(*nv));
        if (!nv)
            return false;
        s->v = nv;
        s->cap = c;
    }
    s->v[s->n++] = *x;
    return true;
}

/* The next line of text (cut in place), without surrounding spaces; *rest
 * moves past it. NULL at the end. */
static char *next_line(char **rest)
{
    char *l = *rest;
    if (!l || !*l)
        return NULL;
    char *nl = strchr(l, '\n');
    if (nl)
        *nl = '\0';
    *rest = nl ? nl + 1 : NULL;
    while (is_space(*l))
        l++;
    char *t = l + strlen(l);
    while (t > l && is_space(t[-1]))
        *--t = '\0';
    return l;
}

/* pprof's matchSymbol: the names of the group if it holds address, else the
 * first name that matches (as written, or one of its demangled forms). */
static char **match_group(char **names, size_t n, uint64_t start, uint64_t end, const rx_t *rx,
                          bool has_addr, uint64_t addr, size_t *nout)
{
    char **out = NULL;
    if (has_addr && addr >= start && addr <= end) {
        if ((out = calloc(n, sizeof(*out))))
            for (size_t i = 0; i < n; i++)
                out[i] = strdup(names[i]);
        *nout = n;
        return out;
    }
    static const demangle_mode_t modes[] = {DEMANGLE_FULL, DEMANGLE_TEMPLATES, DEMANGLE_DEFAULT};
    for (size_t i = 0; i < n; i++) {
        char *hit = rx_match(rx, names[i]) ? strdup(names[i]) : NULL;
        for (size_t m = 0; !hit && m < sizeof(modes) / sizeof(modes[0]); m++) {
            char *d = demangle_is_mangled(names[i]) ? demangle_symbol(names[i], modes[m]) : NULL;
            if (d && rx_match(rx, d))
                hit = d;
            else
                free(d);
        }
        if (hit && (out = calloc(1, sizeof(*out)))) {
            out[0] = hit;
            *nout = 1;
            return out;
        }
        free(hit);
    }
    return NULL;
}

/* Parses `nm -n` output ("ADDR TYPE NAME" lines, by address) into groups
 * of names at one address; a group spans to the next address - 1, the last
 * one to the end of the address space (pprof's findSymbols). */
static int find_symbols(char *nm, const profile_mapping_t *m, const char *path, uint64_t bias,
                        const rx_t *rx, bool has_addr, uint64_t addr, syms_t *out)
{
    struct nmsym {
        uint64_t addr;
        char *name;
    } *v = NULL;
    size_t n = 0, cap = 0;
    for (char *rest = nm, *l; (l = next_line(&rest));) {
        char *e;
        uint64_t a = strtoull(l, &e, 16);
        if (e > l && is_space(*e)) {
            while (is_space(*e))
                e++;
            if (*e && is_space(e[1])) {
                e++;
                while (is_space(*e))
                    e++;
                if (n == cap) {
                    cap = cap ? 2 * cap : 256;
                    struct nmsym *nv = realloc(v, cap * sizeof(*nv));
                    if (!nv) {
                        free(v);
                        return -ENOMEM;
                    }
                    v = nv;
                }
                v[n++] = (struct nmsym){a, e};
            }
        }
    }
    int rc = 0;
    char **names = malloc((n + 1) * sizeof(*names));
    for (size_t i = 0, j; names && rc == 0 && i < n; i = j) {
        for (j = i; j < n && v[j].addr == v[i].addr; j++)
            names[j - i] = v[j].name;
        uint64_t end = j < n ? v[j].addr - 1 : UINT64_MAX;
        size_t nm_out = 0;
        char **hit = match_group(names, j - i, v[i].addr, end, rx, has_addr, addr, &nm_out);
        disasm_sym_t s = {.names = hit, .n_names = nm_out, .start = v[i].addr, .end = end,
                          .path = path, .mapping = m, .bias = bias};
        if (hit && !push_sym(out, &s))
            rc = -ENOMEM;
    }
    if (!names)
        rc = -ENOMEM;
    free(names);
    free(v);
    return rc;
}

/* --- objdump: pprof's disassemble ------------------------------------------------- */

static int parse_objdump(char *text, disasm_inst_t **out, size_t *nout)
{
    char *function = NULL, *file = NULL;
    int64_t line = 0;
    disasm_inst_t *v = NULL;
    size_t n = 0, cap = 0;
    for (char *rest = text, *l; (l = next_line(&rest));) {
        /* ^([[:xdigit:]]+):\s+(.*) — an instruction */
        char *p = l;
        while (is_xdigit(*p))
            p++;
        if (p > l && *p == ':' && is_space(p[1])) {
            char *txt = p + 1;
            while (is_space(*txt))
                txt++;
            if (n == cap) {
                cap = cap ? 2 * cap : 64;
                disasm_inst_t *nv = realloc(v, cap * sizeof(*nv));
                if (!nv)
                    goto oom;
                v = nv;
            }
            v[n++] = (disasm_inst_t){.addr = strtoull(l, NULL, 16), .text = strdup(txt),
                                     .function = function ? strdup(function) : NULL,
                                     .file = file ? strdup(file) : NULL, .line = line};
            continue;
        }
        char *q = l;
        if (*q == ';')
            q++;
        if (is_space(*q))
            q++;
        /* ^;?\s?(.*):([0-9]+) — a source line: the last ':' before digits */
        char *colon = NULL;
        for (char *c = strchr(q, ':'); c; c = strchr(c + 1, ':'))
            if (c[1] >= '0' && c[1] <= '9')
                colon = c;
        if (colon) {
            free(file);
            file = strndup(q, (size_t)(colon - q));
            line = strtoll(colon + 1, NULL, 10);
            continue;
        }
        /* ^;?\s?(\S.*)\(\): — a function, or LLVM's ^([[:xdigit:]]+)?\s?(.*): */
        char *fn = NULL;
        for (char *c = strstr(q, "():"); c; c = strstr(c + 1, "():"))
            fn = c;
        free(function);
        function = NULL;
        if (fn && fn > q && !is_space(*q)) {
            function = strndup(q, (size_t)(fn - q));
        } else if ((colon = strrchr(l, ':'))) {
            char *s = l;
            while (is_xdigit(*s) && s < colon)
                s++;
            if (is_space(*s) && s < colon)
                s++;
            function = strndup(s, (size_t)(colon - s));
        } else {
            free(file);
            file = NULL;
            line = 0;
        }
    }
    free(function);
    free(file);
    *out = v;
    *nout = n;
    return 0;
oom:
    free(function);
    free(file);
    for (size_t i = 0; i < n; i++) {
        free(v[i].text);
        free(v[i].function);
        free(v[i].file);
    }
    free(v);
    return -ENOMEM;
}

/* --- the report ----------------------------------------------------------------- */

typedef struct {
    uint32_t node;
    uint64_t addr; /* file address */
} hit_t;

static int by_addr(const void *a, const void *b)
{
    const hit_t *x = a, *y = b;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int by_name(const void *a, const void *b)
{
    const disasm_sym_t *x = a, *y = b;
    unsigned char cx = (unsigned char)x->names[0][0], cy = (unsigned char)y->names[0][0];
    if (cx != cy)
        return cx < cy ? -1 : 1;
    return x->start < y->start ? -1 : x->start > y->start;
}

void disasm_free(disasm_sym_t *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        for (size_t k = 0; k < s[i].n_names; k++)
            free(s[i].names[k]);
        free(s[i].names);
        for (size_t k = 0; k < s[i].n_insts; k++) {
            free(s[i].insts[k].text);
            free(s[i].insts[k].function);
            free(s[i].insts[k].file);
        }
        free(s[i].insts);
    }
    free(s);
}

static bool in_mapping(const profile_mapping_t *m, uint64_t a)
{
    return a >= m->memory_start && a < m->memory_limit;
}

static int disasm_collect(report_t *r, graph_t *g, disasm_sym_t **out, size_t *nout, char *err,
                   size_t errlen)
{
    work_t *w = r->w;
    const profile_t *p = w->p;
    const char *pat = rx_pattern(r->symbol);
    char *end;
    uint64_t addr = strtoull(pat, &end, 0);
    bool has_addr = *pat && !*end && pat[0] != '-' && pat[0] != '+';
    syms_t all = {0};
    hit_t *hits = calloc(g->n_sel + 1, sizeof(*hits));
    int rc = hits ? 0 : -ENOMEM;

    for (size_t mi = 0; rc == 0 && mi < p->n_mappings; mi++) {
        const profile_mapping_t *m = &p->mappings[mi];
        const char *file = p->strings[m->filename];
        bool has = false;
        for (size_t i = 0; !has && i < g->n_sel; i++) {
            const gnode_t *nd = &g->nodes[g->sel[i]];
            const char *pn = graph_node_name(g, g->sel[i]);
            has = nd->info.objfile && strcmp(work_str(w, nd->info.objfile), file) == 0 && pn &&
                  rx_match(r->symbol, pn);
        }
        if (!has && !(has_addr && addr >= m->memory_start && addr <= m->memory_limit))
            continue;
        elfobj_t *o;
        char e[512];
        uint64_t bias = 0;
        if (elfobj_open(file, NULL, &o, e, sizeof(e)) < 0 ||
            (elfobj_bias(o, m->memory_start, m->memory_limit, m->file_offset, &bias, e, sizeof(e)) < 0 &&
             (elfobj_close(o), true))) {
            fprintf(r->out, "%s\n", e); /* as pprof: said, and the mapping skipped */
            continue;
        }
        char *nm = run((char *[]){"nm", "-n", (char *)file, NULL}, e, sizeof(e));
        if (nm && !strchr(nm, '\n')) { /* stripped: its debug file has the symbols */
            const char *dbg = elfobj_debug_file(o);
            if (dbg) {
                free(nm);
                nm = run((char *[]){"nm", "-n", (char *)dbg, NULL}, e, sizeof(e));
            }
        }
        elfobj_close(o);
        if (!nm)
            continue;
        rc = find_symbols(nm, m, file, bias, r->symbol, has_addr, addr - bias, &all);
        free(nm);
    }

    /* Keep the symbols with samples, as pprof's nodesPerSymbol. */
    size_t kept = 0;
    for (size_t k = 0; rc == 0 && k < all.n; k++) {
        disasm_sym_t *s = &all.v[k];
        size_t nh = 0;
        int64_t flat = 0, cum = 0;
        for (size_t i = 0; i < g->n_sel; i++) {
            const gnode_t *nd = &g->nodes[g->sel[i]];
            uint64_t a = nd->info.address - s->bias;
            if (in_mapping(s->mapping, nd->info.address) && a >= s->start && a < s->end) {
                hits[nh++] = (hit_t){g->sel[i], a};
                flat += nd->flat;
                cum += nd->cum;
            }
        }
        if (nh == 0) {
            for (size_t x = 0; x < s->n_names; x++)
                free(s->names[x]);
            free(s->names);
            continue;
        }
        s->flat = flat;
        s->cum = cum;
        /* pprof's annotateAssembly: samples by address, each summed into
         * the instruction it falls in (before the next one starts). */
        qsort(hits, nh, sizeof(*hits), by_addr);
        char e[1024], a1[32], a2[32];
        snprintf(a1, sizeof(a1), "--start-address=%#llx", (unsigned long long)s->start);
        snprintf(a2, sizeof(a2), "--stop-address=%#llx", (unsigned long long)s->end);
        char *argv[11] = {"objdump", "--disassemble", "--demangle", "--no-show-raw-insn",
                          "--line-numbers", a1, a2};
        int ac = 7;
        if (r->cfg->intel_syntax) {
            argv[ac++] = "-M";
            argv[ac++] = "intel";
        }
        argv[ac++] = (char *)s->path;
        char *text = run(argv, e, sizeof(e));
        if (!text) {
            snprintf(err, errlen, "%s", e);
            rc = -EIO;
            all.v[kept++] = *s;
            break;
        }
        rc = parse_objdump(text, &s->insts, &s->n_insts);
        free(text);
        size_t h = 0;
        for (size_t i = 0; rc == 0 && i < s->n_insts; i++) {
            disasm_inst_t *in = &s->insts[i];
            uint64_t next = i + 1 < s->n_insts ? s->insts[i + 1].addr : UINT64_MAX;
            for (; h < nh && hits[h].addr < next; h++) {
                const gnode_t *nd = &g->nodes[hits[h].node];
                in->flat += nd->flat;
                in->flat_div += nd->flat_div;
                in->cum += nd->cum;
                in->cum_div += nd->cum_div;
                if (!in->file && nd->info.file)
                    in->file = strdup(work_str(w, nd->info.file));
                if (!in->line && nd->info.lineno)
                    in->line = nd->info.lineno;
                if (!in->function && nd->info.name)
                    in->function = strdup(work_str(w, nd->info.name));
            }
        }
        all.v[kept++] = *s;
    }
    free(hits);
    if (rc == 0 && kept == 0) {
        snprintf(err, errlen, "no matches found for regexp: %s", pat);
        rc = -ENOENT;
    } else if (rc == -ENOMEM) {
        snprintf(err, errlen, "out of memory");
    }
    if (rc < 0) {
        disasm_free(all.v, kept);
        return rc;
    }
    qsort(all.v, kept, sizeof(*all.v), by_name);
    *out = all.v;
    *nout = kept;
    return 0;
}

static const char *value_or_dot(const report_t *r, int64_t v, char *buf, size_t n)
{
    return v ? report_format_value(r, v, buf, n) : ".";
}

int disasm_symbols(report_t *r, disasm_sym_t **out, size_t *n, char *err, size_t errlen)
{
    graph_opts_t go = {.value_index = r->value_index,
                       .mean_index = r->mean_index,
                       .obj_names = true,
                       .drop_negative = r->cfg->drop_negative};
    graph_t *g;
    if (graph_new(r->w, &go, &g) < 0 || graph_build(g, NULL) < 0) {
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    int rc = disasm_collect(r, g, out, n, err, errlen);
    graph_free(g);
    return rc;
}

int report_disasm(report_t *r, char *err, size_t errlen)
{
    disasm_sym_t *syms;
    size_t n;
    int rc = disasm_symbols(r, &syms, &n, err, errlen);
    if (rc < 0)
        return rc;
    char a[64], b[64], pct[32];
    fprintf(r->out, "Total: %s\n", report_format_value(r, r->total, a, sizeof(a)));
    for (size_t k = 0; k < n; k++) {
        const disasm_sym_t *s = &syms[k];
        fprintf(r->out, "ROUTINE ======================== %s\n", s->names[0]);
        for (size_t x = 1; x < s->n_names; x++)
            fprintf(r->out, "    AKA ======================== %s\n", s->names[x]);
        fprintf(r->out, "%10s %10s (flat, cum) %s of Total\n", report_format_value(r, s->flat, a, sizeof(a)),
                report_format_value(r, s->cum, b, sizeof(b)),
                measure_percentage(pct, sizeof(pct), s->cum, r->total));
        const char *function = "";
        char file[4096] = "", fb[4096];
        int64_t line = 0;
        for (size_t i = 0; i < s->n_insts; i++) {
            const disasm_inst_t *in = &s->insts[i];
            const char *fn = in->function ? in->function : "";
            const char *fl = in->file && *in->file ? path_base(in->file, fb, sizeof(fb)) : "";
            sbuf_t loc = {0};
            if (strcmp(fn, function) != 0 || strcmp(fl, file) != 0 || in->line != line) {
                function = fn;
                snprintf(file, sizeof(file), "%s", fl);
                line = in->line;
                if (*fn)
                    sb_printf(&loc, "%s ", fn);
                if (*fl) {
                    sb_puts(&loc, fl);
                    if (line)
                        sb_printf(&loc, ":%lld", (long long)line);
                }
            }
            const char *fv = value_or_dot(r, disasm_flat(in), a, sizeof(a));
            const char *cv = value_or_dot(r, disasm_cum(in), b, sizeof(b));
            if (loc.len == 0)
                fprintf(r->out, "%10s %10s %10llx: %s\n", fv, cv, (unsigned long long)in->addr, in->text);
            else if (strlen(in->text) < 40)
                fprintf(r->out, "%10s %10s %10llx: %-40s;%s\n", fv, cv, (unsigned long long)in->addr,
                        in->text, sb_cstr(&loc));
            else
                fprintf(r->out, "%74s;%s\n%10s %10s %10llx: %s\n", "", sb_cstr(&loc), fv, cv,
                        (unsigned long long)in->addr, in->text);
            sb_free(&loc);
        }
    }
    disasm_free(syms, n);
    return 0;
}
