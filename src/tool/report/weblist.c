/* weblist.c — -weblist: source lines with their instructions (see weblist.h).
 *
 * Each function comes from disasm_symbols: its instructions and their
 * values. Each instruction is shown under the line of the function itself
 * that it belongs to: the outermost frame the object's DWARF gives for it
 * (code inlined from elsewhere goes under the line of its call), else the
 * line objdump printed. The function's file is that of its first
 * instruction; its lines run from the lowest to the highest line of that
 * file among its instructions, and an instruction placed in another file
 * goes under the line that precedes it. The layout follows pprof's
 * printFunctionHeader/printFunctionSourceLine/printNested. */
#include "tool/report/weblist.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "assets.h"
#include "base/path.h"
#include "tool/graph/measure.h"
#include "tool/report/disasm.h"
#include "tool/report/list.h"
#include "tool/symbolize/elfobj.h"

const char *weblist_css(void)
{
    return (const char *)asset_weblist_css;
}

const char *weblist_js(void)
{
    return (const char *)asset_weblist_js;
}

static const char *value_or_dot(const report_t *r, int64_t v, char *buf, size_t n)
{
    return v ? report_format_value(r, v, buf, n) : ".";
}

/* The source file's lines (lines[0] unused), or NULL. */
static char **read_source(const report_t *r, const char *path, const char *search, size_t *n)
{
    char e[4300];
    FILE *f = list_open_source(path, search, r->cfg->trim_path, e, sizeof(e));
    if (!f)
        return NULL;
    char **lines = calloc(1, sizeof(*lines)), *line = NULL;
    size_t cap = 0, count = 1;
    ssize_t len;
    while (lines && (len = getline(&line, &cap, f)) >= 0) {
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
            line[--len] = '\0';
        char **nl = realloc(lines, (count + 1) * sizeof(*nl));
        if (!nl)
            break;
        lines = nl;
        lines[count++] = strdup(line);
    }
    free(line);
    fclose(f);
    *n = count;
    return lines;
}

static void print_inst(const report_t *r, sbuf_t *b, const disasm_inst_t *in, int indent)
{
    char a[64], c[64];
    sbuf_t text = {0};
    sb_printf(&text, "%*s%s", indent + 4, "", in->text);
    while (text.len < 80)
        sb_putc(&text, ' '); /* pprof's rightPad(text, 80) */
    sb_printf(b, " %8s %10s %10s %8llx: ", "", value_or_dot(r, disasm_flat(in), a, sizeof(a)),
              value_or_dot(r, disasm_cum(in), c, sizeof(c)), (unsigned long long)in->addr);
    sb_html(b, sb_cstr(&text));
    sb_puts(b, " <span class=unimportant>");
    if (in->file) {
        char fb[4096];
        sb_html(b, *in->file ? path_base(in->file, fb, sizeof(fb)) : "");
        sb_printf(b, ":%lld", (long long)in->line);
    }
    sb_puts(b, "</span>\n");
    sb_free(&text);
}

