/* pprof.c — the /debug/pprof/ endpoints (see pprof.h), following Go 1.19's
 * net/http/pprof/pprof.go handler by handler: Index, Cmdline, Profile,
 * Symbol, and handler(name) with serveDeltaProfile for heap and allocs.
 * Where cprof adds something Go does not have (the token, the method
 * check, strict numbers), it answers in Go's error style: text/plain, one
 * line, X-Go-Pprof: 1. */
#include "pprof.h"
#include "base/fdio.h"

#include "base/sbuf.h"
#include "profile/parse.h"
#include "profile/merge.h"
#include "profile/profile.h"
#include "query.h"
#include "runtime/symtab.h"
#include "stream.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define PREFIX "/debug/pprof/"
#define TEXT_PLAIN "text/plain; charset=utf-8"
#define OCTETS "application/octet-stream"
#define GET_HEAD "GET, HEAD"
#define GET_HEAD_POST "GET, HEAD, POST"
/* Go reads the symbol request through a 4096-byte bufio.Reader: a longer
 * word ends the parse with bufio.ErrBufferFull. */
#define SYMBOL_WORD_MAX 4096

static const cprof_http_ops_t *ops;
static char *token;
static size_t token_len;
static symtab_t *symbols; /* built on the first symbol request */
static int waiting;       /* delta profiles in progress */

/* --- replies -------------------------------------------------------------- */

static int64_t realtime_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void pprof_reply_clear(pprof_reply_t *rep)
{
    free(rep->body);
    free(rep->location);
    if (rep->fd >= 0)
        close(rep->fd);
    memset(rep, 0, sizeof(*rep));
    rep->fd = -1;
}

static void reply_text(pprof_reply_t *out, int status, const char *type, sbuf_t *b)
{
    out->status = status;
    out->content_type = type;
    out->nosniff = true;
    if (b->oom) {
        sb_free(b);
        out->status = 500;
        out->content_type = TEXT_PLAIN;
        out->go_error = true;
        sb_puts(b, "out of memory\n");
    }
    out->body = b->s;
    out->len = b->len;
    *b = (sbuf_t){0};
}

/* Go's serveError: text/plain, X-Go-Pprof, no Content-Disposition, the
 * text and a newline. */
static void serve_error(pprof_reply_t *out, int status, const char *txt)
{
    sbuf_t b = {0};
    sb_puts(&b, txt);
    sb_puts(&b, "\n");
    reply_text(out, status, TEXT_PLAIN, &b);
    out->disposition[0] = '\0';
    out->go_error = true;
}

/* Go's http.NotFound, for paths outside /debug/pprof/. */
static void not_found(pprof_reply_t *out)
{
    sbuf_t b = {0};
    sb_puts(&b, "404 page not found\n");
    reply_text(out, 404, TEXT_PLAIN, &b);
}

/* Go's ServeMux redirect (301 with a small HTML body). */
static void redirect(pprof_reply_t *out, const char *path, const char *query)
{
    sbuf_t loc = {0}, b = {0};
    sb_puts(&loc, path);
    if (query && *query) {
        sb_puts(&loc, "?");
        sb_puts(&loc, query);
    }
    sb_puts(&b, "<a href=\"");
    sb_html(&b, sb_cstr(&loc));
    sb_puts(&b, "\">Moved Permanently</a>.\n\n");
    reply_text(out, 301, "text/html; charset=utf-8", &b);
    out->nosniff = false;
    out->location = loc.s;
}

/* A new memfd for a body written through the runtime's fd writers. */
static int body_fd(void)
{
    return memfd_create("cprof-http", MFD_CLOEXEC);
}

/* Turns a written memfd into the reply body. */
static int reply_fd(pprof_reply_t *out, int fd, const char *type, const char *filename)
{
    off_t len = lseek(fd, 0, SEEK_END);
    if (len < 0) {
        close(fd);
        return -errno;
    }
    out->status = 200;
    out->content_type = type;
    out->nosniff = true;
    out->fd = fd;
    out->len = (size_t)len;
    if (filename)
        snprintf(out->disposition, sizeof(out->disposition), "%s", filename);
    return 0;
}

/* --- numbers in the query ---------------------------------------------------- */

