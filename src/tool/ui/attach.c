/* attach.c — the attach and detach commands (see attach.h). */
#include "tool/ui/attach.h"

#include "tool/fetch/inject.h"
#include "tool/driver/driver.h"
#include "tool/fetch/launch.h"
#include "tool/ui/attachns.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define SCRATCH 16384 /* bytes mapped in the target for the calls' strings */

typedef struct {
    bool detach;
    const char *http, *rate, *mutex_rate, *block_rate, *cpu;
    pid_t pid;
} opts_t;

static void usage(FILE *f)
{
    fputs("usage: cprof attach [-http=ADDR] [-rate=N] [-mutex_rate=N] [-block_rate=NS]\n"
          "                    [-cpu=FILE] PID\n"
          "       cprof detach PID\n"
          "Loads libcprof.so into the running process PID (started without LD_PRELOAD),\n"
          "routes its allocation, thread and lock calls to cprof, serves /debug/pprof/ on\n"
          "ADDR and prints the URL; detach stops profiling and restores the calls.\n"
          "  -http=ADDR        listen address, HOST:PORT (default 127.0.0.1:0: a free port\n"
          "                    on loopback); CPROF_HTTP_TOKEN in cprof's environment sets\n"
          "                    the token the endpoints then require\n"
          "  -rate=N           bytes per heap sample (default 524288; 1 = every allocation)\n"
          "  -mutex_rate=N     record 1 in N lock contentions (default 0: off)\n"
          "  -block_rate=NS    one blocking sample per NS nanoseconds blocked (default 0: off)\n"
          "  -cpu=FILE         CPU profile from the attach to the detach (or exit), written\n"
          "                    to FILE\n",
          f);
}

static bool digits(const char *s)
{
    if (!s || !*s || strlen(s) > 18)
        return false;
    for (; *s; s++)
        if (*s < '0' || *s > '9')
            return false;
    return true;
}

/* -name=value, --name=value or -name value. 1 matched, 0 not, -1 error. */
static int flag(int argc, char **argv, int *i, const char *name, const char **val)
{
    const char *a = argv[*i];
    if (a[0] != '-')
        return 0;
    a += a[1] == '-' ? 2 : 1;
    size_t n = strlen(name);
    if (strncmp(a, name, n) != 0)
        return 0;
    if (a[n] == '=') {
        *val = a + n + 1;
        return 1;
    }
    if (a[n] != '\0')
        return 0;
    if (*i + 1 >= argc)
        return -1;
    *val = argv[++*i];
    return 1;
}

static int parse(int argc, char **argv, opts_t *o, char *err, size_t errlen)
{
    memset(o, 0, sizeof(*o));
    o->detach = strcmp(argv[0], "detach") == 0;
    o->http = "127.0.0.1:0";
    o->rate = "524288";
    o->mutex_rate = o->block_rate = "0";
    const char *pid = NULL;
    for (int i = 1; i < argc; i++) {
        static const char *const names[] = {"http", "rate", "mutex_rate", "block_rate", "cpu"};
        const char **vals[] = {&o->http, &o->rate, &o->mutex_rate, &o->block_rate, &o->cpu};
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "-help") == 0 ||
            strcmp(argv[i], "--help") == 0)
            return 1;
        int m = 0;
        for (size_t k = 0; k < sizeof(names) / sizeof(names[0]) && !m && !o->detach; k++)
            m = flag(argc, argv, &i, names[k], vals[k]);
        if (m < 0) {
            snprintf(err, errlen, "%s needs a value", argv[i]);
            return -1;
        }
        if (m)
            continue;
        if (argv[i][0] == '-' || pid) {
            snprintf(err, errlen, "unexpected argument %s", argv[i]);
            return -1;
        }
        pid = argv[i];
    }
    if (!digits(pid) || atoll(pid) <= 0 || atoll(pid) > INT_MAX) {
        snprintf(err, errlen, pid ? "%s is not a process id" : "missing PID", pid);
        return -1;
    }
    o->pid = (pid_t)atoll(pid);
    if (!digits(o->rate) || !digits(o->mutex_rate) || !digits(o->block_rate)) {
        snprintf(err, errlen, "-rate, -mutex_rate and -block_rate take a number (0 or more)");
        return -1;
    }
    if (!*o->http || strchr(o->http, ' ') || (o->cpu && (!*o->cpu || strchr(o->cpu, ' ')))) {
        snprintf(err, errlen, "-http and -cpu take a value without spaces");
        return -1;
    }
    return 0;
}

