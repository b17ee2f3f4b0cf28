/* push.c — profiles pushed to Pyroscope's /ingest (see push.h). */
#include "push.h"

#include "config.h"
#include "cpuprof.h"
#include "httpctl.h"
#include "heapoutput.h"
#include "rt.h"
#include "session.h"
#include "base/base64.h"
#include "base/url.h"

#include "cprof.h" /* CPROF_VERSION */

#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define QCAP 16         /* profiles waiting to be sent; then the oldest goes */
#define IO_TIMEOUT_S 5  /* connect, each send, the response */
#define MAX_LABELS 16

typedef enum { KIND_CPU, KIND_HEAP } kind_t;

typedef struct {
    int fd; /* memfd holding the gzipped profile */
    kind_t kind;
    int64_t from_s, until_s; /* Unix seconds */
} item_t;

/* Set once by push_start_from_env, read-only after. */
static struct {
    bool on;
    httpctl_addr_t addr;
    char url[256];     /* as given, for messages */
    char host[128];    /* Host header: HOST:PORT as given */
    char path[256];    /* ends in /ingest */
    char name_q[1024]; /* name{labels}, query-escaped */
    char auth[700];    /* "Authorization: ...\r\n" or "" */
    int64_t interval_ns;
    int hz;            /* CPU samples per second; 0: no CPU profile */
    bool heap;
} P;

/* The queue, under qlock (held for a few stores, never across a call). */
static rt_lock_t qlock;
static item_t q[QCAP];
static unsigned qhead, qn;
static bool busy;         /* the sender holds an item */
static bool sender_stop;  /* exit: end once the queue is empty */
static uint64_t n_taken, n_sent, n_dropped, n_failed;
static int last_err, last_status;

static uint32_t qseq;      /* futex: bumped by every enqueue and the stop */
static uint32_t done_seq;  /* futex: bumped when the sender is done with one */
static uint32_t collect_stop; /* futex: exit asks the collector to end */
static pthread_t collector, sender;
static int64_t last_heap_s;
static bool forked; /* in a child: no threads, nothing pushed */

static int64_t unix_s(void)
{
    return (int64_t)time(NULL);
}

/* --- the queue ------------------------------------------------------------------- */

static void enqueue(int fd, kind_t kind, int64_t from_s, int64_t until_s)
{
    int old = -1;
    rt_lock(&qlock);
    n_taken++;
    if (qn == QCAP) { /* the receiver is behind: the oldest goes */
        old = q[qhead].fd;
        qhead = (qhead + 1) % QCAP;
        qn--;
        n_dropped++;
    }
    q[(qhead + qn) % QCAP] = (item_t){fd, kind, from_s, until_s};
    qn++;
    __atomic_add_fetch(&qseq, 1, __ATOMIC_RELEASE);
    rt_unlock(&qlock);
    rt_futex_wake(&qseq, 1);
    if (old >= 0)
        close(old);
}

/* The profiles of the span since the last call into the queue. One thread
 * at a time: the collector, then (after it ended) push_fini. */
static void collect(void)
{
    int64_t now = unix_s();
    if (P.hz) {
        int fd = memfd_create("cprof-push-cpu", MFD_CLOEXEC);
        int64_t start_ns = 0;
        if (fd >= 0 && cpu_delta_write(fd, &start_ns) == 0) {
            enqueue(fd, KIND_CPU, start_ns / 1000000000, now);
        } else {
            if (fd >= 0)
                close(fd);
            rt_lock(&qlock);
            n_taken++, n_failed++, last_err = fd < 0 ? -errno : -EIO, last_status = 0;
            rt_unlock(&qlock);
        }
    }
    if (P.heap) {
        int fd = memfd_create("cprof-push-heap", MFD_CLOEXEC);
        int rc = fd < 0 ? -errno : output_write_heap_fd(fd, 0);
        if (rc == 0) {
            enqueue(fd, KIND_HEAP, last_heap_s, now);
        } else {
            if (fd >= 0)
                close(fd);
            rt_lock(&qlock);
            n_taken++, n_failed++, last_err = rc, last_status = 0;
            rt_unlock(&qlock);
        }
        last_heap_s = now;
    }
}

/* --- HTTP ------------------------------------------------------------------------ */

