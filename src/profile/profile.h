/* profile.h — the in-memory pprof profile (profile.proto) shared by the
 * runtime (which builds and encodes one) and the tool (which decodes,
 * merges, filters and re-encodes).
 *
 * Ownership: a profile_t owns every array and string reachable from it;
 * profile_free() releases all of it. Strings are interned: fields that name
 * a string hold an index into p->strings (index 0 is always ""), exactly as
 * in the wire format, so decode/encode are copies, not translations.
 *
 * Ids: mappings, locations and functions keep the ids of the wire format.
 * After profile_index() (called by the decoder and by the builder helpers)
 * the *_by_id lookups are O(1) for dense ids.
 *
 * Threads: a profile_t is used by one thread at a time. Nothing here takes
 * a lock or touches global state, so the runtime may build profiles while
 * its recursion guard is set (allocations then go to the real allocator).
 */
#ifndef CPROF_PROFILE_H
#define CPROF_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    int64_t type; /* string index, e.g. "inuse_space" */
    int64_t unit; /* string index, e.g. "bytes" */
} profile_value_type_t;

typedef struct {
    int64_t key;      /* string index */
    int64_t str;      /* string index, or 0 */
    int64_t num;      /* numeric value when str == 0 */
    int64_t num_unit; /* string index, or 0 */
} profile_label_t;

typedef struct {
    uint64_t *location_ids; /* leaf first */
    int64_t *values;        /* profile.n_sample_types entries */
    profile_label_t *labels;
    uint32_t n_location_ids;
    uint32_t n_labels;
} profile_sample_t;

typedef struct {
    uint64_t id;
    uint64_t memory_start; /* first address mapped */
    uint64_t memory_limit; /* one past the last */
    uint64_t file_offset;  /* offset in the file of memory_start */
    int64_t filename;      /* string index */
    int64_t build_id;      /* string index */
    bool has_functions, has_filenames, has_line_numbers, has_inline_frames;
} profile_mapping_t;

typedef struct {
    uint64_t function_id;
    int64_t line;
} profile_line_t;

typedef struct {
    uint64_t id;
    uint64_t mapping_id; /* 0: no mapping */
    uint64_t address;    /* process address; call site (return address - 1) */
    profile_line_t *lines; /* innermost (inlined) first, real function last */
    uint32_t n_lines;
    bool is_folded;
} profile_location_t;

typedef struct {
    uint64_t id;
    int64_t name;        /* string index: demangled name */
    int64_t system_name; /* string index: linker name */
    int64_t filename;    /* string index */
    int64_t start_line;
} profile_function_t;

typedef struct profile_strtab profile_strtab_t; /* intern hash, private */
typedef struct profile_idpos profile_idpos_t;   /* sparse id index, private */

typedef struct {
    profile_value_type_t *sample_types;
    size_t n_sample_types;
    profile_sample_t *samples;
    size_t n_samples;
    profile_mapping_t *mappings;
    size_t n_mappings;
    profile_location_t *locations;
    size_t n_locations;
    profile_function_t *functions;
    size_t n_functions;
    char **strings; /* strings[0] == "" */
    size_t n_strings;
    int64_t drop_frames; /* string index */
    int64_t keep_frames; /* string index */
    int64_t time_nanos;
    int64_t duration_nanos;
    profile_value_type_t period_type;
    int64_t period;
    int64_t *comments; /* string indexes */
    size_t n_comments;
    int64_t default_sample_type; /* string index */

    /* private: capacities, intern table, id indexes */
    size_t cap_samples, cap_mappings, cap_locations, cap_functions;
    size_t cap_strings, cap_comments, cap_sample_types;
    profile_strtab_t *strtab;
    uint32_t *loc_index; /* id -> position + 1, for ids < n_loc_index;
                          * NULL: id -> id - 1 (the ids were the
                          * positions + 1 when indexed) */
    size_t n_loc_index;
    uint32_t *fn_index;
    size_t n_fn_index;
    uint32_t *map_index;
    size_t n_map_index;
    /* ids too large for the dense indexes, sorted by id */
    profile_idpos_t *loc_sparse, *fn_sparse, *map_sparse;
    size_t n_loc_sparse, n_fn_sparse, n_map_sparse;
    struct profile_chunk *chunks;       /* storage of sample/location arrays */
    struct profile_chunk *stack_chunks; /* storage of the samples' location_ids */
    struct profile_chunk *line_chunks;  /* storage of the locations' lines */
    struct profile_chunk *spare_chunks; /* empty ones (profile_clear), used first */
} profile_t;

/* --- value arithmetic -------------------------------------------------- */

