/* elfobj.h — one ELF object file opened for symbolization: its GNU build
 * id, where a process mapping placed it (load bias), and what its DWARF,
 * Go pc-line table (gopclntab.h) and symbol tables say about an address.
 *
 * Built on elfutils: libelf reads the headers at open time (cheap, so
 * candidates on PPROF_BINARY_PATH can be checked by build id); libdwfl is
 * set up on the first lookup and finds separate debug information the
 * standard way: the file's own .debug_* sections, then
 * DIR/.build-id/xx/yyyy.debug and the .gnu_debuglink name (next to the
 * file, in .debug/, under each DIR) for every DIR of the debug path, then
 * debuginfod when DEBUGINFOD_URLS is set.
 *
 * Addresses: lookups take file addresses (the ELF's own virtual
 * addresses, p_vaddr space); elfobj_bias() converts from process addresses.
 *
 * Threads: an elfobj_t is used by one thread at a time. Strings returned in
 * frames point into the object's data and live until elfobj_close().
 */
#ifndef CPROF_TOOL_ELFOBJ_H
#define CPROF_TOOL_ELFOBJ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct elfobj elfobj_t;

/* Colon-separated directories searched for separate debug files when
 * nothing else is configured (libdwfl's default: the file's directory, its
 * .debug/ subdirectory, /usr/lib/debug). */
#define ELFOBJ_DEFAULT_DEBUG_PATH ":.debug:/usr/lib/debug"

/* Opens path and reads its headers. debug_path: colon-separated directories
 * for separate debug files (NULL: ELFOBJ_DEFAULT_DEBUG_PATH). On failure
 * returns a negative errno and a message in Go's words ("open PATH: no such
 * file or directory"). */
int elfobj_open(const char *path, const char *debug_path, elfobj_t **out, char *err,
                size_t errlen);
void elfobj_close(elfobj_t *o);

/* The GNU build id as lowercase hex, "" when the file has none. */
const char *elfobj_build_id(const elfobj_t *o);

/* The executable with GNU build id build_id (hex) from the debuginfod
 * servers named by DEBUGINFOD_URLS, downloaded into the debuginfod client
 * cache: its path (malloc'd), or NULL (not set, not found, no
 * libdebuginfod at build time). May block on the network; the client's
 * DEBUGINFOD_TIMEOUT applies. */
char *elfobj_fetch_executable(const char *build_id);

/* Load bias of a mapping (process address = file address + bias), from the
 * mapping's range and file offset as /proc/PID/maps gives them: the PT_LOAD
 * segment holding that file offset, as the loader mapped it. When the
 * offset does not place any executable code inside the range (profiles
 * that record 0 for it), falls back to go tool pprof's rule: memory_start
 * is the start of the first executable segment. start == 0 (no mapping
 * information) means bias 0. 0 or -ENOEXEC with a message. */
int elfobj_bias(const elfobj_t *o, uint64_t start, uint64_t limit, uint64_t offset,
                uint64_t *bias, char *err, size_t errlen);

/* The separate debug file found for the object (.build-id, .gnu_debuglink,
 * debuginfod), or NULL when its DWARF is its own or there is none. Lives
 * until elfobj_close(). */
const char *elfobj_debug_file(elfobj_t *o);

typedef struct {
    const char *name;        /* as shown: mangled for C++ (to be demangled),
                                DWARF's DW_AT_name for C; NULL if unknown */
    const char *system_name; /* linker name; NULL if unknown */
    const char *file; /* source file of `line`, NULL if unknown */
    int64_t line;       /* 0 if unknown */
    int64_t start_line; /* the function's DW_AT_decl_line, 0 if unknown */
    bool cxx_source;    /* name is C++ source spelling ("ns::f<int>"), built
                           from DWARF scopes, not a mangled linker name */
} elfobj_frame_t;

enum {
    ELFOBJ_SYMTAB_ONLY = 1, /* names from the symbol tables only: no DWARF */
};

/* Frames at file address addr: inlined functions innermost first, the
 * function that really contains addr last. Names come from DWARF, else
 * from Go's .gopclntab, else (for the last frame) .symtab, then .dynsym. Stores at most max
 * frames (deeper inlining loses middle frames, never the last) and returns
 * how many (0: nothing known), or -ENOEXEC when libdwfl cannot load the
 * file at all. */
int elfobj_lookup(elfobj_t *o, uint64_t addr, int flags, elfobj_frame_t *frames, size_t max);

#endif
