/* server.c — libcprof-http.so's entry points and its libmicrohttpd server:
 * one thread of its own, the guard set for its whole life, running MHD in
 * external-polling mode (MHD_USE_EPOLL without MHD's internal threads), so
 * every allocation MHD makes happens on a guarded thread and none of it
 * shows up in the program's heap profile.
 *
 * The endpoints themselves are pprof.c; this file only moves requests in
 * and replies out, and enforces the limits:
 * - at most SERVER_MAX_CONNECTIONS connections: more wait in the kernel's
 *   listen backlog, first come first served, and while some do, the
 *   connection that has waited longest for its request is cut once it has
 *   had SERVER_GRACE_MS (make_room): slow or idle clients, however many,
 *   cannot shut a normal one out — only a connection whose request is in
 *   (being answered, or a ?seconds= wait) keeps its place;
 * - SERVER_MEMORY per connection: larger request headers get MHD's 431
 *   (or 414 for the request line);
 * - SERVER_IDLE_S seconds without progress closes a connection (MHD);
 * - a request's headers must arrive within SERVER_HEADER_S seconds of the
 *   connection (or of the previous response), its body (symbol) within
 *   SERVER_REQUEST_S, else the socket is shut down — so a client sending
 *   one byte every few seconds cannot hold a slot (Go's ReadHeaderTimeout
 *   and ReadTimeout; the answer, however long, is not bounded by them);
 * - POST bodies (symbol) up to PPROF_MAX_BODY, streamed, never buffered.
 * Delta and CPU profiles (?seconds=N) suspend their connection until due,
 * so they hold no other request up, or until the client goes away (the
 * wait is cancelled then, as Go cancels the request's context). A slow client can only ever delay the
 * server thread's own work; the program's threads never wait for it. */
#include "pprof.h"
#include "base/fdio.h"
#include "query.h"
#include "runtime/httpops.h"

#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#define SERVER_MAX_CONNECTIONS 32u
#define SERVER_GRACE_MS 2000 /* a request's headers normally take < 1 ms */
#define SERVER_MEMORY ((size_t)64 << 10) /* QUERY_MAX_ARGS arguments fit */
#define SERVER_IDLE_S 10u
#define SERVER_HEADER_S 10
#define SERVER_REQUEST_S 30
#define SERVER_NICE 10 /* the server thread's nice value */

#define EXPORT __attribute__((visibility("default")))

/* A request's course: NEW (headers in) -> [BODY (symbol upload)] ->
 * READY (reply waits for the end of the request) | SLEEP (delta profile
 * waits for the end of the request) -> WAITING (suspended) -> DONE.
 * Replies are queued only once the whole request is in: MHD closes the
 * connection after a response queued earlier, which is what a request
 * refused before its body (a 405 for a POST, a 413) should get. */
enum { REQ_IDLE, REQ_NEW, REQ_BODY, REQ_READY, REQ_SLEEP, REQ_WAITING, REQ_DONE };

/* One TCP connection; it carries one request at a time. */
typedef struct conn {
    struct conn *prev, *next;
    struct MHD_Connection *mhd;
    int64_t receiving_since; /* ms: waiting for a whole request; 0 if not */
    bool headers_in;         /* the request's headers are in (its body may not be) */
    bool cut;                /* shut down by the server, MHD closes it soon */
    char *uri;               /* raw request URI (path?query) */
    pprof_req_t *req;
    int state;        /* REQ_* */
    bool suspended;   /* a delta profile waits */
    bool streaming;   /* the reply's body is a stream (PPROF_STREAM) */
    bool stream_wait; /* suspended until the stream has bytes (its fd polled) */
    bool cancel;      /* end the wait early (server stopping, client gone) */
    int64_t until_ms; /* when the wait ends */
    pprof_reply_t reply; /* READY: the reply to queue */
} conn_t;