/* Sample values are int64 and hostile files hold any of them. Go's int64
 * wraps; C's overflow is undefined (and INT64_MIN has no absolute value),
 * so sums saturate at +-INT64_MAX and INT64_MIN never comes out of here.
 * The tool rejects profiles whose columns could overflow a sum at all
 * (profile_check_sums, merge.h); these keep what it computes beyond that
 * defined. */
static inline int64_t profile_value_add(int64_t a, int64_t b)
{
    int64_t r;
    if (__builtin_add_overflow(a, b, &r) || r == INT64_MIN)
        return a < 0 ? -INT64_MAX : INT64_MAX;
    return r;
}

static inline int64_t profile_value_mul(int64_t a, int64_t b)
{
    int64_t r;
    if (__builtin_mul_overflow(a, b, &r) || r == INT64_MIN)
        return (a < 0) != (b < 0) ? -INT64_MAX : INT64_MAX;
    return r;
}

/* x as a value, truncated as Go's int64(x); saturated (NaN: 0) where the
 * C conversion is undefined. */
static inline int64_t profile_value_of(double x)
{
    if (x != x)
        return 0;
    if (x >= 9223372036854775807.0)
        return INT64_MAX;
    if (x <= -9223372036854775807.0)
        return -INT64_MAX;
    return (int64_t)x;
}

/* --- construction ------------------------------------------------------ */

/* A new empty profile with strings[0] == "". NULL when out of memory. */
profile_t *profile_new(void);
void profile_free(profile_t *p);

/* Empties p as profile_new() makes one, keeping the memory of its arrays
 * and storage for what is added next: a series of snapshots decodes one
 * profile of about the same size after another, and fresh memory is
 * faulted in a page at a time (9 MB, 2,300 faults, for each 50,000-
 * location snapshot). 0, or -ENOMEM (p is then only to be freed). */
int profile_clear(profile_t *p);

/* Index of s in the string table, adding it if new; -1 on OOM. */
int64_t profile_intern(profile_t *p, const char *s);
int64_t profile_intern_n(profile_t *p, const char *s, size_t len);

/* profile_intern of a string that p's storage already holds (taken with
 * profile_take_storage, say): a new entry is s itself, not a copy. */
int64_t profile_intern_owned(profile_t *p, const char *s);

/* Defers the intern table until the first profile_intern: a decoder
 * appends strings (profile_add_string) that a reader may only read by
 * index (a merge interns them into its output), so hashing them is
 * saved, and the table's memory. */
void profile_defer_intern(profile_t *p);

/* Appends s to the string table even if an equal string is already there,
 * so that a decoder keeps the indexes of the wire format (which may hold
 * duplicates). Returns the new index, or -1 on OOM. */
int64_t profile_add_string(profile_t *p, const char *s, size_t len);

/* Appends s, which p's storage already holds, as a new string known to
 * differ from every other (a merge that keyed its strings elsewhere):
 * not hashed; the intern table is deferred, rebuilt at the next intern.
 * Returns the new index, or -1 on OOM. */
int64_t profile_append_owned(profile_t *p, const char *s);

/* Room for n samples in all, made at once: a writer that knows how many it
 * will add saves the copies of growing by doubling. 0 or -ENOMEM. */
int profile_reserve_samples(profile_t *p, size_t n);

/* Appending returns the new element (zeroed but for what is given), or NULL
 * on OOM. Arrays passed in are copied into storage the profile owns.
 * Pointers returned stay valid only until the next append of the same kind. */
int profile_add_sample_type(profile_t *p, const char *type, const char *unit);
profile_sample_t *profile_add_sample(profile_t *p, const uint64_t *locs, size_t nlocs,
                                     const int64_t *values);
/* The same with arrays the sample keeps as they are: they must lie in p's
 * storage (locs in its stack storage, profile_alloc_stack) and be the
 * sample's own (no two samples share an array, so each sample's may be
 * rewritten in place). */
profile_sample_t *profile_add_sample_owned(profile_t *p, uint64_t *locs, size_t nlocs,
                                           int64_t *values);
int profile_sample_add_label(profile_t *p, profile_sample_t *s, const profile_label_t *l);
profile_mapping_t *profile_add_mapping(profile_t *p);
profile_location_t *profile_add_location(profile_t *p, const profile_line_t *lines,
                                         size_t nlines);
profile_function_t *profile_add_function(profile_t *p);
int profile_add_comment(profile_t *p, const char *text);

/* Storage owned by the profile, released by profile_free. */
void *profile_alloc(profile_t *p, size_t size);

/* calloc(n, size) for a large table that is read and written at random
 * (an index, a hash table), its pages mapped written at once: a read of
 * an untouched page of fresh zeroed memory maps the shared zero page, and
 * the first write there replaces it, which flushes the TLB of every CPU
 * running another of the process's threads (an interrupt each). Freed
 * with free; NULL on OOM. */
