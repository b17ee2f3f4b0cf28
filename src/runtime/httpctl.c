/* httpctl.c — starting and stopping the /debug/pprof/ server (see
 * httpctl.h): environment, listening socket, loading libcprof-http.so, and
 * cprof_http_start / cprof_http_stop / cprof_http_port.
 *
 * The socket is opened here, not in the module, so that a bad address or a
 * port in use is reported before any HTTP code is loaded, and so that the
 * port is known (and written to CPROF_HTTP_ADDR_FILE) as soon as the
 * kernel queues connections for it. */
#include "httpctl.h"

#include "flightrec.h"

#include "config.h"
#include "heapprof.h"
#include "httpops.h"
#include "base/fdio.h"
#include "outfile.h"
#include "profiles.h"
#include "rt.h"
#include "sampler.h"

#include "cprof.h"

#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define TOKEN_MAX 1024

/* --- the table handed to the module ------------------------------------- */

static uint32_t op_guard_enter(void)
{
    return rt_guard_enter();
}

static void op_guard_leave(uint32_t prev)
{
    rt_guard_leave(prev);
}

static int64_t op_rate(void)
{
    return __atomic_load_n(&sampler_rate, __ATOMIC_RELAXED);
}

/* Not const: start sets n_kinds (profile_kinds_n is not a constant
 * expression). */
static cprof_http_ops_t ops = {
    .version = CPROF_HTTP_OPS_VERSION,
    .size = sizeof(cprof_http_ops_t),
    .heap_snapshot_version = HEAP_SNAPSHOT_VERSION,
    .heap_snapshot_size = sizeof(heap_snapshot_t),
    .guard_enter = op_guard_enter,
    .guard_leave = op_guard_leave,
    .heap_snapshot = heap_snapshot,
    .heap_snapshot_free = heap_snapshot_free,
    .heap_snapshot_subtract = heap_snapshot_subtract,
    .heap_write_proto = heap_write_proto,
    .heap_write_text = heap_write_text,
    .stats = cprof_stats,
    .rate = op_rate,
    .kind_size = sizeof(profile_kind_t),
    .kinds = profile_kinds,
    .heap_window = flightrec_write_spec,
};

/* --- state ----------------------------------------------------------------- */

enum { OFF, STARTING, RUNNING, STOPPING };

static int state = OFF;  /* atomic; the only serialization of start/stop */
static int port = -1;    /* of the running server */
static char module_path[4096]; /* libcprof-http.so beside libcprof.so */
static cprof_http_module_start_fn mod_start;
static cprof_http_module_stop_fn mod_stop;
static cprof_http_module_forget_fn mod_forget;

static void fork_child(void)
{
    /* The server thread does not exist in the child. */
    if (__atomic_load_n(&state, __ATOMIC_RELAXED) != OFF) {
        if (mod_forget)
            mod_forget();
        port = -1;
        __atomic_store_n(&state, OFF, __ATOMIC_RELEASE);
    }
}

/* Remembers <directory of libcprof.so>/libcprof-http.so, resolving a
 * relative preload path while the working directory is still the one it
 * was given in. */
static void find_module(void)
{
    if (module_path[0])
        return;
    Dl_info info;
    if (!dladdr((void *)cprof_http_start, &info) || !info.dli_fname)
        return;
    char *real = realpath(info.dli_fname, NULL);
    const char *lib = real ? real : info.dli_fname;
    const char *slash = strrchr(lib, '/');
    if (slash)
        snprintf(module_path, sizeof(module_path), "%.*s/%s", (int)(slash - lib), lib,
                 CPROF_HTTP_MODULE_FILE);
    else
        snprintf(module_path, sizeof(module_path), "%s", CPROF_HTTP_MODULE_FILE);
    free(real);
}

int httpctl_set_module(const char *path)
{
    if (strlen(path) >= sizeof(module_path))
        return -ENAMETOOLONG;
    if (!mod_start) /* a module already loaded stays the one used */
        snprintf(module_path, sizeof(module_path), "%s", path);
    return 0;
}