/* An integer parameter: absent or empty leaves *v; 0, or -1 after a 400. */
static int int_param(const char *query, const char *name, int64_t *v, pprof_reply_t *out)
{
    char *s = query_get(query, name);
    if (!s)
        return 0;
    bool ok = !*s || query_atoi(s, v);
    free(s);
    if (ok)
        return 0;
    char msg[96];
    snprintf(msg, sizeof(msg), "invalid value for \"%s\" - must be an integer", name);
    serve_error(out, 400, msg);
    return -1;
}

/* --- the profiles ------------------------------------------------------------- */

typedef struct page page_t;

struct pprof_req {
    /* symbol */
    sbuf_t out;
    char word[SYMBOL_WORD_MAX + 1];
    size_t word_len;
    bool word_full; /* Go's ErrBufferFull: the rest of the body is ignored */
    size_t body_len;
    /* delta profile */
    bool have_base;
    heap_snapshot_t base;
    int64_t base_ns;
    /* the kind of the delta profile or of the session */
    const profile_kind_t *kind;
    /* CPU profile or trace: the runtime's session (id > 0 while it runs)
     * and the memfd it is written to */
    int64_t sess_id;
    int sess_fd;
    /* a session streamed as it records (PROFILE_P_STREAM), or NULL */
    stream_t *stream;
    /* delta of a profile written whole (threads, threadcreate, mutex,
     * block): the first profile, decoded */
    profile_t *sp_base;
};

typedef struct {
    int64_t seconds; /* delta (or CPU) profile duration; 0 for a profile now */
    int64_t wait_ms; /* a CPU profile's or trace's duration */
    int64_t debug;
    int64_t reset;
} params_t;

/* One request to one endpoint: a page of the server's own or a kind. */
typedef struct {
    pprof_req_t *r;
    const profile_kind_t *k; /* NULL for a page */
    const pprof_request_t *in;
    params_t prm;
    pprof_reply_t *out;
    int64_t *until_ms; /* for PPROF_WAIT */
} call_t;

/* A path under /debug/pprof/ that is the server's own, not a profile
 * kind (see pages[]). */
struct page {
    const char *name;
    const char *desc; /* Go's profileDescriptions; NULL: not on the index page */
    pprof_action_t (*serve)(const call_t *c);
    bool post;        /* takes POST as well as GET and HEAD */
};

/* Go's Cmdline: os.Args joined with NUL bytes (no trailing NUL). */
static pprof_action_t serve_cmdline(const call_t *c)
{
    sbuf_t b = {0};
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        char chunk[4096];
        ssize_t n;
        while ((n = read(fd, chunk, sizeof(chunk))) > 0 || (n < 0 && errno == EINTR))
            if (n > 0)
                sb_putn(&b, chunk, (size_t)n);
        close(fd);
    }
    if (b.len > 0 && b.s[b.len - 1] == '\0')
        b.len--;
    reply_text(c->out, 200, TEXT_PLAIN, &b);
    return PPROF_REPLY;
}

/* Go's Profile and Trace handlers: start the session (StartCPUProfile,
 * trace.Start), sleep `seconds`, stop it; what it recorded is written to a
 * memfd, answered at the end of the wait (pprof_wait_end). One at a time,
 * as in Go: the runtime refuses a second session with -EBUSY. */
static pprof_action_t serve_session(const call_t *c)
{
    const profile_kind_t *s = c->k;
    int fd = -1, err = 0;
    int64_t id;
    if (s->params & PROFILE_P_STREAM) {
        c->r->stream = stream_open(s, &err);
        id = c->r->stream ? 1 : err;
    } else {
        fd = body_fd();
        id = fd < 0 ? -errno : s->start(fd);
    }
    if (id < 0) {
        if (fd >= 0)
            close(fd);
        char msg[160];
        snprintf(msg, sizeof(msg), "Could not enable %s: %s", s->enable,
                 id == -EBUSY ? s->busy : strerror((int)-id));
        serve_error(c->out, 500, msg);
        return PPROF_REPLY;
    }
    *c->until_ms = fdio_now_ms() + c->prm.wait_ms;
    if (c->r->stream) { /* Go's Trace: the headers now, the body as it records */
        c->out->status = 200;
        c->out->content_type = OCTETS;
        c->out->nosniff = true;
        snprintf(c->out->disposition, sizeof(c->out->disposition), "%s", s->name);
        return PPROF_STREAM;
    }
    c->r->kind = s;
    c->r->sess_id = id;
    c->r->sess_fd = fd;
    return PPROF_WAIT;
}

