/* inject.c — calls into a running process through ptrace (see inject.h).
 * x86-64 only: elsewhere inject_open refuses. */
#include "tool/fetch/inject.h"

#include "base/err.h"
#include "base/path.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/futex.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SAFE_TRIES 3000     /* stops tried before giving up on a safe point */
#define XSTATE_MAX 16384    /* bytes of x87/SSE/AVX state we can keep */
#define RED_ZONE 128

/* --- the map ---------------------------------------------------------------- */

int inject_maps(pid_t pid, inject_map_t **out, size_t *n, char *err, size_t errlen)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
    FILE *f = fopen(path, "re");
    if (!f) {
        int e = errno;
        return err_fmt(err, errlen, -e, "%s: %s", path, strerror(e));
    }
    inject_map_t *m = NULL;
    size_t cap = 0, k = 0, llen = 0;
    char *line = NULL;
    int rc = 0;
    while (rc == 0 && getline(&line, &llen, f) > 0) {
        if ((rc = err_grow((void **)&m, &cap, k + 1, sizeof(*m))) < 0)
            break;
        inject_map_t *e = &m[k];
        int pos = 0;
        unsigned long long s, en, off;
        if (sscanf(line, "%llx-%llx %4s %llx %*s %*s %n", &s, &en, e->perms, &off, &pos) < 4)
            continue;
        e->start = s, e->end = en, e->offset = off;
        char *p = line + pos;
        p[strcspn(p, "\n")] = '\0';
        if (!(e->path = strdup(p)))
            rc = -ENOMEM;
        else
            k++;
    }
    free(line);
    fclose(f);
    if (rc < 0) {
        inject_maps_free(m, k);
        return err_fmt(err, errlen, rc, "out of memory");
    }
    *out = m;
    *n = k;
    return 0;
}

void inject_maps_free(inject_map_t *m, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(m[i].path);
    free(m);
}

/* The file name of a mapped object (Go's filepath.Base), after the
 * "memfd:" of a library cprof attach handed over in a memfd (maps shows
 * "/memfd:libcprof.so (deleted)"). */
static const char *object_name(const char *path, char *buf, size_t n)
{
    const char *s = path_base(path, buf, n);
    return strncmp(s, "memfd:", 6) == 0 ? s + 6 : s;
}

const inject_map_t *inject_find_object(const inject_map_t *m, size_t n, const char *prefix)
{
    char b[256];
    for (size_t i = 0; i < n; i++)
        if (m[i].path[0] == '/' &&
            strncmp(object_name(m[i].path, b, sizeof(b)), prefix, strlen(prefix)) == 0)
            return &m[i];
    return NULL;
}

/* --- symbols ------------------------------------------------------------------ */

int inject_symbol(pid_t pid, const inject_map_t *m, size_t n, const inject_map_t *obj,
                  const char *sym, uint64_t *addr)
{
    uint64_t start = 0;
    bool have = false;
    for (size_t i = 0; i < n && !have; i++)
        if (strcmp(m[i].path, obj->path) == 0 && m[i].offset == 0)
            start = m[i].start, have = true;
    char path[4200];
    snprintf(path, sizeof(path), "/proc/%d/root%s", (int)pid, obj->path);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        fd = open(obj->path, O_RDONLY | O_CLOEXEC);
    if (!have || fd < 0) {
        if (fd >= 0)
            close(fd);
        return -ENOENT;
    }
    elf_version(EV_CURRENT);
    Elf *e = elf_begin(fd, ELF_C_READ, NULL);
    int rc = -ENOENT;
    uint64_t bias = start;
    size_t nph = 0;
    if (e && elf_getphdrnum(e, &nph) == 0) {
        for (size_t i = 0; i < nph; i++) {
            GElf_Phdr ph;
            if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD && ph.p_offset == 0) {
                bias = start - (ph.p_vaddr & ~(uint64_t)0xfff);
                break;
            }
        }
    }
    for (Elf_Scn *scn = NULL; e && rc < 0 && (scn = elf_nextscn(e, scn));) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM || !sh.sh_entsize)
            continue;
        Elf_Data *d = elf_getdata(scn, NULL);
        for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
            GElf_Sym s;
            const char *name;
            if (!gelf_getsym(d, (int)i, &s) || s.st_shndx == SHN_UNDEF ||
                GELF_ST_TYPE(s.st_info) != STT_FUNC ||
                !(name = elf_strptr(e, sh.sh_link, s.st_name)) || strcmp(name, sym) != 0)
                continue;
            *addr = bias + s.st_value;
            rc = 0;
            break;
        }
    }
    if (e)
        elf_end(e);
    close(fd);
    return rc;
}