static int load_module(char *why, size_t whylen)
{
#ifndef __GLIBC__
    /* libmicrohttpd and libcprof-http.so are glibc's: nothing to load. */
    snprintf(why, whylen, "the musl build of libcprof.so has no HTTP server "
             "(libcprof-http.so needs glibc); write profiles at exit instead");
    return -ENOTSUP;
#endif
    if (mod_start)
        return 0;
    find_module();
    void *h = dlopen(module_path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        snprintf(why, whylen, "cannot load %s: %s", module_path, e ? e : "unknown error");
        return -ENOENT;
    }
    cprof_http_module_start_fn s = (cprof_http_module_start_fn)dlsym(h, CPROF_HTTP_MODULE_START);
    cprof_http_module_stop_fn t = (cprof_http_module_stop_fn)dlsym(h, CPROF_HTTP_MODULE_STOP);
    cprof_http_module_forget_fn f =
        (cprof_http_module_forget_fn)dlsym(h, CPROF_HTTP_MODULE_FORGET);
    if (!s || !t || !f) {
        snprintf(why, whylen, "%s lacks its entry points", module_path);
        return -ENOENT;
    }
    /* The module stays loaded for good (stopping keeps it for a restart). */
    mod_stop = t;
    mod_forget = f;
    __atomic_store_n(&mod_start, s, __ATOMIC_RELEASE);
    return 0;
}

/* --- addresses ----------------------------------------------------------- */

int httpctl_parse_addr(const char *s, httpctl_addr_t *a)
{
    memset(a, 0, sizeof(*a));
    const char *colon = strrchr(s, ':');
    if (!colon || !colon[1] || strlen(colon + 1) > 5)
        return -EINVAL;
    unsigned long p = 0;
    for (const char *c = colon + 1; *c; c++) {
        if (*c < '0' || *c > '9')
            return -EINVAL;
        p = p * 10 + (unsigned long)(*c - '0');
    }
    if (p > 65535)
        return -EINVAL;
    char host[64];
    size_t hl = (size_t)(colon - s);
    if (hl >= sizeof(host))
        return -EINVAL;
    memcpy(host, s, hl);
    host[hl] = '\0';
    if (host[0] == '[') {
        if (hl < 3 || host[hl - 1] != ']')
            return -EINVAL;
        host[hl - 1] = '\0';
        struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&a->ss;
        if (inet_pton(AF_INET6, host + 1, &in6->sin6_addr) != 1)
            return -EINVAL;
        in6->sin6_family = AF_INET6;
        in6->sin6_port = htons((uint16_t)p);
        a->len = sizeof(*in6);
        a->all_interfaces = IN6_IS_ADDR_UNSPECIFIED(&in6->sin6_addr);
        return 0;
    }
    struct sockaddr_in *in = (struct sockaddr_in *)&a->ss;
    if (!host[0] || strcmp(host, "localhost") == 0)
        in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    else if (inet_pton(AF_INET, host, &in->sin_addr) != 1)
        return -EINVAL;
    in->sin_family = AF_INET;
    in->sin_port = htons((uint16_t)p);
    a->len = sizeof(*in);
    a->all_interfaces = in->sin_addr.s_addr == htonl(INADDR_ANY);
    return 0;
}

/* "127.0.0.1:PORT" or "[::1]:PORT" of a bound socket. */
static void format_addr(int fd, char *out, size_t outlen, int *port_out)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof(ss);
    char host[INET6_ADDRSTRLEN] = "?";
    int p = -1;
    if (getsockname(fd, (struct sockaddr *)&ss, &len) == 0) {
        if (ss.ss_family == AF_INET6) {
            struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
            inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
            p = ntohs(in6->sin6_port);
        } else {
            struct sockaddr_in *in = (struct sockaddr_in *)&ss;
            inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
            p = ntohs(in->sin_port);
        }
    }
    snprintf(out, outlen, ss.ss_family == AF_INET6 ? "[%s]:%d" : "%s:%d", host, p);
    *port_out = p;
}

