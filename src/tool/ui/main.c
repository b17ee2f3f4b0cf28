/* main.c — the cprof command: go tool pprof's counterpart for C programs.
 * Parses the command line, has the driver fetch the profiles, then makes
 * one report, serves the web UI or runs the shell; or runs one of the
 * subcommands of subcommands[] (record, attach/detach, check).
 * Errors go to stderr; exit codes: 0 success, 1 failure, 2 bad usage. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tool/driver/driver.h"
#include "tool/driver/flags.h"
#include "tool/fetch/fetch.h"
#include "tool/fetch/record.h"
#include "tool/ui/attach.h"
#include "tool/ui/check.h"
#include "tool/ui/shell.h"
#include "tool/ui/web.h"

#define ERRLEN 1024

/* --- cprof record ---------------------------------------------------------------------- */

static void record_usage(FILE *f)
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
static void record_leftovers(const char *dir, const char *mine)
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

static int record(int argc, char **argv)
{
    argc--, argv++; /* "record" */
    record_opts_t o;
    char err[ERRLEN];
    if (record_parse(argc, argv, &o, err, sizeof(err)) < 0) {
        driver_msg("cprof record: %s (cprof record -h for usage)", err);
        return 125;
    }
    if (o.help) {
        record_usage(stdout);
        return 0;
    }
    char lib[4096];
    if (record_find_runtime(lib, sizeof(lib), err, sizeof(err)) < 0) {
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
        const char *b = strrchr(o.argv[0], '/');
        b = b && b[1] ? b + 1 : o.argv[0];
        snprintf(prefix, sizeof(prefix),
                 "pprof.%s.alloc_objects.alloc_space.inuse_objects.inuse_space.", b);
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
    int src = record_spawn(&o, lib, tmp, &pid, err, sizeof(err));
    if (src < 0) {
        driver_msg("cprof record: %s", err);
        rmdir(tmp);
        if (created)
            unlink(final);
        return src == -ENOENT ? 127 : src == -ENOMEM ? 125 : 126;
    }
    int sig;
    int status = record_wait(pid, &sig);

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
        record_leftovers(tmp, mine);
        if (created)
            unlink(final);
        return status;
    }
    /* The summary is read from the temporary: final may be a FIFO or a
     * device (record_move writes through them) that cannot be read back. */
    source_opts_t so;
    memset(&so, 0, sizeof(so));
    char *srcs[1] = {have};
    so.sources = srcs;
    so.n_sources = 1;
    so.seconds = so.timeout = -1;
    profile_t *p = driver_fetch(&so);
    int mrc = record_move(have, final);
    if (mrc < 0) {
        driver_msg("cprof record: moving the profile to %s: %s (it stays in %s)", final, strerror(-mrc),
            have);
        if (created)
            unlink(final);
        profile_free(p);
        return status;
    }
    record_leftovers(tmp, mine);
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

/* The commands that are not pprof's: each gets argv from its own name on
 * and returns the exit status. */
static const struct {
    const char *name;
    int (*run)(int argc, char **argv);
} subcommands[] = {
    {.name = "record", .run = record},
    {.name = "attach", .run = attach_main},
    {.name = "detach", .run = attach_main},
    {.name = "check", .run = check_main},
};

int main(int argc, char **argv)
{
    for (size_t i = 0; argc >= 2 && i < sizeof(subcommands) / sizeof(subcommands[0]); i++)
        if (strcmp(argv[1], subcommands[i].name) == 0)
            return subcommands[i].run(argc - 1, argv + 1);
    config_t cfg;
    config_default(&cfg);
    source_opts_t src;
    cmdline_cmd_t cmd;
    char err[ERRLEN], warn[ERRLEN];
    flags_result_t fr = flags_parse(argc, argv, &cfg, &src, &cmd, err, sizeof(err), warn,
                                    sizeof(warn));
    if (fr == FLAGS_EXIT_OK) {
        config_free(&cfg);
        return 0;
    }
    if (fr == FLAGS_ERROR) {
        driver_msg("cprof: %s (cprof -h for usage)", err);
        config_free(&cfg);
        return 2;
    }
    if (*warn)
        fputs(warn, stderr);
    profile_t *p = driver_fetch(&src);
    if (!p) {
        config_free(&cfg);
        return 1;
    }
    if (src.http) {
        int wrc = web_serve(p, &cfg, &src); /* takes p */
        config_free(&cfg);
        return wrc < 0 ? 1 : 0;
    }
    int rc;
    if (cmd.name)
        rc = driver_report(p, cmd.name, cmd.param, &cfg, false, true) < 0 ? 1 : 0;
    else
        rc = shell_run(p, &cfg) < 0 ? 1 : 0;
    profile_free(p);
    config_free(&cfg);
    return rc;
}
