/* config.c — reading and checking CPROF_* (see config.h). */
#include "config.h"

#include "base/duration.h"

#include "rt.h"
#include "unwind.h"

#include <errno.h>
#include <regex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <time.h>
#include <unistd.h>

extern char *program_invocation_short_name;

/* Whole number in [min, max], with an optional K/M/G (x1024) suffix when
 * allow_suffix. */
static bool parse_u64(const char *s, uint64_t min, uint64_t max, bool allow_suffix,
                      uint64_t *out)
{
    if (!s || !*s || *s == '-' || *s == '+' || *s == ' ')
        return false;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s)
        return false;
    if (allow_suffix && *end) {
        int shift = 0;
        switch (*end) {
        case 'k': case 'K': shift = 10; break;
        case 'm': case 'M': shift = 20; break;
        case 'g': case 'G': shift = 30; break;
        default: return false;
        }
        end++;
        if (v > (UINT64_MAX >> shift))
            return false;
        v <<= shift;
    }
    if (*end || v < min || v > max)
        return false;
    *out = v;
    return true;
}

int config_check_pattern(const char *p)
{
    if (!p || !*p)
        return -EINVAL;
    for (; *p; p++) {
        if (*p != '%')
            continue;
        p++;
        if (!*p || !strchr("petn%", *p))
            return -EINVAL;
    }
    return 0;
}

int config_expand_pattern(const char *pat, uint64_t seq, char *out, size_t outlen)
{
    size_t n = 0;
    for (const char *p = pat; *p; p++) {
        char tmp[64];
        const char *add = tmp;
        if (*p != '%') {
            tmp[0] = *p;
            tmp[1] = '\0';
        } else {
            switch (*++p) {
            case 'p': snprintf(tmp, sizeof(tmp), "%d", (int)getpid()); break;
            case 't': snprintf(tmp, sizeof(tmp), "%lld", (long long)time(NULL)); break;
            case 'n': snprintf(tmp, sizeof(tmp), "%llu", (unsigned long long)seq); break;
            case 'e': add = program_invocation_short_name; break;
            case '%': strcpy(tmp, "%"); break;
            default: return -EINVAL;
            }
        }
        size_t l = strlen(add);
        if (n + l + 1 > outlen)
            return -ENAMETOOLONG;
        memcpy(out + n, add, l);
        n += l;
    }
    out[n] = '\0';
    return 0;
}

int config_series_pattern(const char *pattern, char *out, size_t outlen)
{
    size_t len = strlen(pattern);
    if (len + 4 >= outlen)
        return -ENAMETOOLONG;
    if (strstr(pattern, "%n")) {
        strcpy(out, pattern);
    } else {
        size_t cut = len >= 6 && strcmp(pattern + len - 6, ".pb.gz") == 0 ? len - 6 : len;
        snprintf(out, outlen, "%.*s.%%n%s", (int)cut, pattern, pattern + cut);
    }
    return 0;
}

/* A relative path is taken relative to the directory at start, as the user
 * meant it, not to wherever the program has moved by the time it exits.
 * Always a copy: programs that set their process title (redis-server,
 * nginx, PostgreSQL) move the environment and write over its strings. */
static const char *absolute(const char *path, char *buf, size_t len)
{
    size_t n = 0, l = strlen(path);
    if (path[0] != '/' && getcwd(buf, len) && (n = strlen(buf)) + l + 2 <= len)
        buf[n++] = '/';
    else
        n = 0;
    if (n + l + 1 > len)
        return path;
    memcpy(buf + n, path, l + 1);
    return buf;
}

static void bad(const char *name, const char *value, const char *accepts, const char *effect)
{
    rt_warn("%s=\"%.*s%s\" is not valid: %s; %s", name, RT_WARN_VALUE(value), accepts, effect);
}

bool config_parse_seconds(const char *s, double min, double max, double *out)
{
    size_t digits = strspn(s, "0123456789");
    const char *p = s + digits;
    if (*p == '.') {
        size_t frac = strspn(p + 1, "0123456789");
        if (frac == 0)
            return false;
        digits += frac;
        p += 1 + frac;
    }
    if (digits == 0 || *p)
        return false;
    double d = strtod(s, NULL);
    if (!(d >= min && d <= max))
        return false;
    *out = d;
    return true;
}

