/* labels.c — profiler labels: the per-thread set and its intern table
 * (see labels.h), and cprof.h's cprof_labels_push / cprof_labels_pop. */
#include "labels.h"

#include "arena.h"
#include "base/hash.h"
#include "cprof.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define NHEADS (1u << 12)
/* id -> node in pages of 1024, mapped as the table grows. */
#define PAGE_BITS 10
#define NPAGES (LABELS_MAX_NODES >> PAGE_BITS)

static labelset_t **heads;     /* by (parent, key, value); read lock-free */
static labelset_t **set_heads; /* by pairs; used under the lock only */
static labelset_t **table[NPAGES]; /* pages published with release */
static uint32_t count = 1;         /* next id; 0 is "no labels" */
static rt_lock_t insert_lock = RT_LOCK_INIT;
static bool warned;

static uint64_t hash_str(uint64_t h, const char *s, size_t n)
{
    return hash_mix64(h ^ hash_fnv1a(s, n)) + n;
}

static uint64_t hash_push(const labelset_t *parent, const char *k, size_t kn, const char *v,
                          size_t vn)
{
    return hash_str(hash_str(hash_mix64((uintptr_t)parent), k, kn), v, vn);
}

static uint64_t hash_pairs(const labels_pair_t *pairs, uint32_t n)
{
    uint64_t h = n;
    for (uint32_t i = 0; i < n; i++)
        h = hash_str(hash_str(h, pairs[i].key, strlen(pairs[i].key)), pairs[i].value,
                     strlen(pairs[i].value));
    return h;
}

/* s (n bytes, not necessarily terminated there) equals the string t. */
static bool same(const char *s, size_t n, const char *t)
{
    return strncmp(s, t, n) == 0 && t[n] == '\0';
}

static labelset_t *find(labelset_t *e, uint64_t h, const labelset_t *parent, const char *k,
                        size_t kn, const char *v, size_t vn)
{
    for (; e; e = __atomic_load_n(&e->chain, __ATOMIC_ACQUIRE))
        if (e->hash == h && e->parent == parent && same(k, kn, e->key) && same(v, vn, e->value))
            return e;
    return NULL;
}

static bool same_pairs(const labelset_t *a, const labels_pair_t *pairs, uint32_t n)
{
    if (a->n != n)
        return false;
    for (uint32_t i = 0; i < n; i++)
        if (strcmp(a->pairs[i].key, pairs[i].key) || strcmp(a->pairs[i].value, pairs[i].value))
            return false;
    return true;
}

const labelset_t *labels_get(uint32_t id)
{
    if (id == 0 || id >= __atomic_load_n(&count, __ATOMIC_ACQUIRE))
        return NULL;
    labelset_t **page = __atomic_load_n(&table[id >> PAGE_BITS], __ATOMIC_ACQUIRE);
    return page ? page[id & ((1u << PAGE_BITS) - 1)] : NULL;
}

uint32_t labels_count(void)
{
    return __atomic_load_n(&count, __ATOMIC_ACQUIRE) - 1;
}

/* The node of parent + (k, v), made if new (lock held); NULL past a bound
 * or the memory limit. */
static labelset_t *make_locked(const labelset_t *parent, uint64_t h, const char *k, size_t kn,
                               const char *v, size_t vn)
{
    uint32_t np = parent ? parent->n : 0, n = np, at = 0;
    const labels_pair_t *pp = parent ? parent->pairs : NULL;
    while (at < np && strncmp(pp[at].key, k, kn) < 0)
        at++;
    bool replace = at < np && same(k, kn, pp[at].key);
    if (!replace)
        n++;
    if (n > LABELS_MAX_PAIRS || count >= LABELS_MAX_NODES)
        return NULL;
    labelset_t ***page = &table[count >> PAGE_BITS];
    if (!*page)
        __atomic_store_n(page, arena_map(sizeof(labelset_t *) << PAGE_BITS), __ATOMIC_RELEASE);
    size_t size = sizeof(labelset_t) + n * sizeof(labels_pair_t) + kn + vn + 2;
    labelset_t *e = *page ? arena_alloc(size) : NULL;
    if (!e)
        return NULL;
    char *ks = (char *)&e->pairs[n], *vs = ks + kn + 1;
    memcpy(ks, k, kn);
    memcpy(vs, v, vn);
    e->key = ks;
    e->value = vs;
    e->parent = parent;
    e->hash = h;
    e->n = n;
    /* Strings are shared with the ancestors that pushed them. */
    e->pairs[at] = (labels_pair_t){ks, vs};
    if (pp) {
        memcpy(e->pairs, pp, at * sizeof(*pp));
        memcpy(e->pairs + at + 1, pp + at + replace, (np - at - replace) * sizeof(*pp));
    }
    e->set_hash = hash_pairs(e->pairs, n);
    e->id = count;
    labelset_t **sh = &set_heads[e->set_hash & (NHEADS - 1)], *s = *sh;
    while (s && !(s->set_hash == e->set_hash && same_pairs(s, e->pairs, n)))
        s = s->set_chain;
    if (s) {
        e->set = s->id;
    } else {
        e->set = e->id;
        e->set_chain = *sh;
        *sh = e;
    }
    (*page)[count & ((1u << PAGE_BITS) - 1)] = e;
    __atomic_store_n(&count, count + 1, __ATOMIC_RELEASE);
    return e;
}