void *profile_calloc_written(size_t n, size_t size);

/* Storage for a sample's n location ids (its stack), a copy of ids unless
 * NULL, released by profile_free or profile_drop_stacks. Every sample's
 * location_ids come from here. NULL when n is 0 or on OOM. */
uint64_t *profile_alloc_stack(profile_t *p, const uint64_t *ids, size_t n);

/* Storage for a location's n lines, a copy of lines (zeroed if NULL),
 * released by profile_free or profile_drop_locations. NULL when n is 0 or on OOM. */
profile_line_t *profile_alloc_lines(profile_t *p, const profile_line_t *lines, size_t n);

/* Releases every sample's stack: the samples keep their values and labels
 * and have no locations. For a reader that holds the stacks elsewhere and
 * reads the profile's no more (the tool's last report of a profile). */
void profile_drop_stacks(profile_t *p);

/* Releases the lines of profile_alloc_lines and the function table:
 * every location is left without lines (a reader that copied them). */
void profile_drop_lines(profile_t *p);

/* Releases the location and function tables, their id indexes and the
 * lines of profile_alloc_lines: for a reader
 * that copied them (the tool's work view, for its last report) and reads
 * the profile's no more. */
void profile_drop_locations(profile_t *p);

/* Moves from's storage (every array and string of its elements) to p:
 * from stays readable while p lives, and profile_free(from) no longer
 * releases it. A merge of one profile that is then discarded keeps the
 * arrays it would copy unchanged. */
void profile_take_storage(profile_t *p, profile_t *from);

/* Swaps the locations at positions a and b, their ids' index entries
 * with them (ids unique and indexed by profile_index_movable, as a
 * decoded profile's). */
void profile_swap_locations(profile_t *p, size_t a, size_t b);
/* The same for functions. */
void profile_swap_functions(profile_t *p, size_t a, size_t b);

/* Rebuilds the id -> element indexes; 0 or -ENOMEM. Ids that are the
 * positions + 1 (every encoder's, a merge's) are indexed by no table. */
int profile_index(profile_t *p);
/* profile_index with tables for locations and functions whatever their
 * ids, which profile_swap_* keep up to date. */
int profile_index_movable(profile_t *p);

/* The element of id, NULL if none: O(1) for dense ids, O(log n) for
 * sparse ones; one appended since the last profile_index is scanned for.
 * Ids that are the positions + 1 are found inline. */
const profile_location_t *profile_location_lookup(const profile_t *p, uint64_t id);
const profile_function_t *profile_function_lookup(const profile_t *p, uint64_t id);
const profile_mapping_t *profile_mapping_lookup(const profile_t *p, uint64_t id);

static inline const profile_location_t *profile_location_by_id(const profile_t *p, uint64_t id)
{
    if (!p->loc_index && id && id < p->n_loc_index)
        return &p->locations[id - 1];
    return profile_location_lookup(p, id);
}

static inline const profile_function_t *profile_function_by_id(const profile_t *p, uint64_t id)
{
    if (!p->fn_index && id && id < p->n_fn_index)
        return &p->functions[id - 1];
    return profile_function_lookup(p, id);
}

static inline const profile_mapping_t *profile_mapping_by_id(const profile_t *p, uint64_t id)
{
    if (!p->map_index && id && id < p->n_map_index)
        return &p->mappings[id - 1];
    return profile_mapping_lookup(p, id);
}

/* pprof's Mapping.Unsymbolizable, for a mapping of that file name: one no
 * symbolizer even tries ("[vdso]", "[heap]", linux-vdso.so.1, GPU driver
 * mappings under /dev/dri/). */
bool profile_mapping_unsymbolizable(const char *file);

/* --- wire format --------------------------------------------------------- */

typedef struct {
    uint8_t *data;
    size_t len, cap;
    bool oom; /* an append failed; the buffer is incomplete */
} pbuf_t;

void pbuf_free(pbuf_t *b);

/* Serializes p as profile.proto (uncompressed) into out. 0 or -ENOMEM. */
int profile_encode(const profile_t *p, pbuf_t *out);

/* gzip-compresses in into out (zlib, gzip header; built with CPROF_NO_ZLIB,
 * gzip of stored blocks: gzstore.h). 0 or -ENOMEM/-EIO. */
int profile_gzip(const uint8_t *in, size_t len, pbuf_t *out);

/* Encodes, gzips and writes the whole profile to fd. 0 or negative errno. */
int profile_write_fd(const profile_t *p, int fd);

/* Writes all n bytes to fd (retrying short writes and EINTR). 0 or -errno. */
int profile_write_all(int fd, const void *data, size_t n);

#endif