/* --- the held thread ------------------------------------------------------------ */

#if defined(__x86_64__)

struct inject {
    pid_t tid;
    int mem;                       /* /proc/PID/mem */
    struct user_regs_struct saved; /* as stopped */
    uint8_t xstate[XSTATE_MAX];
    size_t xlen;                   /* 0: saved with PTRACE_GETFPREGS instead */
    struct user_fpregs_struct fp;
    bool fp_read;                  /* xstate or fp holds the thread's state */
    bool regs_changed;             /* a call set registers: put them back */
    uint64_t ret_slot;             /* where calls find their return address */
    uint64_t ret_saved;            /* what that word held */
    bool ret_written;
    sigset_t oldmask;
};

int inject_write(inject_t *t, uint64_t addr, const void *buf, size_t len)
{
    return pwrite(t->mem, buf, len, (off_t)addr) == (ssize_t)len ? 0 : -EIO;
}

int inject_read(inject_t *t, uint64_t addr, void *buf, size_t len)
{
    return pread(t->mem, buf, len, (off_t)addr) == (ssize_t)len ? 0 : -EIO;
}

/* Waits for the next stop of the thread, until deadline (CLOCK_MONOTONIC;
 * NULL: for ever). 1 stopped (*status), or a negative errno (-ESRCH: it is
 * gone; -ETIMEDOUT). */
static int wait_stop(pid_t tid, int *status, const struct timespec *deadline)
{
    struct timespec tick = {0, 1000000};
    for (;;) {
        pid_t w = waitpid(tid, status, __WALL | (deadline ? WNOHANG : 0));
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return -errno;
        if (w == 0) {
            struct timespec now;
            clock_gettime(CLOCK_MONOTONIC, &now);
            if (now.tv_sec > deadline->tv_sec ||
                (now.tv_sec == deadline->tv_sec && now.tv_nsec >= deadline->tv_nsec))
                return -ETIMEDOUT;
            nanosleep(&tick, NULL);
            continue;
        }
        if (WIFEXITED(*status) || WIFSIGNALED(*status))
            return -ESRCH;
        return 1;
    }
}

static bool is_event_stop(int status)
{
    return WIFSTOPPED(status) && (status >> 16) == PTRACE_EVENT_STOP;
}

static bool risky_object(const char *path)
{
    static const char *const risky[] = {"libc.so", "libc-", "ld-linux", "ld-", "libstdc++",
                                         "libgcc_s", "libcprof", "libunwind"};
    char buf[256];
    const char *b = object_name(path, buf, sizeof(buf));
    for (size_t k = 0; k < sizeof(risky) / sizeof(risky[0]); k++)
        if (strncmp(b, risky[k], strlen(risky[k])) == 0)
            return true;
    return false;
}

static bool in_risky_object(uint64_t addr, const inject_map_t *m, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (addr >= m[i].start && addr < m[i].end)
            return risky_object(m[i].path);
    return false;
}

/* Whether a thread stopped just after the system call r->orig_rax in the C
 * library waits there holding none of its locks. Only blocking calls a
 * program makes itself qualify: mmap, brk, mprotect, openat... may be
 * malloc's or dlopen's, with the arena or loader lock held. A futex wait
 * qualifies only on a word outside the risky objects: the loader's lock,
 * the main arena's, stdio's are all in their data. */
