/* phases.h — the attach test programs' rendezvous with their script: each
 * phase is an empty file in phase_dir (argv[1]) that one side creates and
 * the other waits for, so no step depends on timing. */
#ifndef PHASES_H
#define PHASES_H

#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static const char *phase_dir;

static int exists(const char *name)
{
    char p[4096];
    snprintf(p, sizeof(p), "%s/%s", phase_dir, name);
    return access(p, F_OK) == 0;
}

/* Exits 3 when the file cannot be made: the script would wait for ever. */
static void touch(const char *name)
{
    char p[4096];
    snprintf(p, sizeof(p), "%s/%s", phase_dir, name);
    FILE *f = fopen(p, "w");
    if (!f || fclose(f) != 0)
        exit(3);
}

static inline void wait_for(const char *name)
{
    struct timespec ts = {0, 10000000};
    while (!exists(name))
        nanosleep(&ts, NULL);
}

#endif