static int send_all(int s, const void *buf, size_t n)
{
    const char *p = buf;
    while (n > 0) {
        ssize_t w = send(s, p, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return w < 0 ? (errno == EAGAIN ? -ETIMEDOUT : -errno) : -EIO;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* One POST of it; 0 on a 2xx answer, else a negative errno (*status: the
 * HTTP status of a non-2xx answer, 0 if none came). */
static int post(const item_t *it, int *status)
{
    *status = 0;
    struct stat st;
    if (fstat(it->fd, &st) < 0)
        return -errno;
    char boundary[48], part_head[256], part_tail[64], rate[32] = "", head[3072];
    snprintf(boundary, sizeof(boundary), "cprof-%016llx",
             (unsigned long long)rt_now_ns() * 0x9e3779b97f4a7c15ull);
    int ph = snprintf(part_head, sizeof(part_head),
                      "--%s\r\nContent-Disposition: form-data; name=\"profile\"; "
                      "filename=\"profile.pprof\"\r\nContent-Type: application/octet-stream\r\n\r\n",
                      boundary);
    int pt = snprintf(part_tail, sizeof(part_tail), "\r\n--%s--\r\n", boundary);
    if (it->kind == KIND_CPU)
        snprintf(rate, sizeof(rate), "&sampleRate=%d", P.hz);
    int hl = snprintf(head, sizeof(head),
                      "POST %s?name=%s&from=%lld&until=%lld&format=pprof&spyName=cprof%s HTTP/1.1\r\n"
                      "Host: %s\r\nUser-Agent: cprof/" CPROF_VERSION "\r\n%s"
                      "Content-Type: multipart/form-data; boundary=%s\r\n"
                      "Content-Length: %lld\r\nConnection: close\r\n\r\n",
                      P.path, P.name_q, (long long)it->from_s, (long long)it->until_s, rate, P.host,
                      P.auth, boundary, (long long)(ph + st.st_size + pt));
    if (hl < 0 || (size_t)hl >= sizeof(head))
        return -ENAMETOOLONG;
    int s = socket(P.addr.ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s < 0)
        return -errno;
    struct timeval tv = {IO_TIMEOUT_S, 0};
    setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)); /* also bounds connect */
    setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    int rc = 0;
    if (connect(s, (const struct sockaddr *)&P.addr.ss, P.addr.len) < 0)
        rc = errno == EINPROGRESS ? -ETIMEDOUT : -errno;
    if (rc == 0)
        rc = send_all(s, head, (size_t)hl);
    if (rc == 0)
        rc = send_all(s, part_head, (size_t)ph);
    char buf[16384];
    for (off_t off = 0; rc == 0 && off < st.st_size;) {
        ssize_t r = pread(it->fd, buf, sizeof(buf), off);
        if (r <= 0) {
            rc = r < 0 ? -errno : -EIO;
            break;
        }
        rc = send_all(s, buf, (size_t)r);
        off += r;
    }
    if (rc == 0)
        rc = send_all(s, part_tail, (size_t)pt);
    /* The status line: "HTTP/1.1 200 OK\r\n". */
    size_t got = 0;
    while (rc == 0 && got < sizeof(buf) - 1 && !memchr(buf, '\n', got)) {
        ssize_t r = recv(s, buf + got, sizeof(buf) - 1 - got, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            rc = r < 0 ? (errno == EAGAIN ? -ETIMEDOUT : -errno) : -ECONNRESET;
        else
            got += (size_t)r;
    }
    close(s);
    if (rc < 0)
        return rc;
    buf[got] = '\0';
    int minor, code;
    if (sscanf(buf, "HTTP/1.%d %d", &minor, &code) != 2)
        return -EPROTO;
    if (code < 200 || code > 299) {
        *status = code;
        return -EPROTO;
    }
    return 0;
}

/* --- threads --------------------------------------------------------------------- */

static void *send_main(void *arg)
{
    (void)arg;
    rt_guard_enter(); /* for its whole life: its allocations are cprof's */
    for (;;) {
        uint32_t seen = __atomic_load_n(&qseq, __ATOMIC_ACQUIRE);
        rt_lock(&qlock);
        if (qn == 0) {
            bool end = sender_stop;
            rt_unlock(&qlock);
            if (end)
                return NULL;
            rt_futex_wait(&qseq, seen, 1000000000);
            continue;
        }
        item_t it = q[qhead];
        qhead = (qhead + 1) % QCAP;
        qn--;
        busy = true;
        rt_unlock(&qlock);
        int status, rc = post(&it, &status);
        close(it.fd);
        rt_lock(&qlock);
        busy = false;
        if (rc < 0)
            n_failed++, last_err = rc, last_status = status;
        else
            n_sent++;
        rt_unlock(&qlock);
        __atomic_add_fetch(&done_seq, 1, __ATOMIC_RELEASE);
        rt_futex_wake(&done_seq, INT32_MAX);
    }
}

static void *collect_main(void *arg)
{
    (void)arg;
    rt_guard_enter();
    int64_t next = rt_now_ns();
    for (;;) {
        next += P.interval_ns; /* a fixed schedule: a slow push does not shift it */
        for (;;) {
            if (__atomic_load_n(&collect_stop, __ATOMIC_ACQUIRE))
                return NULL;
            int64_t now = rt_now_ns();
            if (now >= next)
                break;
            rt_futex_wait(&collect_stop, 0, next - now);
        }
        collect();
    }
}

static void fork_child(void)
{
    forked = true; /* the threads stayed in the parent */
}

/* --- configuration --------------------------------------------------------------- */

static void bad(const char *name, const char *value, const char *accepts)
{
    rt_warn("%s=\"%.*s%s\" is not valid: %s; profiles are not pushed", name, RT_WARN_VALUE(value),
            accepts);
}

/* http://HOST:PORT[/PATH]: P.addr, P.host, P.path (PATH + /ingest unless it
 * ends so). */
static bool parse_url(const char *v)
{
    if (strncmp(v, "http://", 7) != 0)
        return false;
    const char *hp = v + 7, *slash = strchr(hp, '/');
    size_t hl = slash ? (size_t)(slash - hp) : strlen(hp);
    if (hl == 0 || hl >= sizeof(P.host))
        return false;
    memcpy(P.host, hp, hl);
    P.host[hl] = '\0';
    if (httpctl_parse_addr(P.host, &P.addr) < 0 || P.addr.all_interfaces)
        return false;
    in_port_t port = P.addr.ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&P.addr.ss)->sin6_port
                                                     : ((struct sockaddr_in *)&P.addr.ss)->sin_port;
    if (port == 0)
        return false;
    const char *path = slash ? slash : "";
    size_t pl = strlen(path);
    while (pl > 0 && path[pl - 1] == '/')
        pl--;
    for (size_t i = 0; i < pl; i++)
        if ((unsigned char)path[i] <= ' ' || path[i] == '?' || path[i] == '#' || path[i] == 0x7f)
            return false;
    bool has = pl >= 7 && memcmp(path + pl - 7, "/ingest", 7) == 0;
    int n = snprintf(P.path, sizeof(P.path), "%.*s%s", (int)pl, path, has ? "" : "/ingest");
    return n > 0 && (size_t)n < sizeof(P.path);
}

static bool name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-' || c == '.' || c == '/' || c == ':';
}

