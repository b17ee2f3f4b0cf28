/* web.c — the web UI's server: the listening socket, libmicrohttpd,
 * routing, access checks, and the waiting thread (signals, -poll). */
#include "tool/ui/web.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "tool/driver/browser.h"
#include "tool/driver/driver.h"
#include "tool/ui/memtime.h"
#include "tool/ui/settings.h"
#include "tool/ui/webpage.h"
#include "tool/ui/webviews.h"
#include "tool/ui/webwindow.h"

#define WEB_CONNECTIONS 64   /* at once; more are refused */
#define WEB_IDLE_S 60        /* an idle connection is closed after this */
/* Per connection: the request line and headers must fit (a focus regexp
 * of many selected C++ names can be long); larger ones are refused. */
#define WEB_REQUEST_MEMORY (128 << 10)

/* The one server of the process. Everything below lock is read and
 * written under it: the server thread while it makes a page, the waiting
 * thread when a poll brings a new profile. */
static struct {
    struct MHD_Daemon *daemon;
    int listen_fd;
    bool loopback; /* bound to a loopback address: check clients and Host */
    char host[256]; /* as given (or "localhost") */
    pthread_mutex_t lock;
    profile_t *p; /* what the views show */
    profile_t *own; /* p when it is not also a snapshot of the series */
    config_t cfg;
    source_opts_t src;
    memseries_t series;
    bool series_loaded; /* the sources fetched one by one (several files) */
} W = {.listen_fd = -1, .lock = PTHREAD_MUTEX_INITIALIZER};

/* --- addresses -------------------------------------------------------------- */

int web_split_hostport(const char *hp, char *host, size_t hostlen, int *port, char *err,
                       size_t errlen)
{
    const char *colon, *h = hp;
    size_t hl;
    if (hp[0] == '[') {
        const char *rb = strchr(hp, ']');
        if (!rb || rb[1] != ':') {
            snprintf(err, errlen, "could not split http address: address %s: %s", hp,
                     rb ? "missing port in address" : "missing ']' in address");
            return -1;
        }
        h = hp + 1;
        hl = (size_t)(rb - h);
        colon = rb + 1;
    } else {
        colon = strrchr(hp, ':');
        if (!colon) {
            snprintf(err, errlen, "could not split http address: address %s: missing port in "
                                  "address",
                     hp);
            return -1;
        }
        if (memchr(hp, ':', (size_t)(colon - hp))) {
            snprintf(err, errlen, "could not split http address: address %s: too many colons "
                                  "in address",
                     hp);
            return -1;
        }
        hl = (size_t)(colon - hp);
    }
    if (hl == 0) {
        h = "localhost";
        hl = strlen(h);
    }
    if (hl >= hostlen) {
        snprintf(err, errlen, "could not split http address: host too long");
        return -1;
    }
    memcpy(host, h, hl);
    host[hl] = '\0';
    const char *ps = colon + 1;
    if (!*ps) {
        *port = 0;
        return 0;
    }
    char *end;
    errno = 0;
    long v = strtol(ps, &end, 10);
    if (*end || errno || v < 0 || v > 65535) {
        snprintf(err, errlen, "invalid port number: strconv.Atoi: parsing \"%s\": invalid syntax",
                 ps);
        return -1;
    }
    *port = (int)v;
    return 0;
}

static bool addr_is_loopback(const struct sockaddr *sa)
{
    if (sa->sa_family == AF_INET)
        return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >> 24) == 127;
    if (sa->sa_family == AF_INET6) {
        const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;
        if (IN6_IS_ADDR_LOOPBACK(a))
            return true;
        if (IN6_IS_ADDR_V4MAPPED(a))
            return a->s6_addr[12] == 127;
    }
    return false;
}

/* Listens on host:port (IPv4 addresses first, as Go does for "localhost");
 * the fd, or -1 with a message. *bound_port: the port (for port 0). */