static bool blocking_call(const struct user_regs_struct *r, const inject_map_t *m, size_t n)
{
    switch ((long)r->orig_rax) {
    case SYS_read: case SYS_readv: case SYS_poll: case SYS_ppoll: case SYS_select:
    case SYS_pselect6: case SYS_epoll_wait: case SYS_epoll_pwait: case SYS_nanosleep:
    case SYS_clock_nanosleep: case SYS_wait4: case SYS_waitid: case SYS_accept:
    case SYS_accept4: case SYS_recvfrom: case SYS_recvmsg: case SYS_pause:
    case SYS_rt_sigtimedwait: case SYS_rt_sigsuspend:
        return true;
    case SYS_futex: {
        int op = (int)r->rsi & FUTEX_CMD_MASK;
        return (op == FUTEX_WAIT || op == FUTEX_WAIT_BITSET) && !in_risky_object(r->rdi, m, n);
    }
    default:
        return false;
    }
}

/* Inside one of the objects where a stopped thread may hold a lock our
 * calls need, unless waiting in the C library in a blocking system call
 * (the two bytes before rip are a syscall instruction). The loader makes
 * its own system calls only inside dlopen and its kin: never safe there. */
static bool unsafe_at(inject_t *t, const struct user_regs_struct *r, const inject_map_t *m,
                      size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (r->rip < m[i].start || r->rip >= m[i].end)
            continue;
        if (!risky_object(m[i].path))
            return false;
        char buf[256];
        const char *b = object_name(m[i].path, buf, sizeof(buf));
        if (strncmp(b, "libc.so", 7) != 0 && strncmp(b, "libc-", 5) != 0)
            return true;
        uint8_t insn[2];
        return !(inject_read(t, r->rip - 2, insn, 2) == 0 && insn[0] == 0x0f &&
                 insn[1] == 0x05 && blocking_call(r, m, n));
    }
    return false;
}

/* Whether the thread blocks SIGSEGV (it runs a SIGSEGV handler, say): the
 * calls' return faults, and a fault while blocked would reset the
 * program's handler to the default, the next SIGSEGV then killing it. */
static bool segv_blocked(pid_t tid)
{
    uint64_t mask;
    return ptrace(PTRACE_GETSIGMASK, tid, sizeof(mask), &mask) == 0 &&
           (mask & (1ull << (SIGSEGV - 1)));
}

/* Holds the thread in a ptrace stop: interrupts it, delivering any signal
 * that arrives first. 0, or a negative errno with err set. */
static int interrupt(inject_t *t, char *err, size_t errlen)
{
    if (ptrace(PTRACE_INTERRUPT, t->tid, 0, 0) < 0) {
        return err_fmt(err, errlen, -errno, "PTRACE_INTERRUPT: %s", strerror(errno));
    }
    for (;;) {
        int st, rc = wait_stop(t->tid, &st, NULL);
        if (rc < 0) {
            return err_fmt(err, errlen, rc, "the process exited");
        }
        if (is_event_stop(st)) {
            if (WSTOPSIG(st) != SIGTRAP) {
                return err_fmt(err, errlen, -EAGAIN, "the process is stopped (signal %d, job "
                               "control): continue it first", WSTOPSIG(st));
            }
            return 0;
        }
        ptrace(PTRACE_CONT, t->tid, 0, (void *)(uintptr_t)WSTOPSIG(st));
    }
}