/* k=v,k=v: keys as Prometheus label names, values without , { } = " or
 * control characters; appended to out as Pyroscope's name{k=v,...}. */
static bool parse_labels(const char *v, char *out, size_t outlen)
{
    size_t n = strlen(out), count = 0;
    const char *p = v;
    while (*p) {
        const char *eq = strchr(p, '='), *end = strchr(p, ',');
        if (!end)
            end = p + strlen(p);
        if (!eq || eq > end || eq == p || eq + 1 == end || ++count > MAX_LABELS)
            return false;
        for (const char *c = p; c < eq; c++)
            if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || *c == '_' ||
                  (c > p && *c >= '0' && *c <= '9')))
                return false;
        for (const char *c = eq + 1; c < end; c++)
            if ((unsigned char)*c < ' ' || *c == 0x7f || strchr("{}=\"", *c))
                return false;
        int w = snprintf(out + n, outlen - n, "%s%.*s", count == 1 ? "{" : ",", (int)(end - p), p);
        if (w < 0 || (size_t)w >= outlen - n)
            return false;
        n += (size_t)w;
        p = *end ? end + 1 : end;
        if (*end && !*p)
            return false; /* a trailing comma */
    }
    if (count && n + 2 > outlen)
        return false;
    if (count)
        strcpy(out + n, "}");
    return true;
}

