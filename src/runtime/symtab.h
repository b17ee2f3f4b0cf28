/* symtab.h — function names for code addresses of this process, for
 * /debug/pprof/symbol: what lets `go tool pprof` name the frames of a
 * profile fetched from a host where the binaries are not at hand.
 *
 * Every loaded object (dl_iterate_phdr) contributes its function symbols:
 * from the ELF file on disk — .symtab when present, so static functions of
 * the main program are named, else .dynsym — read with pread (never
 * mmap: a file truncated under us must not SIGBUS the host); the main
 * program through /proc/self/exe, which works after the binary was moved
 * or deleted. When the file cannot be read or its GNU build id differs from
 * the loaded one (replaced on disk), the object's .dynsym is read from its
 * loaded image instead, under the loader's lock so it cannot be unloaded
 * meanwhile (this also covers the vDSO).
 *
 * Names are the linker's (C++ names mangled; pprof demangles them).
 * An object's symbols are read at the first lookup that lands in it, so a
 * table belongs to one thread at a time (symtab_take hands it over). */
#ifndef CPROF_HTTP_SYMTAB_H
#define CPROF_HTTP_SYMTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct symtab symtab_t;

/* A table of the objects loaded now; NULL when out of memory. */
symtab_t *symtab_build(void);
void symtab_free(symtab_t *t);

/* Whether objects were loaded or unloaded since t was built. */
bool symtab_stale(const symtab_t *t);

/* The process's shared table, taken for the caller's use (built, or
 * rebuilt when stale, when needed); NULL when out of memory. Hand it back
 * with symtab_put. No lock: a taker owns the table meanwhile, so writers
 * running at once build their own and the last one back is kept, the
 * others freed; at most one table stays between writes. Not for hooks or
 * signal handlers (it allocates and reads files). */
symtab_t *symtab_take(void);
void symtab_put(symtab_t *t);

/* The function containing addr, or NULL. Valid while t lives. Reads the
 * symbols of addr's object the first time. */
const char *symtab_lookup(symtab_t *t, uint64_t addr);

/* The same, and *start is the function's first address. */
const char *symtab_lookup_sym(symtab_t *t, uint64_t addr, uint64_t *start);

/* The same for addrs[0..n) at once (any order, repeats allowed): names[i]
 * and starts[i] (NULL and 0 when none). The first time, an object not read
 * yet is not read into t: one pass over its symbols keeps each address's
 * function alone, with no table to build and sort. Cheaper when t serves
 * one profile (at exit); the second time (t serves periodic or HTTP
 * writes) the object is read into t, as a single lookup reads it, so later
 * writes do not pass over its symbols again. Names are valid until t's
 * next symtab_lookup_many or symtab_free. 0 or -ENOMEM (then names are
 * NULL). */
int symtab_lookup_many(symtab_t *t, const uint64_t *addrs, size_t n, const char **names,
                       uint64_t *starts);

/* Number of .dynsym entries of a loaded object, from its DT_HASH or
 * DT_GNU_HASH table (either NULL when absent; 0 when both are). */
size_t symtab_dynsym_count(const uint32_t *hash, const uint32_t *gnu);

#endif
