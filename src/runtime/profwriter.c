/* profwriter.c — building and writing stack profiles (see profwriter.h). */
#include "profwriter.h"

#include "config.h"
#include "outfile.h"
#include "runtime/symtab.h"
#include "procmaps.h"
#include "unwind.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct profwriter {
    profile_t *p;
    procmap_t *maps;
    size_t nmaps;
    /* return address -> location id, open addressing, grown by doubling */
    uint64_t *keys, *ids;
    size_t mask, n;
    /* Locations name_locations looked up: a second write of the profile
     * (memprof's settle) looks up none again, so it cannot read a symbol
     * table after the memory was measured (symtab_lookup_many reads an
     * object the second time). */
    size_t looked_up;
};

profwriter_t *profwriter_new(void)
{
    profwriter_t *b = calloc(1, sizeof(*b));
    if (!b)
        return NULL;
    int rc = procmaps_read(&b->maps, &b->nmaps);
    if (rc < 0 || !(b->p = profile_new())) {
        profwriter_free(b);
        errno = rc < 0 ? -rc : ENOMEM;
        return NULL;
    }
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    b->p->time_nanos = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
    for (size_t i = 0; i < b->nmaps; i++) {
        profile_mapping_t *m = profile_add_mapping(b->p);
        if (!m) {
            profwriter_free(b);
            errno = ENOMEM;
            return NULL;
        }
        m->id = i + 1;
        m->memory_start = b->maps[i].start;
        m->memory_limit = b->maps[i].limit;
        m->file_offset = b->maps[i].offset;
        m->filename = profile_intern(b->p, b->maps[i].path);
        m->build_id = profile_intern(b->p, b->maps[i].build_id);
    }
    return b;
}

profile_t *profwriter_profile(profwriter_t *b)
{
    return b->p;
}

void profwriter_free(profwriter_t *b)
{
    if (!b)
        return;
    profile_free(b->p);
    if (b->maps)
        procmaps_free(b->maps, b->nmaps);
    free(b->keys);
    free(b->ids);
    free(b);
}

static size_t slot_of(uint64_t pc, size_t mask)
{
    return (pc * 0x9e3779b97f4a7c15ull >> 20) & mask;
}

static int grow(profwriter_t *b)
{
    size_t nslots = b->keys ? (b->mask + 1) * 2 : 1024;
    uint64_t *k = calloc(nslots, sizeof(*k)), *v = calloc(nslots, sizeof(*v));
    if (!k || !v) {
        free(k);
        free(v);
        return -ENOMEM;
    }
    for (size_t i = 0; b->keys && i <= b->mask; i++) {
        if (!b->keys[i])
            continue;
        size_t h = slot_of(b->keys[i], nslots - 1);
        while (k[h])
            h = (h + 1) & (nslots - 1);
        k[h] = b->keys[i];
        v[h] = b->ids[i];
    }
    free(b->keys);
    free(b->ids);
    b->keys = k;
    b->ids = v;
    b->mask = nslots - 1;
    return 0;
}


/* Room in the table for k more return addresses, kept at most half full:
 * checked once a sample, not once a frame. 0 or -ENOMEM. */
static int reserve_locations(profwriter_t *b, size_t k)
{
    while ((b->n + k) * 2 > (b->keys ? b->mask + 1 : 0))
        if (grow(b) < 0)
            return -ENOMEM;
    return 0;
}

/* A new location for return address pc, kept in the empty slot h; its id,
 * 0 when out of memory. */
static __attribute__((noinline)) uint64_t new_location(profwriter_t *b, uint64_t pc, size_t h)
{
    profile_location_t *l = profile_add_location(b->p, NULL, 0);
    if (!l)
        return 0;
    l->id = b->p->n_locations;
    l->address = pc - 1;
    const procmap_t *m = procmaps_find(b->maps, b->nmaps, pc - 1);
    l->mapping_id = m ? (uint64_t)(m - b->maps) + 1 : 0;
    b->keys[h] = pc;
    b->ids[h] = l->id;
    b->n++;
    return l->id;
}