static void print_function(const report_t *r, sbuf_t *b, const disasm_sym_t *s, const char *search)
{
    char a[64], c[64], pct[32];
    /* Each instruction's file and line in its outermost function. */
    const char **ifile = calloc(s->n_insts + 1, sizeof(*ifile));
    int64_t *iline = calloc(s->n_insts + 1, sizeof(*iline));
    elfobj_t *o = NULL;
    char e[512];
    if (elfobj_open(s->path, NULL, &o, e, sizeof(e)) < 0)
        o = NULL;
    for (size_t i = 0; ifile && iline && i < s->n_insts; i++) {
        elfobj_frame_t fr[32];
        int n = o ? elfobj_lookup(o, s->insts[i].addr, 0, fr, 32) : 0;
        if (n > 0 && fr[n - 1].file && fr[n - 1].line > 0) {
            ifile[i] = fr[n - 1].file;
            iline[i] = fr[n - 1].line;
        } else {
            ifile[i] = s->insts[i].file;
            iline[i] = s->insts[i].line;
        }
    }
    const char *file = NULL;
    for (size_t i = 0; ifile && i < s->n_insts && !file; i++)
        file = ifile[i];
    sb_puts(b, "<h2>");
    sb_html(b, s->names[0]);
    sb_puts(b, "</h2><p class=\"filename\">");
    sb_html(b, file ? file : s->path);
    sb_printf(b, "</p>\n<pre class=\"weblist\">\n  Total:  %10s %10s (flat, cum) %s\n",
              report_format_value(r, s->flat, a, sizeof(a)), report_format_value(r, s->cum, c, sizeof(c)),
              measure_percentage(pct, sizeof(pct), s->cum, r->total));
    /* Each instruction's line in the function's file. */
    int64_t *at = calloc(s->n_insts + 1, sizeof(*at)), lo = 0, hi = 0, last = 0;
    for (size_t i = 0; at && ifile && iline && i < s->n_insts; i++) {
        if (file && ifile[i] && strcmp(ifile[i], file) == 0 && iline[i] > 0)
            last = iline[i];
        at[i] = last;
        if (last && (!lo || last < lo))
            lo = last;
        if (last > hi)
            hi = last;
    }
    /* Instructions before any line of the file go under its first line. */
    for (size_t i = 0; at && i < s->n_insts; i++)
        if (!at[i])
            at[i] = lo;
    size_t nsrc = 0;
    char **src = file ? read_source(r, file, search, &nsrc) : NULL;
    for (int64_t ln = lo; at && ln && ln <= hi; ln++) {
        int64_t flat = 0, cum = 0;
        size_t nin = 0;
        for (size_t i = 0; i < s->n_insts; i++)
            if (at[i] == ln) {
                flat += disasm_flat(&s->insts[i]);
                cum += disasm_cum(&s->insts[i]);
                nin++;
            }
        const char *text = src && (size_t)ln < nsrc && src[ln] ? src[ln] : "";
        sb_printf(b, "<span class=line> %6lld</span> <span class=%s>  %10s %10s %8s  ", (long long)ln,
                  nin ? "livesrc" : "nop", value_or_dot(r, flat, a, sizeof(a)),
                  value_or_dot(r, cum, c, sizeof(c)), "");
        sb_html(b, text);
        sb_puts(b, " </span>");
        if (nin) {
            int indent = 0;
            while (text[indent] == ' ' || text[indent] == '\t')
                indent++;
            sb_puts(b, "<span class=asm>");
            for (size_t i = 0; i < s->n_insts; i++)
                if (at[i] == ln)
                    print_inst(r, b, &s->insts[i], indent);
            sb_puts(b, "</span>");
        }
        sb_putc(b, '\n');
    }
    sb_puts(b, "</pre>\n");
    for (size_t i = 1; src && i < nsrc; i++)
        free(src[i]);
    free(src);
    free(at);
    free(ifile);
    free(iline);
    elfobj_close(o);
}

int weblist_body(report_t *r, sbuf_t *b, char *err, size_t errlen)
{
    disasm_sym_t *syms;
    size_t n;
    int rc = disasm_symbols(r, &syms, &n, err, errlen);
    if (rc < 0)
        return rc;
    char cwd[4096];
    const char *search = r->cfg->source_path;
    if (!search || !*search)
        search = getcwd(cwd, sizeof(cwd)) ? cwd : ".";
    for (size_t i = 0; i < n; i++)
        print_function(r, b, &syms[i], search);
    disasm_free(syms, n);
    if (b->oom) {
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    return 0;
}

int report_weblist(report_t *r, char *err, size_t errlen)
{
    sbuf_t body = {0}, b = {0};
    int rc = weblist_body(r, &body, err, errlen);
    if (rc < 0) {
        sb_free(&body);
        return rc;
    }
    char a[64];
    sb_printf(&b, "<!DOCTYPE html>\n<html>\n<head>\n<meta charset=\"UTF-8\">\n<title>Pprof listing</title>\n"
                  "<style>\n%s</style>\n<script>\n%s</script>\n</head>\n<body>\n\n<div class=\"legend\">",
              weblist_css(), weblist_js());
    sbuf_t labels = {0};
    report_profile_labels(r, &labels);
    for (const char *l = sb_cstr(&labels); *l;) {
        const char *e = strchr(l, '\n');
        size_t len = e ? (size_t)(e - l) : strlen(l);
        sb_html_n(&b, l, len);
        sb_puts(&b, "<br>\n");
        l += len + (e ? 1 : 0);
    }
    sb_free(&labels);
    sb_printf(&b, "Total: %s</div>\n", report_format_value(r, r->total, a, sizeof(a)));
    sb_putn(&b, body.s ? body.s : "", body.len);
    sb_puts(&b, "</body>\n</html>\n");
    sb_free(&body);
    if (b.oom) {
        sb_free(&b);
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    if (fwrite(b.s, 1, b.len, r->out) != b.len) {
        snprintf(err, errlen, "writing report: %s", strerror(errno));
        rc = -EIO;
    }
    sb_free(&b);
    return rc;
}