/* A signal a program may send to ask for a dump: its name with or without
 * "SIG", RTMIN+N, RTMAX-N, or its number; not one the kernel sends for a
 * fault, nor KILL and STOP, which cannot be caught. */
static bool parse_signal(const char *s, int *out)
{
    static const struct { const char *name; int sig; } names[] = {
        {"HUP", SIGHUP}, {"INT", SIGINT}, {"QUIT", SIGQUIT}, {"USR1", SIGUSR1},
        {"USR2", SIGUSR2}, {"PIPE", SIGPIPE}, {"ALRM", SIGALRM}, {"TERM", SIGTERM},
        {"CHLD", SIGCHLD}, {"CONT", SIGCONT}, {"TSTP", SIGTSTP}, {"TTIN", SIGTTIN},
        {"TTOU", SIGTTOU}, {"URG", SIGURG}, {"XCPU", SIGXCPU}, {"XFSZ", SIGXFSZ},
        {"VTALRM", SIGVTALRM}, {"PROF", SIGPROF}, {"WINCH", SIGWINCH}, {"IO", SIGIO},
        {"PWR", SIGPWR}, {"SYS", SIGSYS},
    };
    if (strncmp(s, "SIG", 3) == 0)
        s += 3;
    uint64_t u;
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (strcmp(s, names[i].name) == 0)
            return *out = names[i].sig, true;
    if (strncmp(s, "RTMIN+", 6) == 0 && parse_u64(s + 6, 0, (uint64_t)(SIGRTMAX - SIGRTMIN), false, &u))
        return *out = SIGRTMIN + (int)u, true;
    if (strncmp(s, "RTMAX-", 6) == 0 && parse_u64(s + 6, 0, (uint64_t)(SIGRTMAX - SIGRTMIN), false, &u))
        return *out = SIGRTMAX - (int)u, true;
    if (!parse_u64(s, 1, (uint64_t)SIGRTMAX, false, &u))
        return false;
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if ((int)u == names[i].sig)
            return *out = (int)u, true;
    if ((int)u >= SIGRTMIN)
        return *out = (int)u, true;
    return false;
}

/* In a setuid or setgid program (AT_SECURE), settings come from the user
 * who ran it, not from its owner: secure_getenv hides them all, lest a
 * user have root write profiles where they choose. Said once, if any was
 * set, so a silent absence of profiles has its reason. */
static void warn_if_secure(void)
{
    if (!getauxval(AT_SECURE) || !environ)
        return;
    for (char **e = environ; *e; e++)
        if (strncmp(*e, "CPROF_", 6) == 0) {
            rt_warn("the program runs setuid or setgid: CPROF_* settings are ignored");
            return;
        }
}

/* Each kind's variable: a file pattern (the exit write's, or the file of a
 * session for the whole run). */
static void read_paths(rt_config_t *c, const profile_kind_t *kinds, size_t n)
{
    static char bufs[PROFILE_KINDS_MAX][4096];
    c->kinds = kinds;
    c->n_kinds = n < PROFILE_KINDS_MAX ? n : PROFILE_KINDS_MAX;
    for (size_t i = 0; i < c->n_kinds; i++) {
        const char *v = kinds[i].env ? secure_getenv(kinds[i].env) : NULL;
        if (!v)
            continue;
        char effect[96];
        snprintf(effect, sizeof(effect), "no %s is written", kinds[i].what);
        if (kinds[i].off) {
            bad(kinds[i].env, v, kinds[i].off, effect);
        } else if (config_check_pattern(v) == 0) {
            c->path[i] = absolute(v, bufs[i], sizeof(bufs[i]));
        } else {
            bad(kinds[i].env, v, "expected a file name; %p pid, %e program, %t time, "
                "%n sequence, %% percent", effect);
        }
    }
}

