/* unwfds.h — libunwind's memory-validation pipe, kept from the program's
 * descriptors.
 *
 * libunwind (1.6) checks each address it reads through a pipe it opens
 * once: a read of its read end, then a write of the byte to its write end.
 * A program that closes inherited descriptors (closefrom, close_range:
 * ssh, sudo, daemons) closes that pipe too, and the numbers go to the
 * program's next files: libunwind then reads the program's pipe (blocking
 * for ever, or taking its data), writes into it, or, when its read fails,
 * closes both numbers, whoever owns them now (libunwind #291, #274).
 * cprof cannot change the numbers libunwind keeps, so it checks them
 * before each of its walks with libunwind: unwfds_ok_sigsafe says whether
 * they still are that pipe; if both were closed and nothing took them, it
 * opens a pipe there again (only if the kernel hands out exactly those
 * numbers: never over a descriptor of the program), once: if the kernel
 * hands out others (lower numbers are free), the pipe is lost for good,
 * rather than taking the program's lowest free numbers on every walk.
 * Otherwise libunwind must not run: callers walk another way or keep
 * fewer frames. Built without libunwind (CPROF_NO_LIBUNWIND: the musl
 * runtime), the check always fails.
 *
 * unwfds_init runs once, at start-up, before any other use of libunwind:
 * it has libunwind open its pipe and learns it. Should libunwind have
 * been started before cprof (its pipe unknown), the check always passes,
 * as before. The check is two fstat calls: signal-safe, no allocation, no
 * lock. A program thread closing descriptors while cprof is inside
 * libunwind is not covered. */
#ifndef CPROF_UNWFDS_H
#define CPROF_UNWFDS_H

#include <stdbool.h>

void unwfds_init(void);

bool unwfds_ok_sigsafe(void);

#endif