/* The end of a session's wait: stop it and answer with what it wrote. */
static void session_wait_end(pprof_req_t *r, bool cancelled, pprof_reply_t *out)
{
    int rc = r->kind->stop(r->sess_id, cancelled);
    int fd = r->sess_fd;
    const char *name = r->kind->name;
    r->sess_id = 0;
    r->sess_fd = -1;
    if (cancelled) {
        close(fd);
        serve_error(out, 500, "context canceled");
        return;
    }
    if (rc == 0)
        rc = reply_fd(out, fd, OCTETS, name);
    else
        close(fd);
    if (rc < 0)
        serve_error(out, 500, "failed to collect profile");
}

static int write_profile(int fd, const heap_snapshot_t *s, const profile_kind_t *k, int debug)
{
    if (debug)
        return ops->heap_write_text(fd, s);
    return ops->heap_write_proto(fd, s, k->sample_type);
}

static void serve_heap(const profile_kind_t *k, int debug, pprof_reply_t *out)
{
    const char *name = k->name;
    heap_snapshot_t s;
    int fd = body_fd();
    int rc = fd < 0 ? -errno : ops->heap_snapshot(&s);
    if (rc == 0) {
        rc = write_profile(fd, &s, k, debug);
        ops->heap_snapshot_free(&s);
    }
    if (rc == 0)
        rc = reply_fd(out, fd, debug ? TEXT_PLAIN : OCTETS, debug ? NULL : name);
    else if (fd >= 0)
        close(fd);
    if (rc < 0)
        serve_error(out, 500, "failed to collect profile");
}

/* serveDeltaProfile's checks, in Go's order: 0 when the request has no
 * seconds (serve the profile now), 1 with *seconds set for a valid delta,
 * -1 when an error reply has been made. */
static int delta_request(const char *query, pprof_reply_t *out, int64_t *seconds)
{
    char *sec = query_get(query, "seconds");
    if (!sec || !*sec) {
        free(sec);
        return 0;
    }
    int64_t n = 0, debug = 0;
    bool ok = query_atoi(sec, &n) && n > 0;
    free(sec);
    if (!ok) {
        serve_error(out, 400, "invalid value for \"seconds\" - must be a positive integer");
        return -1;
    }
    if (n >= PPROF_WRITE_TIMEOUT_S) {
        serve_error(out, 400, "profile duration exceeds server's WriteTimeout");
        return -1;
    }
    if (int_param(query, "debug", &debug, out) < 0)
        return -1;
    if (debug != 0) {
        serve_error(out, 400, "seconds and debug params are incompatible");
        return -1;
    }
    if (waiting >= PPROF_MAX_WAITING) {
        serve_error(out, 503, "too many delta profiles in progress");
        return -1;
    }
    *seconds = n;
    return 1;
}

/* heap?window=SPEC: the flight recorder's window (flightrec.h), cprof's
 * own parameter; Go's seconds=N keeps its delta meaning. */
static void serve_window(const char *spec, pprof_reply_t *out)
{
    int fd = body_fd();
    int rc = fd < 0 ? -errno : ops->heap_window(fd, spec);
    if (rc == 0)
        rc = reply_fd(out, fd, OCTETS, "heap");
    else if (fd >= 0)
        close(fd);
    if (rc == -EINVAL)
        serve_error(out, 400, "invalid value for \"window\" - must be START,END or LAST, each "
                              "a duration before now (90s) or unix seconds");
    else if (rc == -ENODATA)
        serve_error(out, 400, "no flight recorder: set CPROF_RECORD");
    else if (rc < 0)
        serve_error(out, 500, "failed to collect profile");
}

/* Go's handler(name).ServeHTTP for heap and allocs, with
 * serveDeltaProfile's checks in its order. */