/* The location id of return address pc, made if new (room reserved); 0
 * when out of memory. */
static inline uint64_t location_for(profwriter_t *b, uint64_t pc)
{
    const uint64_t *keys = b->keys;
    size_t mask = b->mask, h = slot_of(pc, mask);
    for (; keys[h]; h = (h + 1) & mask)
        if (keys[h] == pc)
            return b->ids[h];
    return new_location(b, pc, h);
}

/* The ids are written where the sample keeps them, not copied there: a
 * heap profile at exit has hundreds of thousands of frames (python3's
 * start: 755 K in 15 K samples, 35 instructions a frame before). */
int profwriter_add(profwriter_t *b, const uintptr_t *pcs, uint32_t depth, const int64_t *values,
                  const profile_label_t *labels, size_t nlabels)
{
    profile_t *p = b->p;
    if (depth > UNWIND_MAX_DEPTH) /* the deepest stack a table holds */
        depth = UNWIND_MAX_DEPTH;
    uint64_t *locs = depth ? profile_alloc_stack(p, NULL, depth) : NULL;
    size_t vsize = p->n_sample_types * sizeof(*values);
    int64_t *v = vsize ? profile_alloc(p, vsize) : NULL;
    if ((depth && !locs) || (vsize && !v) || reserve_locations(b, depth) < 0)
        return -ENOMEM;
    if (vsize)
        memcpy(v, values, vsize);
    for (uint32_t i = 0; i < depth; i++)
        if (!(locs[i] = location_for(b, pcs[i])))
            return -ENOMEM;
    profile_sample_t *s = profile_add_sample_owned(p, locs, depth, v);
    if (!s)
        return -ENOMEM;
    for (size_t i = 0; i < nlabels; i++)
        if (profile_sample_add_label(p, s, &labels[i]) < 0)
            return -ENOMEM;
    return 0;
}

/* Function ids by function start address, open addressing. */
typedef struct {
    uint64_t *starts, *ids;
    size_t mask;
} fnmap_t;

/* The id of the function starting at start named name, added if new; 0
 * when out of memory. */
static uint64_t function_for(profile_t *p, fnmap_t *m, uint64_t start, const char *name)
{
    size_t h = slot_of(start, m->mask);
    for (; m->starts[h]; h = (h + 1) & m->mask)
        if (m->starts[h] == start)
            return m->ids[h];
    int64_t s = profile_intern(p, name);
    profile_function_t *f = s < 0 ? NULL : profile_add_function(p);
    if (!f)
        return 0;
    f->id = p->n_functions;
    f->name = f->system_name = s; /* the linker's name: readers demangle */
    m->starts[h] = start;
    m->ids[h] = f->id;
    return f->id;
}

/* Names each location's function from the loaded objects' symbol tables
 * (.symtab, else .dynsym: static functions too), as Go's runtime writes
 * names, so that a reader without the binaries (the profile fetched from
 * another host) still names the frames. The lines carry no file or line
 * number, and the mappings' has_* flags stay false: pprof and cprof
 * symbolize a mapping none of whose flags is set from its binary when they
 * have it (file:line, inline frames), replacing these lines, and keep them
 * when they do not. Unnamed (as before) when out of memory. */