static const cprof_http_ops_t *ops;
static struct MHD_Daemon *daemon_;
static pthread_t thread;
static int listen_fd = -1; /* MHD's copy of the listening socket */
static int wake_fd = -1;   /* eventfd: stop the loop */
static int stopping;
static int running; /* a server thread exists; cleared by whoever stops it */
static conn_t *conns;
static unsigned nconns; /* live connections (conns) */
static unsigned ncut;   /* of which cut, not yet closed */

/* --- requests in, replies out ---------------------------------------------- */

static void end_request(conn_t *c)
{
    pprof_reply_clear(&c->reply);
    pprof_req_free(c->req);
    c->req = NULL;
    free(c->uri);
    c->uri = NULL;
    c->state = REQ_IDLE;
    c->suspended = c->cancel = c->streaming = c->stream_wait = false;
}

#define STREAM_BLOCK (16u << 10) /* bytes per read of a stream: MHD's buffer */

/* MHD's content reader for a stream: the bytes there are; when there are
 * none yet, the connection sleeps until the loop sees some (returning 0
 * without a suspend would make MHD spin). */
static ssize_t stream_reader(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)pos;
    conn_t *c = cls;
    if (c->cancel)
        return MHD_CONTENT_READER_END_WITH_ERROR;
    ssize_t n = pprof_stream_read(c->req, buf, max);
    if (n > 0)
        return n;
    if (n == 0)
        return MHD_CONTENT_READER_END_OF_STREAM;
    if (n != -EAGAIN)
        return MHD_CONTENT_READER_END_WITH_ERROR;
    c->stream_wait = true;
    MHD_suspend_connection(c->mhd);
    return 0;
}

static enum MHD_Result queue(conn_t *c, struct MHD_Connection *con, pprof_reply_t *rep)
{
    struct MHD_Response *resp = NULL;
    if (c->streaming) {
        resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, STREAM_BLOCK, stream_reader,
                                                 c, NULL);
    } else if (rep->fd >= 0 && rep->len > 0) {
        resp = MHD_create_response_from_fd(rep->len, rep->fd);
        if (resp)
            rep->fd = -1; /* MHD closes it with the response */
    } else {
        resp = MHD_create_response_from_buffer(rep->len, rep->body ? rep->body : (void *)"",
                                               rep->body ? MHD_RESPMEM_MUST_FREE
                                                         : MHD_RESPMEM_PERSISTENT);
        if (resp)
            rep->body = NULL; /* MHD frees it */
    }
    enum MHD_Result ret = MHD_NO;
    if (resp) {
        if (rep->content_type)
            MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, rep->content_type);
        if (rep->nosniff)
            MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
        if (rep->disposition[0]) {
            char v[128];
            snprintf(v, sizeof(v), "attachment; filename=\"%s\"", rep->disposition);
            MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_DISPOSITION, v);
        }
        if (rep->go_error)
            MHD_add_response_header(resp, "X-Go-Pprof", "1");
        if (rep->allow)
            MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, rep->allow);
        if (rep->challenge)
            MHD_add_response_header(resp, MHD_HTTP_HEADER_WWW_AUTHENTICATE,
                                    "Basic realm=\"cprof\", charset=\"UTF-8\"");
        if (rep->location)
            MHD_add_response_header(resp, MHD_HTTP_HEADER_LOCATION, rep->location);
        ret = MHD_queue_response(con, (unsigned)rep->status, resp);
        MHD_destroy_response(resp);
    }
    pprof_reply_clear(rep);
    c->receiving_since = 0;
    c->state = REQ_DONE;
    return ret;
}

static conn_t *conn_of(struct MHD_Connection *con)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(con, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return ci ? ci->socket_context : NULL;
}

/* Called once per request, before its headers are parsed: keeps the raw
 * URI (Go's symbol handler reads the raw query) and starts the request. */