static pprof_action_t serve_profile(const call_t *c)
{
    pprof_req_t *r = c->r;
    char *window = strcmp(c->k->name, "heap") == 0 ? query_get(c->in->query, "window") : NULL;
    if (window) {
        serve_window(window, c->out);
        free(window);
        return PPROF_REPLY;
    }
    if (c->prm.seconds) {
        if (ops->heap_snapshot(&r->base) < 0) {
            serve_error(c->out, 500, "failed to collect profile");
            return PPROF_REPLY;
        }
        r->have_base = true;
        r->base_ns = realtime_ns();
        r->kind = c->k;
        waiting++;
        *c->until_ms = fdio_now_ms() + c->prm.seconds * 1000;
        return PPROF_WAIT;
    }
    serve_heap(c->k, c->prm.debug != 0, c->out);
    return PPROF_REPLY;
}

/* Reads a written profile back, sets its time and duration as Go's
 * serveDeltaProfile does, and writes it again. */
static int set_duration(int fd, int64_t time_ns, int64_t duration_ns)
{
    off_t len = lseek(fd, 0, SEEK_END);
    if (len <= 0)
        return -EIO;
    uint8_t *data = malloc((size_t)len);
    if (!data)
        return -ENOMEM;
    int rc = pread(fd, data, (size_t)len, 0) == len ? 0 : -EIO;
    profile_t *p = NULL;
    char err[256];
    if (rc == 0)
        rc = profile_parse(data, (size_t)len, &p, err, sizeof(err));
    free(data);
    if (rc == 0) {
        p->time_nanos = time_ns;
        p->duration_nanos = duration_ns;
        if (ftruncate(fd, 0) < 0 || lseek(fd, 0, SEEK_SET) < 0)
            rc = -errno;
        else
            rc = profile_write_fd(p, fd);
    }
    profile_free(p);
    return rc;
}

/* --- threads (goroutine), threadcreate, mutex and block ---------------------------- */

/* Go's WriteTo(w, debug): goroutine's debug >= 2 is the per-thread dump,
 * any other debug > 0 the text form. */
static int sp_write(const profile_kind_t *sp, int fd, int64_t debug)
{
    return sp->write(fd, debug <= 0 ? 0 : debug >= 2 && sp->max_debug >= 2 ? 2 : 1);
}

/* The profile now, decoded (for delta profiles). */
static int sp_collect(const profile_kind_t *sp, profile_t **out)
{
    *out = NULL;
    int fd = body_fd();
    if (fd < 0)
        return -errno;
    int rc = sp_write(sp, fd, 0);
    off_t len = rc == 0 ? lseek(fd, 0, SEEK_END) : 0;
    uint8_t *data = rc == 0 && len > 0 ? malloc((size_t)len) : NULL;
    if (rc == 0)
        rc = data && pread(fd, data, (size_t)len, 0) == len ? 0 : -EIO;
    char err[256];
    if (rc == 0)
        rc = profile_parse(data, (size_t)len, out, err, sizeof(err));
    free(data);
    close(fd);
    return rc;
}

/* Go's handler(name).ServeHTTP and serveDeltaProfile for the profiles
 * that are stacks with counts (Go's profileSupportsDelta has them all). */
static pprof_action_t serve_stackprof(const call_t *c)
{
    pprof_req_t *r = c->r;
    pprof_reply_t *out = c->out;
    const profile_kind_t *sp = c->k;
    if (c->prm.seconds) {
        if (sp_collect(sp, &r->sp_base) < 0) {
            serve_error(out, 500, "failed to collect profile");
            return PPROF_REPLY;
        }
        r->kind = sp;
        waiting++;
        *c->until_ms = fdio_now_ms() + c->prm.seconds * 1000;
        return PPROF_WAIT;
    }
    int64_t debug = c->prm.debug;
    int fd = body_fd();
    int rc = fd < 0 ? -errno : sp_write(sp, fd, debug);
    if (rc == 0 && c->prm.reset && sp->reset)
        sp->reset();
    /* As Go: the content type follows debug != 0, the body debug > 0. */
    if (rc == 0)
        rc = reply_fd(out, fd, debug ? TEXT_PLAIN : OCTETS, debug ? NULL : sp->name);
    else if (fd >= 0)
        close(fd);
    if (rc < 0)
        serve_error(out, 500, "failed to collect profile");
    return PPROF_REPLY;
}

