/* threadprof.c — the threads and threadcreate profiles (see threadprof.h).
 *
 * The thread registry maps the tid of every thread started through the
 * hook to what the profiles need: whether it is one of cprof's own threads
 * (hidden), and the stack that created it (the threadcreate entry, whose
 * first counter is the number of live threads it created). It is an open
 * addressing table in arena memory under one rt_lock, filled by the
 * threadhook callbacks; with more live threads than it holds, the extra
 * ones are simply not registered (listed as the program's, with no
 * "created by"). */
#include "threadprof.h"

#include "arena.h"
#include "labels.h"
#include "rt.h"
#include "profwriter.h"
#include "unwind.h"
#include "sitetab.h"
#include "threaddump.h"
#include "threadhook.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define REG_SLOTS (1u << 13)
#define REG_MAX (REG_SLOTS / 4 * 3)
#define DUMP_TIMEOUT_MS 1000

typedef struct {
    int32_t tid;       /* 0: free */
    uint32_t internal; /* one of cprof's threads */
    site_t *creator; /* threadcreate entry, or NULL */
} reg_t;

static reg_t *reg;
static uint32_t nreg;
static rt_lock_t reg_lock = RT_LOCK_INIT;
static sitetab_t creators = SITETAB_INIT(1u << 16);
static int depth_max = 64;
static bool ready;

/* This thread's own registration, for the fork child. */
static __thread struct {
    site_t *creator;
    bool registered, internal;
} me __attribute__((tls_model("initial-exec")));

/* The one frame of a thread whose stack could not be had: the name says
 * why. Distinct bodies, so that no linker folds them into one address. */
static volatile int why_no_stack;
__attribute__((noinline, used)) void cprof_thread_signal_blocked(void)
{
    why_no_stack = 1;
}
__attribute__((noinline, used)) void cprof_thread_no_answer(void)
{
    why_no_stack = 2;
}
__attribute__((noinline, used)) void cprof_thread_exited(void)
{
    why_no_stack = 3;
}
__attribute__((noinline, used)) void cprof_thread_unwind_failed(void)
{
    why_no_stack = 4;
}

static pid_t gettid_(void)
{
    return (pid_t)syscall(SYS_gettid);
}

/* --- the registry ------------------------------------------------------- */

static size_t reg_home(int32_t tid)
{
    return ((uint32_t)tid * 2654435761u) & (REG_SLOTS - 1);
}

static reg_t *reg_find_locked(int32_t tid)
{
    for (size_t h = reg_home(tid), i = 0; i < REG_SLOTS && reg[h].tid; h = (h + 1) & (REG_SLOTS - 1), i++)
        if (reg[h].tid == tid)
            return &reg[h];
    return NULL;
}

static void reg_put_locked(int32_t tid, bool internal, site_t *creator)
{
    reg_t *r = reg_find_locked(tid);
    if (!r) {
        if (nreg >= REG_MAX)
            return;
        size_t h = reg_home(tid);
        while (reg[h].tid)
            h = (h + 1) & (REG_SLOTS - 1);
        r = &reg[h];
        nreg++;
    }
    *r = (reg_t){.tid = tid, .internal = internal, .creator = creator};
}

/* Linear probing's deletion: later entries of the run move back into the
 * hole when their home allows, so lookups need no tombstones. */
static void reg_del_locked(int32_t tid)
{
    reg_t *r = reg_find_locked(tid);
    if (!r)
        return;
    size_t i = (size_t)(r - reg), j = i;
    for (;;) {
        j = (j + 1) & (REG_SLOTS - 1);
        if (!reg[j].tid)
            break;
        size_t k = reg_home(reg[j].tid);
        bool stays = i <= j ? (i < k && k <= j) : (i < k || k <= j);
        if (stays)
            continue;
        reg[i] = reg[j];
        i = j;
    }
    reg[i] = (reg_t){0};
    nreg--;
}

/* --- threadhook callbacks (guard set) ------------------------------------- */

static void *on_create(bool internal)
{
    if (internal)
        return NULL;
    uintptr_t pcs[UNWIND_MAX_DEPTH];
    int depth = unwind_capture(pcs);
    return sitetab_intern(&creators, pcs, depth);
}

static void on_start(void *cookie, bool internal)
{
    site_t *e = cookie;
    me.creator = e;
    me.internal = internal;
    me.registered = true;
    if (e)
        __atomic_add_fetch(&e->v[0], 1, __ATOMIC_RELAXED);
    rt_lock(&reg_lock);
    reg_put_locked(gettid_(), internal, e);
    rt_unlock(&reg_lock);
}