static int listen_on(const char *host, int port, int *bound_port, bool *loopback, char *err,
                     size_t errlen)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res;
    char ps[16];
    snprintf(ps, sizeof(ps), "%d", port);
    int g = getaddrinfo(host, ps, &hints, &res);
    if (g != 0) {
        snprintf(err, errlen, "listen tcp %.200s:%d: lookup %.200s: %s", host, port, host,
                 gai_strerror(g));
        return -1;
    }
    int fd = -1, e = 0;
    for (int pass = 0; pass < 2 && fd < 0; pass++)
        for (struct addrinfo *a = res; a && fd < 0; a = a->ai_next) {
            if ((a->ai_family == AF_INET) != (pass == 0))
                continue;
            fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
            if (fd < 0) {
                e = errno;
                continue;
            }
            int one = 1;
            setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
            if (bind(fd, a->ai_addr, a->ai_addrlen) < 0 || listen(fd, 64) < 0) {
                e = errno;
                close(fd);
                fd = -1;
                continue;
            }
            *loopback = addr_is_loopback(a->ai_addr);
        }
    freeaddrinfo(res);
    if (fd < 0) {
        snprintf(err, errlen, "listen tcp %.200s:%d: %s", host, port,
                 strerror(e ? e : EADDRNOTAVAIL));
        return -1;
    }
    struct sockaddr_storage ss;
    socklen_t sl = sizeof(ss);
    if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0)
        *bound_port = ntohs(ss.ss_family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port
                                                    : ((struct sockaddr_in6 *)&ss)->sin6_port);
    else
        *bound_port = port;
    return fd;
}

/* The Host header of a request to a loopback server must name a loopback
 * host: a page of another site that resolves its name to 127.0.0.1 (DNS
 * rebinding) must not read profiles. */
static bool host_header_ok(const char *h)
{
    if (!h)
        return true; /* HTTP/1.0 */
    char host[300];
    size_t n;
    if (h[0] == '[') {
        const char *rb = strchr(h, ']');
        if (!rb)
            return false;
        n = (size_t)(rb - h) + 1;
    } else {
        const char *c = strchr(h, ':');
        n = c ? (size_t)(c - h) : strlen(h);
    }
    if (n == 0 || n >= sizeof(host))
        return false;
    memcpy(host, h, n);
    host[n] = '\0';
    if (strcasecmp(host, "localhost") == 0 || strcmp(host, "[::1]") == 0 ||
        strcasecmp(host, W.host) == 0)
        return true;
    struct in_addr a;
    return inet_pton(AF_INET, host, &a) == 1 && (ntohl(a.s_addr) >> 24) == 127;
}

/* --- requests ---------------------------------------------------------------- */

typedef struct {
    web_req_t *q;
    const web_param_t *ps;
    size_t nps;
} args_ctx_t;

static enum MHD_Result collect_arg(void *cls, enum MHD_ValueKind kind, const char *key,
                                   const char *value)
{
    (void)kind;
    args_ctx_t *a = cls;
    if (!key)
        return MHD_YES;
    for (size_t i = 0; i < a->nps; i++)
        if (strcmp(a->ps[i].param, key) == 0) {
            if (!a->q->vals[i]) /* the first one, as Go's Query().Get */
                a->q->vals[i] = value ? value : "";
            break;
        }
    return MHD_YES;
}

static enum MHD_Result requery_arg(void *cls, enum MHD_ValueKind kind, const char *key,
                                   const char *value)
{
    (void)kind;
    sbuf_t *b = cls;
    if (!key)
        return MHD_YES;
    sb_putc(b, b->len ? '&' : '?');
    web_url_escape(b, key);
    if (value) {
        sb_putc(b, '=');
        web_url_escape(b, value);
    }
    return MHD_YES;
}