/* The second profile minus the first, timed as Go's serveDeltaProfile. */
static void sp_wait_end(pprof_req_t *r, bool cancelled, pprof_reply_t *out)
{
    profile_t *base = r->sp_base, *cur = NULL, *delta = NULL;
    r->sp_base = NULL;
    waiting--;
    if (cancelled) {
        profile_free(base);
        serve_error(out, 500, "context canceled");
        return;
    }
    if (sp_collect(r->kind, &cur) < 0) {
        profile_free(base);
        serve_error(out, 500, "failed to collect profile");
        return;
    }
    int64_t ts = cur->time_nanos, dur = cur->time_nanos - base->time_nanos;
    profile_scale(base, -1);
    profile_t *both[2] = {base, cur};
    char err[256], name[32];
    int rc = profile_merge(both, 2, &delta, err, sizeof(err));
    int fd = -1;
    if (rc == 0) {
        delta->time_nanos = ts;
        delta->duration_nanos = dur;
        fd = body_fd();
        rc = fd < 0 ? -errno : profile_write_fd(delta, fd);
    }
    snprintf(name, sizeof(name), "%s-delta", r->kind->name);
    if (rc == 0)
        rc = reply_fd(out, fd, OCTETS, name);
    else if (fd >= 0)
        close(fd);
    if (rc < 0)
        serve_error(out, 500, "failed to compute delta");
    profile_free(base);
    profile_free(cur);
    profile_free(delta);
}

void pprof_wait_end(pprof_req_t *r, bool cancelled, pprof_reply_t *out)
{
    if (r->sp_base) {
        sp_wait_end(r, cancelled, out);
        return;
    }
    if (r->sess_id > 0) {
        session_wait_end(r, cancelled, out);
        return;
    }
    if (!r->have_base) {
        serve_error(out, 500, "failed to collect profile");
        return;
    }
    waiting--;
    r->have_base = false;
    if (cancelled) {
        ops->heap_snapshot_free(&r->base);
        serve_error(out, 500, "context canceled");
        return;
    }
    heap_snapshot_t cur;
    int fd = body_fd();
    int rc = fd < 0 ? -errno : ops->heap_snapshot(&cur);
    int64_t now_ns = realtime_ns();
    if (rc == 0) {
        ops->heap_snapshot_subtract(&cur, &r->base);
        rc = write_profile(fd, &cur, r->kind, 0);
        ops->heap_snapshot_free(&cur);
    }
    ops->heap_snapshot_free(&r->base);
    if (rc == 0)
        rc = set_duration(fd, now_ns, now_ns - r->base_ns);
    char name[32];
    snprintf(name, sizeof(name), "%s-delta", r->kind->name);
    if (rc == 0)
        rc = reply_fd(out, fd, OCTETS, name);
    else if (fd >= 0)
        close(fd);
    if (rc < 0)
        serve_error(out, 500, "failed to compute delta");
}

/* --- streamed sessions ------------------------------------------------------- */

ssize_t pprof_stream_read(pprof_req_t *r, void *buf, size_t n)
{
    return stream_read(r->stream, buf, n);
}

int pprof_stream_fd(const pprof_req_t *r)
{
    return stream_fd(r->stream);
}

bool pprof_stream_end(pprof_req_t *r)
{
    if (stream_ending(r->stream))
        return false;
    stream_end(r->stream);
    return true;
}

/* --- symbol ----------------------------------------------------------------- */

static void symbol_word(pprof_req_t *r, const char *w, size_t n)
{
    uint64_t pc = 0;
    if (!query_parse_uint0(w, n, &pc) || pc == 0)
        return;
    if (!symbols || symtab_stale(symbols)) {
        symtab_free(symbols);
        symbols = symtab_build();
    }
    const char *name = symbols ? symtab_lookup(symbols, pc) : NULL;
    if (name)
        sb_printf(&r->out, "%#llx %s\n", (unsigned long long)pc, name);
}

