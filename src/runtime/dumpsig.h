/* dumpsig.h — the dump signal (CPROF_DUMP_SIGNAL): cprof's handler on it,
 * and the program's own action for it kept beside it.
 *
 * Owns: the interposed sigaction and signal. Once cprof took the signal,
 * a program that sets an action for it sets the action cprof's handler
 * chains to (the kernel's mask and flags become the program's: SA_RESTART,
 * SA_ONSTACK, sa_mask), and reads back its own action, never cprof's. The
 * handler wakes the dump thread (dump_trigger_sigsafe), then runs the
 * program's handler as the kernel would have; with no handler of the
 * program's (SIG_DFL, SIG_IGN) the signal is cprof's alone: it neither
 * ends the program (USR2's default) nor stops it. A SIG_IGN inherited at
 * exec (nohup, a shell's trap '' USR2) is what the program reads back,
 * but cprof still dumps on the signal. Not seen: bsd_signal, sysv_signal,
 * sigset and raw system calls (the program's action then replaces
 * cprof's). SA_RESETHAND resets the program's action to the default
 * when its handler runs, never cprof's.
 *
 * Threads and signals: the handler allocates nothing and takes no lock;
 * the interposed functions are async-signal-safe once dumpsig_resolve ran
 * (cprof_init), as the ones they wrap. Two threads setting the action at
 * once: one of them wins, as with the kernel's. */
#ifndef CPROF_DUMPSIG_H
#define CPROF_DUMPSIG_H

/* From cprof_init (guard set): finds the next sigaction, so that no later
 * call (maybe in a handler) runs dlsym. */
void dumpsig_resolve(void);

/* Takes sig for dumps, keeping what was there as the program's action.
 * 0 or a negative errno. */
int dumpsig_install(int sig);

#endif