static enum MHD_Result send_resp(struct MHD_Connection *c, web_resp_t *r)
{
    if (r->body.oom) {
        sb_free(&r->body);
        r->status = MHD_HTTP_INTERNAL_SERVER_ERROR;
        r->ctype = "text/plain; charset=utf-8";
        sb_puts(&r->body, "out of memory\n");
    }
    size_t len = r->body.len;
    char *data = sb_steal(&r->body);
    if (!data)
        return MHD_NO;
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(len, data, MHD_RESPMEM_MUST_FREE);
    if (!resp) {
        free(data);
        return MHD_NO;
    }
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, r->ctype);
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header(resp, "Referrer-Policy", "no-referrer");
    /* Pages hold only their own inline script and style, and talk only to
     * this server (the Config menu's saveconfig/deleteconfig). */
    MHD_add_response_header(resp, "Content-Security-Policy",
                            "default-src 'none'; script-src 'unsafe-inline'; connect-src 'self'; "
                            "style-src 'unsafe-inline'; img-src data:; base-uri 'none'; "
                            "form-action 'self'; frame-ancestors 'none'");
    if (r->disposition)
        MHD_add_response_header(resp, "Content-Disposition", r->disposition);
    if (r->location)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_LOCATION, r->location);
    enum MHD_Result rc = MHD_queue_response(c, (unsigned)r->status, resp);
    MHD_destroy_response(resp);
    return rc;
}

static enum MHD_Result send_text(struct MHD_Connection *c, int status, const char *text)
{
    web_resp_t r = {.status = status, .ctype = "text/plain; charset=utf-8"};
    sb_puts(&r.body, text);
    return send_resp(c, &r);
}

static enum MHD_Result redirect(struct MHD_Connection *c, const char *to)
{
    sbuf_t q = {0}, loc = {0};
    MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, requery_arg, &q);
    sb_puts(&loc, to);
    sb_puts(&loc, sb_cstr(&q));
    sb_free(&q);
    web_resp_t r = {.status = MHD_HTTP_TEMPORARY_REDIRECT, .ctype = "text/html; charset=utf-8"};
    r.location = sb_cstr(&loc);
    sb_puts(&r.body, "<a href=\"");
    web_html(&r.body, r.location);
    sb_puts(&r.body, "\">Temporary Redirect</a>.\n");
    r.body.oom |= loc.oom;
    enum MHD_Result rc = send_resp(c, &r);
    sb_free(&loc);
    return rc;
}

/* Several files on the command line: each one fetched and symbolized on
 * its own, the first time the memory view is asked for. */
static void load_series_locked(void)
{
    if (W.series_loaded || W.src.n_sources < 2 || W.src.poll > 0)
        return;
    W.series_loaded = true;
    for (size_t i = 0; i < W.src.n_sources; i++) {
        source_opts_t one = W.src;
        one.sources = &W.src.sources[i];
        one.n_sources = 1;
        one.base = NULL;
        one.diff_base = false;
        profile_t *p = driver_fetch(&one);
        if (p && memseries_add(&W.series, p, W.src.sources[i], false) < 0)
            fprintf(stderr, "out of memory\n");
    }
}

/* pprof's saveConfig and deleteConfig: the settings file changed, or 400
 * with the reason (also printed, as pprof does). Called with W.lock held
 * (q reads the configuration). */