static void name_locations(profwriter_t *b)
{
    profile_t *p = b->p;
    size_t n = 16;
    while (n < (size_t)p->n_locations * 2)
        n *= 2;
    fnmap_t m = {calloc(n, sizeof(uint64_t)), calloc(n, sizeof(uint64_t)), n - 1};
    size_t nl = p->n_locations;
    uint64_t *addrs = malloc(nl * sizeof(*addrs) + 1), *starts = malloc(nl * sizeof(*starts) + 1);
    const char **names = malloc(nl * sizeof(*names) + 1);
    symtab_t *t = m.starts && m.ids && addrs && starts && names ? symtab_take() : NULL;
    size_t k = 0, from = b->looked_up;
    for (size_t i = from; t && i < nl; i++)
        if (!p->locations[i].n_lines)
            addrs[k++] = p->locations[i].address;
    if (t && symtab_lookup_many(t, addrs, k, names, starts) < 0)
        k = 0;
    else if (t)
        b->looked_up = nl;
    for (size_t i = from, j = 0; t && i < nl && j < k; i++) {
        profile_location_t *l = &p->locations[i];
        if (l->n_lines)
            continue;
        const char *name = names[j];
        uint64_t start = starts[j++];
        if (!name || !start)
            continue;
        profile_line_t *line = profile_alloc(p, sizeof(*line));
        uint64_t id = line ? function_for(p, &m, start, name) : 0;
        if (!id)
            break;
        *line = (profile_line_t){.function_id = id, .line = 0};
        l->lines = line;
        l->n_lines = 1;
    }
    if (t)
        symtab_put(t);
    free(addrs);
    free(starts);
    free(names);
    free(m.starts);
    free(m.ids);
}

int profwriter_write(profwriter_t *b, int fd)
{
    name_locations(b);
    return profile_write_fd(b->p, fd);
}

/* --- text forms ------------------------------------------------------------ */

struct stacknames {
    symtab_t *syms; /* NULL: dladdr only */
    char exe[4096];
};

static stacknames_t fallback; /* out of memory: dladdr, no exe name */

stacknames_t *stacknames_new(void)
{
    stacknames_t *n = calloc(1, sizeof(*n));
    if (!n)
        return &fallback;
    n->syms = symtab_take();
    ssize_t l = readlink("/proc/self/exe", n->exe, sizeof(n->exe) - 1);
    n->exe[l > 0 ? l : 0] = '\0';
    return n;
}

void stacknames_free(stacknames_t *n)
{
    if (!n || n == &fallback)
        return;
    if (n->syms)
        symtab_put(n->syms);
    free(n);
}

void stacknames_frame(stacknames_t *n, uintptr_t pc, char *fn, size_t fnlen, char *where,
                      size_t wherelen)
{
    const char *name = NULL;
    uint64_t start = 0;
    if (n->syms)
        name = symtab_lookup_sym(n->syms, pc, &start);
    Dl_info info;
#ifdef __GLIBC__
    struct link_map *lm = NULL;
    bool found = dladdr1((void *)pc, &info, (void **)&lm, RTLD_DL_LINKMAP) != 0;
    const char *lname = found && lm ? lm->l_name : NULL;
    uintptr_t bias = lm ? lm->l_addr : 0;
    bool in_obj = found && lm;
#else /* musl has no dladdr1: the object's name and its first mapped byte */
    bool found = dladdr((void *)pc, &info) != 0;
    const char *lname = found ? info.dli_fname : NULL;
    uintptr_t bias = found ? (uintptr_t)info.dli_fbase : 0;
    bool in_obj = found;
#endif
    if (!name && found && info.dli_sname && info.dli_saddr) {
        name = info.dli_sname;
        start = (uintptr_t)info.dli_saddr;
    }
    if (name)
        snprintf(fn, fnlen, "%s+%#llx", name, (unsigned long long)(pc - start));
    else if (fnlen)
        fn[0] = '\0';
    if (in_obj) {
        const char *obj = lname && lname[0] ? lname : n->exe[0] ? n->exe : info.dli_fname;
        snprintf(where, wherelen, "%s+%#llx", obj ? obj : "?", (unsigned long long)(pc - bias));
    } else {
        snprintf(where, wherelen, "?");
    }
}

/* Go's text/tabwriter with minwidth 1, tabwidth 8, padding 1, padchar
 * '\t': a column's cells are aligned over each run of consecutive lines
 * that have that column; its width is the widest cell + 1 rounded up to 8,
 * filled with tabs. Cells are the tab-terminated parts of a line. */
