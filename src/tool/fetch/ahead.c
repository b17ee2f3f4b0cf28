/* ahead.c — worker threads producing results in order into a ring of
 * depth slots (see ahead.h). next counts jobs started, taken results
 * handed out; job i runs in ring[i % depth] without the lock, which is
 * free because i < taken + depth, and only then publishes it (ready).
 * Jobs finish in any order; the taker waits for the one it wants. */
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
    bool *ready;         /* ring[k] holds a result done and not taken */
    pthread_mutex_t mu;
    pthread_cond_t cv;  /* ready, taken or stop changed */
    size_t next, taken; /* jobs started / results handed out, in job order */
    bool stop;
    bool help; /* the taker runs jobs while it waits */
    pthread_t *tids;
    size_t n_tids; /* workers running; none: ahead_take runs fn itself */
};

static void *slot_at(ahead_t *a, size_t i)
{
    return a->ring + (i % a->depth) * a->slot_size;
}

/* Under the lock: starts the next job if there is room, in *i. */
static bool claim(ahead_t *a, size_t *i)
{
    if (a->stop || a->next >= a->n || a->next - a->taken >= a->depth)
        return false;
    *i = a->next++;
    return true;
}

/* Under the lock: runs job i without it, then publishes its result. */
static void run_locked(ahead_t *a, size_t i)
{
    pthread_mutex_unlock(&a->mu);
    a->fn(a->ctx, i, slot_at(a, i));
    pthread_mutex_lock(&a->mu);
    a->ready[i % a->depth] = true;
    pthread_cond_broadcast(&a->cv);
}

static void *worker(void *arg)
{
    ahead_t *a = arg;
    pthread_mutex_lock(&a->mu);
    while (!a->stop && a->next < a->n) {
        size_t i;
        if (claim(a, &i))
            run_locked(a, i);
        else
            pthread_cond_wait(&a->cv, &a->mu);
    }
    pthread_mutex_unlock(&a->mu);
    return NULL;
}

int ahead_start(ahead_t **ap, size_t n, size_t slot_size, size_t depth, size_t threads, bool help,
                ahead_fn fn, void *ctx)
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
    a->help = help;
    if (n == 0)
        threads = 0;
    if (!(a->ring = calloc(a->depth, slot_size)) || !(a->ready = calloc(a->depth, sizeof(bool))) ||
        (threads && !(a->tids = calloc(threads, sizeof(*a->tids))))) {
        free(a->ring);
        free(a->ready);
        free(a);
        return -ENOMEM;
    }
    pthread_mutex_init(&a->mu, NULL);
    pthread_cond_init(&a->cv, NULL);
    if (threads) {
        /* The workers take no signal: the caller's handlers and sigwait
         * stay as they were. */
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        while (a->n_tids < threads && pthread_create(&a->tids[a->n_tids], NULL, worker, a) == 0)
            a->n_tids++;
        pthread_sigmask(SIG_SETMASK, &old, NULL);
    }
    *ap = a;
    return 0;
}

int ahead_take(ahead_t *a, void *slot)
{
    pthread_mutex_lock(&a->mu);
    if (a->taken >= a->n) {
        pthread_mutex_unlock(&a->mu);
        return -ENOENT;
    }
    while (!a->ready[a->taken % a->depth]) {
        size_t i;
        if ((a->help || !a->n_tids) && claim(a, &i))
            run_locked(a, i);
        else
            pthread_cond_wait(&a->cv, &a->mu);
    }
    pthread_mutex_unlock(&a->mu);
    /* published: no job writes it again before taken moves */
    memcpy(slot, slot_at(a, a->taken), a->slot_size);
    pthread_mutex_lock(&a->mu);
    a->ready[a->taken % a->depth] = false;
    a->taken++;
    pthread_cond_broadcast(&a->cv);
    pthread_mutex_unlock(&a->mu);
    return 0;
}

void ahead_end(ahead_t *a, void (*drop)(void *slot))
{
    if (!a)
        return;
    pthread_mutex_lock(&a->mu);
    a->stop = true;
    pthread_cond_broadcast(&a->cv);
    pthread_mutex_unlock(&a->mu);
    for (size_t k = 0; k < a->n_tids; k++)
        pthread_join(a->tids[k], NULL);
    /* every job started is done now: the taker runs none here */
    for (size_t i = a->taken; drop && i < a->next; i++)
        drop(slot_at(a, i));
    pthread_mutex_destroy(&a->mu);
    pthread_cond_destroy(&a->cv);
    free(a->tids);
    free(a->ready);
    free(a->ring);
    free(a);
}
