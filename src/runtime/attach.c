/* attach.c — cprof attach / detach inside the program (see attach.h).
 *
 * Attach and detach are serialized by an atomic state, as httpctl's start
 * and stop; the poller is the only other thread that patches, and detach
 * joins it before writing the slots back. Everything runs with the guard
 * set: cprof's own allocations go to its private heap once libcprof.so's
 * own slots point at its hooks (they are patched like any module's, as a
 * preload would bind them). */
#include "attach.h"

#include "counters.h"
#include "cprof.h"
#include "gotpatch.h"
#include "httpctl.h"
#include "lockprof.h"
#include "rt.h"
#include "sampler.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_SYMS 128
#define POLL_NS 20000000 /* 20 ms between looks at the loader's module list */
#define SETTING_MAX 4096

enum { OFF, BUSY, ON };

static int state = OFF; /* atomic */
static gotpatch_sym_t syms[MAX_SYMS];
static size_t nsyms;
static pthread_t poller;
static bool poller_running;
static int poller_stop; /* atomic */
static bool cpu_running;

typedef struct {
    int64_t rate, mutex_rate, block_rate;
    char http[SETTING_MAX], token[SETTING_MAX], cpu[SETTING_MAX], module[SETTING_MAX];
    /* "" = not given */
} settings_t;

/* Parses "key=value ..." (see attach.h). */
static int parse(const char *in, settings_t *s)
{
    memset(s, 0, sizeof(*s));
    s->rate = 512 * 1024;
    while (in && *in) {
        while (*in == ' ')
            in++;
        size_t len = strcspn(in, " ");
        if (!len)
            break;
        const char *eq = memchr(in, '=', len);
        if (!eq)
            return -EINVAL;
        size_t klen = (size_t)(eq - in), vlen = len - klen - 1;
        const char *v = eq + 1;
        char *str = NULL;
        int64_t *num = NULL;
        if (klen == 4 && memcmp(in, "rate", 4) == 0)
            num = &s->rate;
        else if (klen == 10 && memcmp(in, "mutex_rate", 10) == 0)
            num = &s->mutex_rate;
        else if (klen == 10 && memcmp(in, "block_rate", 10) == 0)
            num = &s->block_rate;
        else if (klen == 4 && memcmp(in, "http", 4) == 0)
            str = s->http;
        else if (klen == 5 && memcmp(in, "token", 5) == 0)
            str = s->token;
        else if (klen == 3 && memcmp(in, "cpu", 3) == 0)
            str = s->cpu;
        else if (klen == 6 && memcmp(in, "module", 6) == 0)
            str = s->module;
        else
            return -EINVAL;
        if (str) {
            if (vlen == 0 || vlen >= SETTING_MAX)
                return -EINVAL;
            memcpy(str, v, vlen);
            str[vlen] = '\0';
        } else {
            int64_t n = 0;
            if (vlen == 0 || vlen > 18)
                return -EINVAL;
            for (size_t i = 0; i < vlen; i++) {
                if (v[i] < '0' || v[i] > '9')
                    return -EINVAL;
                n = n * 10 + (v[i] - '0');
            }
            *num = n;
        }
        in += len;
    }
    return 0;
}

static void *hook(const char *name)
{
    for (size_t i = 0; i < nsyms; i++)
        if (strcmp(syms[i].name, name) == 0)
            return syms[i].hook;
    return NULL;
}

/* The hooks: every function libcprof.so exports except its cprof_ API.
 * The free side stays routed on detach (attach.h). */
static int load_syms(void)
{
    if (nsyms)
        return 0;
    int n = gotpatch_exports((const void *)cprof__attach, "cprof_", syms, MAX_SYMS);
    if (n < 0)
        return n;
    static const char *const keep[] = {"free", "realloc", "reallocarray", "malloc_usable_size"};
    for (int i = 0; i < n; i++) {
        syms[i].orig = dlsym(RTLD_DEFAULT, syms[i].name);
        for (size_t k = 0; k < sizeof(keep) / sizeof(keep[0]); k++)
            if (strcmp(syms[i].name, keep[k]) == 0)
                syms[i].keep = true;
    }
    nsyms = (size_t)n;
    return hook("malloc") && hook("free") ? 0 : -ENOENT;
}

