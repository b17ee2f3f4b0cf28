// heaplife_api.c — the peak and leak profiles through the C API of a
// linked program (-lcprof): a spike of 10 x 100000 bytes freed again, then
// cprof_peak_profile_write (the spike is the peak), cprof_peak_reset and
// the peak again (the spike is gone), and a dropped block of 4321 bytes
// found by cprof_leak_profile_write; then a dropped block of 2345 bytes
// whose only pointer is the path passed to cprof_leak_profile_write, so
// that while the profile is written it lives in cprof's frames alone,
// which are not roots. Usage: heaplife_api DIR
#include <cprof.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *volatile sink;

__attribute__((noinline)) static void api_spike(void)
{
    void *s[10];
    for (int i = 0; i < 10; i++)
        s[i] = sink = malloc(100000);
    for (int i = 0; i < 10; i++)
        free(s[i]);
}

__attribute__((noinline)) static void api_dropped(void)
{
    sink = malloc(4321);
    memset(sink, 0, 8);
    sink = NULL;
}

/* Kept only in memory across the calls, never in a callee-saved register
 * of the program: the block's address is in no frame of the program when
 * cprof is called. */
__attribute__((noinline)) static int api_passed(const char *dir)
{
    sink = malloc(2345);
    snprintf(sink, 2345, "%s/leak2.pb.gz", dir);
    char *path = sink;
    sink = NULL;
    return cprof_leak_profile_write(path);
}

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    char path[4096];
    api_spike();
    snprintf(path, sizeof(path), "%s/peak1.pb.gz", argv[1]);
    if (cprof_peak_profile_write(path) != 0 || cprof_peak_reset() != 0)
        return 1;
    snprintf(path, sizeof(path), "%s/peak2.pb.gz", argv[1]);
    if (cprof_peak_profile_write(path) != 0)
        return 1;
    api_dropped();
    snprintf(path, sizeof(path), "%s/leak.pb.gz", argv[1]);
    if (cprof_leak_profile_write(path) != 0)
        return 1;
    if (api_passed(argv[1]) != 0)
        return 1;
    return cprof_leak_profile_write_fd(-1, 0) == -EINVAL ? 0 : 1;
}