static void on_exit_(void *cookie, bool internal)
{
    (void)internal;
    site_t *e = cookie;
    rt_lock(&reg_lock);
    reg_del_locked(gettid_());
    rt_unlock(&reg_lock);
    if (e)
        __atomic_sub_fetch(&e->v[0], 1, __ATOMIC_RELAXED);
    me.registered = false;
    me.creator = NULL;
}

static const threadhook_client_t client = {
    .on_create = on_create,
    .on_start = on_start,
    .on_exit = on_exit_,
};

int threadprof_init(int max_depth)
{
    depth_max = max_depth > 0 && max_depth <= UNWIND_MAX_DEPTH ? max_depth : 64;
    if (ready)
        return 0;
    reg = arena_map(REG_SLOTS * sizeof(*reg));
    if (!reg)
        return -ENOMEM;
    int rc = threadhook_register(&client);
    if (rc == 0)
        ready = true;
    return rc;
}

void threadprof_fork_prepare(void)
{
    sitetab_fork_prepare(&creators);
    rt_lock(&reg_lock);
}

void threadprof_fork_parent(void)
{
    rt_unlock(&reg_lock);
    sitetab_fork_release(&creators);
}

void threadprof_fork_child(void)
{
    /* Only the forking thread lives on, under a new tid. */
    if (ready && nreg) {
        memset(reg, 0, REG_SLOTS * sizeof(*reg));
        nreg = 0;
        if (me.registered)
            reg_put_locked(gettid_(), me.internal, me.creator);
    }
    sitetab_reset(&creators);
    if (me.registered && me.creator)
        __atomic_add_fetch(&me.creator->v[0], 1, __ATOMIC_RELAXED);
    threadprof_fork_parent();
}

/* --- listing the threads ---------------------------------------------------- */

typedef struct {
    pid_t tid;
    char name[64];   /* comm, escaped nothing */
    char state[96];  /* "sleeping" or "sleeping, wchan" */
    int status;      /* TD_* */
    site_t *creator;
    uint32_t depth;
    uint32_t labels; /* its label set (labels.h) when it answered */
    uintptr_t *pcs;
    char *key;       /* grouping key (Go's): "@ 0x.. 0x..\n# labels: {...}" */
} thr_t;

/* Reads a small /proc file into buf (NUL-terminated, trailing newline
 * dropped); false if it cannot be read. */
static bool read_small(const char *path, char *buf, size_t len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    ssize_t n = read(fd, buf, len - 1);
    close(fd);
    if (n < 0)
        return false;
    buf[n] = '\0';
    if (n > 0 && buf[n - 1] == '\n')
        buf[n - 1] = '\0';
    return true;
}

static void read_thread(thr_t *t)
{
    char path[64], buf[1024];
    snprintf(path, sizeof(path), "/proc/self/task/%d/comm", (int)t->tid);
    if (!read_small(path, t->name, sizeof(t->name)))
        t->name[0] = '\0';
    snprintf(t->state, sizeof(t->state), "exited");
    snprintf(path, sizeof(path), "/proc/self/task/%d/status", (int)t->tid);
    if (read_small(path, buf, sizeof(buf))) {
        /* "State:\tS (sleeping)": the words in parentheses */
        const char *s = strstr(buf, "\nState:"), *open_ = s ? strchr(s, '(') : NULL;
        const char *close_ = open_ ? strchr(open_, ')') : NULL;
        if (close_)
            snprintf(t->state, sizeof(t->state), "%.*s", (int)(close_ - open_ - 1), open_ + 1);
    }
    char wchan[64];
    snprintf(path, sizeof(path), "/proc/self/task/%d/wchan", (int)t->tid);
    if (read_small(path, wchan, sizeof(wchan)) && wchan[0] && strcmp(wchan, "0") != 0) {
        size_t l = strlen(t->state);
        snprintf(t->state + l, sizeof(t->state) - l, ", %s", wchan);
    }
}

static int by_tid(const void *a, const void *b)
{
    const thr_t *x = a, *y = b;
    return (x->tid > y->tid) - (x->tid < y->tid);
}

/* Every thread of the program (cprof's own left out), with stacks; the
 * calling thread first. Free with free_threads. */