static void emit_aligned(FILE *f, char **lines, size_t n)
{
    enum { MAXCOLS = 4 };
    typedef struct {
        int ncells;
        size_t len[MAXCOLS], width[MAXCOLS];
    } cells_t;
    cells_t *c = calloc(n ? n : 1, sizeof(*c));
    if (!c)
        return;
    for (size_t i = 0; i < n; i++) {
        const char *s = lines[i];
        for (const char *tab; c[i].ncells < MAXCOLS && (tab = strchr(s, '\t')); s = tab + 1)
            c[i].len[c[i].ncells++] = (size_t)(tab - s);
    }
    for (int col = 0; col < MAXCOLS; col++) {
        for (size_t i = 0, j; i < n; i = j) {
            size_t w = 0;
            for (j = i; j < n && c[j].ncells > col; j++)
                w = c[j].len[col] + 1 > w ? c[j].len[col] + 1 : w;
            for (size_t k = i; k < j; k++)
                c[k].width[col] = (w + 7) / 8 * 8;
            if (j == i)
                j++;
        }
    }
    for (size_t i = 0; i < n; i++) {
        const char *s = lines[i];
        for (int col = 0; col < c[i].ncells; col++) {
            fwrite(s, 1, c[i].len[col], f);
            for (size_t t = (c[i].width[col] - c[i].len[col] + 7) / 8; t > 0; t--)
                fputc('\t', f);
            s += c[i].len[col] + 1;
        }
        fprintf(f, "%s\n", s);
    }
    free(c);
}

void profwriter_frame_lines(FILE *f, stacknames_t *n, const uintptr_t *pcs, uint32_t depth)
{
    char *lines[256];
    size_t k = 0;
    for (uint32_t i = 0; i < depth && k < sizeof(lines) / sizeof(lines[0]); i++) {
        uintptr_t pc = pcs[i] - 1;
        char fn[512], where[4200];
        stacknames_frame(n, pc, fn, sizeof(fn), where, sizeof(where));
        int rc = fn[0] ? asprintf(&lines[k], "#\t%#lx\t%s\t%s", (unsigned long)pc, fn, where)
                       : asprintf(&lines[k], "#\t%#lx\t\t%s", (unsigned long)pc, where);
        if (rc >= 0)
            k++;
    }
    emit_aligned(f, lines, k);
    for (size_t i = 0; i < k; i++)
        free(lines[i]);
    fputc('\n', f);
}

void profwriter_memory_map(FILE *f)
{
    char *maps = procmaps_slurp("/proc/self/maps", NULL);
    if (!maps)
        return;
    fprintf(f, "\n--- Memory map: ---\n");
    for (char *line = maps, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        const char *perm = strchr(line, ' ');
        if (perm && strlen(perm) > 3 && perm[3] == 'x')
            fprintf(f, "%s\n", line);
    }
    free(maps);
}

typedef struct {
    int (*write)(int fd, int debug);
} file_writer_t;

static int write_debug0(int fd, void *arg)
{
    return ((file_writer_t *)arg)->write(fd, 0);
}

static uint64_t sequence;

uint64_t profwriter_next_seq(void)
{
    return __atomic_fetch_add(&sequence, 1, __ATOMIC_RELAXED);
}

int profwriter_write_file(const char *pattern, int (*write)(int fd, int debug))
{
    return profwriter_write_file_seq(pattern, profwriter_next_seq(), write, NULL, 0);
}

int profwriter_write_file_seq(const char *pattern, uint64_t seq, int (*write)(int fd, int debug),
                              char *path_out, size_t path_len)
{
    char path[4096];
    int rc = config_expand_pattern(pattern, seq, path, sizeof(path));
    if (rc < 0)
        return rc;
    outfile_t f;
    if ((rc = outfile_open(&f, path, seq)) < 0)
        return rc;
    if (path_out)
        snprintf(path_out, path_len, "%s", path);
    file_writer_t w = {write};
    return outfile_close(&f, outfile_write(&f, write_debug0, &w));
}
