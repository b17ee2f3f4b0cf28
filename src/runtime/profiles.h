/* profiles.h — the registry of profile kinds: one row per kind, as Go's
 * runtime/pprof keeps one table of its profiles (pprof.Profiles(), which
 * net/http/pprof's Index lists). A row says everything the rest of cprof
 * needs to know about a kind: its name, the environment variable naming
 * the file written at exit, its writer, its count for the index page, its
 * debug levels, its reset, its description, its HTTP parameters.
 *
 * Driven from it: config.c reads each row's variable, api.c writes each
 * row's file at exit (and starts a session kind's recording for the run),
 * and the HTTP server (src/http/pprof.c, through httpops.h) serves one
 * endpoint per row beside the pages it owns (index, cmdline, symbol).
 * Adding a kind: its writer in its own module, one row in profiles.c, and
 * the docs (src/runtime/HACKING.md, "Adding a profile kind").
 *
 * The rows are constant and cross into libcprof-http.so by layout
 * (httpops.h: a change of profile_kind_t or of the PROFILE_* values is a
 * new CPROF_HTTP_OPS_VERSION; a new row is not). Their
 * functions run with the guard set, in ordinary threads (the program's,
 * the exit path's, the HTTP server's): never in a hook or a handler. */
#ifndef CPROF_PROFILES_H
#define CPROF_PROFILES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* How a kind is recorded, and so how the server serves it. */
typedef enum {
    PROFILE_WHOLE = 1, /* written whole, now, by write(fd, debug) */
    PROFILE_HEAP,      /* the heap's buckets: the server takes heap snapshots
                        * (heapprof.h) and subtracts them for ?seconds=N */
    PROFILE_SESSION,   /* recorded over a while: start(fd) .. stop(id) */
} profile_how_t;

/* The HTTP parameters a kind takes (profile_kind_t.params), each read with
 * Go's checks and in Go's order (src/http/pprof.c read_params). */
enum {
    PROFILE_P_DELTA = 1,          /* seconds=N: a delta over N s (debug must be 0) */
    PROFILE_P_SECONDS = 2,        /* seconds=N: the CPU profile's duration, 30 by default */
    PROFILE_P_GC = 4,             /* gc=N: checked; C has nothing to collect */
    PROFILE_P_DEBUG = 8,          /* debug=N: the text forms */
    PROFILE_P_TRACE_SECONDS = 16, /* seconds=X: the trace's, any number, 1 by default */
    PROFILE_P_RESET = 32,         /* reset=N: N != 0 starts the profile anew once answered */
    /* Not a parameter: the session's output is streamed to the client as
     * it records (Go's Trace), not staged; a module that predates it
     * stages it, so it is a new value, not a new version. */
    PROFILE_P_STREAM = 64,
};

typedef struct {
    const char *name;  /* /debug/pprof/NAME: Go's name where Go has the kind */
    const char *desc;  /* the index page's text: Go's profileDescriptions */
    profile_how_t how;
    unsigned params;   /* PROFILE_P_* */
    /* The variable naming the file written at exit (a session: recorded
     * for the whole run, written at exit), or NULL: none. */
    const char *env;
    const char *what;  /* in messages: "no <what> is written" */

    /* PROFILE_WHOLE and PROFILE_HEAP: debug 0 gzipped profile.proto, 1 Go's
     * text, 2 up to max_debug its own (one block per thread); 0 or a
     * negative errno. */
    int (*write)(int fd, int debug);
    int max_debug;
    size_t (*count)(void); /* the index page's count, or NULL (0) */
    void (*reset)(void);   /* ?reset=1 (PROFILE_P_RESET), or NULL */
    const char *sample_type; /* PROFILE_HEAP: the default one, NULL inuse_space */

    /* PROFILE_SESSION: start a session written to fd (the caller's): its
     * id (> 0), -EBUSY while another runs, or a negative errno; stop it
     * (unless discard, complete what it wrote; if stopped already, that
     * outcome); session: the runtime's session (session.h), which api.c
     * starts for the run into env's pattern when its module could bind it,
     * and ends at exit. */
    int64_t (*start)(int fd);
    int (*stop)(int64_t id, bool discard);
    struct session *session;
    const char *enable, *busy; /* Go's "Could not enable <enable>: <busy>" */
    /* Why this build cannot write the kind (its variable is then refused
     * with one line), or NULL. */
    const char *off;
} profile_kind_t;

/* The rows, sorted by name (as Go's index page lists them). */
extern const profile_kind_t profile_kinds[];
extern const size_t profile_kinds_n;

/* At most this many rows: config.h keeps one path per row. */
#define PROFILE_KINDS_MAX 16

/* The row named name, or NULL. */
const profile_kind_t *profile_find(const char *name);

#endif