/* Splits the request into '+'-separated words as Go's bufio loop does. */
static void symbol_feed(pprof_req_t *r, const char *data, size_t len)
{
    for (size_t i = 0; i < len && !r->word_full; i++) {
        if (data[i] == '+') {
            symbol_word(r, r->word, r->word_len);
            r->word_len = 0;
        } else if (r->word_len == SYMBOL_WORD_MAX) {
            r->word_full = true;
        } else {
            r->word[r->word_len++] = data[i];
        }
    }
}

static void symbol_finish(pprof_req_t *r, pprof_reply_t *out)
{
    if (r->word_full)
        sb_puts(&r->out, "reading request: bufio: buffer full\n");
    else
        symbol_word(r, r->word, r->word_len);
    reply_text(out, 200, TEXT_PLAIN, &r->out);
}

bool pprof_body(pprof_req_t *r, const char *data, size_t len)
{
    r->body_len += len;
    if (r->body_len > PPROF_MAX_BODY)
        return false;
    symbol_feed(r, data, len);
    return true;
}

void pprof_body_end(pprof_req_t *r, pprof_reply_t *out)
{
    symbol_finish(r, out);
}

/* --- requests ------------------------------------------------------------------ */

/* CPROF_HTTP_TOKEN, as "Authorization: Bearer T", "Authorization: Basic"
 * with T as the password (what a URL's user:password@ sends, so that
 * go tool pprof's follow-up symbol request carries it too), or ?token=T. */
static bool authorized(const pprof_request_t *in)
{
    if (!token)
        return true;
    const char *a = in->authorization;
    if (a && strncasecmp(a, "Bearer ", 7) == 0) {
        for (a += 7; *a == ' '; a++)
            ;
        if (query_secret_equal(a, strlen(a), token, token_len))
            return true;
    } else if (a && strncasecmp(a, "Basic ", 6) == 0) {
        for (a += 6; *a == ' '; a++)
            ;
        char plain[2 * 1024 + 8];
        const char *colon;
        if (query_base64_decode(a, plain, sizeof(plain)) && (colon = strchr(plain, ':')) &&
            query_secret_equal(colon + 1, strlen(colon + 1), token, token_len))
            return true;
    }
    char *q = query_get(in->query, "token");
    bool ok = q && query_secret_equal(q, strlen(q), token, token_len);
    free(q);
    return ok;
}

static bool method_is(const pprof_request_t *in, const char *m)
{
    return strcmp(in->method, m) == 0;
}

/* --- the endpoints ---------------------------------------------------------------- */

static pprof_action_t serve_symbol(const call_t *c)
{
    sb_puts(&c->r->out, "num_symbols: 1\n");
    if (method_is(c->in, "POST")) {
        if (c->in->content_length > (int64_t)PPROF_MAX_BODY) {
            serve_error(c->out, 413, "Request Entity Too Large");
            return PPROF_REPLY;
        }
        return PPROF_READ_BODY;
    }
    symbol_feed(c->r, c->in->query, strlen(c->in->query));
    symbol_finish(c->r, c->out);
    return PPROF_REPLY;
}

static pprof_action_t serve_index(const call_t *c);

/* The paths that are the server's own (Go's Index, Cmdline and Symbol);
 * every other path is a profile kind of the runtime's registry
 * (ops->kinds, profiles.h), served as it is recorded (serve_of). */
static const page_t pages[] = {
    {.name = "", .serve = serve_index},
    {.name = "cmdline", .desc = "The command line invocation of the current program",
     .serve = serve_cmdline},
    {.name = "symbol", .serve = serve_symbol, .post = true},
};
#define PAGES_END (pages + sizeof(pages) / sizeof(pages[0]))

/* How a kind is served; NULL for a row this server does not know. */
static pprof_action_t (*serve_of(const profile_kind_t *k))(const call_t *c)
{
    switch (k->how) {
    case PROFILE_WHOLE: return k->write ? serve_stackprof : NULL;
    case PROFILE_HEAP: return serve_profile;
    case PROFILE_SESSION: return k->start && k->stop ? serve_session : NULL;
    }
    return NULL;
}

/* A line of the index page. */
typedef struct {
    const char *name, *desc;
    unsigned long long count;
} index_row_t;

static int by_name(const void *a, const void *b)
{
    return strcmp(((const index_row_t *)a)->name, ((const index_row_t *)b)->name);
}

