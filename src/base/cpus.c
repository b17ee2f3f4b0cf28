/* cpus.c — the CPUs the process may run on. */
#include <sched.h>
#include <unistd.h>

#include "base/cpus.h"

int cpus_usable(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) == 0) {
        int n = CPU_COUNT(&set);
        return n > 0 ? n : 1;
    }
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    return online > 0 ? (int)online : 1;
}