static enum MHD_Result edit_settings(struct MHD_Connection *c, const web_req_t *q, bool save)
{
    const char *name = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "config");
    char path[4096], err[1024];
    int rc = settings_path(path, sizeof(path));
    if (rc < 0) {
        snprintf(err, sizeof(err), "could not find the settings directory: neither $XDG_CONFIG_HOME nor $HOME is defined");
    } else if (save) {
        config_t cfg;
        rc = web_config(q, &cfg, err, sizeof(err));
        if (rc == 0) {
            rc = settings_save(path, name, &cfg, err, sizeof(err));
            config_free(&cfg);
        }
    } else {
        rc = settings_delete(path, name, err, sizeof(err));
    }
    if (rc < 0) {
        fprintf(stderr, "%s\n", err);
        strncat(err, "\n", sizeof(err) - strlen(err) - 1);
        return send_text(c, MHD_HTTP_BAD_REQUEST, err);
    }
    return send_text(c, MHD_HTTP_OK, "");
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *upload,
                                  size_t *upload_size, void **state)
{
    (void)cls;
    (void)version;
    (void)upload;
    static int first_call;
    if (!*state) {
        *state = &first_call; /* headers only so far */
        return MHD_YES;
    }
    if (*upload_size) {
        *upload_size = 0; /* bodies are ignored */
        return MHD_YES;
    }
    if (W.loopback) {
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
        if (!ci || !ci->client_addr || !addr_is_loopback(ci->client_addr))
            return send_text(c, MHD_HTTP_FORBIDDEN, "permission denied\n");
        if (!host_header_ok(MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Host")))
            return send_text(c, MHD_HTTP_FORBIDDEN,
                             "permission denied: the Host header names no loopback host\n");
    }
    bool save = strcmp(url, "/ui/saveconfig") == 0, del = strcmp(url, "/ui/deleteconfig") == 0;
    if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0 &&
        !((save || del) && strcmp(method, "POST") == 0))
        return send_text(c, MHD_HTTP_METHOD_NOT_ALLOWED, "method not allowed\n");
    if (strncmp(url, "/ui/", 4) != 0)
        return redirect(c, "/ui/");

    web_req_t q = {0};
    args_ctx_t a = {&q, NULL, 0};
    a.ps = web_params(&a.nps);
    MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, collect_arg, &a);
    q.view = web_view_of(url + 4);
    web_resp_t r = {.status = 200, .ctype = "text/html; charset=utf-8"};
    /* A window of the polled process: fetched before the lock (W.src does
     * not change while serving), shown by every view but the series'. */
    const char *win = web_arg(&q, "window");
    bool windowed = *win && q.view != VIEW_MEMORY && q.view != VIEW_NONE && !save && !del;
    char win_msg[1024] = "";
    profile_t *win_p = NULL;
    int win_rc = windowed ? webwindow_get(&W.src, win, &win_p, win_msg, sizeof(win_msg)) : 0;

    pthread_mutex_lock(&W.lock);
    q.p = W.p;
    q.base_cfg = &W.cfg;
    q.diff = W.src.base != NULL;
    q.series_possible = W.src.n_sources > 1 || W.src.poll > 0;
    q.window_possible = webwindow_possible(&W.src);
    if (win_p)
        q.p = win_p;
    if (q.view == VIEW_MEMORY)
        load_series_locked();
    q.series = &W.series;
    if (save || del) {
        enum MHD_Result res = edit_settings(c, &q, save);
        pthread_mutex_unlock(&W.lock);
        return res;
    }
    if (q.view == VIEW_NONE) {
        sbuf_t m = {0};
        sb_puts(&m, "404 page not found: there is no view \"");
        sb_puts(&m, url + 4);
        sb_puts(&m, "\" (the views are /ui/ (graph), /ui/top, /ui/flamegraph, /ui/peek, "
                    "/ui/source, /ui/disasm, /ui/memory, /ui/breakdown, /ui/lifetimes and "
                    "/ui/download)");
        web_page_message(&r, &q, MHD_HTTP_NOT_FOUND, NULL, sb_cstr(&m));
        sb_free(&m);
    } else if (windowed && !win_p) {
        web_page_message(&r, &q, win_rc == -EINVAL ? 400 : 200, NULL, win_msg);
    } else {
        webviews_render(&q, &r);
    }
    pthread_mutex_unlock(&W.lock);
    return send_resp(c, &r);
}

/* --- serving ------------------------------------------------------------------ */

