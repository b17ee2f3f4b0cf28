/* mutex_fight.c — lock contention and blocking from known functions, for
 * the mutex and block profiles.
 *
 * Usage: mutex_fight MODE [DIR]
 *   fight  two threads each run fight() (pthread_mutex_lock),
 *          fight_timed() (pthread_mutex_timedlock) and fight_rw()
 *          (pthread_rwlock_wrlock) on shared locks held for a while: every
 *          lock call of the other thread contends; then one thread waits in
 *          cond_waiter() (pthread_cond_wait) ten times for a signal main
 *          sends 10 ms later;
 *   alone  one thread runs lonely(): 100000 uncontended lock/unlock pairs,
 *          nothing to record;
 *   sem    sem_waiter() waits ten times (sem_wait, then sem_timedwait) for
 *          a post main makes 10 ms after the waiter said it is about to
 *          wait, after taking a token that was already there (no wait);
 *          joiner() joins a thread that sleeps 50 ms; prints "sem";
 *   COUNTFILE (any other single argument; for the HTTP endpoints) the
 *          fighters and the waiter go on until killed; COUNTFILE gets a
 *          number that grows as they work.
 * Prints the counter totals. Built with -DLINKED (and -lcprof), it writes
 * DIR/mutex.pb.gz, DIR/mutex.txt, DIR/block.pb.gz and DIR/block.txt
 * through the API before it exits, and without CPROF_MUTEX_RATE and
 * CPROF_BLOCK_RATE in the environment it sets both rates to 1 itself. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#ifdef LINKED
#include <cprof.h>
#endif

#define ROUNDS 300

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t mu_timed = PTHREAD_MUTEX_INITIALIZER;
static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static pthread_mutex_t cmu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static long counter, counter_timed, counter_rw, signals, woken;
static pthread_barrier_t go;
static int forever;

/* Per lock: fighters inside its lock call, and fighters in its phase. */
typedef struct {
    atomic_int want, active;
} rivalry_t;
static rivalry_t r_mu, r_timed, r_rw;

/* Naps of 50 microseconds while `want` is (or is not) 0, for at most 2 ms
 * and not once the other fighter has left the phase. */
static void wait_while(rivalry_t *r, int want_zero)
{
    struct timespec ts = {0, 50000};
    for (int i = 0; i < 40 && (atomic_load(&r->want) == 0) == want_zero && atomic_load(&r->active) == 2; i++)
        nanosleep(&ts, NULL);
}

/* Holds the caller's lock until the other fighter is waiting for it, then
 * 50 microseconds more. */
__attribute__((noinline)) static void hold(rivalry_t *r)
{
    struct timespec ts = {0, 50000};
    wait_while(r, 1);
    nanosleep(&ts, NULL);
}

/* After the unlock: lets the waiting fighter take the lock before the
 * caller asks again, so that the two take turns and contend on (nearly)
 * every round, even when a loaded machine would run them one after the
 * other or the unlocker would barge back in. */
static void pass(rivalry_t *r)
{
    wait_while(r, 0);
}

__attribute__((noinline)) void fight(void)
{
    for (int i = 0; i < ROUNDS; i++) {
        atomic_fetch_add(&r_mu.want, 1);
        pthread_mutex_lock(&mu);
        atomic_fetch_sub(&r_mu.want, 1);
        counter++;
        hold(&r_mu);
        pthread_mutex_unlock(&mu);
        pass(&r_mu);
    }
}

__attribute__((noinline)) void fight_timed(void)
{
    for (int i = 0; i < ROUNDS; i++) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += 10;
        atomic_fetch_add(&r_timed.want, 1);
        if (pthread_mutex_timedlock(&mu_timed, &until) != 0)
            abort();
        atomic_fetch_sub(&r_timed.want, 1);
        counter_timed++;
        hold(&r_timed);
        pthread_mutex_unlock(&mu_timed);
        pass(&r_timed);
    }
}

__attribute__((noinline)) void fight_rw(void)
{
    for (int i = 0; i < ROUNDS; i++) {
        atomic_fetch_add(&r_rw.want, 1);
        pthread_rwlock_wrlock(&rw);
        atomic_fetch_sub(&r_rw.want, 1);
        counter_rw++;
        hold(&r_rw);
        pthread_rwlock_unlock(&rw);
        pass(&r_rw);
    }
}

/* Waits for ten signals: signals (under cmu) going from `from` to from+10. */
__attribute__((noinline)) void cond_waiter(long from)
{
    pthread_mutex_lock(&cmu);
    for (long seen = from; seen < from + 10; seen++) {
        while (signals == seen)
            pthread_cond_wait(&cv, &cmu);
        woken++;
    }
    pthread_mutex_unlock(&cmu);
}

__attribute__((noinline)) void lonely(void)
{
    for (int i = 0; i < 100000; i++) {
        pthread_mutex_lock(&mu);
        counter++;
        pthread_mutex_unlock(&mu);
    }
}

static sem_t sem;
static atomic_int sem_rounds; /* waits sem_waiter is about to begin */

