/* tagroot.c — label values as pseudo frames (pprof's addLabelNodes and
 * formatLabelValues). The samples' stacks are rebuilt in one new store; the
 * new locations and functions are appended to the work view. */
#include "tool/graph/tagroot.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tool/graph/filter.h"
#include "tool/graph/measure.h"
#include "base/sbuf.h"

/* (name, file) of a new location, string indexes. */
typedef struct {
    int64_t name, file;
} pseudo_t;

typedef struct {
    work_t *w;
    const char *unit;
    pseudo_t *fresh; /* the new locations, in pprof's id order */
    size_t n_fresh;
    uint32_t *slots; /* hash of pseudo_t -> fresh index + 1 */
    size_t mask;
    sbuf_t name;
} builder_t;

/* Splits a comma-separated list into keys[*n...], dropping empty parts as
 * pprof's dropEmptyStrings does. buf receives the modified copy. */
static int split_keys(const char *list, char **buf, const char **keys, size_t *n)
{
    *buf = NULL;
    if (!list || !*list)
        return 0;
    if (!(*buf = strdup(list)))
        return -ENOMEM;
    char *save = NULL;
    for (char *k = strtok_r(*buf, ",", &save); k; k = strtok_r(NULL, ",", &save))
        keys[(*n)++] = k;
    return 0;
}

static size_t count_keys(const char *list)
{
    size_t n = 1;
    for (; list && *list; list++)
        n += *list == ',';
    return n;
}

/* The sample's values for key joined by ",": string labels, then numeric
 * ones. pprof scales a numeric value to the output unit only when the
 * sample gives some value of that key a unit (the others then count as
 * unit ""); without any, the value prints as a plain number. */
static int64_t label_values(builder_t *b, const wsample_t *s, const char *key, bool *match)
{
    work_t *w = b->w;
    sb_reset(&b->name);
    bool has_units = false;
    size_t n = 0;
    for (uint32_t i = 0; i < s->n_labels; i++) {
        const profile_label_t *l = &s->labels[i];
        if (strcmp(work_str(w, l->key), key) != 0)
            continue;
        if (label_is_str(l)) {
            if (n++)
                sb_putc(&b->name, ',');
            sb_puts(&b->name, work_str(w, l->str));
        } else if (label_is_num(l) && l->num_unit) {
            has_units = true;
        }
    }
    for (uint32_t i = 0; i < s->n_labels; i++) {
        const profile_label_t *l = &s->labels[i];
        if (!label_is_num(l) || strcmp(work_str(w, l->key), key) != 0)
            continue;
        char v[64];
        measure_scaled_label(v, sizeof(v), l->num, has_units ? work_str(w, l->num_unit) : "",
                             has_units ? b->unit : "");
        if (n++)
            sb_putc(&b->name, ',');
        sb_puts(&b->name, v);
    }
    *match = n > 0;
    return b->name.oom ? -1 : profile_intern(w->p, sb_cstr(&b->name));
}

/* The location index (in the grown view) of the pseudo frame (name, file),
 * adding it if new. */
static uint32_t intern_pseudo(builder_t *b, int64_t name, int64_t file)
{
    uint64_t h = ((uint64_t)name * 0x9e3779b97f4a7c15ULL) ^ ((uint64_t)file * 0xc2b2ae3d27d4eb4fULL);
    size_t i = (size_t)(h ^ (h >> 29)) & b->mask;
    for (; b->slots[i]; i = (i + 1) & b->mask) {
        const pseudo_t *f = &b->fresh[b->slots[i] - 1];
        if (f->name == name && f->file == file)
            return (uint32_t)(b->w->n_locs + b->slots[i] - 1);
    }
    b->fresh[b->n_fresh] = (pseudo_t){name, file};
    b->slots[i] = (uint32_t)++b->n_fresh;
    return (uint32_t)(b->w->n_locs + b->n_fresh - 1);
}

/* The pseudo frames of one sample for keys[0..n), leaf first: the last key
 * first, so that the first key is the outermost (pprof's makeLabelLocs).
 * -1 on OOM. */
static int make_frames(builder_t *b, const wsample_t *s, const char *const *keys,
                       const int64_t *files, size_t n, uint32_t *out, bool *match)
{
    for (size_t i = n; i-- > 0;) {
        bool m = false;
        int64_t name = label_values(b, s, keys[i], &m);
        if (name < 0)
            return -1;
        *match |= m;
        *out++ = intern_pseudo(b, name, files[i]);
    }
    return 0;
}