/* "Name:\tvalue" of /proc/PID/status, as a number; -1 if absent. */
static long status_field(pid_t pid, const char *name, char *state)
{
    char path[64], line[256];
    snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "re");
    long v = -1;
    size_t n = strlen(name);
    while (f && fgets(line, sizeof(line), f)) {
        if (state && strncmp(line, "State:", 6) == 0)
            sscanf(line + 6, " %c", state);
        if (strncmp(line, name, n) == 0 && line[n] == ':')
            v = atol(line + n + 1);
    }
    if (f)
        fclose(f);
    return v;
}

/* The refusals that need no ptrace. 0, or 1 with the message printed. */
static int precheck(const opts_t *o, const char *cmd)
{
    pid_t pid = o->pid;
    char state = '?';
    long tgid = status_field(pid, "Tgid", &state);
    if (tgid < 0) {
        driver_msg("cprof %s: no process %d", cmd, (int)pid);
        return 1;
    }
    if (tgid != pid) {
        driver_msg("cprof %s: %d is a thread of process %ld: give the process id", cmd,
                (int)pid, tgid);
        return 1;
    }
    if (pid == getpid()) {
        driver_msg("cprof %s: %d is cprof itself", cmd, (int)pid);
        return 1;
    }
    if (state == 'Z' || state == 'X') {
        driver_msg("cprof %s: process %d has exited", cmd, (int)pid);
        return 1;
    }
    /* A filter may kill the process on a call ours make (dlopen's
     * mmap(PROT_EXEC), the server's socket...) and cannot be read from
     * outside to tell: only an unfiltered process is known safe to attach
     * to. Detach loads nothing (a writable scratch mapping, dlopen
     * RTLD_NOLOAD, cprof's own stop, which its threads' calls since the
     * attach have survived): a process filtered after its attach must
     * still be detachable. */
    long seccomp = o->detach ? 0 : status_field(pid, "Seccomp", NULL);
    if (seccomp > 0) {
        long filters = status_field(pid, "Seccomp_filters", NULL);
        char nf[32] = "";
        if (filters > 0)
            snprintf(nf, sizeof(nf), ", %ld filters", filters);
        driver_msg("cprof %s: process %d runs under a seccomp %s (Seccomp: %ld%s): cprof "
                   "cannot know that the calls it would make are allowed, and a forbidden one "
                   "may kill the process", cmd, (int)pid, seccomp == 1 ? "strict mode" : "filter",
                   seccomp, nf);
        return 1;
    }
    long tracer = status_field(pid, "TracerPid", NULL);
    if (tracer > 0) {
        driver_msg("cprof %s: process %d is already traced by process %ld (a debugger, "
                "strace or another cprof attach): only one tracer at a time", cmd, (int)pid,
                tracer);
        return 1;
    }
    return 0;
}

/* Why ptrace was refused, in the words of the likely cause. */
static void explain_eperm(pid_t pid, const char *cmd)
{
    long uid = status_field(pid, "Uid", NULL);
    char scope[16] = "";
    FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "re");
    if (f) {
        if (!fgets(scope, sizeof(scope), f))
            scope[0] = '\0';
        scope[strcspn(scope, "\n")] = '\0';
        fclose(f);
    }
    const char *why = " (cprof needs the same user and no setuid or non-dumpable target, or "
                      "CAP_SYS_PTRACE)";
    char buf[256];
    if (uid >= 0 && uid != (long)getuid()) {
        snprintf(buf, sizeof(buf), ": it runs as uid %ld and cprof as uid %ld (run cprof as "
                 "that user, or with CAP_SYS_PTRACE)", uid, (long)getuid());
        why = buf;
    } else if (scope[0] && strcmp(scope, "0") != 0) {
        snprintf(buf, sizeof(buf), ": kernel.yama.ptrace_scope is %s (1: only a parent may "
                 "trace; run cprof as root, or set it to 0)", scope);
        why = buf;
    }
    driver_msg("cprof %s: no permission to trace process %d%s", cmd, (int)pid, why);
}

