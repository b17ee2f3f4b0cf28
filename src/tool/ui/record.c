/* record.c — the record command (see record.h). */
#include "tool/ui/record.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/path.h"
#include "tool/driver/driver.h"
#include "tool/fetch/fetch.h"
#include "tool/fetch/launch.h"

#define ERRLEN 1024

typedef struct {
    const char *output; /* -o FILE, or NULL */
    const char *rate;   /* -rate N (digits), or NULL */
    char **argv;        /* PROG ARGS..., NULL-terminated */
    bool help;
} opts_t;

/* Parses the arguments after "record": -o FILE / -o=FILE, -rate N,
 * -h/-help, then "--" (optional when PROG does not start with '-') and
 * PROG ARGS. 0, or -1 with the reason in err. */
static int parse(int argc, char **argv, opts_t *o, char *err, size_t errlen)
{
    memset(o, 0, sizeof(*o));
    int i = 0;
    while (i < argc) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0) {
            i++;
            break;
        }
        if (a[0] != '-' || a[1] == '\0')
            break;
        const char *name = a + (a[1] == '-' ? 2 : 1);
        const char *eq = strchr(name, '=');
        size_t nl = eq ? (size_t)(eq - name) : strlen(name);
        const char *val = eq ? eq + 1 : NULL;
        if ((nl == 1 && name[0] == 'h') || (nl == 4 && strncmp(name, "help", 4) == 0)) {
            o->help = true;
            return 0;
        }
        bool is_o = nl == 1 && name[0] == 'o', is_rate = nl == 4 && strncmp(name, "rate", 4) == 0;
        if (!is_o && !is_rate) {
            snprintf(err, errlen, "flag provided but not defined: -%.*s", (int)nl, name);
            return -1;
        }
        if (!val) {
            if (i + 1 >= argc) {
                snprintf(err, errlen, "flag needs an argument: -%.*s", (int)nl, name);
                return -1;
            }
            val = argv[++i];
        }
        if (is_o) {
            if (!*val) {
                snprintf(err, errlen, "invalid value \"\" for flag -o: empty file name");
                return -1;
            }
            o->output = val;
        } else {
            bool digits = *val != '\0' && strlen(val) <= 18;
            for (const char *c = val; *c; c++)
                digits = digits && *c >= '0' && *c <= '9';
            if (!digits) {
                snprintf(err, errlen,
                         "invalid value \"%s\" for flag -rate: bytes between samples, "
                         "0 (off) or more",
                         val);
                return -1;
            }
            o->rate = val;
        }
        i++;
    }
    if (i >= argc) {
        snprintf(err, errlen, "no program to run: cprof record [-o FILE] [-rate N] -- PROG ARGS");
        return -1;
    }
    o->argv = argv + i;
    return 0;
}

static void usage(FILE *f)
{
    fputs("usage: cprof record [-o FILE] [-rate N] [--] PROG [ARGS...]\n"
          "\n"
          "Runs PROG with libcprof.so preloaded and waits for it. Then prints\n"
          "(on stderr) where its heap profile is and its top 10 functions by\n"
          "in-use memory, and exits with PROG's status (128+N if signal N\n"
          "killed it; 125 if cprof itself failed, 126/127 if PROG could not be\n"
          "run or found).\n"
          "\n"
          "  -o FILE   write the profile to FILE (default: $PPROF_TMPDIR, else\n"
          "            $HOME/pprof, as pprof.PROG.<sample types>.NNN.pb.gz)\n"
          "  -rate N   CPROF_RATE: bytes between samples (1: every allocation)\n"
          "\n"
          "Processes PROG starts inherit the preload; their profiles are left\n"
          "in a directory that is named at the end.\n",
          f);
}

/* Other profiles in dir (of PROG's children); removes dir when none. */
static void leftovers(const char *dir, const char *mine)
{
    DIR *d = opendir(dir);
    int n = 0;
    if (d) {
        struct dirent *e;
        while ((e = readdir(d)))
            if (e->d_name[0] != '.' && strcmp(e->d_name, mine) != 0)
                n++;
        closedir(d);
    }
    if (n == 0)
        rmdir(dir);
    else
        driver_msg("%d more profile%s, of processes started by the program, in %s", n,
            n == 1 ? "" : "s", dir);
}