int inject_open(pid_t pid, const inject_map_t *m, size_t n, inject_t **out, char *err,
                size_t errlen)
{
    inject_t *t = calloc(1, sizeof(*t));
    if (!t) {
        return err_fmt(err, errlen, -ENOMEM, "out of memory");
    }
    t->tid = pid;
    t->mem = -1;
    sigset_t block;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGHUP);
    sigaddset(&block, SIGQUIT);
    sigprocmask(SIG_BLOCK, &block, &t->oldmask);
    if (ptrace(PTRACE_SEIZE, pid, 0, 0) < 0) {
        int e = errno;
        err_fmt(err, errlen, -e, "ptrace: %s", strerror(e));
        sigprocmask(SIG_SETMASK, &t->oldmask, NULL);
        free(t);
        return -e;
    }
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
    t->mem = open(path, O_RDWR | O_CLOEXEC);
    int rc = t->mem < 0 ? -errno : 0;
    if (rc < 0)
        err_fmt(err, errlen, rc, "%s: %s", path, strerror(-rc));
    /* Stop, look, and let it run a little more until it stands somewhere
     * safe. */
    struct timespec pause = {0, 1000000};
    for (int i = 0; rc == 0; i++) {
        if ((rc = interrupt(t, err, errlen)) < 0)
            break;
        if (ptrace(PTRACE_GETREGS, pid, 0, &t->saved) < 0) {
            rc = err_fmt(err, errlen, -errno, "PTRACE_GETREGS: %s", strerror(errno));
            break;
        }
        if (!unsafe_at(t, &t->saved, m, n) && !segv_blocked(pid))
            break;
        if (i == SAFE_TRIES) {
            rc = err_fmt(err, errlen, -EAGAIN, "the thread never stood outside the C library "
                         "and the loader (nor waited in a blocking system call) with SIGSEGV "
                         "unblocked, in %d tries; try again", SAFE_TRIES);
            break;
        }
        ptrace(PTRACE_CONT, pid, 0, 0);
        nanosleep(&pause, NULL);
    }
    if (rc == 0) {
        struct iovec iov = {t->xstate, sizeof(t->xstate)};
        if (ptrace(PTRACE_GETREGSET, pid, (void *)NT_X86_XSTATE, &iov) == 0)
            t->xlen = iov.iov_len;
        else if (ptrace(PTRACE_GETFPREGS, pid, 0, &t->fp) < 0)
            rc = err_fmt(err, errlen, -errno, "PTRACE_GETFPREGS: %s", strerror(errno));
        t->fp_read = rc == 0;
    }
    if (rc == 0) {
        /* Calls run below the red zone, 16-byte aligned at the call. */
        t->ret_slot = ((t->saved.rsp - RED_ZONE - 256) & ~(uint64_t)15) - 8;
        if (inject_read(t, t->ret_slot, &t->ret_saved, 8) < 0) {
            rc = err_fmt(err, errlen, -EIO, "cannot read the thread's stack");
        }
    }
    if (rc < 0) {
        char e2[256];
        inject_close(t, e2, sizeof(e2));
        return rc;
    }
    *out = t;
    return 0;
}

/* Runs the thread until the call started returns to address 0. */
static int finish_call(inject_t *t, uint64_t *ret, const struct timespec *deadline, char *err,
                       size_t errlen)
{
    for (;;) {
        int st, rc = wait_stop(t->tid, &st, deadline);
        if (rc == -ETIMEDOUT) {
            return err_fmt(err, errlen, rc, "the call did not return within %d s",
                           INJECT_CALL_TIMEOUT);
        }
        if (rc < 0) {
            return err_fmt(err, errlen, rc, "the process exited during the call");
        }
        int sig = WSTOPSIG(st);
        if (is_event_stop(st)) { /* a group stop: carry on with the call */
            ptrace(PTRACE_CONT, t->tid, 0, 0);
            continue;
        }
        if (sig == SIGSEGV) { /* the return to address 0, or a fault of the call's */
            struct user_regs_struct now;
            if (ptrace(PTRACE_GETREGS, t->tid, 0, &now) < 0) {
                return err_fmt(err, errlen, -errno, "PTRACE_GETREGS: %s", strerror(errno));
            }
            if (now.rip == 0) {
                *ret = now.rax;
                return 0;
            }
        }
        /* Any other signal is the program's: a handled one lets the call go
         * on, a fatal one ends the process as it would have anyway. */
        ptrace(PTRACE_CONT, t->tid, 0, (void *)(uintptr_t)sig);
    }
}