/* The machine of the process's executable, from its ELF header. */
static int check_arch(pid_t pid, const char *cmd)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == EACCES || errno == EPERM)
            explain_eperm(pid, cmd);
        else
            driver_msg("cprof %s: %s: %s", cmd, path, strerror(errno));
        return 1;
    }
    Elf64_Ehdr eh;
    ssize_t r = read(fd, &eh, sizeof(eh));
    close(fd);
    if (r < (ssize_t)EI_NIDENT + 4 || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0) {
        driver_msg("cprof %s: process %d does not run an ELF program", cmd, (int)pid);
        return 1;
    }
#if defined(__x86_64__)
    if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_machine != EM_X86_64) {
        driver_msg("cprof %s: process %d runs a %s program (ELF machine %d); cprof "
                "attaches to x86-64 programs only", cmd, (int)pid,
                eh.e_ident[EI_CLASS] == ELFCLASS32 ? "32-bit" : "foreign", eh.e_machine);
        return 1;
    }
    return 0;
#else
    driver_msg("cprof %s: this cprof was not built for x86-64, the only architecture "
            "attach supports", cmd);
    return 1;
#endif
}

typedef struct {
    uint64_t dlopen, dlsym, dlerror, mmap, munmap, errno_location, malloc;
    uint64_t memfd_create, close; /* 0: absent (glibc before 2.27) */
} libc_fns_t;

/* The C library's functions the calls need; 0 or 1 with the message. */
static int find_libc(pid_t pid, const inject_map_t *m, size_t n, libc_fns_t *fns,
                     const char *cmd)
{
    const inject_map_t *libc = inject_find_object(m, n, "libc.so.6");
    if (!libc)
        libc = inject_find_object(m, n, "libc-2.");
    if (!libc) {
        if (inject_find_object(m, n, "ld-musl") || inject_find_object(m, n, "libc.musl"))
            driver_msg("cprof %s: process %d uses musl libc; cprof attaches to glibc "
                    "programs only", cmd, (int)pid);
        else
            driver_msg("cprof %s: process %d has no C library loaded: it is statically "
                    "linked or not a glibc program; cprof attaches to dynamically linked "
                    "glibc programs only (use cprof record or LD_PRELOAD at start)", cmd,
                    (int)pid);
        return 1;
    }
    /* glibc 2.34 moved dlopen into libc; before, it is in libdl if loaded. */
    const inject_map_t *dl = libc;
    if (inject_symbol(pid, m, n, libc, "dlopen", &fns->dlopen) < 0) {
        dl = inject_find_object(m, n, "libdl.so");
        if (!dl || inject_symbol(pid, m, n, dl, "dlopen", &fns->dlopen) < 0) {
            driver_msg("cprof %s: process %d's C library (%s) has no dlopen and libdl is "
                    "not loaded: cannot load cprof into it", cmd, (int)pid, libc->path);
            return 1;
        }
    }
    if (inject_symbol(pid, m, n, dl, "dlsym", &fns->dlsym) < 0 ||
        inject_symbol(pid, m, n, dl, "dlerror", &fns->dlerror) < 0 ||
        inject_symbol(pid, m, n, libc, "mmap", &fns->mmap) < 0 ||
        inject_symbol(pid, m, n, libc, "munmap", &fns->munmap) < 0 ||
        inject_symbol(pid, m, n, libc, "__errno_location", &fns->errno_location) < 0 ||
        inject_symbol(pid, m, n, libc, "malloc", &fns->malloc) < 0) {
        driver_msg("cprof %s: cannot find dlsym, dlerror, mmap, munmap, "
                "__errno_location and malloc in %s", cmd, libc->path);
        return 1;
    }
    /* Only to hand libcprof.so over into another mount namespace. */
    if (inject_symbol(pid, m, n, libc, "memfd_create", &fns->memfd_create) < 0 ||
        inject_symbol(pid, m, n, libc, "close", &fns->close) < 0)
        fns->memfd_create = fns->close = 0;
    return 0;
}