int record_main(int argc, char **argv)
{
    argc--, argv++; /* "record" */
    opts_t o;
    char err[ERRLEN];
    if (parse(argc, argv, &o, err, sizeof(err)) < 0) {
        driver_msg("cprof record: %s (cprof record -h for usage)", err);
        return 125;
    }
    if (o.help) {
        usage(stdout);
        return 0;
    }
    char lib[4096];
    if (launch_find_runtime(lib, sizeof(lib), err, sizeof(err)) < 0) {
        driver_msg("cprof record: %s", err);
        return 125;
    }
    /* Where the profile goes: -o, else a new pprof.PROG.TYPES.NNN.pb.gz. */
    char final[4096];
    bool created = false;
    if (o.output) {
        snprintf(final, sizeof(final), "%s", o.output);
        int fd = open(final, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (fd >= 0) {
            created = true;
            close(fd);
        } else if (errno != EEXIST || access(final, W_OK) < 0) {
            driver_msg("cprof record: %s: %s", final, strerror(errno));
            return 125;
        }
    } else {
        char dir[4096], warn[2048] = "", prefix[512];
        int trc = fetch_tmpdir(dir, sizeof(dir), warn, sizeof(warn));
        if (*warn)
            fputs(warn, stderr);
        if (trc < 0) {
            driver_msg("cprof record: failed to identify temp dir");
            return 125;
        }
        char bb[256];
        snprintf(prefix, sizeof(prefix),
                 "pprof.%s.alloc_objects.alloc_space.inuse_objects.inuse_space.",
                 path_base(o.argv[0], bb, sizeof(bb)));
        int fd = fetch_new_file(dir, prefix, ".pb.gz", final, sizeof(final));
        if (fd < 0) {
            driver_msg("cprof record: %s: %s", final, strerror(-fd));
            return 125;
        }
        close(fd);
        created = true;
    }
    const char *td = getenv("TMPDIR");
    char tmp[4096];
    snprintf(tmp, sizeof(tmp), "%s/cprof-record.XXXXXX", td && *td ? td : "/tmp");
    if (!mkdtemp(tmp)) {
        driver_msg("cprof record: mkdtemp %s: %s", tmp, strerror(errno));
        if (created)
            unlink(final);
        return 125;
    }
    pid_t pid;
    int src = launch_spawn(o.argv, o.rate, lib, tmp, &pid, err, sizeof(err));
    if (src < 0) {
        driver_msg("cprof record: %s", err);
        rmdir(tmp);
        if (created)
            unlink(final);
        return src == -ENOENT ? 127 : src == -ENOMEM ? 125 : 126;
    }
    int sig;
    int status = launch_wait(pid, &sig);

    char mine[64], have[4200];
    snprintf(mine, sizeof(mine), "heap.%ld.pb.gz", (long)pid);
    snprintf(have, sizeof(have), "%s/%s", tmp, mine);
    struct stat st;
    if (stat(have, &st) < 0) {
        if (sig)
            driver_msg("cprof record: %s was killed by signal %d (%s) and wrote no profile", o.argv[0],
                sig, strsignal(sig));
        else
            driver_msg("cprof record: %s exited with status %d and wrote no profile (it ended without "
                "exit(), or profiling was off: CPROF_RATE=0?)",
                o.argv[0], status);
        leftovers(tmp, mine);
        if (created)
            unlink(final);
        return status;
    }
    /* The summary is read from the temporary: final may be a FIFO or a
     * device (launch_move writes through them) that cannot be read back. */
    source_opts_t so;
    memset(&so, 0, sizeof(so));
    char *srcs[1] = {have};
    so.sources = srcs;
    so.n_sources = 1;
    so.seconds = so.timeout = -1;
    profile_t *p = driver_fetch(&so);
    int mrc = launch_move(have, final);
    if (mrc < 0) {
        driver_msg("cprof record: moving the profile to %s: %s (it stays in %s)", final, strerror(-mrc),
            have);
        if (created)
            unlink(final);
        profile_free(p);
        return status;
    }
    leftovers(tmp, mine);
    if (sig)
        driver_msg("cprof record: %s was killed by signal %d (%s)", o.argv[0], sig, strsignal(sig));
    driver_msg("Saved profile in %s", final);

    /* The top 10 by in-use space, symbolized, on stderr. */
    if (p) {
        config_t cfg;
        config_default(&cfg);
        cfg.nodecount = 10;
        bool has_inuse = false;
        for (size_t i = 0; i < p->n_sample_types; i++)
            has_inuse = has_inuse || strcmp(p->strings[p->sample_types[i].type], "inuse_space") == 0;
        if (has_inuse && config_set_str(&cfg.sample_index, "inuse_space") < 0)
            driver_msg("out of memory");
        else
            driver_report_with(p, "top", NULL, &cfg, stderr, NULL, NULL, NULL);
        config_free(&cfg);
        profile_free(p);
    }
    return status;
}