static const labelset_t *intern(const labelset_t *parent, const char *k, const char *v)
{
    size_t kn = strnlen(k, LABELS_MAX_LEN), vn = strnlen(v, LABELS_MAX_LEN);
    uint64_t h = hash_push(parent, k, kn, v, vn);
    labelset_t **hs = __atomic_load_n(&heads, __ATOMIC_ACQUIRE), *e;
    if (hs && (e = find(__atomic_load_n(&hs[h & (NHEADS - 1)], __ATOMIC_ACQUIRE), h, parent, k,
                        kn, v, vn)))
        return e;
    rt_lock(&insert_lock);
    if (!heads) {
        set_heads = arena_map(NHEADS * sizeof(*set_heads));
        if (set_heads)
            __atomic_store_n(&heads, arena_map(NHEADS * sizeof(*heads)), __ATOMIC_RELEASE);
    }
    e = NULL;
    if (heads) {
        labelset_t **head = &heads[h & (NHEADS - 1)], *first = *head;
        if (!(e = find(first, h, parent, k, kn, v, vn)) &&
            (e = make_locked(parent, h, k, kn, v, vn))) {
            e->chain = first;
            __atomic_store_n(head, e, __ATOMIC_RELEASE);
        }
    }
    rt_unlock(&insert_lock);
    return e;
}

uint32_t labels_with(const char *key, const char *value)
{
    const labelset_t *e = intern(rt_self.labels, key, value);
    return e ? e->set : 0;
}

/* Every push, failed or not, is undone by one pop (a ghost when it
 * failed), so that push/pop pairs written without checks, and the C++
 * scope, stay balanced. */
RT_EXPORT int cprof_labels_push(const char *key, const char *value)
{
    if (!key || !value) {
        rt_self.label_ghosts++;
        return -EINVAL;
    }
    const labelset_t *e = rt_self.label_ghosts ? NULL : intern(rt_self.labels, key, value);
    if (!e) {
        rt_self.label_ghosts++;
        if (!__atomic_exchange_n(&warned, true, __ATOMIC_RELAXED))
            rt_warn("more than %u label sets, %u labels in a set, or CPROF_MEMORY_LIMIT reached; "
                    "further labels are not recorded",
                    LABELS_MAX_NODES - 1, LABELS_MAX_PAIRS);
        return -ENOSPC;
    }
    /* The node is complete: a handler on this thread may read it now. */
    __atomic_store_n(&rt_self.labels, e, __ATOMIC_RELEASE);
    return 0;
}

RT_EXPORT int cprof_labels_pop(void)
{
    rt_thread_t *t = &rt_self;
    if (t->label_ghosts) {
        t->label_ghosts--;
        return 0;
    }
    const labelset_t *e = t->labels;
    if (!e)
        return -ENOENT;
    __atomic_store_n(&t->labels, e->parent, __ATOMIC_RELAXED);
    return 0;
}

int labels_to_profile(profile_t *p, uint32_t id, profile_label_t *out, size_t max)
{
    const labelset_t *e = labels_get(id);
    size_t n = 0;
    for (uint32_t i = 0; e && i < e->n && n < max; i++, n++) {
        out[n] = (profile_label_t){.key = profile_intern(p, e->pairs[i].key),
                                   .str = profile_intern(p, e->pairs[i].value)};
        if (out[n].key < 0 || out[n].str < 0)
            return -ENOMEM;
    }
    return (int)n;
}

size_t labels_format(uint32_t id, char *buf, size_t len)
{
    const labelset_t *e = labels_get(id);
    size_t n = 0;
    if (len)
        buf[0] = '\0';
    for (uint32_t i = 0; e && i < e->n && n + 1 < len; i++) {
        int w = snprintf(buf + n, len - n, "%s%s=%s", i ? " " : "", e->pairs[i].key,
                         e->pairs[i].value);
        if (w < 0)
            break;
        n += (size_t)w < len - n ? (size_t)w : len - n - 1;
    }
    return n;
}

void labels_fork_prepare(void)
{
    rt_lock(&insert_lock);
}

void labels_fork_release(void)
{
    rt_unlock(&insert_lock);
}
