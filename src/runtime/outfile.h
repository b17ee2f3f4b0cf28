/* outfile.h — opening a profile's output path as Go's os.Create would,
 * without ever putting something else in the place of what is there:
 * - a regular file, or a name that does not exist yet: written to a
 *   temporary beside it ("PATH.tmp.PID.N") and renamed onto it at the end,
 *   so a reader never sees half a profile. A symlink is followed: the file
 *   it names is the one replaced, the link stays (a dangling link gets its
 *   target created, written in place);
 * - a character device or a FIFO (/dev/null, /dev/stdout, a named pipe):
 *   written in place. A FIFO that no process reads is refused rather than
 *   waited for; a reader that goes away gives EPIPE, never SIGPIPE;
 * - a directory, a socket or a block device: refused (outfile_strerror
 *   says which).
 * Opening also removes the temporaries that processes which died in the
 * middle of a write (SIGKILL) left beside the path.
 * A program may close every descriptor it did not open (closefrom,
 * close_range: ssh, sudo, daemons) and give the numbers to files of its
 * own: before each use the descriptor is checked to be still the file
 * (device and inode), and the file is opened again by its path if not;
 * a number that is no longer cprof's is never written to nor closed.
 * Called with the guard set, never from a signal handler; an outfile_t is
 * used by one thread at a time. */
#ifndef CPROF_OUTFILE_H
#define CPROF_OUTFILE_H

#include <stdbool.h>
#include <stdint.h>

typedef struct {
    int fd;          /* where the bytes go; -1 when closed */
    uint64_t dev, ino; /* what fd was opened on */
    bool atomic;     /* fd is the temporary, renamed onto path by outfile_close */
    char path[4096]; /* absolute, symlinks resolved */
    char tmp[4200];
} outfile_t;

/* Opens path (already expanded) for a write; seq tells temporaries of one
 * process apart. 0 or -errno: -EISDIR, -EOPNOTSUPP (a socket), -ENOTBLK (a
 * block device), -ENXIO (a FIFO without reader) for the refusals. */
int outfile_open(outfile_t *f, const char *path, uint64_t seq);

/* f's descriptor, opened again if the program closed or reused the one
 * cprof had (then only if the path still leads to the same file): the fd,
 * or -errno. */
int outfile_fd(outfile_t *f);

/* Runs write(fd, arg) on the open file, with SIGPIPE held back (a FIFO or
 * pipe whose reader left must not kill the program). Its result. */
int outfile_write(outfile_t *f, int (*write)(int fd, void *arg), void *arg);

/* Runs fn(arg), whose writes may go to a pipe or socket, with SIGPIPE held
 * back: one whose reader left gives -EPIPE, never the signal. Its result. */
int outfile_nopipe(int (*fn)(void *arg), void *arg);

/* Closes f: with rc == 0 the temporary becomes the file; otherwise (or
 * when the close fails) it is removed. rc, or the close's error. */
int outfile_close(outfile_t *f, int rc);

/* Closes this process's descriptor of f (if it still is the file) and
 * leaves the file alone: a fork child's copy. */
void outfile_drop(outfile_t *f);

/* One phrase for an error of outfile_open and the writers. */
const char *outfile_strerror(int rc);

#endif
