/* cpus.h — how many CPUs this process may run on (base).
 *
 * The tool starts a second thread only when it can run beside the first:
 * the CPUs of the process's affinity mask (taskset, a container's cpuset),
 * not every CPU online. */
#ifndef CPROF_BASE_CPUS_H
#define CPROF_BASE_CPUS_H

/* The CPUs in the calling thread's affinity mask, at least 1; the CPUs
 * online if the mask cannot be read. */
int cpus_usable(void);

#endif