static void *on_uri(void *cls, const char *uri, struct MHD_Connection *con)
{
    (void)cls;
    conn_t *c = conn_of(con);
    if (!c)
        return NULL;
    end_request(c);
    c->uri = strdup(uri);
    c->state = REQ_NEW;
    /* A URI to refuse (framing_error answers 400) has its arguments cut
     * here, in MHD's buffer, before MHD parses them into the connection's
     * memory: thousands of them would exhaust it, and MHD would then close
     * the connection without an answer. */
    char *q = strchr(uri, '?');
    if (q && query_check_uri(uri))
        q[1] = '\0';
    if (!c->receiving_since)
        c->receiving_since = fdio_now_ms();
    return c;
}

static enum MHD_Result count_header(void *cls, enum MHD_ValueKind kind, const char *key,
                                    const char *value)
{
    (void)kind;
    (void)value;
    if (strcasecmp(key, MHD_HTTP_HEADER_CONTENT_LENGTH) == 0)
        ++*(int *)cls;
    return MHD_YES;
}

/* What Go's server (or RFC 9112) refuses in a request's framing and MHD
 * lets through, as a phrase for a 400; NULL when the request is fine.
 * Ambiguous lengths are how requests get smuggled past a proxy. */
static const char *framing_error(struct MHD_Connection *con, const char *uri, const char *version)
{
    if (strcmp(version, MHD_HTTP_VERSION_1_1) == 0 &&
        !MHD_lookup_connection_value(con, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST))
        return "missing required Host header";
    int lengths = 0;
    MHD_get_connection_values(con, MHD_HEADER_KIND, count_header, &lengths);
    if (lengths > 1)
        return "more than one Content-Length";
    if (lengths &&
        MHD_lookup_connection_value(con, MHD_HEADER_KIND, MHD_HTTP_HEADER_TRANSFER_ENCODING))
        return "both Content-Length and Transfer-Encoding";
    return query_check_uri(uri);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *con, const char *url,
                                  const char *method, const char *version,
                                  const char *upload, size_t *upload_size, void **con_cls)
{
    (void)cls;
    conn_t *c = *con_cls;
    if (!c || !c->uri)
        return MHD_NO;
    pprof_reply_t rep = {.fd = -1};
    switch (c->state) {
    case REQ_NEW: {
        c->headers_in = true;
        c->req = pprof_req_new();
        if (!c->req)
            return MHD_NO;
        const char *bad = framing_error(con, c->uri, version);
        if (bad) { /* answered before any body, then closed (queue) */
            rep.status = 400;
            rep.content_type = "text/plain; charset=utf-8";
            if (asprintf(&rep.body, "400 Bad Request: %s", bad) < 0)
                return MHD_NO;
            rep.len = strlen(rep.body);
            return queue(c, con, &rep);
        }
        const char *q = strchr(c->uri, '?');
        const char *cl = MHD_lookup_connection_value(con, MHD_HEADER_KIND,
                                                     MHD_HTTP_HEADER_CONTENT_LENGTH);
        int64_t len = cl ? strtoll(cl, NULL, 10) : -1;
        pprof_request_t in = {
            .method = method,
            .path = url,
            .query = q ? q + 1 : "",
            .authorization = MHD_lookup_connection_value(con, MHD_HEADER_KIND,
                                                         MHD_HTTP_HEADER_AUTHORIZATION),
            .content_length = len,
        };
        bool has_body = (cl && len > 0) ||
                        MHD_lookup_connection_value(con, MHD_HEADER_KIND,
                                                    MHD_HTTP_HEADER_TRANSFER_ENCODING);
        int64_t until = 0;
        switch (pprof_begin(c->req, &in, &rep, &until)) {
        case PPROF_REPLY:
            if (has_body) /* refused before its body: answer, then close */
                return queue(c, con, &rep);
            c->reply = rep;
            c->state = REQ_READY;
            return MHD_YES;
        case PPROF_READ_BODY:
            c->state = REQ_BODY;
            return MHD_YES;
        case PPROF_WAIT:
            c->state = REQ_SLEEP;
            c->until_ms = until;
            return MHD_YES;
        case PPROF_STREAM: /* the headers once the request is in, then the body */
            c->streaming = true;
            c->until_ms = until;
            if (has_body)
                return queue(c, con, &rep);
            c->reply = rep;
            c->state = REQ_READY;
            return MHD_YES;
        }
        return MHD_NO;
    }
    case REQ_READY:
        if (*upload_size) { /* a body nobody asked for */
            *upload_size = 0;
            return MHD_YES;
        }
        return queue(c, con, &c->reply);
    case REQ_SLEEP:
        if (*upload_size) {
            *upload_size = 0;
            return MHD_YES;
        }
        c->state = REQ_WAITING;
        c->suspended = true;
        c->receiving_since = 0;
        MHD_suspend_connection(con);
        return MHD_YES;
    case REQ_BODY:
        if (*upload_size) {
            if (!pprof_body(c->req, upload, *upload_size))
                return MHD_NO; /* over the limit: drop the connection */
            *upload_size = 0;
            return MHD_YES;
        }
        pprof_body_end(c->req, &rep);
        return queue(c, con, &rep);
    case REQ_WAITING:
        if (*upload_size) { /* a body nobody asked for */
            *upload_size = 0;
            return MHD_YES;
        }
        if (c->suspended) /* cannot happen: MHD calls us after a resume */
            return MHD_YES;
        pprof_wait_end(c->req, c->cancel, &rep);
        return queue(c, con, &rep);
    default:
        return MHD_NO;
    }
}

