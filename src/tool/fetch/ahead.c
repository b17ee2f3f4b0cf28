/* ahead.c — one worker thread producing results in order into a ring of
 * depth slots (see ahead.h). done and taken count results; the worker
 * fills ring[done % depth] without the lock, which is free because
 * done - taken < depth, and only then publishes it (done++). */
#include "tool/fetch/ahead.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

struct ahead {
    ahead_fn fn;
    void *ctx;
    size_t n, slot_size, depth;
    unsigned char *ring; /* depth slots of slot_size bytes */
    pthread_mutex_t mu;
    pthread_cond_t cv;  /* done, taken or stop changed */
    size_t done, taken; /* results produced / handed out, in job order */
    bool stop;
    bool threaded; /* the worker runs; else ahead_take runs fn itself */
    pthread_t tid;
};

static void *slot_at(ahead_t *a, size_t i)
{
    return a->ring + (i % a->depth) * a->slot_size;
}

static void *worker(void *arg)
{
    ahead_t *a = arg;
    pthread_mutex_lock(&a->mu);
    while (!a->stop && a->done < a->n) {
        if (a->done - a->taken >= a->depth) {
            pthread_cond_wait(&a->cv, &a->mu);
            continue;
        }
        size_t i = a->done;
        pthread_mutex_unlock(&a->mu);
        a->fn(a->ctx, i, slot_at(a, i));
        pthread_mutex_lock(&a->mu);
        a->done = i + 1;
        pthread_cond_broadcast(&a->cv);
    }
    pthread_mutex_unlock(&a->mu);
    return NULL;
}

int ahead_start(ahead_t **ap, size_t n, size_t slot_size, size_t depth, bool threaded, ahead_fn fn,
                void *ctx)
{
    *ap = NULL;
    ahead_t *a = calloc(1, sizeof(*a));
    if (!a)
        return -ENOMEM;
    a->fn = fn;
    a->ctx = ctx;
    a->n = n;
    a->slot_size = slot_size;
    a->depth = depth ? depth : 1;
    if (!(a->ring = calloc(a->depth, slot_size))) {
        free(a);
        return -ENOMEM;
    }
    pthread_mutex_init(&a->mu, NULL);
    pthread_cond_init(&a->cv, NULL);
    if (threaded && n > 0) {
        /* The worker takes no signal: the caller's handlers and sigwait
         * stay as they were. */
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        a->threaded = pthread_create(&a->tid, NULL, worker, a) == 0;
        pthread_sigmask(SIG_SETMASK, &old, NULL);
    }
    *ap = a;
    return 0;
}

int ahead_take(ahead_t *a, void *slot)
{
    if (!a->threaded) {
        if (a->taken >= a->n)
            return -ENOENT;
        a->fn(a->ctx, a->taken++, slot);
        return 0;
    }
    pthread_mutex_lock(&a->mu);
    if (a->taken >= a->n) {
        pthread_mutex_unlock(&a->mu);
        return -ENOENT;
    }
    while (a->done == a->taken)
        pthread_cond_wait(&a->cv, &a->mu);
    pthread_mutex_unlock(&a->mu);
    /* published: the worker does not write it again before taken moves */
    memcpy(slot, slot_at(a, a->taken), a->slot_size);
    pthread_mutex_lock(&a->mu);
    a->taken++;
    pthread_cond_broadcast(&a->cv);
    pthread_mutex_unlock(&a->mu);
    return 0;
}

void ahead_end(ahead_t *a, void (*drop)(void *slot))
{
    if (!a)
        return;
    if (a->threaded) {
        pthread_mutex_lock(&a->mu);
        a->stop = true;
        pthread_cond_broadcast(&a->cv);
        pthread_mutex_unlock(&a->mu);
        pthread_join(a->tid, NULL);
        for (size_t i = a->taken; drop && i < a->done; i++)
            drop(slot_at(a, i));
    }
    pthread_mutex_destroy(&a->mu);
    pthread_cond_destroy(&a->cv);
    free(a->ring);
    free(a);
}