/* What the runtime's return code means, for a user. */
static const char *attach_error(int rc)
{
    switch (rc) {
    case -EEXIST:
        return "it already runs cprof (preloaded or linked): use its CPROF_HTTP endpoints";
    case -EALREADY: return "cprof is already attached to it (cprof detach it first)";
    case -EBUSY: return "another cprof attach or detach is under way in it";
    case -ENOTSUP: return "its malloc is not the C library's (jemalloc, tcmalloc...): cprof "
                          "attach only profiles programs on glibc's malloc";
    case -ENOTCONN:
        return "cprof is loaded in it but not attached (preloaded, detached already, or its attach "
               "failed)";
    case -EINVAL: return "the runtime rejected the settings (an older libcprof.so?)";
    default: return strerror(-rc);
    }
}

/* inject_call, waiting on past its deadline with a word to the user: a
 * call that is slow (a loaded machine, a library constructor holding the
 * loader's lock) still completes, and a wedged one is left to the user to
 * give up on, knowing the price. */
static int call(inject_t *t, const char *name, uint64_t fn, const uint64_t *args, int nargs,
                uint64_t *ret, char *err, size_t errlen, const char *cmd, pid_t pid)
{
    int rc = inject_call(t, fn, args, nargs, ret, err, errlen);
    if (rc != -ETIMEDOUT)
        return rc;
    driver_msg("cprof %s: process %d did not return from %s within %d s; it may be wedged. "
               "cprof keeps waiting; interrupting cprof now leaves the call running without "
               "it, and the process then crashes when the call returns (to address 0)", cmd,
               (int)pid, name, INJECT_CALL_TIMEOUT);
    return inject_wait(t, ret, err, errlen);
}

/* The runtime's files handed over to a process that does not see them
 * (another mount namespace: a container): a memfd of the process's for
 * each, filled from outside; dlopen then takes /proc/self/fd/N. */
typedef struct {
    const char *src[2]; /* libcprof.so, libcprof-http.so: cprof's paths */
    int fd[2];          /* in the process; -1: none */
} handover_t;

static const char *const handover_name[2] = {"libcprof.so", "libcprof-http.so"};

/* Makes and fills the memfds, writing their names at scratch first.
 * 0, or 1 with the message printed (h->fd holds those made, for
 * hand_back). */
static int hand_over(inject_t *t, const libc_fns_t *f, uint64_t scratch, uint64_t errno_at,
                     handover_t *h, const char *cmd, pid_t pid)
{
    char err[512];
    uint64_t ret;
    if (!f->memfd_create) {
        driver_msg("cprof %s: process %d does not see cprof's libcprof.so (another mount "
                   "namespace: a container?) and its C library has no memfd_create to take "
                   "it over (glibc 2.27 or later)", cmd, (int)pid);
        return 1;
    }
    for (int i = 0; i < 2; i++) {
        size_t nl = strlen(handover_name[i]) + 1;
        uint64_t args[] = {scratch, 1 /* MFD_CLOEXEC */};
        int e = 0;
        if (inject_write(t, scratch, handover_name[i], nl) < 0 ||
            call(t, "memfd_create", f->memfd_create, args, 2, &ret, err, sizeof(err), cmd,
                 pid) < 0) {
            driver_msg("cprof %s: process %d: memfd_create: %s", cmd, (int)pid, err);
            return 1;
        }
        if ((int)ret < 0) {
            inject_read(t, errno_at, &e, sizeof(e));
            driver_msg("cprof %s: process %d: memfd_create: %s", cmd, (int)pid, strerror(e));
            return 1;
        }
        h->fd[i] = (int)ret;
        if (attachns_fill(pid, h->fd[i], h->src[i], err, sizeof(err)) < 0) {
            driver_msg("cprof %s: process %d: %s", cmd, (int)pid, err);
            return 1;
        }
    }
    return 0;
}