const char *config_path(const rt_config_t *c, const char *name)
{
    for (size_t i = 0; i < c->n_kinds; i++)
        if (strcmp(c->kinds[i].name, name) == 0)
            return c->path[i];
    return NULL;
}

void config_read(rt_config_t *c, const profile_kind_t *kinds, size_t n)
{
    warn_if_secure();
    *c = (rt_config_t){.rate = 524288, .unwinder = UNWIND_CFI, .depth = 64,
                    .memory_limit = 1ull << 30, .cpu_hz = 100, .trace_buffer = 16u << 20};
    static const char heap_off[] = "heap profiling is off";
    const char *v;
    uint64_t u;

    if ((v = secure_getenv("CPROF_RATE"))) {
        if (parse_u64(v, 0, INT64_MAX, false, &u)) {
            c->rate = (int64_t)u;
        } else {
            bad("CPROF_RATE", v, "expected bytes between samples, a whole number >= 0 "
                "(0 = off, 1 = every allocation)", heap_off);
            c->rate = 0;
        }
    }
    if ((v = secure_getenv("CPROF_UNWIND"))) {
        if (strcmp(v, "fp") == 0) {
            c->unwinder = UNWIND_FP;
        } else if (strcmp(v, "cfi") == 0) {
            c->unwinder = UNWIND_CFI;
        } else if (strcmp(v, "libunwind") == 0) {
#ifdef CPROF_NO_LIBUNWIND
            bad("CPROF_UNWIND", v, "this libcprof.so is built without libunwind (the musl "
                "build): \"cfi\" or \"fp\"", "cfi unwinds");
#else
            c->unwinder = UNWIND_LIBUNWIND;
#endif
        } else {
            bad("CPROF_UNWIND", v, "expected \"cfi\", \"libunwind\" or \"fp\"", heap_off);
            c->rate = 0;
        }
    }
    if ((v = secure_getenv("CPROF_UNWIND_CHECK"))) {
        if (strcmp(v, "1") == 0)
#ifdef CPROF_NO_LIBUNWIND
            bad("CPROF_UNWIND_CHECK", v, "the check compares with libunwind, which this "
                "libcprof.so is built without (the musl build)", "no check");
#else
            c->unwind_check = true;
#endif
        else if (strcmp(v, "0") != 0)
            bad("CPROF_UNWIND_CHECK", v, "expected 0 or 1", "no check");
    }
    if ((v = secure_getenv("CPROF_DEPTH"))) {
        if (parse_u64(v, 1, UNWIND_MAX_DEPTH, false, &u)) {
            c->depth = (int)u;
        } else {
            bad("CPROF_DEPTH", v, "expected a stack depth from 1 to 256", heap_off);
            c->rate = 0;
        }
    }
    if ((v = secure_getenv("CPROF_MEMORY_LIMIT"))) {
        if (parse_u64(v, 4u << 20, UINT64_MAX, true, &u)) {
            c->memory_limit = u;
        } else {
            bad("CPROF_MEMORY_LIMIT", v, "expected bytes >= 4M, optionally with K, M or G",
                heap_off);
            c->rate = 0;
        }
    }
    if ((v = secure_getenv("CPROF_SEED")) && !parse_u64(v, 1, UINT64_MAX, false, &c->seed))
        bad("CPROF_SEED", v, "expected a whole number > 0", "sampling is seeded from the clock");
    if ((v = secure_getenv("CPROF_CPU_HZ"))) {
        if (parse_u64(v, 1, 10000, false, &u)) {
            c->cpu_hz = (int)u;
        } else {
            bad("CPROF_CPU_HZ", v, "expected CPU samples per second, from 1 to 10000",
                "CPU profiling is off");
            c->cpu_hz = 0;
        }
    }
    if ((v = secure_getenv("CPROF_MUTEX_RATE"))) {
        if (parse_u64(v, 0, INT64_MAX, false, &u))
            c->mutex_rate = (int64_t)u;
        else
            bad("CPROF_MUTEX_RATE", v, "expected a whole number >= 0: one in N lock "
                "contentions is recorded (0 = off, 1 = every one)", "mutex profiling is off");
    }
    if ((v = secure_getenv("CPROF_BLOCK_RATE"))) {
        if (parse_u64(v, 0, INT64_MAX, false, &u))
            c->block_rate = (int64_t)u;
        else
            bad("CPROF_BLOCK_RATE", v, "expected nanoseconds blocked per sample, a whole "
                "number >= 0 (0 = off, 1 = every blocking event)", "block profiling is off");
    }
    read_paths(c, kinds, n);
    static char supp_buf[4096];
    if ((v = secure_getenv("CPROF_LEAK_SUPPRESS")) && *v)
        c->leak_suppress = absolute(v, supp_buf, sizeof(supp_buf));
    if ((v = secure_getenv("CPROF_ALLOC_WRAPPERS"))) {
        /* POSIX extended syntax is the common ground of Go's RE2 and ours
         * for names: checked here, so a typo is told at start, not by
         * every reader of the profile. */
        regex_t re;
        if (strlen(v) < 1024 && regcomp(&re, v, REG_EXTENDED | REG_NOSUB) == 0) {
            regfree(&re);
            c->alloc_wrappers = v;
        } else {
            bad("CPROF_ALLOC_WRAPPERS", v, "expected a regular expression of function names "
                "(under 1024 bytes)", "the built-in list of wrappers is used");
        }
    }
    if ((v = secure_getenv("CPROF_TRACE_BUFFER")) &&
        !parse_u64(v, 64u << 10, 1ull << 30, true, &c->trace_buffer))
        bad("CPROF_TRACE_BUFFER", v, "expected bytes from 64K to 1G, optionally with K, M or G",
            "the trace buffers are 16M");
    if ((v = secure_getenv("CPROF_DUMP_SIGNAL")) && !parse_signal(v, &c->dump_signal))
        bad("CPROF_DUMP_SIGNAL", v, "expected a signal name (USR2, SIGUSR2, RTMIN+1) or "
            "number that is not a fault's, KILL or STOP", "no dumps on a signal");
    if ((v = secure_getenv("CPROF_DUMP_INUSE")) &&
        !parse_u64(v, 1u << 20, UINT64_MAX >> 1, true, &c->dump_inuse))
        bad("CPROF_DUMP_INUSE", v, "expected bytes >= 1M, optionally with K, M or G",
            "no dumps on the live heap");
    if ((v = secure_getenv("CPROF_DUMP_RSS")) &&
        !parse_u64(v, 1u << 20, UINT64_MAX >> 1, true, &c->dump_rss))
        bad("CPROF_DUMP_RSS", v, "expected bytes >= 1M, optionally with K, M or G",
            "no dumps on the resident set");
    if ((v = secure_getenv("CPROF_DUMP_OOM"))) {
        if (strcmp(v, "1") == 0)
            c->dump_oom = true;
        else if (strcmp(v, "0") != 0)
            bad("CPROF_DUMP_OOM", v, "expected 0 or 1", "no dump when memory runs out");
    }
    if ((v = secure_getenv("CPROF_DUMP_CGROUP")) &&
        !config_parse_seconds(v, 0.01, 1, &c->dump_cgroup))
        bad("CPROF_DUMP_CGROUP", v, "expected a fraction of the cgroup's memory limit, a plain "
            "decimal from 0.01 to 1", "no dumps on the cgroup's memory");
    if ((v = secure_getenv("CPROF_RECORD")) &&
        (!duration_parse(v, &c->record) || c->record < 1000000000)) {
        c->record = 0;
        bad("CPROF_RECORD", v, "expected a duration of at least 1s, as Go writes it (10m, 1h30m)",
            "no flight recorder");
    }
    const char *heap = config_path(c, "heap");
    if ((v = secure_getenv("CPROF_HEAP_PROFILE_EVERY"))) {
        double d;
        if (config_parse_seconds(v, 0.01, 1e7, &d) && heap) {
            c->every = d;
        } else {
            bad("CPROF_HEAP_PROFILE_EVERY", v, heap ?
                "expected seconds between snapshots, a number from 0.01 to 10000000" :
                "it needs CPROF_HEAP_PROFILE to name the files", "no periodic snapshots");
        }
    }
}