static int collect_threads(thr_t **out, size_t *nout, uintptr_t **pcs_out)
{
    *out = NULL;
    *nout = 0;
    *pcs_out = NULL;
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return -errno;
    size_t n = 0, cap = 64;
    thr_t *t = calloc(cap, sizeof(*t));
    pid_t self = gettid_();
    struct dirent *de;
    while (t && (de = readdir(d))) {
        char *end;
        long tid = strtol(de->d_name, &end, 10);
        if (*end || tid <= 0)
            continue;
        if (n == cap) {
            thr_t *nt = realloc(t, cap * 2 * sizeof(*t));
            if (!nt) {
                free(t);
                t = NULL;
                break;
            }
            t = nt;
            cap *= 2;
        }
        memset(&t[n], 0, sizeof(t[n]));
        t[n++].tid = (pid_t)tid;
    }
    closedir(d);
    if (!t)
        return -ENOMEM;
    /* Drop cprof's threads; note the creators. */
    size_t k = 0;
    rt_lock(&reg_lock);
    for (size_t i = 0; i < n; i++) {
        const reg_t *r = reg ? reg_find_locked(t[i].tid) : NULL;
        if (r && r->internal)
            continue;
        t[i].creator = r ? r->creator : NULL;
        t[k++] = t[i];
    }
    rt_unlock(&reg_lock);
    n = k;
    qsort(t, n, sizeof(*t), by_tid);
    for (size_t i = 0; i < n; i++) {
        if (t[i].tid == self && i > 0) { /* the caller first, as Go's debug=2 */
            thr_t me_ = t[i];
            memmove(&t[1], &t[0], i * sizeof(*t));
            t[0] = me_;
        }
    }
    uintptr_t *pcs = calloc((n ? n : 1) * (size_t)depth_max, sizeof(*pcs));
    td_thread_t *td = calloc(n ? n : 1, sizeof(*td));
    if (!pcs || !td) {
        free(pcs);
        free(td);
        free(t);
        return -ENOMEM;
    }
    /* States first: answering the signal wakes the threads up (and let
     * those an earlier profile woke settle). */
    threaddump_settle();
    for (size_t i = 0; i < n; i++)
        read_thread(&t[i]);
    for (size_t i = 0; i < n; i++) {
        t[i].pcs = pcs + i * (size_t)depth_max;
        td[i].tid = t[i].tid;
        td[i].pcs = t[i].pcs;
    }
    threaddump_collect(td, n, depth_max, DUMP_TIMEOUT_MS);
    for (size_t i = 0; i < n; i++) {
        if (t[i].tid == self) {
            t[i].depth = (uint32_t)threaddump_self(t[i].pcs, depth_max);
            t[i].labels = labels_now();
            t[i].status = TD_OK;
        } else {
            t[i].depth = td[i].depth;
            t[i].labels = td[i].labels;
            t[i].status = td[i].status;
        }
    }
    free(td);
    *out = t;
    *nout = n;
    *pcs_out = pcs;
    return 0;
}

static void free_threads(thr_t *t, size_t n, uintptr_t *pcs)
{
    for (size_t i = 0; t && i < n; i++)
        free(t[i].key);
    free(t);
    free(pcs);
}

/* A thread without a stack gets one frame naming why. */
static void placeholder_stack(thr_t *t)
{
    void (*why)(void) = NULL;
    switch (t->status) {
    case TD_OK: why = t->depth ? NULL : cprof_thread_unwind_failed; break;
    case TD_BLOCKED: why = cprof_thread_signal_blocked; break;
    case TD_GONE: why = cprof_thread_exited; break;
    default: why = cprof_thread_no_answer; break;
    }
    if (why) {
        t->pcs[0] = (uintptr_t)why + 1; /* pc - 1 must stay inside the function */
        t->depth = 1;
    }
}

