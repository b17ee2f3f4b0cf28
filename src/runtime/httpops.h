/* httpops.h — the contract between libcprof.so and libcprof-http.so.
 *
 * The HTTP server (src/http/, libmicrohttpd) lives in its own shared object
 * so that preloading libcprof.so pulls in no HTTP stack. libcprof.so
 * (httpctl.c) dlopens it only when a server is asked for, and calls one
 * entry point with a table of function pointers: everything the server
 * needs from the runtime goes through this table, so libcprof.so exports
 * nothing but its public API (include/cprof.h).
 *
 * Threads: the module runs one server thread, with the runtime's guard set
 * for its whole life (guard_enter at its start, never left), so neither
 * libmicrohttpd's allocations nor the profile encoding are profiled.
 * start/stop/forget are called with the guard set, never concurrently
 * (httpctl.c serializes them).
 *
 * Versioning: the module refuses a table whose version differs or whose
 * size is smaller than the one it was built with. New members go at the
 * end; bump CPROF_HTTP_OPS_VERSION when a member changes meaning. */
#ifndef CPROF_HTTPOPS_H
#define CPROF_HTTPOPS_H

#include "cprof.h"
#include "runtime/heapprof.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CPROF_HTTP_OPS_VERSION 4

/* A profile the runtime writes whole, served as /debug/pprof/NAME (the
 * threads ("goroutine"), threadcreate, mutex and block profiles of
 * threadprof.h and lockprof.h). write: debug 0 gzipped profile.proto, 1
 * Go's text, 2 (up to max_debug) one block per thread; 0 or a negative
 * errno. count: what the index page shows (the program's threads now, the
 * live threads threadcreate counts, the records of mutex and block).
 * Adding one: a row in httpctl.c's profiles[] and one in the server's
 * endpoints[] (src/http/pprof.c). */
typedef struct {
    const char *name;
    int (*write)(int fd, int debug);
    size_t (*count)(void);
    int max_debug;
} cprof_http_profile_t;

typedef struct {
    uint32_t version; /* CPROF_HTTP_OPS_VERSION */
    uint32_t size;    /* sizeof(cprof_http_ops_t) as the runtime knows it */
    /* heap_snapshot_t crosses the boundary by layout: the module refuses
     * another version or size. */
    uint32_t heap_snapshot_version; /* HEAP_SNAPSHOT_VERSION */
    uint32_t heap_snapshot_size;    /* sizeof(heap_snapshot_t) */

    /* The per-thread "inside cprof" guard (rt.h). */
    uint32_t (*guard_enter)(void);
    void (*guard_leave)(uint32_t prev);

    /* Heap snapshots and their writers (heapprof.h). */
    int (*heap_snapshot)(heap_snapshot_t *s);
    void (*heap_snapshot_free)(heap_snapshot_t *s);
    void (*heap_snapshot_subtract)(heap_snapshot_t *cur, const heap_snapshot_t *base);
    int (*heap_write_proto)(int fd, const heap_snapshot_t *s, const char *default_type);
    int (*heap_write_text)(int fd, const heap_snapshot_t *s);

    /* Whole-process counters (cprof_stats) and the sampling rate in bytes. */
    int (*stats)(cprof_stats_t *st);
    int64_t (*rate)(void);

    /* The CPU profile (cpuprof.h). cpu_start begins one that is written to
     * fd (the caller's) when it stops: the session id (> 0), -EBUSY while
     * another runs, or a negative errno. cpu_stop ends session id and
     * writes it (unless discard); if it was stopped already, the outcome of
     * that. 0 or a negative errno. */
    int64_t (*cpu_start)(int fd);
    int (*cpu_stop)(int64_t id, bool discard);

    /* The profiles written whole (above). */
    const cprof_http_profile_t *profiles;
    size_t n_profiles;
} cprof_http_ops_t;

typedef struct {
    int listen_fd;     /* bound and listening; the caller keeps and closes it */
    const char *token; /* credential every request must carry, or NULL; copied */
} cprof_http_args_t;

/* Entry points of libcprof-http.so, found with dlsym by these names.
 * start: 0, or a negative errno. The module serves on a duplicate of
 *   listen_fd, so the caller closes its own descriptor either way.
 * stop: ends the server thread and closes every socket; 0 or -ENOTCONN.
 * forget: in a fork child (no server thread there): drops the parent's
 *   server without touching it, closing the child's copy of the listening
 *   socket; async-signal-safe. */
typedef int (*cprof_http_module_start_fn)(const cprof_http_ops_t *ops,
                                          const cprof_http_args_t *args);
typedef int (*cprof_http_module_stop_fn)(void);
typedef void (*cprof_http_module_forget_fn)(void);

#define CPROF_HTTP_MODULE_FILE "libcprof-http.so"
#define CPROF_HTTP_MODULE_START "cprof_http_module_start"
#define CPROF_HTTP_MODULE_STOP "cprof_http_module_stop"
#define CPROF_HTTP_MODULE_FORGET "cprof_http_module_forget"

#endif