static int open_listener(const httpctl_addr_t *a)
{
    int fd = socket(a->ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return -errno;
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (a->ss.ss_family == AF_INET6)
        setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
    if (bind(fd, (const struct sockaddr *)&a->ss, a->len) < 0 || listen(fd, 64) < 0) {
        int e = errno;
        close(fd);
        return -e;
    }
    return fd;
}

/* --- the other variables --------------------------------------------------- */

/* One line naming the variable (a long value is cut, so the line stays
 * whole; a secret one is not shown). */
static void bad(const char *name, const char *value, const char *accepts)
{
    if (!value)
        rt_warn("%s is not valid: %s; the HTTP server is off", name, accepts);
    else
        rt_warn("%s=\"%.*s%s\" is not valid: %s; the HTTP server is off", name, 100, value,
                strlen(value) > 100 ? "..." : "", accepts);
}

/* CPROF_HTTP_TOKEN: NULL if unset; -EINVAL (after one line) if bad. */
static int read_token(const char **out)
{
    const char *v = secure_getenv("CPROF_HTTP_TOKEN");
    *out = NULL;
    if (!v)
        return 0;
    size_t n = strlen(v);
    bool ok = n > 0 && n <= TOKEN_MAX;
    for (size_t i = 0; ok && i < n; i++)
        ok = v[i] > ' ' && v[i] < 0x7f;
    if (!ok) {
        bad("CPROF_HTTP_TOKEN", NULL, "expected 1 to 1024 visible ASCII characters, no spaces");
        return -EINVAL;
    }
    *out = v;
    return 0;
}

static int read_addr_file(const char **out)
{
    const char *v = secure_getenv("CPROF_HTTP_ADDR_FILE");
    *out = NULL;
    if (!v)
        return 0;
    if (config_check_pattern(v) < 0) {
        bad("CPROF_HTTP_ADDR_FILE", v, "expected a file name; %p pid, %e program, "
            "%t time, %n sequence, %% percent");
        return -EINVAL;
    }
    *out = v;
    return 0;
}

static int write_line(int fd, void *arg)
{
    const char *line = arg;
    return fdio_write_all(fd, line, strlen(line), FDIO_STALL_MS);
}

/* Writes "ADDR\n" to the expanded pattern (outfile.h: a file atomically,
 * so a test polling for it never reads half of it). */
static int write_addr_file(const char *pattern, const char *addr)
{
    char path[4096];
    int rc = config_expand_pattern(pattern, 0, path, sizeof(path));
    if (rc < 0)
        return rc;
    outfile_t f;
    if ((rc = outfile_open(&f, path, 0)) < 0)
        return rc;
    char line[128];
    snprintf(line, sizeof(line), "%s\n", addr);
    return outfile_close(&f, outfile_write(&f, write_line, line));
}

/* --- start / stop ------------------------------------------------------------- */

/* Starts the server on addr (state is STARTING, guard set). Fills bound
 * with the address it listens on; on failure, why with one phrase. */
static int start_locked(const char *addr, const char *token, char *bound, size_t boundlen,
                        char *why, size_t whylen)
{
    httpctl_addr_t a;
    if (httpctl_parse_addr(addr, &a) < 0) {
        snprintf(why, whylen, "expected HOST:PORT with a numeric IP address, [IPv6], "
                 "localhost or nothing (loopback) as HOST and a port from 0 to 65535");
        return -EINVAL;
    }
    int rc = load_module(why, whylen);
    if (rc < 0)
        return rc;
    int fd = open_listener(&a);
    if (fd < 0) {
        snprintf(why, whylen, "cannot listen: %s", strerror(-fd));
        return fd;
    }
    int p;
    format_addr(fd, bound, boundlen, &p);
    cprof_http_args_t args = {.listen_fd = fd, .token = token};
    ops.n_kinds = profile_kinds_n;
    rc = mod_start(&ops, &args);
    close(fd); /* the module serves on its own duplicate */
    if (rc < 0) {
        snprintf(why, whylen, "cannot start the server: %s", strerror(-rc));
        return rc;
    }
    static bool atfork_set;
    if (!atfork_set) {
        atfork_set = true;
        pthread_atfork(NULL, NULL, fork_child);
    }
    port = p;
    return 0;
}

/* The whole start: variables, server, address file. announce: print the
 * address (and failures) to stderr, as for CPROF_HTTP. */
static int start(const char *addr, const char *token, bool announce)
{
    const char *addr_file;
    if ((!token && read_token(&token) < 0) || read_addr_file(&addr_file) < 0)
        return -EINVAL;
    int expected = OFF;
    if (!__atomic_compare_exchange_n(&state, &expected, STARTING, false, __ATOMIC_ACQUIRE,
                                     __ATOMIC_RELAXED))
        return -EALREADY;
    char bound[128] = "", why[4400] = "";
    if (!__atomic_load_n(&rt_next.malloc, __ATOMIC_ACQUIRE)) {
        __atomic_store_n(&state, OFF, __ATOMIC_RELEASE);
        if (announce)
            rt_warn("CPROF_HTTP=\"%s\": the next allocator is not known yet; the HTTP server "
                    "is off", addr);
        return -EAGAIN;
    }
    int rc = start_locked(addr, token, bound, sizeof(bound), why, sizeof(why));
    __atomic_store_n(&state, rc == 0 ? RUNNING : OFF, __ATOMIC_RELEASE);
    if (rc < 0) {
        if (announce)
            rt_warn("CPROF_HTTP=\"%s\": %s; the HTTP server is off", addr, why);
        return rc;
    }
    if (announce)
        rt_warn("serving /debug/pprof/ on http://%s/debug/pprof/", bound);
    if (addr_file) {
        int wr = write_addr_file(addr_file, bound);
        if (wr < 0)
            rt_warn("cannot write CPROF_HTTP_ADDR_FILE=\"%s\": %s", addr_file, outfile_strerror(wr));
    }
    return 0;
}

void httpctl_start_from_env(void)
{
    find_module();
    const char *v = secure_getenv("CPROF_HTTP");
    if (!v)
        return;
    httpctl_addr_t a;
    if (httpctl_parse_addr(v, &a) < 0) {
        bad("CPROF_HTTP", v, "expected HOST:PORT, e.g. 127.0.0.1:6060, localhost:0 (any free "
            "port), [::1]:6060 or :6060 (loopback)");
        return;
    }
    if (a.all_interfaces)
        rt_warn("CPROF_HTTP=\"%s\" serves every network interface: anyone who can reach this "
                "host can read the program's profiles and command line", v);
    start(v, NULL, true);
}

RT_EXPORT int cprof_http_start(const char *addr)
{
    if (!addr)
        return -EINVAL;
    uint32_t g = rt_guard_enter();
    int rc = start(addr, NULL, false);
    rt_guard_leave(g);
    return rc;
}

int httpctl_load(void)
{
    char why[4400];
    return load_module(why, sizeof(why));
}

int httpctl_start_token(const char *addr, const char *token)
{
    return start(addr, token, false);
}

RT_EXPORT int cprof_http_stop(void)
{
    int expected = RUNNING;
    if (!__atomic_compare_exchange_n(&state, &expected, STOPPING, false, __ATOMIC_ACQUIRE,
                                     __ATOMIC_RELAXED))
        return expected == OFF ? -ENOTCONN : -EBUSY;
    uint32_t g = rt_guard_enter();
    int rc = mod_stop();
    rt_guard_leave(g);
    port = -1;
    __atomic_store_n(&state, OFF, __ATOMIC_RELEASE);
    return rc;
}

RT_EXPORT int cprof_http_port(void)
{
    if (__atomic_load_n(&state, __ATOMIC_ACQUIRE) != RUNNING)
        return -ENOTCONN;
    return port;
}