/* Go's %q, enough for thread names. */
static void quote(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20 || c == 0x7f)
            fprintf(f, "\\x%02x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

/* --- writers ------------------------------------------------------------------ */

typedef struct {
    const uintptr_t *pcs;
    uint32_t depth;
    int64_t count;
    const char *key;
    const char *name; /* thread label, or NULL */
    uint32_t labels;  /* label set (labels.h), 0: none */
} group_t;

static int by_key(const void *a, const void *b)
{
    return strcmp(((const group_t *)a)->key, ((const group_t *)b)->key);
}

/* Go's keysByCount: more first, then by key. */
static int by_count(const void *a, const void *b)
{
    const group_t *x = a, *y = b;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    return strcmp(x->key, y->key);
}

static int by_string(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* "key":"value" (Go's %q:%q), malloc'd, or NULL. */
static char *quoted_pair(const char *k, const char *v)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return NULL;
    quote(f, k);
    fputc(':', f);
    quote(f, v);
    if (fclose(f) != 0) {
        free(text);
        return NULL;
    }
    return text;
}

/* Go's labelMap.String: {"k":"v", ...}, the pairs sorted as strings; the
 * thread's name is the label "thread". */
static void write_labels(FILE *f, const char *thread, uint32_t labels)
{
    const labelset_t *s = labels_get(labels);
    char *kv[1 + LABELS_MAX_PAIRS];
    size_t n = 0;
    if (thread && (kv[n] = quoted_pair("thread", thread)))
        n++;
    for (uint32_t i = 0; s && i < s->n; i++)
        if ((kv[n] = quoted_pair(s->pairs[i].key, s->pairs[i].value)))
            n++;
    qsort(kv, n, sizeof(*kv), by_string);
    fputs("\n# labels: {", f);
    for (size_t i = 0; i < n; i++) {
        fprintf(f, "%s%s", i ? ", " : "", kv[i]);
        free(kv[i]);
    }
    fputc('}', f);
}

static char *make_key(const uintptr_t *pcs, uint32_t depth, const char *label, uint32_t labels)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return NULL;
    fputc('@', f);
    for (uint32_t i = 0; i < depth; i++)
        fprintf(f, " %#lx", (unsigned long)pcs[i]);
    if (label || labels)
        write_labels(f, label, labels);
    if (fclose(f) != 0) {
        free(text);
        return NULL;
    }
    return text;
}

/* Sorts groups Go's way after merging equal keys; returns the new count. */
static size_t merge_groups(group_t *g, size_t n)
{
    qsort(g, n, sizeof(*g), by_key);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (k > 0 && strcmp(g[k - 1].key, g[i].key) == 0)
            g[k - 1].count += g[i].count;
        else
            g[k++] = g[i];
    }
    qsort(g, k, sizeof(*g), by_count);
    return k;
}

/* Proto (debug 0) or grouped text (debug 1) of count groups. */
static int write_counts(int fd, int debug, const char *name, group_t *g, size_t n, int64_t total)
{
    int rc = 0;
    if (debug == 0) {
        profwriter_t *b = profwriter_new();
        if (!b)
            return -errno;
        profile_t *p = profwriter_profile(b);
        int64_t key = profile_intern(p, "thread");
        if (profile_add_sample_type(p, name, "count") < 0 || key < 0)
            rc = -ENOMEM;
        p->period_type.type = profile_intern(p, name);
        p->period_type.unit = profile_intern(p, "count");
        p->period = 1;
        for (size_t i = 0; i < n && rc == 0; i++) {
            profile_label_t l[1 + LABELS_MAX_PAIRS];
            size_t nl = 0;
            if (g[i].name)
                l[nl++] = (profile_label_t){.key = key, .str = profile_intern(p, g[i].name)};
            int ns = labels_to_profile(p, g[i].labels, l + nl, LABELS_MAX_PAIRS);
            rc = ns < 0 ? ns
                        : profwriter_add(b, g[i].pcs, g[i].depth, &g[i].count, l, nl + (size_t)ns);
        }
        if (rc == 0)
            rc = profwriter_write(b, fd);
        profwriter_free(b);
        return rc;
    }
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return -ENOMEM;
    stacknames_t *names = stacknames_new();
    fprintf(f, "%s profile: total %lld\n", name, (long long)total);
    for (size_t i = 0; i < n; i++) {
        fprintf(f, "%lld %s\n", (long long)g[i].count, g[i].key);
        profwriter_frame_lines(f, names, g[i].pcs, g[i].depth);
    }
    profwriter_memory_map(f);
    stacknames_free(names);
    rc = fclose(f) == 0 && text ? profile_write_all(fd, text, len) : -ENOMEM;
    free(text);
    return rc;
}

/* debug=2: Go's goroutine dump, one block per thread. */
static int write_dump(int fd, const thr_t *t, size_t n)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return -ENOMEM;
    stacknames_t *names = stacknames_new();
    char fn[512], where[4200];
    for (size_t i = 0; i < n; i++) {
        fprintf(f, "%sthread %d ", i ? "\n" : "", (int)t[i].tid);
        quote(f, t[i].name);
        fprintf(f, " [%s]:\n", t[i].state);
        if (t[i].status == TD_OK && t[i].depth) {
            for (uint32_t j = 0; j < t[i].depth; j++) {
                stacknames_frame(names, t[i].pcs[j] - 1, fn, sizeof(fn), where, sizeof(where));
                fprintf(f, "%s\n\t%s\n", fn[0] ? fn : "?", where);
            }
        } else if (t[i].status == TD_BLOCKED) {
            fprintf(f, "(no stack: the thread blocks signal %d)\n", threaddump_signal());
        } else if (t[i].status == TD_GONE) {
            fprintf(f, "(no stack: the thread ended)\n");
        } else if (t[i].status == TD_OK) {
            fprintf(f, "(no stack: unwinding failed)\n");
        } else if (t[i].status == TD_NO_SIGNAL) {
            fprintf(f, "(no stack: no free real-time signal)\n");
        } else {
            fprintf(f, "(no stack: no answer within %d ms)\n", DUMP_TIMEOUT_MS);
        }
        const site_t *c = t[i].creator;
        if (c && c->depth > 0) {
            stacknames_frame(names, c->pcs[0] - 1, fn, sizeof(fn), where, sizeof(where));
            fprintf(f, "created by %s\n\t%s\n", fn[0] ? fn : "?", where);
        }
    }
    stacknames_free(names);
    int rc = fclose(f) == 0 && text ? profile_write_all(fd, text, len) : -ENOMEM;
    free(text);
    return rc;
}

