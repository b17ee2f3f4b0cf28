/* pprof.h — the /debug/pprof/ endpoints, with the paths, parameters,
 * headers, status codes and error texts of Go's net/http/pprof, plus what
 * a profiler inside a C program needs on top: a credential check
 * (CPROF_HTTP_TOKEN), a method check, and limits.
 *
 * This module knows nothing of libmicrohttpd: server.c hands it a request
 * (method, path, raw query, Authorization header) and turns its replies
 * into responses. A request ends in one of three ways:
 *   PPROF_REPLY      the reply is ready;
 *   PPROF_READ_BODY  (POST /debug/pprof/symbol) feed the body with
 *                    pprof_body, then pprof_body_end gives the reply;
 *   PPROF_WAIT       (?seconds=N delta profiles, the CPU profile) call
 *                    pprof_wait_end at the monotonic time given, or
 *                    earlier to cancel.
 *   PPROF_STREAM     (the trace) the reply's headers are ready, its body
 *                    is read with pprof_stream_read as it is recorded;
 *                    pprof_stream_end at the monotonic time given ends
 *                    the recording (the body then ends); pprof_req_free
 *                    discards a recording the client left.
 *
 * Threads: everything runs on the server thread, with the runtime's guard
 * set; snapshots are lock-free copies and all encoding happens here, so
 * the program's own threads are never held up by a request. */
#ifndef CPROF_HTTP_PPROF_H
#define CPROF_HTTP_PPROF_H

#include "runtime/httpops.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Requests for a delta profile longer than this are refused as Go refuses
 * them when they exceed its server's WriteTimeout. */
#define PPROF_WRITE_TIMEOUT_S 600
/* Delta profiles waiting at once (each holds a snapshot). */
#define PPROF_MAX_WAITING 8
/* Largest POST body of /debug/pprof/symbol. */
#define PPROF_MAX_BODY (16u << 20)

typedef struct {
    int status;
    const char *content_type; /* static */
    char disposition[64];     /* Content-Disposition file name, or "" */
    bool nosniff;             /* X-Content-Type-Options: nosniff */
    bool go_error;            /* X-Go-Pprof: 1 (pprof then prints the body) */
    const char *allow;        /* Allow (405), static, or NULL */
    bool challenge;           /* WWW-Authenticate (401) */
    char *location;           /* Location (301), malloc'd, or NULL */
    char *body;               /* malloc'd body, or NULL when fd is used */
    size_t len;
    int fd; /* -1, or a memfd holding the body (len bytes) */
} pprof_reply_t;

typedef struct {
    const char *method;
    const char *path;          /* decoded, as libmicrohttpd gives it */
    const char *query;         /* raw, after '?'; "" if none */
    const char *authorization; /* the header, or NULL */
    int64_t content_length;    /* -1 when not given */
} pprof_request_t;

typedef enum { PPROF_REPLY, PPROF_READ_BODY, PPROF_WAIT, PPROF_STREAM } pprof_action_t;

typedef struct pprof_req pprof_req_t; /* per-request state */

/* Once, before any request: the runtime's table and the credential (NULL:
 * none; copied). 0 or -ENOMEM. */
int pprof_init(const cprof_http_ops_t *ops, const char *token);
void pprof_fini(void);

pprof_req_t *pprof_req_new(void);
void pprof_req_free(pprof_req_t *r);

/* Starts a request. For PPROF_WAIT, *until_ms is the CLOCK_MONOTONIC time
 * in milliseconds at which to call pprof_wait_end. */
pprof_action_t pprof_begin(pprof_req_t *r, const pprof_request_t *in, pprof_reply_t *out,
                           int64_t *until_ms);

/* Feeds body bytes; false when the body is over PPROF_MAX_BODY (the
 * connection should then be dropped). */
bool pprof_body(pprof_req_t *r, const char *data, size_t len);
void pprof_body_end(pprof_req_t *r, pprof_reply_t *out);

/* Ends a wait: the delta profile, or (cancelled) Go's error for a request
 * whose context ended. */
void pprof_wait_end(pprof_req_t *r, bool cancelled, pprof_reply_t *out);

/* PPROF_STREAM: up to n bytes of the body (> 0), 0 at its end, -EAGAIN
 * when nothing is there yet (poll pprof_stream_fd for POLLIN), or -errno.
 * pprof_stream_end: the duration is over; true the first time only. */
ssize_t pprof_stream_read(pprof_req_t *r, void *buf, size_t n);
int pprof_stream_fd(const pprof_req_t *r);
bool pprof_stream_end(pprof_req_t *r);

/* Releases what a reply holds (its fd too) and resets it. */
void pprof_reply_clear(pprof_reply_t *rep);


#endif