/* Replaces the profile shown with a newly polled one (kept in the series). */
static void poll_once(void)
{
    source_opts_t s = W.src;
    profile_t *p = driver_fetch(&s);
    if (!p)
        return;
    pthread_mutex_lock(&W.lock);
    if (memseries_add(&W.series, p, W.src.sources[0], true) == 0) {
        W.p = p;
    } else {
        fprintf(stderr, "out of memory\n");
    }
    pthread_mutex_unlock(&W.lock);
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int web_serve(profile_t *p, const config_t *cfg, const source_opts_t *src)
{
    char err[512];
    int port, bound;
    if (web_split_hostport(src->http, W.host, sizeof(W.host), &port, err, sizeof(err)) < 0) {
        fprintf(stderr, "%s\n", err);
        profile_free(p);
        return -1;
    }
    if (config_copy(&W.cfg, cfg) < 0) {
        fprintf(stderr, "out of memory\n");
        profile_free(p);
        return -1;
    }
    W.src = *src;
    if (src->poll > 0) {
        W.p = p; /* the first point of the series */
        if (memseries_add(&W.series, p, src->sources[0], true) < 0) {
            fprintf(stderr, "out of memory\n");
            config_free(&W.cfg);
            return -1;
        }
    } else {
        W.p = W.own = p;
    }
    int rc = -1;
    W.listen_fd = listen_on(W.host, port, &bound, &W.loopback, err, sizeof(err));
    if (W.listen_fd < 0) {
        fprintf(stderr, "%s\n", err);
        goto out;
    }

    /* The server thread inherits a mask without the signals this thread
     * waits for; a peer gone away must not kill the process. */
    sigset_t wait_set, old;
    sigemptyset(&wait_set);
    sigaddset(&wait_set, SIGINT);
    sigaddset(&wait_set, SIGTERM);
    sigaddset(&wait_set, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &wait_set, &old);
    signal(SIGPIPE, SIG_IGN);
    /* poll(), not epoll: with epoll, MHD 0.9.75 leaves a connection whose
     * query overflows its memory pool open until the idle timeout. */
    W.daemon = MHD_start_daemon(MHD_USE_POLL_INTERNAL_THREAD, 0, NULL, NULL, on_request, NULL,
                                MHD_OPTION_LISTEN_SOCKET, (MHD_socket)W.listen_fd,
                                MHD_OPTION_CONNECTION_LIMIT, (unsigned)WEB_CONNECTIONS,
                                MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)WEB_IDLE_S,
                                MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)WEB_REQUEST_MEMORY,
                                MHD_OPTION_END);
    if (!W.daemon) {
        fprintf(stderr, "could not start the web server\n");
        W.listen_fd = -1; /* MHD may have closed it: leaking beats a double close */
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        goto out;
    }
    char url[400];
    bool v6 = strchr(W.host, ':') != NULL;
    snprintf(url, sizeof(url), "http://%s%s%s:%d", v6 ? "[" : "", W.host, v6 ? "]" : "", bound);
    fprintf(stderr, "Serving web UI on %s\n", url);
    fflush(stderr);
    if (!src->no_browser && browser_open(url, NULL, false, NULL, 0) == -ENOENT)
        fprintf(stderr, "%s\n", url);

    int64_t next_poll = src->poll > 0 ? now_ms() + (int64_t)src->poll * 1000 : -1;
    for (;;) {
        int64_t wait = 1000;
        if (next_poll >= 0) {
            wait = next_poll - now_ms();
            if (wait <= 0) {
                poll_once();
                next_poll = now_ms() + (int64_t)src->poll * 1000;
                continue;
            }
        }
        struct timespec ts = {(time_t)(wait / 1000), (long)(wait % 1000) * 1000000};
        int sig = sigtimedwait(&wait_set, NULL, &ts);
        if (sig > 0)
            break;
    }
    MHD_stop_daemon(W.daemon); /* closes the listening socket */
    W.daemon = NULL;
    W.listen_fd = -1;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    rc = 0;
out:
    webwindow_free();
    memseries_free(&W.series);
    profile_free(W.own);
    W.p = W.own = NULL;
    config_free(&W.cfg);
    return rc;
}