int threadprof_write_threads(int fd, int debug)
{
    if (debug < 0 || debug > 2)
        return -EINVAL;
    thr_t *t;
    size_t n;
    uintptr_t *pcs;
    int rc = collect_threads(&t, &n, &pcs);
    if (rc < 0)
        return rc;
    if (debug == 2) {
        rc = write_dump(fd, t, n);
        free_threads(t, n, pcs);
        return rc;
    }
    group_t *g = calloc(n ? n : 1, sizeof(*g));
    for (size_t i = 0; g && i < n; i++) {
        placeholder_stack(&t[i]);
        g[i].pcs = t[i].pcs;
        g[i].depth = t[i].depth;
        g[i].count = 1;
        g[i].name = t[i].name;
        g[i].labels = t[i].labels;
        g[i].key = t[i].key = make_key(t[i].pcs, t[i].depth, t[i].name, t[i].labels);
        if (!g[i].key) {
            free(g);
            g = NULL;
        }
    }
    if (!g) {
        free_threads(t, n, pcs);
        return -ENOMEM;
    }
    size_t k = merge_groups(g, n);
    rc = write_counts(fd, debug, "goroutine", g, k, (int64_t)n);
    free(g);
    free_threads(t, n, pcs);
    return rc;
}

int threadprof_write_threadcreate(int fd, int debug)
{
    if (debug < 0 || debug > 1)
        return -EINVAL;
    size_t n = 0, cap = 64;
    group_t *g = malloc(cap * sizeof(*g));
    int64_t total = 0;
    for (site_t *e = sitetab_first(&creators); g && e; e = sitetab_next(e)) {
        int64_t live = __atomic_load_n(&e->v[0], __ATOMIC_RELAXED);
        if (live <= 0)
            continue;
        if (n == cap) {
            group_t *ng = realloc(g, cap * 2 * sizeof(*g));
            if (!ng)
                break;
            g = ng;
            cap *= 2;
        }
        g[n] = (group_t){.pcs = e->pcs, .depth = e->depth, .count = live};
        if (!(g[n].key = make_key(e->pcs, e->depth, NULL, 0)))
            break;
        total += live;
        n++;
    }
    int rc = -ENOMEM;
    if (g) {
        /* Entries are distinct stacks: sorting is all there is to do. */
        qsort(g, n, sizeof(*g), by_count);
        rc = write_counts(fd, debug, "threadcreate", g, n, total);
        for (size_t i = 0; i < n; i++)
            free((char *)g[i].key);
    }
    free(g);
    return rc;
}

size_t threadprof_count_threads(void)
{
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return 0;
    size_t n = 0, cap = 256, k = 0;
    int32_t *tids = malloc(cap * sizeof(*tids));
    struct dirent *de;
    while (tids && (de = readdir(d))) {
        long tid = strtol(de->d_name, NULL, 10);
        if (tid <= 0)
            continue;
        if (n == cap) {
            int32_t *nt = realloc(tids, cap * 2 * sizeof(*tids));
            if (!nt)
                break;
            tids = nt;
            cap *= 2;
        }
        tids[n++] = (int32_t)tid;
    }
    closedir(d);
    rt_lock(&reg_lock);
    for (size_t i = 0; tids && i < n; i++) {
        const reg_t *r = reg ? reg_find_locked(tids[i]) : NULL;
        if (!(r && r->internal))
            k++;
    }
    rt_unlock(&reg_lock);
    free(tids);
    return k;
}

size_t threadprof_count_threadcreate(void)
{
    size_t n = 0;
    for (site_t *e = sitetab_first(&creators); e; e = sitetab_next(e)) {
        int64_t live = __atomic_load_n(&e->v[0], __ATOMIC_RELAXED);
        if (live > 0)
            n += (size_t)live;
    }
    return n;
}
