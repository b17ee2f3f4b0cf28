/* lifetimes_known.c — objects whose lifetimes the program measures itself
 * (clock_gettime right after malloc returns and right before free), for
 * the lifetime profile (tests/e2e/heap_lifetimes.sh):
 *   life_same   1500 x 48 B, each held 200..650 us (spinning), freed by
 *               the allocating thread
 *   life_other  1200 x 80 B, allocated by main, freed by another thread
 *               after main spun 5 ms
 *   life_live   1000 x 112 B, never freed; main then spins 300 ms
 * At the end it writes, per function, "LIFE fn count sum_ns median_ns"
 * (life_live's measured to its END time, just before main returns) to
 * argv[1] (and, given argv[2], there "OBJ fn LOW HIGH" for every freed
 * object: its lifetime measured inside malloc and free (LOW) and outside
 * them (HIGH, from before malloc to after free), for the web UI's
 * histogram, tests/e2e/webui_lifetimes.sh), prints
 * "lifetimes_known done" and exits 0. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define N_SAME 1500
#define N_OTHER 1200
#define N_LIVE 1000

static int64_t life[N_SAME], same_high[N_SAME], other_high[N_OTHER], t_pre_other[N_OTHER];
static int64_t t_other[N_OTHER], life_other_ns[N_OTHER], t_live[N_LIVE], live_ns[N_LIVE];
static void *other[N_OTHER], *live[N_LIVE];

static int64_t now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void spin_until(int64_t t)
{
    while (now() < t)
        ;
}

__attribute__((noinline)) void life_same(void)
{
    for (int i = 0; i < N_SAME; i++) {
        int64_t pre = now();
        char *volatile p = malloc(48);
        int64_t t0 = now();
        p[0] = 1;
        spin_until(t0 + 200000 + (i % 10) * 50000);
        int64_t t1 = now();
        free(p);
        same_high[i] = now() - pre;
        life[i] = t1 - t0;
    }
}

__attribute__((noinline)) void life_other(void)
{
    for (int i = 0; i < N_OTHER; i++) {
        t_pre_other[i] = now();
        other[i] = malloc(80);
        t_other[i] = now();
        memset(other[i], i, 8);
    }
}

static void *free_other(void *arg)
{
    (void)arg;
    for (int i = 0; i < N_OTHER; i++) {
        life_other_ns[i] = now() - t_other[i];
        free(other[i]);
        other_high[i] = now() - t_pre_other[i];
    }
    return NULL;
}

__attribute__((noinline)) void life_live(void)
{
    for (int i = 0; i < N_LIVE; i++) {
        live[i] = malloc(112);
        t_live[i] = now();
        memset(live[i], i, 8);
    }
}

static int by_value(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static FILE *objs; /* argv[2], or NULL */

/* Before report() sorts v. */
static void objects(const char *fn, const int64_t *low, const int64_t *high, int n)
{
    for (int i = 0; objs && i < n; i++)
        fprintf(objs, "OBJ %s %lld %lld\n", fn, (long long)low[i], (long long)high[i]);
}

static void report(FILE *f, const char *fn, int64_t *v, int n)
{
    int64_t sum = 0;
    for (int i = 0; i < n; i++)
        sum += v[i];
    qsort(v, (size_t)n, sizeof(*v), by_value);
    fprintf(f, "LIFE %s %d %lld %lld\n", fn, n, (long long)sum, (long long)v[n / 2]);
}

int main(int argc, char **argv)
{
    if (argc != 2 && argc != 3)
        return 2;
    life_same();
    life_other();
    spin_until(now() + 5000000);
    pthread_t th;
    if (pthread_create(&th, NULL, free_other, NULL) != 0 || pthread_join(th, NULL) != 0)
        return 3;
    life_live();
    spin_until(now() + 300000000);
    int64_t end = now();
    for (int i = 0; i < N_LIVE; i++)
        live_ns[i] = end - t_live[i];
    FILE *f = fopen(argv[1], "w");
    if (!f || (argc == 3 && !(objs = fopen(argv[2], "w"))))
        return 4;
    objects("life_same", life, same_high, N_SAME);
    objects("life_other", life_other_ns, other_high, N_OTHER);
    objects("life_live", live_ns, live_ns, N_LIVE);
    report(f, "life_same", life, N_SAME);
    report(f, "life_other", life_other_ns, N_OTHER);
    report(f, "life_live", live_ns, N_LIVE);
    if (fclose(f) != 0 || (objs && fclose(objs) != 0))
        return 4;
    printf("lifetimes_known done\n");
    return 0;
}
