/* memtime.c — the snapshot series and the growth of each call site. */
#include "tool/ui/memtime.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tool/driver/driver.h"
#include "tool/graph/graph.h"
#include "base/err.h"
#include "base/hash.h"
#include "base/sbuf.h"

/* --- the series ----------------------------------------------------------------- */

static int snap_cmp(const memsnap_t *a, const memsnap_t *b)
{
    if (a->time_nanos != b->time_nanos)
        return a->time_nanos < b->time_nanos ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static void snap_free(memsnap_t *s)
{
    profile_free(s->p);
    free(s->name);
}

/* Halves the series: keeps the even positions, the last one and the one
 * that came last (the profile the web views show while polling). */
static void thin(memseries_t *s)
{
    size_t k = 0;
    for (size_t i = 0; i < s->n; i++) {
        if (i % 2 == 0 || i == s->n - 1 || s->snaps[i].seq == s->next_seq - 1)
            s->snaps[k++] = s->snaps[i];
        else
            snap_free(&s->snaps[i]);
    }
    s->n = k;
}

int memseries_add(memseries_t *s, profile_t *p, const char *name, bool stamp_now)
{
    if (err_grow((void **)&s->snaps, &s->cap, s->n + 1, sizeof(*s->snaps)) < 0) {
        profile_free(p);
        return -ENOMEM;
    }
    memsnap_t sn = {p, strdup(name ? name : ""), p->time_nanos, s->next_seq++};
    if (!sn.name) {
        profile_free(p);
        return -ENOMEM;
    }
    if (sn.time_nanos == 0) {
        if (stamp_now) {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            sn.time_nanos = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
        } else {
            sn.time_nanos = (int64_t)sn.seq;
        }
    }
    size_t at = s->n;
    while (at > 0 && snap_cmp(&s->snaps[at - 1], &sn) > 0)
        at--;
    memmove(&s->snaps[at + 1], &s->snaps[at], (s->n - at) * sizeof(*s->snaps));
    s->snaps[at] = sn;
    s->n++;
    if (s->n > MEMSERIES_MAX)
        thin(s);
    return 0;
}

void memseries_free(memseries_t *s)
{
    for (size_t i = 0; i < s->n; i++)
        snap_free(&s->snaps[i]);
    free(s->snaps);
    memset(s, 0, sizeof(*s));
}

/* --- a string -> index map -------------------------------------------------------- */

/* Open addressing over an array of keys the caller keeps. */
typedef struct {
    uint32_t *slots; /* key index + 1; 0 empty */
    size_t mask;
} strmap_t;

static uint64_t str_hash(const char *s)
{
    return hash_fnv1a(s, strlen(s));
}

/* Index of key, or -1 (with *slot where it goes). */
static int64_t map_find(const strmap_t *m, char *const *keys, const char *key, size_t *slot)
{
    size_t h = str_hash(key) & m->mask;
    for (; m->slots[h]; h = (h + 1) & m->mask)
        if (strcmp(keys[m->slots[h] - 1], key) == 0)
            return m->slots[h] - 1;
    *slot = h;
    return -1;
}

static int map_grow(strmap_t *m, char *const *keys, size_t n)
{
    size_t nm = m->mask ? (m->mask + 1) * 2 : 256;
    uint32_t *ns = calloc(nm, sizeof(*ns));
    if (!ns)
        return -ENOMEM;
    free(m->slots);
    m->slots = ns;
    m->mask = nm - 1;
    for (size_t i = 0; i < n; i++) {
        size_t h = str_hash(keys[i]) & m->mask;
        while (m->slots[h])
            h = (h + 1) & m->mask;
        m->slots[h] = (uint32_t)i + 1;
    }
    return 0;
}

/* --- computing ---------------------------------------------------------------------- */

typedef struct {
    memtable_t *t;
    size_t snap;
    const char *site;
    const char *by; /* group by this label's values, or NULL */
    char **site_keys; /* parallel to t->sites, for the map */
    strmap_t sites_map;
    char **stack_keys;
    strmap_t stacks_map;
    size_t cap_sites, cap_stacks;
} build_t;

/* Index of the site named name, adding it. -1 on OOM. */
static int64_t site_index(build_t *b, const char *name, const char *func)
{
    memtable_t *t = b->t;
    size_t slot = 0;
    if (!b->sites_map.mask || (t->n_sites + 1) * 2 > b->sites_map.mask + 1)
        if (map_grow(&b->sites_map, b->site_keys, t->n_sites) < 0)
            return -1;
    int64_t i = map_find(&b->sites_map, b->site_keys, name, &slot);
    if (i >= 0)
        return i;
    if (t->n_sites == b->cap_sites) {
        size_t nc = b->cap_sites ? b->cap_sites * 2 : 256;
        memsite_t *ns = realloc(t->sites, nc * sizeof(*ns));
        if (!ns)
            return -1;
        t->sites = ns;
        char **nk = realloc(b->site_keys, nc * sizeof(*nk));
        if (!nk)
            return -1;
        b->site_keys = nk;
        b->cap_sites = nc;
    }
    memsite_t *s = &t->sites[t->n_sites];
    memset(s, 0, sizeof(*s));
    s->name = strdup(name);
    s->func = strdup(func);
    s->v = calloc(t->n_snaps, sizeof(*s->v));
    if (!s->name || !s->func || !s->v) {
        free(s->name);
        free(s->func);
        free(s->v);
        return -1;
    }
    b->site_keys[t->n_sites] = s->name;
    b->sites_map.slots[slot] = (uint32_t)t->n_sites + 1;
    return (int64_t)t->n_sites++;
}

static int64_t stack_index(build_t *b, const char *frames)
{
    memtable_t *t = b->t;
    size_t slot = 0;
    if (!b->stacks_map.mask || (t->n_stacks + 1) * 2 > b->stacks_map.mask + 1)
        if (map_grow(&b->stacks_map, b->stack_keys, t->n_stacks) < 0)
            return -1;
    int64_t i = map_find(&b->stacks_map, b->stack_keys, frames, &slot);
    if (i >= 0)
        return i;
    if (t->n_stacks == b->cap_stacks) {
        size_t nc = b->cap_stacks ? b->cap_stacks * 2 : 64;
        memstack_t *ns = realloc(t->stacks, nc * sizeof(*ns));
        if (!ns)
            return -1;
        t->stacks = ns;
        char **nk = realloc(b->stack_keys, nc * sizeof(*nk));
        if (!nk)
            return -1;
        b->stack_keys = nk;
        b->cap_stacks = nc;
    }
    memstack_t *s = &t->stacks[t->n_stacks];
    s->frames = strdup(frames);
    s->v = calloc(t->n_snaps, sizeof(*s->v));
    s->growth = 0;
    if (!s->frames || !s->v) {
        free(s->frames);
        free(s->v);
        return -1;
    }
    b->stack_keys[t->n_stacks] = s->frames;
    b->stacks_map.slots[slot] = (uint32_t)t->n_stacks + 1;
    return (int64_t)t->n_stacks++;
}

/* With b->by: each sample's value to the row of its label's value. */
static int gen_by_label(build_t *b, report_t *r, char *err, size_t errlen)
{
    const profile_t *p = r->w->p;
    int64_t total = 0;
    for (size_t i = 0; i < r->w->n_samples; i++) {
        const wsample_t *s = &r->w->samples[i];
        int64_t v = s->values[r->value_index];
        if (v == 0)
            continue;
        const char *name = "";
        for (uint32_t j = 0; j < s->n_labels; j++)
            if (s->labels[j].str && strcmp(p->strings[s->labels[j].key], b->by) == 0)
                name = p->strings[s->labels[j].str];
        int64_t si = site_index(b, name, "");
        if (si < 0) {
            snprintf(err, errlen, "out of memory");
            return -ENOMEM;
        }
        b->t->sites[si].v[b->snap] += v;
        total += v;
    }
    b->t->total[b->snap] = total;
    return 0;
}

/* The driver hands each snapshot's report here: flat value per node (the
 * leaf frame of each sample), and the stacks through the site. */
static int gen_snapshot(report_t *r, void *arg, char *err, size_t errlen)
{
    build_t *b = arg;
    memtable_t *t = b->t;
    const profile_t *p = r->w->p;
    snprintf(t->sample_type, sizeof(t->sample_type), "%s", r->sample_type);
    snprintf(t->unit, sizeof(t->unit), "%s", p->strings[p->sample_types[r->value_index].unit]);
    if (b->by)
        return gen_by_label(b, r, err, errlen);
    graph_opts_t go = {.value_index = r->value_index, .mean_index = -1};
    graph_t *g;
    if (graph_new(r->w, &go, &g) < 0)
        goto oom;
    int64_t *flat = calloc(g->n_nodes + 1, sizeof(*flat));
    if (!flat) {
        graph_free(g);
        goto oom;
    }
    sbuf_t key = {0};
    uint32_t *frames = NULL;
    size_t cap_frames = 0;
    int64_t total = 0;
    for (size_t i = 0; i < r->w->n_samples; i++) {
        const wsample_t *s = &r->w->samples[i];
        int64_t v = s->values[r->value_index];
        if (v == 0 || s->n_locs == 0)
            continue;
        uint32_t loc = s->locs[0];
        if (g->loc_first[loc + 1] == g->loc_first[loc])
            continue;
        uint32_t leaf = g->loc_nodes[g->loc_first[loc]];
        flat[leaf] += v;
        total += v;
        if (!b->site)
            continue;
        const char *lname = graph_node_name(g, leaf);
        if (!lname || strcmp(lname, b->site) != 0)
            continue;
        /* the stack, root first */
        size_t nf = 0;
        for (uint32_t j = s->n_locs; j-- > 0;) {
            uint32_t l = s->locs[j];
            for (uint32_t k = g->loc_first[l + 1]; k-- > g->loc_first[l];) {
                if (nf == cap_frames) {
                    size_t nc = cap_frames ? cap_frames * 2 : 64;
                    uint32_t *nfr = realloc(frames, nc * sizeof(*nfr));
                    if (!nfr)
                        goto oom_loop;
                    frames = nfr;
                    cap_frames = nc;
                }
                frames[nf++] = g->loc_nodes[k];
            }
        }
        sb_reset(&key);
        for (size_t j = 0; j < nf; j++) {
            if (j)
                sb_putc(&key, '\n');
            const char *fn = graph_node_name(g, frames[j]);
            sb_puts(&key, fn ? fn : "?");
        }
        if (key.oom)
            goto oom_loop;
        int64_t si = stack_index(b, sb_cstr(&key));
        if (si < 0)
            goto oom_loop;
        t->stacks[si].v[b->snap] += v;
    }
    t->total[b->snap] = total;
    for (size_t n = 0; n < g->n_nodes; n++) {
        if (flat[n] == 0)
            continue;
        const char *name = graph_node_name(g, (uint32_t)n);
        if (!name)
            goto oom_loop;
        int64_t si = site_index(b, name, work_str(r->w, g->nodes[n].info.name));
        if (si < 0)
            goto oom_loop;
        t->sites[si].v[b->snap] += flat[n];
    }
    sb_free(&key);
    free(frames);
    free(flat);
    graph_free(g);
    return 0;
oom_loop:
    sb_free(&key);
    free(frames);
    free(flat);
    graph_free(g);
oom:
    snprintf(err, errlen, "out of memory");
    return -ENOMEM;
}

static int site_cmp(const void *a, const void *b)
{
    const memsite_t *x = a, *y = b;
    if (x->growth != y->growth)
        return x->growth > y->growth ? -1 : 1;
    return strcmp(x->name, y->name);
}

static int stack_cmp(const void *a, const void *b)
{
    const memstack_t *x = a, *y = b;
    if (x->growth != y->growth)
        return x->growth > y->growth ? -1 : 1;
    return strcmp(x->frames, y->frames);
}

int memtime_compute(const memseries_t *s, const config_t *cfg, const char *site, const char *by,
                    FILE *msgs, memtable_t *out)
{
    memset(out, 0, sizeof(*out));
    out->n_snaps = s->n;
    out->snaps = s->snaps;
    out->total = calloc(s->n + 1, sizeof(*out->total));
    if (!out->total) {
        fputs("out of memory\n", msgs);
        return -1;
    }
    build_t b = {.t = out, .site = site && *site ? site : NULL, .by = by && *by ? by : NULL};
    /* Every snapshot in full: no trimming, whatever the URL says. */
    config_t c;
    if (config_copy(&c, cfg) < 0) {
        fputs("out of memory\n", msgs);
        return -1;
    }
    c.trim = false;
    int rc = 0;
    for (size_t i = 0; i < s->n && rc == 0; i++) {
        b.snap = i;
        rc = driver_report_with(s->snaps[i].p, "top", NULL, &c, NULL, msgs, gen_snapshot, &b);
    }
    config_free(&c);
    free(b.site_keys);
    free(b.stack_keys);
    free(b.sites_map.slots);
    free(b.stacks_map.slots);
    if (rc < 0)
        return -1;
    size_t last = s->n ? s->n - 1 : 0;
    for (size_t i = 0; i < out->n_sites; i++)
        out->sites[i].growth = s->n ? out->sites[i].v[last] - out->sites[i].v[0] : 0;
    for (size_t i = 0; i < out->n_stacks; i++)
        out->stacks[i].growth = s->n ? out->stacks[i].v[last] - out->stacks[i].v[0] : 0;
    if (out->n_sites)
        qsort(out->sites, out->n_sites, sizeof(*out->sites), site_cmp);
    if (out->n_stacks)
        qsort(out->stacks, out->n_stacks, sizeof(*out->stacks), stack_cmp);
    return 0;
}

void memtable_free(memtable_t *t)
{
    for (size_t i = 0; i < t->n_sites; i++) {
        free(t->sites[i].name);
        free(t->sites[i].func);
        free(t->sites[i].v);
    }
    for (size_t i = 0; i < t->n_stacks; i++) {
        free(t->stacks[i].frames);
        free(t->stacks[i].v);
    }
    free(t->sites);
    free(t->stacks);
    free(t->total);
    memset(t, 0, sizeof(*t));
}