static void on_completed(void *cls, struct MHD_Connection *con, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    (void)cls;
    (void)con;
    (void)toe;
    conn_t *c = *con_cls;
    if (!c)
        return;
    end_request(c);
    c->receiving_since = fdio_now_ms(); /* the next request's clock */
    c->headers_in = false;
}

static void on_connection(void *cls, struct MHD_Connection *con, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe)
{
    (void)cls;
    if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
        conn_t *c = calloc(1, sizeof(*c));
        if (!c)
            return;
        c->mhd = con;
        c->reply.fd = -1;
        c->receiving_since = fdio_now_ms();
        c->next = conns;
        if (conns)
            conns->prev = c;
        conns = c;
        nconns++;
        *socket_context = c;
    } else if (toe == MHD_CONNECTION_NOTIFY_CLOSED) {
        conn_t *c = *socket_context;
        if (!c)
            return;
        end_request(c);
        if (c->prev)
            c->prev->next = c->next;
        else
            conns = c->next;
        if (c->next)
            c->next->prev = c->prev;
        nconns--;
        ncut -= c->cut;
        free(c);
        *socket_context = NULL;
    }
}

/* --- the loop ---------------------------------------------------------------- */

/* Resumes the waits that are due (or all, when stopping); returns whether
 * it resumed any. */
static bool resume_due(int64_t now, bool all)
{
    bool any = false;
    for (conn_t *c = conns; c; c = c->next) {
        if (c->suspended && (all || now >= c->until_ms)) {
            c->suspended = false;
            c->cancel = all;
            MHD_resume_connection(c->mhd);
            any = true;
        }
    }
    return any;
}

/* A suspended connection's socket is not watched by MHD, so a client that
 * went away would keep its wait to the end: a delta slot, or the CPU
 * profiler, for up to ten minutes. As Go cancels a request's context when
 * its connection closes, the loop watches these sockets for the peer's
 * close (POLLRDHUP) and ends such a wait at once, cancelled. Fills p and
 * who (at most cap); returns how many. */
static nfds_t watch_waiters(struct pollfd *p, conn_t **who, nfds_t cap)
{
    nfds_t n = 0;
    for (conn_t *c = conns; c && n < cap; c = c->next) {
        if (!c->suspended)
            continue;
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(c->mhd, MHD_CONNECTION_INFO_CONNECTION_FD);
        if (!ci)
            continue;
        p[n] = (struct pollfd){.fd = ci->connect_fd, .events = POLLRDHUP};
        who[n++] = c;
    }
    return n;
}