void push_start_from_env(int cpu_hz, bool heap)
{
    const char *v = secure_getenv("CPROF_PUSH");
    if (!v || !*v)
        return;
    if (strlen(v) >= sizeof(P.url) || !parse_url(v)) {
        bad("CPROF_PUSH", v, "expected http://HOST:PORT[/PATH] with HOST a numeric address or "
            "localhost (no https: push to a local Alloy)");
        return;
    }
    snprintf(P.url, sizeof(P.url), "%s", v);
    double interval = 15;
    if ((v = secure_getenv("CPROF_PUSH_INTERVAL")) && !config_parse_seconds(v, 0.01, 86400, &interval)) {
        bad("CPROF_PUSH_INTERVAL", v, "expected seconds, a number from 0.01 to 86400");
        return;
    }
    P.interval_ns = (int64_t)(interval * 1e9);
    char name[600];
    v = secure_getenv("CPROF_PUSH_NAME");
    const char *given = v && *v ? v : program_invocation_short_name;
    snprintf(name, sizeof(name) - 300, "%s", given && *given ? given : "cprof");
    for (char *c = name; *c; c++)
        if (!name_char(*c)) {
            if (v && *v) {
                bad("CPROF_PUSH_NAME", v, "expected letters, digits and _ - . / :");
                return;
            }
            *c = '_'; /* a program's own name: made fit */
        }
    if ((v = secure_getenv("CPROF_PUSH_LABELS")) && *v && !parse_labels(v, name, sizeof(name))) {
        bad("CPROF_PUSH_LABELS", v, "expected KEY=VALUE,... (at most 16; keys of letters, digits "
            "and _; values without , { } = \")");
        return;
    }
    if (!url_query_escape(name, P.name_q, sizeof(P.name_q)))
        return;
    const char *token = secure_getenv("CPROF_PUSH_TOKEN"), *basic = secure_getenv("CPROF_PUSH_BASIC_AUTH");
    if (token && *token) {
        for (const char *c = token; *c; c++)
            if ((unsigned char)*c <= ' ' || *c == 0x7f) {
                rt_warn("CPROF_PUSH_TOKEN is not valid: expected visible ASCII characters; profiles "
                        "are not pushed");
                return;
            }
        if ((size_t)snprintf(P.auth, sizeof(P.auth), "Authorization: Bearer %s\r\n", token) >= sizeof(P.auth)) {
            rt_warn("CPROF_PUSH_TOKEN is too long (at most 600 characters); profiles are not pushed");
            return;
        }
    } else if (basic && *basic) {
        char b64[520];
        if (!strchr(basic, ':') || strpbrk(basic, "\r\n") || !base64_encode(basic, strlen(basic), b64, sizeof(b64))) {
            rt_warn("CPROF_PUSH_BASIC_AUTH is not valid: expected USER:PASSWORD, at most 380 "
                    "characters; profiles are not pushed");
            return;
        }
        snprintf(P.auth, sizeof(P.auth), "Authorization: Basic %s\r\n", b64);
    }
    P.heap = heap;
    if (cpu_hz > 0) {
        P.hz = cpu_hz;
        cpu_delta_enable();
        /* The CPU profiler for the run, unless CPROF_CPU_PROFILE has it:
         * its session is then the one the deltas follow. */
        int64_t id = session_cpu_start_fd(-1);
        if (id < 0 && id != -EBUSY) {
            rt_warn("CPROF_PUSH: cannot start the CPU profile (%s); only the heap is pushed",
                    strerror((int)-id));
            P.hz = 0;
        }
    }
    last_heap_s = unix_s();
    pthread_atfork(NULL, NULL, fork_child);
    /* Created guarded (threadhook counts them cprof's), taking no signal. */
    if (rt_spawn(&sender, send_main, "cprof-push-tx") < 0) {
        rt_warn("CPROF_PUSH: cannot start its threads; profiles are not pushed");
        return;
    }
    if (rt_spawn(&collector, collect_main, "cprof-push") < 0) {
        rt_warn("CPROF_PUSH: cannot start its threads; profiles are not pushed");
        rt_lock(&qlock);
        sender_stop = true;
        rt_unlock(&qlock);
        __atomic_add_fetch(&qseq, 1, __ATOMIC_RELEASE);
        rt_futex_wake(&qseq, 1);
        return;
    }
    P.on = true;
}

void push_fini(void)
{
    if (!P.on || forked)
        return;
    __atomic_store_n(&collect_stop, 1, __ATOMIC_RELEASE);
    rt_futex_wake(&collect_stop, INT32_MAX);
    pthread_join(collector, NULL); /* it never waits on the network */
    collect();                     /* the last span: session_fini(&session_cpu) drained it */
    rt_lock(&qlock);
    sender_stop = true;
    rt_unlock(&qlock);
    __atomic_add_fetch(&qseq, 1, __ATOMIC_RELEASE);
    rt_futex_wake(&qseq, 1);
    int64_t deadline = rt_now_ns() + (int64_t)PUSH_EXIT_WAIT_MS * 1000000;
    unsigned left;
    for (;;) {
        uint32_t seen = __atomic_load_n(&done_seq, __ATOMIC_ACQUIRE);
        rt_lock(&qlock);
        left = qn + (busy ? 1 : 0);
        rt_unlock(&qlock);
        int64_t wait = deadline - rt_now_ns();
        if (left == 0 || wait <= 0)
            break;
        rt_futex_wait(&done_seq, seen, wait);
    }
    rt_lock(&qlock);
    uint64_t taken = n_taken, dropped = n_dropped, failed = n_failed;
    int err = last_err, status = last_status;
    rt_unlock(&qlock);
    if (dropped + failed + left == 0)
        return;
    char why[96] = "";
    if (failed && status)
        snprintf(why, sizeof(why), ", the last with HTTP status %d", status);
    else if (failed)
        snprintf(why, sizeof(why), ", the last: %s", strerror(-err));
    rt_warn("CPROF_PUSH: %llu of %llu profiles not delivered to %s (%llu dropped with the queue "
            "full, %llu failed%s, %u still unsent at exit)",
            (unsigned long long)(dropped + failed + left), (unsigned long long)taken, P.url,
            (unsigned long long)dropped, (unsigned long long)failed, why, left);
}
