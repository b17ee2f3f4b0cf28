/* stream.c — a session's output streamed as it records (see stream.h). */
#include "stream.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

/* The pipe's capacity: what the session may write ahead of the client
 * (Linux's default for an unprivileged process's largest pipe). */
#define STREAM_PIPE_BYTES (1 << 20)

struct stream {
    const profile_kind_t *k;
    int64_t id;      /* the session */
    int rfd, wfd;    /* the pipe; wfd is the session's, closed once it stopped */
    bool ending;     /* stream_end called */
    bool stopper;    /* a stopping thread runs (joined by stream_free) */
    int stopped;     /* the stop returned: wfd closed (atomic) */
    pthread_t thread;
};

stream_t *stream_open(const profile_kind_t *k, int *err)
{
    stream_t *s = calloc(1, sizeof(*s));
    int p[2];
    if (!s || pipe2(p, O_CLOEXEC | O_NONBLOCK) < 0) {
        *err = -errno;
        free(s);
        return NULL;
    }
    fcntl(p[1], F_SETPIPE_SZ, STREAM_PIPE_BYTES); /* the default (64 KiB) if refused */
    s->k = k;
    s->rfd = p[0];
    s->wfd = p[1];
    s->id = k->start(s->wfd);
    if (s->id < 0) {
        *err = (int)s->id;
        close(p[0]);
        close(p[1]);
        free(s);
        return NULL;
    }
    return s;
}

int stream_fd(const stream_t *s)
{
    return s->rfd;
}

ssize_t stream_read(stream_t *s, void *buf, size_t n)
{
    for (;;) {
        ssize_t r = read(s->rfd, buf, n);
        if (r >= 0)
            return r; /* 0: the session stopped and closed its end */
        if (errno != EINTR)
            return -errno;
    }
}

/* The session's stop, then its end of the pipe closed: the reader sees the
 * end of the stream once it read the rest. */
static void stop(stream_t *s, bool discard)
{
    s->k->stop(s->id, discard);
    close(s->wfd);
    __atomic_store_n(&s->stopped, 1, __ATOMIC_RELEASE);
}

static void *stopper_main(void *arg)
{
    stop(arg, false);
    return NULL;
}

void stream_end(stream_t *s)
{
    if (s->ending)
        return;
    s->ending = true;
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old); /* the thread takes no signal */
    s->stopper = pthread_create(&s->thread, NULL, stopper_main, s) == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (s->stopper)
        pthread_setname_np(s->thread, "cprof-http-stop");
    else
        stop(s, false); /* bounded: its writes give up on a full pipe (fdio.h) */
}

bool stream_ending(const stream_t *s)
{
    return s->ending;
}

void stream_free(stream_t *s)
{
    if (!s)
        return;
    /* Nobody reads any more: the session's writes fail at once (EPIPE,
     * held back by the runtime), so its stop does not wait for a reader. */
    close(s->rfd);
    if (s->stopper)
        pthread_join(s->thread, NULL);
    else if (!__atomic_load_n(&s->stopped, __ATOMIC_ACQUIRE))
        stop(s, true);
    free(s);
}