static void *poll_main(void *arg)
{
    (void)arg;
    rt_guard_enter(); /* cprof's thread for its whole life */
    struct timespec ts = {0, POLL_NS};
    while (!__atomic_load_n(&poller_stop, __ATOMIC_ACQUIRE)) {
        nanosleep(&ts, NULL);
        if (gotpatch_modules_changed() && gotpatch_apply(syms, nsyms) == -ENOMEM)
            rt_warn("too many GOT slots to route; modules loaded from now on are not profiled");
    }
    return NULL;
}

static void fork_child(void)
{
    poller_running = false; /* it does not exist in the child */
}

static void undo(void)
{
    if (poller_running) {
        __atomic_store_n(&poller_stop, 1, __ATOMIC_RELEASE);
        pthread_join(poller, NULL);
        poller_running = false;
    }
    cprof_http_stop();
    if (cpu_running)
        cprof_cpu_stop();
    cpu_running = false;
    sampler_set_rate(0);
    lockprof_set_mutex_rate(0);
    lockprof_set_block_rate(0);
    gotpatch_restore(syms, nsyms);
    counters_pause();
}

static int attach_locked(const char *settings)
{
    static settings_t s; /* the token must outlive the call's stack */
    if (parse(settings, &s) < 0)
        return -EINVAL;
    int rc = load_syms();
    if (rc < 0)
        return rc;
    void *global = dlsym(RTLD_DEFAULT, "malloc");
    if (global == hook("malloc"))
        return -EEXIST;
    if (global != dlsym(RTLD_NEXT, "malloc"))
        return -ENOTSUP;
    if (cprof_set_rate(0) < 0) /* the tables could not be mapped */
        return -ENOMEM;
    if (s.module[0] && (rc = httpctl_set_module(s.module)) < 0)
        return rc;
    if (s.http[0] && (rc = httpctl_load()) < 0)
        return rc;
    counters_resume(); /* before the hooks see the first malloc */
    rc = gotpatch_apply(syms, nsyms);
    if (rc < 0)
        goto fail;
    /* Resolve the next allocator now (the server needs it), through the
     * hooks, as the program's next call would. */
    ((void (*)(void *))hook("free"))(((void *(*)(size_t))hook("malloc"))(1));
    sampler_set_rate(s.rate);
    lockprof_set_mutex_rate(s.mutex_rate);
    lockprof_set_block_rate(s.block_rate);
    if (s.cpu[0]) {
        if ((rc = cprof_cpu_start(s.cpu)) < 0)
            goto fail;
        cpu_running = true;
    }
    int port = 0;
    if (s.http[0]) {
        if ((rc = httpctl_start_token(s.http, s.token[0] ? s.token : NULL)) < 0)
            goto fail;
        port = cprof_http_port();
    }
    static bool atfork_set;
    if (!atfork_set) {
        atfork_set = true;
        pthread_atfork(NULL, NULL, fork_child);
    }
    __atomic_store_n(&poller_stop, 0, __ATOMIC_RELAXED);
    if (rt_spawn(&poller, poll_main, "cprof-modules") == 0)
        poller_running = true;
    else
        rt_warn("cannot start the module poller; modules loaded from now on are not profiled");
    return port;
fail:
    undo();
    return rc;
}

RT_EXPORT int cprof__attach(const char *settings)
{
    int expected = OFF;
    if (!__atomic_compare_exchange_n(&state, &expected, BUSY, false, __ATOMIC_ACQUIRE,
                                     __ATOMIC_RELAXED))
        return expected == ON ? -EALREADY : -EBUSY;
    uint32_t g = rt_guard_enter();
    int rc = attach_locked(settings);
    rt_guard_leave(g);
    __atomic_store_n(&state, rc >= 0 ? ON : OFF, __ATOMIC_RELEASE);
    return rc;
}

RT_EXPORT int cprof__detach(void)
{
    int expected = ON;
    if (!__atomic_compare_exchange_n(&state, &expected, BUSY, false, __ATOMIC_ACQUIRE,
                                     __ATOMIC_RELAXED))
        return expected == OFF ? -ENOTCONN : -EBUSY;
    uint32_t g = rt_guard_enter();
    undo();
    rt_guard_leave(g);
    __atomic_store_n(&state, OFF, __ATOMIC_RELEASE);
    return 0;
}