static void cancel_wait(conn_t *c)
{
    if (!c->suspended)
        return;
    c->suspended = false;
    c->cancel = true;
    MHD_resume_connection(c->mhd);
}

/* Streams: the recordings whose duration is over are ended (their stream
 * ends once read); returns the ms until the next is due (-1: none). */
static int64_t end_streams(int64_t now)
{
    int64_t next = -1;
    for (conn_t *c = conns; c; c = c->next) {
        if (!c->streaming || !c->req)
            continue;
        if (now >= c->until_ms)
            pprof_stream_end(c->req);
        else if (next < 0 || c->until_ms - now < next)
            next = c->until_ms - now;
    }
    return next;
}

/* The streams that wait for bytes: their fds to poll (at most cap). */
static nfds_t watch_streams(struct pollfd *p, conn_t **who, nfds_t cap)
{
    nfds_t n = 0;
    for (conn_t *c = conns; c && n < cap; c = c->next)
        if (c->stream_wait) {
            p[n] = (struct pollfd){.fd = pprof_stream_fd(c->req), .events = POLLIN};
            who[n++] = c;
        }
    return n;
}

static void resume_stream(conn_t *c, bool cancel)
{
    if (!c->stream_wait)
        return;
    c->stream_wait = false;
    c->cancel = cancel;
    MHD_resume_connection(c->mhd);
}

/* Shuts a connection's socket down; MHD then closes it. */
static void cut(conn_t *c)
{
    if (c->cut)
        return;
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c->mhd, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (ci)
        shutdown(ci->connect_fd, SHUT_RDWR);
    c->receiving_since = 0;
    c->cut = true;
    ncut++;
}

/* Whether the client sent bytes MHD has not read yet: then the wait is the
 * server's (busy with another request), not the client's, and the client
 * must not lose its place for it; MHD's next run reads them. */
static bool unread(const conn_t *c)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c->mhd, MHD_CONNECTION_INFO_CONNECTION_FD);
    int n = 0;
    return ci && ioctl(ci->connect_fd, FIONREAD, &n) == 0 && n > 0;
}

/* Cuts off connections whose headers are not in after SERVER_HEADER_S, or
 * whose whole request is not in after SERVER_REQUEST_S. */
static void cut_slow(int64_t now)
{
    for (conn_t *c = conns; c; c = c->next) {
        int64_t limit = (c->headers_in ? SERVER_REQUEST_S : SERVER_HEADER_S) * 1000;
        if (c->receiving_since && now - c->receiving_since > limit)
            cut(c);
    }
}

/* The connection still waiting for its request that has waited longest;
 * NULL if none. Connections whose request is in, or whose bytes wait
 * unread, are never chosen. */
static conn_t *longest_waiting(void)
{
    conn_t *old = NULL;
    for (conn_t *c = conns; c; c = c->next)
        if (c->receiving_since && !c->cut &&
            (!old || c->receiving_since < old->receiving_since) && !unread(c))
            old = c;
    return old;
}

/* At the connection limit MHD leaves new clients in the listen backlog.
 * When one waits there, the connection that has waited longest for its
 * request makes room for it, once it has had SERVER_GRACE_MS: the slots go
 * round, first come first served, so slow or idle clients cannot keep a
 * normal one out, and each gets at least the grace (a cut in flight is
 * awaited first, so one newcomer cuts one). Returns the ms until a
 * connection becomes eligible (-1: none); *listen_watch tells whether the
 * loop should wake for a newcomer. */
static int64_t make_room(int64_t now, bool *listen_watch)
{
    *listen_watch = false;
    if (nconns < SERVER_MAX_CONNECTIONS || ncut)
        return -1;
    conn_t *old = longest_waiting();
    if (!old)
        return -1;
    int64_t left = old->receiving_since + SERVER_GRACE_MS - now;
    if (left > 0)
        return left;
    struct pollfd p = {.fd = listen_fd, .events = POLLIN};
    if (poll(&p, 1, 0) == 1 && (p.revents & POLLIN))
        cut(old);
    else
        *listen_watch = true;
    return -1;
}