int inject_call(inject_t *t, uint64_t fn, const uint64_t *args, int nargs, uint64_t *ret,
                char *err, size_t errlen)
{
    struct user_regs_struct r = t->saved;
    unsigned long long *argregs[] = {&r.rdi, &r.rsi, &r.rdx, &r.rcx, &r.r8, &r.r9};
    for (int i = 0; i < nargs && i < 6; i++)
        *argregs[i] = args[i];
    r.rip = fn;
    r.rsp = t->ret_slot;
    r.rax = 0;
    r.orig_rax = (uint64_t)-1; /* no system call restart around the call */
    uint64_t zero = 0;
    if (inject_write(t, t->ret_slot, &zero, 8) < 0) {
        return err_fmt(err, errlen, -EIO, "cannot write the thread's stack");
    }
    t->ret_written = true;
    t->regs_changed = true;
    if (ptrace(PTRACE_SETREGS, t->tid, 0, &r) < 0 || ptrace(PTRACE_CONT, t->tid, 0, 0) < 0) {
        return err_fmt(err, errlen, -errno, "ptrace: %s", strerror(errno));
    }
    struct timespec deadline;
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    deadline.tv_sec += INJECT_CALL_TIMEOUT;
    return finish_call(t, ret, &deadline, err, errlen);
}

int inject_wait(inject_t *t, uint64_t *ret, char *err, size_t errlen)
{
    sigset_t held;
    sigprocmask(SIG_SETMASK, &t->oldmask, &held);
    int rc = finish_call(t, ret, NULL, err, errlen);
    sigprocmask(SIG_SETMASK, &held, NULL);
    return rc;
}

int inject_close(inject_t *t, char *err, size_t errlen)
{
    int rc = 0;
    if (t->ret_written && inject_write(t, t->ret_slot, &t->ret_saved, 8) < 0)
        rc = -EIO;
    /* Only after a call, and only what was read: writing back a state
     * never read (zeroed: MXCSR with every exception unmasked) would kill
     * the program with SIGFPE or change its results. A call runs only
     * once both were read (inject_open). */
    if (t->regs_changed) {
        struct iovec iov = {t->xstate, t->xlen};
        long fp = !t->fp_read ? 0
                  : t->xlen   ? ptrace(PTRACE_SETREGSET, t->tid, (void *)NT_X86_XSTATE, &iov)
                              : ptrace(PTRACE_SETFPREGS, t->tid, 0, &t->fp);
        if (ptrace(PTRACE_SETREGS, t->tid, 0, &t->saved) < 0 || fp < 0)
            rc = -errno;
    }
    if (rc < 0)
        err_fmt(err, errlen, rc, "could not restore the thread: %s", strerror(-rc));
    if (ptrace(PTRACE_DETACH, t->tid, 0, 0) < 0 && errno != ESRCH && rc == 0)
        rc = err_fmt(err, errlen, -errno, "PTRACE_DETACH: %s", strerror(errno));
    if (t->mem >= 0)
        close(t->mem);
    sigprocmask(SIG_SETMASK, &t->oldmask, NULL);
    free(t);
    return rc;
}

#else /* not x86-64 */

struct inject {
    int unused;
};

int inject_open(pid_t pid, const inject_map_t *m, size_t n, inject_t **out, char *err,
                size_t errlen)
{
    (void)pid, (void)m, (void)n, (void)out;
    return err_fmt(err, errlen, -ENOTSUP, "cprof attach is only implemented for x86-64");
}

int inject_call(inject_t *t, uint64_t fn, const uint64_t *args, int nargs, uint64_t *ret,
                char *err, size_t errlen)
{
    (void)t, (void)fn, (void)args, (void)nargs, (void)ret, (void)err, (void)errlen;
    return -ENOTSUP;
}

int inject_wait(inject_t *t, uint64_t *ret, char *err, size_t errlen)
{
    (void)t, (void)ret, (void)err, (void)errlen;
    return -ENOTSUP;
}

int inject_write(inject_t *t, uint64_t addr, const void *buf, size_t len)
{
    (void)t, (void)addr, (void)buf, (void)len;
    return -ENOTSUP;
}

int inject_read(inject_t *t, uint64_t addr, void *buf, size_t len)
{
    (void)t, (void)addr, (void)buf, (void)len;
    return -ENOTSUP;
}

int inject_close(inject_t *t, char *err, size_t errlen)
{
    (void)t, (void)err, (void)errlen;
    return 0;
}

#endif