/* Closes the memfds in the process (a failed attach). */
static void hand_back(inject_t *t, const libc_fns_t *f, handover_t *h, const char *cmd, pid_t pid)
{
    char err[512];
    uint64_t ret;
    for (int i = 0; h && i < 2; i++) {
        uint64_t args[] = {(uint64_t)h->fd[i]};
        if (h->fd[i] >= 0 &&
            call(t, "close", f->close, args, 1, &ret, err, sizeof(err), cmd, pid) < 0)
            driver_msg("cprof %s: process %d: close: %s", cmd, (int)pid, err);
        h->fd[i] = -1;
    }
}

/* The calls, in the held thread: dlopen, dlsym, the entry point. *rc gets
 * what the entry point returned, or -ENOTSUP when first_load and the
 * program's malloc is not the C library's: the runtime would refuse that
 * too, but libcprof.so, never unloaded (-z nodelete), would stay behind.
 * h (NULL: none): the runtime's files to hand over first; lib and
 * settings then name the memfds. 0, or 1 with the message printed. */
static int run_calls(inject_t *t, const libc_fns_t *f, const char *lib, const char *entry,
                     const char *settings, bool noload, bool first_load, handover_t *h,
                     int *rc, const char *cmd, pid_t pid)
{
    char err[512];
    uint64_t scratch, ret, errno_at;
    int saved_errno; /* the thread may be about to read it: the calls keep it */
    uint64_t margs[] = {0, SCRATCH, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                        (uint64_t)-1, 0};
    if (call(t, "__errno_location", f->errno_location, NULL, 0, &errno_at, err, sizeof(err),
             cmd, pid) < 0 ||
        inject_read(t, errno_at, &saved_errno, sizeof(saved_errno)) < 0 ||
        call(t, "mmap", f->mmap, margs, 6, &scratch, err, sizeof(err), cmd, pid) < 0) {
        driver_msg("cprof %s: process %d: %s", cmd, (int)pid, err);
        return 1;
    }
    int status = 1;
    bool lib_loaded = false;
    if (scratch == (uint64_t)MAP_FAILED || scratch == 0) {
        driver_msg("cprof %s: process %d cannot map %d bytes", cmd, (int)pid, SCRATCH);
        goto out;
    }
    char mlib[64], msettings[3 * PATH_MAX + 64];
    if (h && first_load) {
        if (hand_over(t, f, scratch, errno_at, h, cmd, pid))
            goto unmap;
        snprintf(mlib, sizeof(mlib), "/proc/self/fd/%d", h->fd[0]);
        snprintf(msettings, sizeof(msettings), "%s module=/proc/self/fd/%d", settings, h->fd[1]);
        lib = mlib;
        settings = msettings;
    }
    static const char malloc_name[] = "malloc";
    size_t ll = strlen(lib) + 1, el = strlen(entry) + 1, sl = strlen(settings) + 1;
    uint64_t mname = scratch + ll + el + sl;
    if (ll + el + sl + sizeof(malloc_name) > SCRATCH || inject_write(t, scratch, lib, ll) < 0 ||
        inject_write(t, scratch + ll, entry, el) < 0 ||
        inject_write(t, scratch + ll + el, settings, sl) < 0 ||
        inject_write(t, mname, malloc_name, sizeof(malloc_name)) < 0) {
        driver_msg("cprof %s: cannot write into process %d", cmd, (int)pid);
        goto unmap;
    }
    /* The runtime's own test (attach.c: the global malloc is the next
     * one), asked before anything is loaded. */
    uint64_t margs2[] = {(uint64_t)(uintptr_t)RTLD_DEFAULT, mname}, global;
    if (first_load &&
        call(t, "dlsym", f->dlsym, margs2, 2, &global, err, sizeof(err), cmd, pid) < 0) {
        driver_msg("cprof %s: process %d: dlsym: %s", cmd, (int)pid, err);
        goto unmap;
    }
    if (first_load && global != f->malloc) {
        *rc = -ENOTSUP;
        status = 0;
        goto unmap;
    }
    uint64_t oargs[] = {scratch, RTLD_NOW | (noload ? RTLD_NOLOAD : RTLD_LOCAL)}, handle;
    if (call(t, "dlopen", f->dlopen, oargs, 2, &handle, err, sizeof(err), cmd, pid) < 0) {
        driver_msg("cprof %s: process %d: dlopen: %s", cmd, (int)pid, err);
        goto unmap;
    }
    lib_loaded = handle != 0;
    if (!handle) {
        char why[512] = "unknown error";
        uint64_t msg;
        if (call(t, "dlerror", f->dlerror, NULL, 0, &msg, err, sizeof(err), cmd, pid) == 0 && msg &&
            inject_read(t, msg, why, sizeof(why) - 1) < 0)
            snprintf(why, sizeof(why), "unknown error");
        why[sizeof(why) - 1] = '\0';
        driver_msg("cprof %s: process %d could not load %s: %s", cmd, (int)pid, lib, why);
        goto unmap;
    }
    uint64_t sargs[] = {handle, scratch + ll}, fn;
    if (call(t, "dlsym", f->dlsym, sargs, 2, &fn, err, sizeof(err), cmd, pid) < 0 || !fn) {
        driver_msg("cprof %s: %s in process %d has no %s (an older cprof?)", cmd, lib,
                (int)pid, entry);
        goto unmap;
    }
    uint64_t eargs[] = {scratch + ll + el};
    if (call(t, entry, fn, eargs, 1, &ret, err, sizeof(err), cmd, pid) < 0) {
        driver_msg("cprof %s: process %d: %s: %s", cmd, (int)pid, entry, err);
        goto unmap;
    }
    *rc = (int)(uint32_t)ret;
    status = 0;
unmap:
    /* The memfds stay open once libcprof.so is loaded (for good: -z
     * nodelete): detach and a later attach find it by the name it was
     * loaded with, /proc/self/fd/N. */
    if (!lib_loaded)
        hand_back(t, f, h, cmd, pid);
    uint64_t uargs[] = {scratch, SCRATCH};
    if (call(t, "munmap", f->munmap, uargs, 2, &ret, err, sizeof(err), cmd, pid) < 0)
        driver_msg("cprof %s: process %d: munmap: %s", cmd, (int)pid, err);
out:
    inject_write(t, errno_at, &saved_errno, sizeof(saved_errno));
    return status;
}