__attribute__((noinline)) void sem_waiter(void)
{
    if (sem_wait(&sem) != 0) /* the token already there: no wait */
        abort();
    for (int i = 0; i < 10; i++) {
        atomic_fetch_add(&sem_rounds, 1);
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += 10;
        int rc;
        while ((rc = i % 2 ? sem_timedwait(&sem, &until) : sem_wait(&sem)) != 0 && errno == EINTR)
            ;
        if (rc != 0)
            abort();
    }
}

static void *sem_thread(void *arg)
{
    (void)arg;
    sem_waiter();
    return NULL;
}

static void *sleeper(void *arg)
{
    (void)arg;
    struct timespec ts = {0, 50000000};
    nanosleep(&ts, NULL);
    return NULL;
}

__attribute__((noinline)) void joiner(void)
{
    pthread_t t;
    if (pthread_create(&t, NULL, sleeper, NULL) != 0 || pthread_join(t, NULL) != 0)
        abort();
}

static void sem_mode(void)
{
    sem_init(&sem, 0, 1);
    pthread_t t;
    pthread_create(&t, NULL, sem_thread, NULL);
    for (int i = 0; i < 10; i++) {
        struct timespec ts = {0, 10000000}, nap = {0, 100000};
        while (atomic_load(&sem_rounds) <= i)
            nanosleep(&nap, NULL);
        nanosleep(&ts, NULL);
        sem_post(&sem);
    }
    pthread_join(t, NULL);
    joiner();
}

static void *fighter(void *arg)
{
    (void)arg;
    do {
        atomic_fetch_add(&r_mu.active, 1);
        pthread_barrier_wait(&go);
        fight();
        atomic_fetch_sub(&r_mu.active, 1);
        atomic_fetch_add(&r_timed.active, 1);
        pthread_barrier_wait(&go);
        fight_timed();
        atomic_fetch_sub(&r_timed.active, 1);
        atomic_fetch_add(&r_rw.active, 1);
        pthread_barrier_wait(&go);
        fight_rw();
        atomic_fetch_sub(&r_rw.active, 1);
    } while (forever);
    return NULL;
}

static void *waiter(void *arg)
{
    (void)arg;
    long from = 0;
    do {
        cond_waiter(from);
        from += 10;
    } while (forever);
    return NULL;
}

/* Ten signals, 10 ms apart, for cond_waiter. */
static void signal_ten(void)
{
    for (int i = 0; i < 10; i++) {
        struct timespec ts = {0, 10000000};
        nanosleep(&ts, NULL);
        pthread_mutex_lock(&cmu);
        signals++;
        pthread_cond_signal(&cv);
        pthread_mutex_unlock(&cmu);
    }
}

#ifdef LINKED
static void write_one(const char *dir, const char *file, int (*fn)(int, int), int debug)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", dir, file);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int rc = fd < 0 ? -1 : fn(fd, debug);
    if (rc != 0) {
        fprintf(stderr, "%s: %d\n", file, rc);
        exit(1);
    }
    close(fd);
}
#endif

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: mutex_fight fight|alone [DIR] | mutex_fight COUNTFILE\n");
        return 2;
    }
#ifdef LINKED
    if (!getenv("CPROF_MUTEX_RATE") && cprof_set_mutex_rate(1) != 0)
        return 1;
    if (!getenv("CPROF_BLOCK_RATE") && cprof_set_block_rate(1) != 0)
        return 1;
#endif
    if (strcmp(argv[1], "alone") == 0) {
        lonely();
    } else if (strcmp(argv[1], "sem") == 0) {
        sem_mode();
        puts("sem");
        return 0;
    } else if (strcmp(argv[1], "fight") != 0) {
        pthread_t t;
        forever = 1;
        pthread_barrier_init(&go, NULL, 2);
        for (int i = 0; i < 2; i++)
            pthread_create(&t, NULL, fighter, NULL);
        pthread_create(&t, NULL, waiter, NULL);
        for (long n = 1;; n++) {
            pthread_mutex_lock(&cmu);
            long c = counter;
            pthread_mutex_unlock(&cmu);
            FILE *f = fopen(argv[1], "w");
            if (!f || fprintf(f, "%ld\n", c + n) < 0 || fclose(f) != 0)
                return 1;
            signal_ten();
        }
    } else {
        pthread_t t[3];
        pthread_barrier_init(&go, NULL, 2);
        for (int i = 0; i < 2; i++)
            pthread_create(&t[i], NULL, fighter, NULL);
        for (int i = 0; i < 2; i++)
            pthread_join(t[i], NULL);
        pthread_create(&t[2], NULL, waiter, NULL);
        signal_ten();
        pthread_join(t[2], NULL);
    }
    printf("%ld %ld %ld %ld\n", counter, counter_timed, counter_rw, woken);
#ifdef LINKED
    if (argc > 2) {
        write_one(argv[2], "mutex.pb.gz", cprof_mutex_profile_write_fd, 0);
        write_one(argv[2], "mutex.txt", cprof_mutex_profile_write_fd, 1);
        write_one(argv[2], "block.pb.gz", cprof_block_profile_write_fd, 0);
        write_one(argv[2], "block.txt", cprof_block_profile_write_fd, 1);
    }
#endif
    return 0;
}
