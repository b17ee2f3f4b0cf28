/* symbolize.h — local symbolization of a decoded profile: turns the bare
 * addresses a C profiler writes (pprof-format.md §5.4 b) into Functions and
 * Lines, from the object files named by the profile's mappings.
 *
 * What it owns: finding each mapping's object file (recorded path,
 * PPROF_BINARY_PATH, the BINARY override for mapping[0]) and checking its
 * GNU build id; translating process addresses to file addresses as the
 * loader placed them; reading DWARF (with inline frames), separate debug
 * files (.build-id, .gnu_debuglink, debuginfod) and ELF symbol tables; and
 * demangling C++ names the way pprof's -symbolize=demangle=... does.
 * Object access sits in elfobj.h, name simplification in demangle.h.
 *
 * Environment: PPROF_BINARY_PATH (colon-separated directories searched for
 * binaries, default $HOME/pprof/binaries, as pprof); DEBUGINFOD_URLS (and
 * the other DEBUGINFOD_* of libdebuginfod) for debug files and for
 * executables missing here; CPROF_DEBUG_FILE_DIRECTORY (colon-separated)
 * replaces /usr/lib/debug as the root of .build-id/ and .gnu_debuglink
 * lookups, like gdb's debug-file-directory.
 *
 * Threads: one profile per call; no global state is kept between calls.
 * Output: warnings only, one line each on stderr, worded as go tool pprof
 * words them; errors (out of memory) are returned for the driver to print.
 */
#ifndef CPROF_TOOL_SYMBOLIZE_H
#define CPROF_TOOL_SYMBOLIZE_H

#include <stdbool.h>
#include <stddef.h>

#include "profile/profile.h"
#include "tool/symbolize/demangle.h"

typedef struct {
    /* The -symbolize= value: "none", "local", "fastlocal", "remote", "force",
     * "demangle=none|full|templates|default", combined with ':'. NULL or ""
     * means the default (local symbolization, simplified demangling). */
    const char *mode;
    /* The BINARY argument of `cprof BINARY PROFILE`: replaces
     * mapping[0].filename (as pprof does, also for the File: header), or NULL. */
    const char *binary;
} symbolize_opts_t;

/* The -symbolize= value as pprof's Symbolizer.Symbolize reads it, for
 * this symbolizer and the remote one (symbolz.h). */
typedef struct {
    bool none;   /* "none" or "no": no symbolization at all */
    bool local;  /* object files here; off after "remote" */
    bool remote; /* the symbolz endpoint of an HTTP source; off after "local" */
    bool fast;   /* "fastlocal" */
    bool force;  /* "force", or a demangle= mode other than default */
    demangle_mode_t demangle;
} symbolize_mode_t;

/* Parses mode (NULL: the defaults); false when an option is unknown (the
 * caller warns, as pprof does; the others still apply). */
bool symbolize_parse_mode(const char *mode, symbolize_mode_t *m);

/* Fills the Function and Line tables for the locations of mappings that
 * lack them (all has_* flags false; every mapping with "force"), and sets
 * the has_* flags of the mappings it symbolized. Mapping filenames are
 * updated first, also under "none", to the file actually found (BINARY,
 * PPROF_BINARY_PATH), because pprof shows that name in its reports.
 * Then C++ names are demangled (functions whose name equals system_name).
 *
 * A missing object file, an unreadable one or a build-id mismatch is not an
 * error: it is reported on stderr ("Local symbolization failed for NAME:
 * ...") and that mapping's locations keep their bare addresses.
 * On success p is indexed (profile_index), the functions added included.
 * Returns 0, or a negative errno with a message in err. */
int symbolize_profile(profile_t *p, const symbolize_opts_t *o, char *err, size_t errlen);

#endif
