/* syshooks.h — the system call and sleep hooks of the execution trace
 * (syshooks.c has the calls, what each becomes in the trace, and the rules
 * for threads and signal handlers). */
#ifndef CPROF_SYSHOOKS_H
#define CPROF_SYSHOOKS_H

/* Resolves the next definitions now, from the runtime's constructor (a
 * first call from a signal handler then never runs dlsym). */
void syshooks_init(void);

#endif