/* Appends the new functions and locations (one line each) to the view. */
static int grow_view(work_t *w, const pseudo_t *fresh, size_t n)
{
    uint64_t max_fn = 0, max_loc = 0;
    size_t n_lines = 0;
    for (size_t i = 0; i < w->n_funcs; i++)
        if (w->funcs[i].id > max_fn)
            max_fn = w->funcs[i].id;
    for (size_t i = 0; i < w->n_locs; i++) {
        const wloc_t *l = &w->locs[i];
        size_t end = (size_t)(l->lines - w->line_store) + l->n_lines;
        if (l->id > max_loc)
            max_loc = l->id;
        if (end > n_lines)
            n_lines = end;
    }
    wfunc_t *funcs = realloc(w->funcs, (w->n_funcs + n + 1) * sizeof(*funcs));
    if (!funcs)
        return -ENOMEM;
    w->funcs = funcs;
    wloc_t *locs = realloc(w->locs, (w->n_locs + n + 1) * sizeof(*locs));
    if (!locs)
        return -ENOMEM;
    w->locs = locs;
    wline_t *lines = malloc((n_lines + n + 1) * sizeof(*lines));
    if (!lines)
        return -ENOMEM;
    memcpy(lines, w->line_store, n_lines * sizeof(*lines));
    for (size_t i = 0; i < w->n_locs; i++)
        locs[i].lines = lines + (locs[i].lines - w->line_store);
    free(w->line_store);
    w->line_store = lines;
    for (size_t i = 0; i < n; i++) {
        funcs[w->n_funcs + i] = (wfunc_t){max_fn + 1 + i, fresh[i].name, 0, fresh[i].file, 0};
        lines[n_lines + i] = (wline_t){(uint32_t)(w->n_funcs + i + 1), 0};
        locs[w->n_locs + i] = (wloc_t){.id = max_loc + 1 + i, .n_lines = 1,
                                       .lines = &lines[n_lines + i]};
    }
    w->n_funcs += n;
    w->n_locs += n;
    return 0;
}

int tagroot_add(work_t *w, const char *root_keys, const char *leaf_keys, const char *unit,
                bool *root_match, bool *leaf_match)
{
    *root_match = *leaf_match = false;
    int rc = -ENOMEM;
    char *rbuf = NULL, *lbuf = NULL;
    size_t nr = 0, nk = 0;
    const char **keys = malloc((count_keys(root_keys) + count_keys(leaf_keys)) * sizeof(*keys));
    builder_t b = {.w = w, .unit = unit};
    int64_t *files = NULL;
    uint32_t *store = NULL, *frames = NULL;
    if (!keys || split_keys(root_keys, &rbuf, keys, &nr) < 0)
        goto done;
    nk = nr;
    if (split_keys(leaf_keys, &lbuf, keys, &nk) < 0)
        goto done;
    rc = 0;
    if (nk == 0)
        goto done;
    rc = -ENOMEM;

    size_t n_frames = 0, bound = w->n_samples * nk, nslots = 16;
    for (size_t i = 0; i < w->n_samples; i++)
        n_frames += w->samples[i].n_locs;
    while (nslots < 2 * bound)
        nslots *= 2;
    b.mask = nslots - 1;
    b.slots = calloc(nslots, sizeof(*b.slots));
    b.fresh = malloc((bound + 1) * sizeof(*b.fresh));
    files = malloc(nk * sizeof(*files));
    frames = malloc(nk * sizeof(*frames));
    store = malloc((n_frames + bound + 1) * sizeof(*store));
    if (!b.slots || !b.fresh || !files || !frames || !store)
        goto done;
    for (size_t i = 0; i < nk; i++)
        if ((files[i] = profile_intern(w->p, keys[i])) < 0)
            goto done;

    /* New stacks, leaf first: leaf frames, the sample's frames, root
     * frames. Root frames are interned before leaf frames, as pprof does,
     * so the new ids come out in the same order. */
    uint32_t *o = store;
    for (size_t i = 0; i < w->n_samples; i++) {
        const wsample_t *s = &w->samples[i];
        if (make_frames(&b, s, keys, files, nr, frames, root_match) < 0 ||
            make_frames(&b, s, keys + nr, files + nr, nk - nr, o, leaf_match) < 0)
            goto done;
        o += nk - nr;
        memcpy(o, s->locs, s->n_locs * sizeof(*o));
        o += s->n_locs;
        memcpy(o, frames, nr * sizeof(*o));
        o += nr;
    }
    if (grow_view(w, b.fresh, b.n_fresh) < 0)
        goto done;
    o = store;
    for (size_t i = 0; i < w->n_samples; i++) {
        wsample_t *s = &w->samples[i];
        s->locs = o;
        s->n_locs += (uint32_t)nk;
        o += s->n_locs;
    }
    free(w->loc_store);
    w->loc_store = store;
    store = NULL;
    rc = 0;
done:
    free(keys);
    free(rbuf);
    free(lbuf);
    free(files);
    free(frames);
    free(store);
    free(b.slots);
    free(b.fresh);
    sb_free(&b.name);
    return rc;
}
