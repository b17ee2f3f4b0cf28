/* attachns.h — cprof attach to a process in other namespaces than cprof's
 * (a container): whether it shares cprof's mount or network namespace,
 * whether it sees a file of cprof's at the same path, and handing a file
 * over in a memfd of the process's (attach.c makes the process create it:
 * memfd_create, then dlopen("/proc/self/fd/N")), written from outside
 * through /proc/PID/fd/N. Everything reads /proc from cprof's side; the
 * caller holds the ptrace attachment that gives access to the process's
 * files. */
#ifndef CPROF_TOOL_ATTACHNS_H
#define CPROF_TOOL_ATTACHNS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Whether process pid is in another namespace ns ("mnt", "net") than
 * cprof; false when it cannot be told. */
bool attachns_other(pid_t pid, const char *ns);

/* Whether pid sees, at the absolute path, the very file cprof sees there
 * (same device and inode through /proc/PID/root). */
bool attachns_sees(pid_t pid, const char *path);

/* Copies the file src into pid's descriptor fd (a memfd it made). 0, or a
 * negative errno with err set. */
int attachns_fill(pid_t pid, int fd, const char *src, char *err, size_t errlen);

/* The descriptor of pid open on the memfd named name (maps and
 * /proc/PID/fd show "/memfd:NAME (deleted)"), or -1. */
int attachns_memfd(pid_t pid, const char *name);

#endif
