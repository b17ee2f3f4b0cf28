/* main.c — the cprof command: go tool pprof's counterpart for C programs.
 * Parses the command line, has the driver fetch the profiles, then makes
 * one report, serves the web UI or runs the shell; or runs one of the
 * subcommands of subcommands[] (record, attach/detach, check).
 * Errors go to stderr; exit codes: 0 success, 1 failure, 2 bad usage. */
#include <malloc.h>
#include <stdio.h>
#include <string.h>

#include "tool/driver/driver.h"
#include "tool/driver/flags.h"
#include "tool/fetch/fetch.h"
#include "tool/ui/attach.h"
#include "tool/ui/check.h"
#include "tool/ui/record.h"
#include "tool/ui/shell.h"
#include "tool/ui/web.h"

#define ERRLEN 1024

/* The commands that are not pprof's: each gets argv from its own name on
 * and returns the exit status. */
static const struct {
    const char *name;
    int (*run)(int argc, char **argv);
} subcommands[] = {
    {.name = "record", .run = record_main},
    {.name = "attach", .run = attach_main},
    {.name = "detach", .run = attach_main},
    {.name = "check", .run = check_main},
};

int main(int argc, char **argv)
{
    for (size_t i = 0; argc >= 2 && i < sizeof(subcommands) / sizeof(subcommands[0]); i++)
        if (strcmp(argv[1], subcommands[i].name) == 0)
            return subcommands[i].run(argc - 1, argv + 1);
    /* Large arrays (a profile's, the graph's) are mapped alone, always:
     * glibc's threshold otherwise rises at the first large free, and a
     * large array grown later on the heap leaves its old copy resident
     * (7 MB of the peak on bench/'s strings shape). */
    mallopt(M_MMAP_THRESHOLD, 128 << 10);
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
