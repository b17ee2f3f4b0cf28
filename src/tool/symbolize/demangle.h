/* demangle.h — C++ (Itanium ABI) and Rust symbol names made readable the
 * way pprof shows them: -symbolize=demangle=full|templates|none|default.
 *
 * The demangling itself is libstdc++'s __cxa_demangle; this module owns the
 * simplification pprof applies on top (ianlancetaylor/demangle's NoParams,
 * NoTemplateParams and NoClones options), done on the demangled text:
 *   default    ns::Klass::method        no parameters, no template
 *                                       arguments, no return type
 *   templates  ns::Klass::tm<long>      no parameters, no return type
 *   full       long ns::Klass::tm<long>(long)   everything but clone suffixes
 *   none       the linker name untouched
 * Names that are not mangled but look like demangled C++ get the same
 * simplification (pprof's heuristic for profiles written with names).
 * Rust names (rustdemangle.h) are tried first, as pprof does, and shown
 * as its demangler prints them in every mode but none: the full path with
 * generic arguments, no hash.
 *
 * Threads: no state; safe from any thread.
 */
#ifndef CPROF_TOOL_DEMANGLE_H
#define CPROF_TOOL_DEMANGLE_H

#include <stdbool.h>

typedef enum {
    DEMANGLE_DEFAULT,   /* simplified: no parameters, no templates */
    DEMANGLE_TEMPLATES, /* no parameters, template arguments kept */
    DEMANGLE_FULL,      /* full signature, no clone suffixes */
    DEMANGLE_NONE,      /* keep linker names */
} demangle_mode_t;

/* Whether name is a mangled linker name ("_Z...": C++ or legacy Rust;
 * "_R...": Rust v0) rather than a source spelling. */
bool demangle_is_mangled(const char *name);

/* Parses "default", "templates", "full" or "none"; -1 if none of them. */
int demangle_parse_mode(const char *s);

/* The name pprof would show for the linker name sym under mode: a new
 * malloc'd string, or NULL when the name stays as it is (not mangled and not
 * simplifiable, mode none) or memory ran out. */
char *demangle_symbol(const char *sym, demangle_mode_t mode);

/* The same simplification for a name already in C++ source spelling
 * ("ns::Klass<int>::f", as DWARF names functions that have no linkage
 * name): a new malloc'd string, or NULL when it stays as it is. Unlike the
 * fallback above, "(anonymous namespace)" survives. */
char *demangle_simplify(const char *name, demangle_mode_t mode);

/* A C symbol name without GCC's clone suffixes ("f.constprop.0.isra.0" and
 * "f.cold" are shown as "f", as the demangled forms of C++ clones are): a
 * new malloc'd string, or NULL when it has none or mode is none. Only for
 * names read from object files: a Go profile's "pkg.cold" is a function. */
char *demangle_c_name(const char *name, demangle_mode_t mode);

#endif
