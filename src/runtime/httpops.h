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
 * size is smaller than the one it was built with, and rows of a size it
 * was not built with. New members go at the end; bump
 * CPROF_HTTP_OPS_VERSION when a member changes meaning (or profile_kind_t
 * or heap_snapshot_t its layout). A new profile kind is a row of the
 * registry, not a change here. */
#ifndef CPROF_HTTPOPS_H
#define CPROF_HTTPOPS_H

#include "cprof.h"
#include "runtime/heapprof.h"
#include "runtime/profiles.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* 6: the profile kinds are the registry's rows (profiles.h), which replace
 * the tables of profiles written whole and of sessions. A build may set
 * another: tests/e2e/http_contract.sh builds a module of version 5. */
#ifndef CPROF_HTTP_OPS_VERSION
#define CPROF_HTTP_OPS_VERSION 6
#endif

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

    /* The profile kinds (profiles.h), one endpoint each: the registry's
     * rows, sorted by name. They cross by layout, as heap_snapshot_t. */
    uint32_t kind_size; /* sizeof(profile_kind_t) */
    const profile_kind_t *kinds;
    size_t n_kinds;

    /* /debug/pprof/heap?window=SPEC: the flight recorder's window
     * (flightrec_write_spec): 0, -EINVAL, -ENODATA (not recording). */
    int (*heap_window)(int fd, const char *spec);
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