static void *server_main(void *arg)
{
    (void)arg;
    ops->guard_enter(); /* for the thread's whole life */
    /* Encoding a profile is background work: when the CPUs are busy, the
     * program's own threads go first (this thread's nice value only). */
    setpriority(PRIO_PROCESS, (id_t)gettid(), SERVER_NICE);
    const union MHD_DaemonInfo *di = MHD_get_daemon_info(daemon_, MHD_DAEMON_INFO_EPOLL_FD);
    int epfd = di ? di->epoll_fd : -1;
    while (!__atomic_load_n(&stopping, __ATOMIC_ACQUIRE)) {
        int64_t now = fdio_now_ms(), wait = 1000;
        MHD_UNSIGNED_LONG_LONG to;
        if (MHD_get_timeout(daemon_, &to) == MHD_YES && (int64_t)to < wait)
            wait = (int64_t)to;
        for (conn_t *c = conns; c; c = c->next)
            if (c->suspended && c->until_ms - now < wait)
                wait = c->until_ms - now > 0 ? c->until_ms - now : 0;
        int64_t due = end_streams(now);
        if (due >= 0 && due < wait)
            wait = due;
        bool listen_watch;
        int64_t room = make_room(now, &listen_watch);
        if (room >= 0 && room < wait)
            wait = room;
        /* p[2]: the listening socket, watched only when a newcomer would
         * make room at once (else MHD watches it, or it waits). */
        struct pollfd p[3 + 2 * SERVER_MAX_CONNECTIONS] = {
            {.fd = epfd, .events = POLLIN},
            {.fd = wake_fd, .events = POLLIN},
            {.fd = listen_watch ? listen_fd : -1, .events = POLLIN}};
        conn_t *waiter[3 + 2 * SERVER_MAX_CONNECTIONS];
        nfds_t nw = 3 + watch_waiters(p + 3, waiter + 3, SERVER_MAX_CONNECTIONS);
        nfds_t np = nw + watch_streams(p + nw, waiter + nw, SERVER_MAX_CONNECTIONS);
        poll(p, np, (int)wait);
        if (__atomic_load_n(&stopping, __ATOMIC_ACQUIRE))
            break;
        for (nfds_t i = 3; i < nw; i++)
            if (p[i].revents & (POLLRDHUP | POLLHUP | POLLERR))
                cancel_wait(waiter[i]);
        for (nfds_t i = nw; i < np; i++)
            if (p[i].revents)
                resume_stream(waiter[i], false); /* bytes, or the stream's end */
        bool full = nconns >= SERVER_MAX_CONNECTIONS;
        MHD_run(daemon_);
        /* A slot freed: MHD watches the listening socket again from its
         * next run, which takes the client waiting in the backlog now. */
        if (full && nconns < SERVER_MAX_CONNECTIONS)
            MHD_run(daemon_);
        now = fdio_now_ms();
        if (resume_due(now, false))
            MHD_run(daemon_);
        cut_slow(now);
    }
    /* MHD must not be stopped with suspended connections: answer them (a
     * stream is cut; its recording is discarded when MHD closes it). */
    bool any = false;
    for (conn_t *c = conns; c; c = c->next)
        if (c->stream_wait) {
            resume_stream(c, true);
            any = true;
        }
    if (resume_due(0, true) || any)
        for (int i = 0; i < 3; i++)
            MHD_run(daemon_);
    MHD_stop_daemon(daemon_);
    daemon_ = NULL;
    return NULL;
}

/* --- entry points ----------------------------------------------------------- */

