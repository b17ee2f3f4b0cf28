/* httpctl.h — the runtime's side of the /debug/pprof/ HTTP server: reading
 * CPROF_HTTP, CPROF_HTTP_ADDR_FILE and CPROF_HTTP_TOKEN, opening the
 * listening socket, loading libcprof-http.so (httpops.h) from the directory
 * libcprof.so was loaded from, and the public cprof_http_* functions.
 *
 * Nothing here is on an allocation path; everything runs with the guard
 * set. Start and stop are serialized by an atomic state, not a lock. */
#ifndef CPROF_HTTPCTL_H
#define CPROF_HTTPCTL_H

#include <stdbool.h>
#include <sys/socket.h>

typedef struct {
    struct sockaddr_storage ss;
    socklen_t len;
    bool all_interfaces; /* 0.0.0.0 or [::] */
} httpctl_addr_t;

/* HOST:PORT with HOST a numeric IPv4 address, [IPv6], "localhost" or empty
 * (both loopback: unlike Go, ":6060" does not mean every interface), and
 * PORT 0-65535 (0: any free port). Names are not resolved: no DNS from
 * inside the profiled program. Also the push client's (push.h). 0 or
 * -EINVAL. */
int httpctl_parse_addr(const char *s, httpctl_addr_t *a);

/* Called once from the runtime's constructor (guard set): remembers where
 * libcprof.so lives and, if CPROF_HTTP is set, starts the server, prints
 * its address to stderr and writes CPROF_HTTP_ADDR_FILE. A bad variable
 * prints one line naming it; the server stays off, the program runs on. */
void httpctl_start_from_env(void);

/* For cprof attach (attach.h), guard set: loads libcprof-http.so and its
 * libraries now, so that the GOT pass routes their calls too before the
 * server starts threads; then starts the server on addr with token (NULL:
 * CPROF_HTTP_TOKEN, if set). 0 or a negative errno; nothing printed. */
int httpctl_load(void);
/* For cprof attach into another mount namespace, before httpctl_load:
 * libcprof-http.so is at path (a /proc/self/fd/N memfd the tool filled),
 * not beside libcprof.so. -ENAMETOOLONG, or 0. */
int httpctl_set_module(const char *path);
int httpctl_start_token(const char *addr, const char *token);

#endif