/* Go's Index: pprof.Profiles() with their counts, and its own handlers
 * with a description (here cmdline; profile and trace are kinds, count 0),
 * sorted by name. */
static pprof_action_t serve_index(const call_t *c)
{
    pprof_reply_t *out = c->out;
    size_t n = 0;
    index_row_t *rows = calloc(ops->n_kinds + (size_t)(PAGES_END - pages), sizeof(*rows));
    if (!rows) {
        serve_error(out, 500, "out of memory");
        return PPROF_REPLY;
    }
    for (size_t i = 0; i < ops->n_kinds; i++) {
        const profile_kind_t *k = &ops->kinds[i];
        if (k->desc)
            rows[n++] = (index_row_t){k->name, k->desc, k->count ? k->count() : 0};
    }
    for (const page_t *p = pages; p < PAGES_END; p++)
        if (p->desc)
            rows[n++] = (index_row_t){p->name, p->desc, 0};
    qsort(rows, n, sizeof(*rows), by_name);
    sbuf_t b = {0};
    sb_puts(&b, "<html>\n<head>\n<title>/debug/pprof/</title>\n<style>\n.profile-name{\n"
                "\tdisplay:inline-block;\n\twidth:6rem;\n}\n</style>\n</head>\n<body>\n"
                "/debug/pprof/<br>\n<br>\nTypes of profiles available:\n<table>\n"
                "<thead><td>Count</td><td>Profile</td></thead>\n");
    for (size_t i = 0; i < n; i++) {
        sb_printf(&b, "<tr><td>%llu</td><td><a href='%s?debug=1'>", rows[i].count, rows[i].name);
        sb_html(&b, rows[i].name);
        sb_puts(&b, "</a></td></tr>\n");
    }
    sb_puts(&b, "</table>\n<a href=\"goroutine?debug=2\">full goroutine stack dump</a>\n"
                "<br>\n<p>\nProfile Descriptions:\n<ul>\n");
    for (size_t i = 0; i < n; i++) {
        sb_puts(&b, "<li><div class=profile-name>");
        sb_html(&b, rows[i].name);
        sb_puts(&b, ": </div> ");
        sb_html(&b, rows[i].desc);
        sb_puts(&b, "</li>\n");
    }
    sb_puts(&b, "</ul>\n</p>\n</body>\n</html>");
    free(rows);
    reply_text(out, 200, "text/html; charset=utf-8", &b);
    return PPROF_REPLY;
}

/* The page or the kind of a path; false for neither. */
static bool endpoint_find(const char *path, const page_t **page, const profile_kind_t **kind)
{
    *page = NULL;
    *kind = NULL;
    if (strncmp(path, PREFIX, strlen(PREFIX)) != 0)
        return false;
    const char *name = path + strlen(PREFIX);
    for (const page_t *p = pages; p < PAGES_END; p++)
        if (strcmp(name, p->name) == 0) {
            *page = p;
            return true;
        }
    for (size_t i = 0; i < ops->n_kinds; i++)
        if (strcmp(name, ops->kinds[i].name) == 0) {
            *kind = &ops->kinds[i];
            return true;
        }
    return false;
}

/* Reads the parameters (PROFILE_P_*): 0, or -1 after an error reply. */
static int read_params(unsigned params, const char *query, pprof_reply_t *out, params_t *p)
{
    *p = (params_t){0};
    if (params & PROFILE_P_DELTA) {
        int delta = delta_request(query, out, &p->seconds);
        if (delta != 0)
            return delta < 0 ? -1 : 0;
    }
    if (params & PROFILE_P_SECONDS) {
        int64_t sec = 0;
        char *s = query_get(query, "seconds");
        bool bad = s && *s && !query_atoi(s, &sec);
        free(s);
        if (bad) {
            serve_error(out, 400, "invalid value for \"seconds\" - must be a positive integer");
            return -1;
        }
        if (sec <= 0)
            sec = 30;
        if (sec >= PPROF_WRITE_TIMEOUT_S) {
            serve_error(out, 400, "profile duration exceeds server's WriteTimeout");
            return -1;
        }
        p->seconds = sec;
        p->wait_ms = sec * 1000;
    }
    if (params & PROFILE_P_TRACE_SECONDS) {
        /* Go's Trace: ParseFloat; not a positive number means 1 s. */
        char *s = query_get(query, "seconds"), *end = NULL;
        double sec = s && *s && !isspace((unsigned char)*s) ? strtod(s, &end) : 0;
        free(s);
        if (!end || *end || !(sec > 0))
            sec = 1;
        if (sec >= PPROF_WRITE_TIMEOUT_S) {
            serve_error(out, 400, "profile duration exceeds server's WriteTimeout");
            return -1;
        }
        p->wait_ms = (int64_t)(sec * 1000);
    }
    /* gc > 0 asks Go to collect garbage first; C has nothing to collect. */
    int64_t gc = 0;
    if ((params & PROFILE_P_GC) && int_param(query, "gc", &gc, out) < 0)
        return -1;
    if ((params & PROFILE_P_DEBUG) && int_param(query, "debug", &p->debug, out) < 0)
        return -1;
    if ((params & PROFILE_P_RESET) && int_param(query, "reset", &p->reset, out) < 0)
        return -1;
    return 0;
}