/* "http://HOST:PORT/debug/pprof/" for the address the server was given. */
static void print_url(const char *http, int port)
{
    const char *colon = strrchr(http, ':');
    int hl = (int)(colon - http);
    const char *host = http;
    if (hl == 0 || (hl == 9 && strncmp(http, "localhost", 9) == 0))
        host = "127.0.0.1", hl = 9;
    printf("http://%.*s:%d/debug/pprof/\n", hl, host, port);
    fflush(stdout);
}

int attach_main(int argc, char **argv)
{
    opts_t o;
    char err[PATH_MAX + 256];
    int pr = parse(argc, argv, &o, err, sizeof(err));
    const char *cmd = argv[0];
    if (pr > 0) {
        usage(stdout);
        return 0;
    }
    if (pr < 0) {
        driver_msg("cprof %s: %s (cprof %s -h for usage)", cmd, err, cmd);
        return 2;
    }
    const char *token = getenv("CPROF_HTTP_TOKEN");
    if (token && (!*token || strchr(token, ' ') || strlen(token) > 1024)) {
        driver_msg("cprof %s: CPROF_HTTP_TOKEN must be 1 to 1024 characters without "
                "spaces", cmd);
        return 2;
    }
    if (precheck(&o, cmd) || check_arch(o.pid, cmd))
        return 1;
    /* A process in another mount namespace (a container) opens paths in
     * its own file system: -cpu is its path, relative to its working
     * directory; ours would mean nothing there. */
    bool other_mnt = attachns_other(o.pid, "mnt");
    char cpu[PATH_MAX] = "";
    if (o.cpu) { /* the target's working directory is not ours */
        if (o.cpu[0] == '/' || other_mnt)
            snprintf(cpu, sizeof(cpu), "%s", o.cpu);
        else if (!getcwd(cpu, sizeof(cpu) - strlen(o.cpu) - 2))
            cpu[0] = '\0';
        else
            snprintf(cpu + strlen(cpu), sizeof(cpu) - strlen(cpu), "/%s", o.cpu);
    }
    inject_map_t *m;
    size_t n;
    if (inject_maps(o.pid, &m, &n, err, sizeof(err)) < 0) {
        if (strstr(err, strerror(EACCES)) || strstr(err, strerror(EPERM)))
            explain_eperm(o.pid, cmd);
        else
            driver_msg("cprof %s: %s", cmd, err);
        return 1;
    }
    int status = 1;
    libc_fns_t fns;
    char lib[PATH_MAX], http_module[PATH_MAX + 32];
    const inject_map_t *loaded = inject_find_object(m, n, "libcprof.so");
    if (find_libc(o.pid, m, n, &fns, cmd))
        goto out;
    /* A copy handed over in a memfd (below) is known by the name it was
     * loaded with. */
    int http_fd = -1;
    handover_t hand = {{lib, http_module}, {-1, -1}}, *h = NULL;
    if (loaded && strncmp(loaded->path, "/memfd:", 7) == 0) {
        int fd = attachns_memfd(o.pid, handover_name[0]);
        if (fd < 0) {
            driver_msg("cprof %s: process %d holds libcprof.so in a memfd it no longer has "
                       "open: cannot reach it", cmd, (int)o.pid);
            goto out;
        }
        snprintf(lib, sizeof(lib), "/proc/self/fd/%d", fd);
        http_fd = attachns_memfd(o.pid, handover_name[1]);
    } else if (loaded) { /* never a second copy: the one there answers */
        snprintf(lib, sizeof(lib), "%s", loaded->path);
    } else if (o.detach) {
        driver_msg("cprof detach: cprof is not loaded in process %d", (int)o.pid);
        goto out;
    } else if (launch_find_runtime(lib, sizeof(lib), err, sizeof(err)) < 0) {
        driver_msg("cprof attach: %s", err);
        goto out;
    } else if (!attachns_sees(o.pid, lib)) {
        const char *slash = strrchr(lib, '/');
        snprintf(http_module, sizeof(http_module), "%.*s/libcprof-http.so", (int)(slash - lib),
                 lib);
        h = &hand;
    }
    char settings[3 * PATH_MAX + 64];
    snprintf(settings, sizeof(settings), "rate=%s mutex_rate=%s block_rate=%s http=%s%s%s%s%s",
             o.rate, o.mutex_rate, o.block_rate, o.http, token ? " token=" : "",
             token ? token : "", cpu[0] ? " cpu=" : "", cpu);
    if (http_fd >= 0)
        snprintf(settings + strlen(settings), sizeof(settings) - strlen(settings),
                 " module=/proc/self/fd/%d", http_fd);
    inject_t *t;
    int rc = inject_open(o.pid, m, n, &t, err, sizeof(err));
    if (rc == -EPERM) {
        explain_eperm(o.pid, cmd);
        goto out;
    }
    if (rc < 0) {
        driver_msg("cprof %s: process %d: %s", cmd, (int)o.pid, err);
        goto out;
    }
    int entry_rc = 0;
    int calls = run_calls(t, &fns, lib, o.detach ? "cprof__detach" : "cprof__attach", settings,
                          o.detach, !loaded, h, &entry_rc, cmd, o.pid);
    if (inject_close(t, err, sizeof(err)) < 0) {
        driver_msg("cprof %s: process %d: %s", cmd, (int)o.pid, err);
        goto out;
    }
    if (calls)
        goto out;
    if (entry_rc < 0) {
        driver_msg("cprof %s: process %d: %s", cmd, (int)o.pid, attach_error(entry_rc));
        goto out;
    }
    if (o.detach)
        driver_msg("cprof detach: profiling of process %d stopped", (int)o.pid);
    else
        print_url(o.http, entry_rc);
    if (!o.detach && attachns_other(o.pid, "net"))
        driver_msg("cprof attach: the server listens in process %d's network namespace: reach "
                   "it from there (nsenter --net=/proc/%d/ns/net curl URL)", (int)o.pid,
                   (int)o.pid);
    if (!o.detach && cpu[0] && other_mnt)
        driver_msg("cprof attach: -cpu=%s is process %d's path (from here: /proc/%d/root/...)",
                   cpu, (int)o.pid, (int)o.pid);
    status = 0;
out:
    inject_maps_free(m, n);
    return status;
}