EXPORT int cprof_http_module_start(const cprof_http_ops_t *o, const cprof_http_args_t *a)
{
    if (!o || o->version != CPROF_HTTP_OPS_VERSION || o->size < sizeof(cprof_http_ops_t) ||
        o->heap_snapshot_version != HEAP_SNAPSHOT_VERSION ||
        o->heap_snapshot_size != sizeof(heap_snapshot_t) || o->kind_size != sizeof(profile_kind_t))
        return -EPROTO;
    if (daemon_)
        return -EALREADY;
    ops = o;
    int rc = pprof_init(o, a->token);
    if (rc < 0)
        return rc;
    /* MHD gets its own descriptor: the caller keeps (and closes) a->listen_fd. */
    listen_fd = fcntl(a->listen_fd, F_DUPFD_CLOEXEC, 3);
    wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (listen_fd < 0 || wake_fd < 0) {
        rc = -errno;
        goto fail;
    }
    __atomic_store_n(&stopping, 0, __ATOMIC_RELEASE);
    nconns = ncut = 0;
    daemon_ = MHD_start_daemon(MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME, 0, NULL, NULL,
                               on_request, NULL,
                               MHD_OPTION_LISTEN_SOCKET, (MHD_socket)listen_fd,
                               MHD_OPTION_CONNECTION_LIMIT, SERVER_MAX_CONNECTIONS,
                               MHD_OPTION_CONNECTION_TIMEOUT, SERVER_IDLE_S,
                               MHD_OPTION_CONNECTION_MEMORY_LIMIT, SERVER_MEMORY,
                               MHD_OPTION_NOTIFY_CONNECTION, on_connection, NULL,
                               MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL,
                               MHD_OPTION_URI_LOG_CALLBACK, on_uri, NULL,
#if MHD_VERSION >= 0x00097205
                               /* The server thread blocks SIGPIPE: sendfile is safe. */
                               MHD_OPTION_SIGPIPE_HANDLED_BY_APP, 1,
#endif
                               MHD_OPTION_END);
    if (!daemon_) {
        listen_fd = -1; /* MHD may have closed it; leaking beats a double close */
        rc = -EIO;
        goto fail;
    }
    /* The thread takes no signal meant for the program (nor SIGPIPE). */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    rc = -pthread_create(&thread, NULL, server_main, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc < 0) {
        MHD_stop_daemon(daemon_); /* closes listen_fd */
        daemon_ = NULL;
        listen_fd = -1;
        goto fail;
    }
    pthread_setname_np(thread, "cprof-http");
    __atomic_store_n(&running, 1, __ATOMIC_RELEASE);
    return 0;
fail:
    if (listen_fd >= 0)
        close(listen_fd);
    if (wake_fd >= 0)
        close(wake_fd);
    listen_fd = wake_fd = -1;
    pprof_fini();
    return rc;
}

EXPORT int cprof_http_module_stop(void)
{
    if (!__atomic_exchange_n(&running, 0, __ATOMIC_ACQ_REL))
        return -ENOTCONN;
    __atomic_store_n(&stopping, 1, __ATOMIC_RELEASE);
    uint64_t one = 1;
    ssize_t w = write(wake_fd, &one, sizeof(one));
    (void)w;
    pthread_join(thread, NULL);
    close(wake_fd);
    wake_fd = -1;
    listen_fd = -1; /* closed by MHD_stop_daemon */
    pprof_fini();
    return 0;
}

EXPORT void cprof_http_module_forget(void)
{
    /* Fork child: no server thread here. Only close this process's copy of
     * the listening socket, so the port is free once the parent stops. */
    if (listen_fd >= 0)
        close(listen_fd);
    listen_fd = -1;
    daemon_ = NULL;
    conns = NULL;
    running = 0;
}

/* At exit, the destructors of libmicrohttpd (and GnuTLS) run after this
 * object's: the server stops here first, so that no request is served by
 * a library being torn down. exit() waits for the request in progress. */
__attribute__((destructor)) static void server_fini(void)
{
    if (!__atomic_load_n(&running, __ATOMIC_ACQUIRE))
        return;
    uint32_t g = ops->guard_enter();
    cprof_http_module_stop();
    ops->guard_leave(g);
}