pprof_action_t pprof_begin(pprof_req_t *r, const pprof_request_t *in, pprof_reply_t *out,
                           int64_t *until_ms)
{
    memset(out, 0, sizeof(*out));
    out->fd = -1;
    if (!authorized(in)) {
        serve_error(out, 401, "Unauthorized");
        out->challenge = true;
        return PPROF_REPLY;
    }
    const page_t *page;
    const profile_kind_t *kind;
    bool found = endpoint_find(in->path, &page, &kind);
    bool post_ok = page && page->post;
    if (!method_is(in, "GET") && !method_is(in, "HEAD") && !(post_ok && method_is(in, "POST"))) {
        serve_error(out, 405, "Method Not Allowed");
        out->allow = post_ok ? GET_HEAD_POST : GET_HEAD;
        return PPROF_REPLY;
    }
    char *clean = query_clean_path(in->path);
    if (!clean) {
        serve_error(out, 500, "out of memory");
        return PPROF_REPLY;
    }
    bool moved = strcmp(clean, in->path) != 0;
    if (moved || strcmp(clean, "/debug/pprof") == 0) {
        redirect(out, moved ? clean : PREFIX, in->query);
        free(clean);
        return PPROF_REPLY;
    }
    free(clean);
    if (strncmp(in->path, PREFIX, strlen(PREFIX)) != 0) {
        not_found(out);
        return PPROF_REPLY;
    }
    pprof_action_t (*serve)(const call_t *) = page ? page->serve : kind ? serve_of(kind) : NULL;
    if (!found || !serve) {
        /* anything else: pprof.Lookup finds no such profile. */
        serve_error(out, 404, "Unknown profile");
        return PPROF_REPLY;
    }
    call_t c = {.r = r, .k = kind, .in = in, .out = out, .until_ms = until_ms};
    if (read_params(kind ? kind->params : 0, in->query, out, &c.prm) < 0)
        return PPROF_REPLY;
    return serve(&c);
}

/* --- lifetime -------------------------------------------------------------------- */

pprof_req_t *pprof_req_new(void)
{
    return calloc(1, sizeof(pprof_req_t));
}

void pprof_req_free(pprof_req_t *r)
{
    if (!r)
        return;
    if (r->have_base) {
        ops->heap_snapshot_free(&r->base);
        waiting--;
    }
    if (r->sp_base) {
        profile_free(r->sp_base);
        waiting--;
    }
    if (r->sess_id > 0) { /* the client went away: free the session for the next */
        r->kind->stop(r->sess_id, true);
        close(r->sess_fd);
    }
    stream_free(r->stream); /* ended, or the client went away */
    sb_free(&r->out);
    free(r);
}

int pprof_init(const cprof_http_ops_t *o, const char *tok)
{
    ops = o;
    waiting = 0;
    free(token);
    token = NULL;
    token_len = 0;
    if (tok) {
        token = strdup(tok);
        if (!token)
            return -ENOMEM;
        token_len = strlen(token);
    }
    return 0;
}

void pprof_fini(void)
{
    symtab_free(symbols);
    symbols = NULL;
    free(token);
    token = NULL;
}
