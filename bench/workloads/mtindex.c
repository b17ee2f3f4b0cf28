/* mtindex.c — a multi-threaded allocation workload for
 * bench/heap_overhead.sh: THREADS threads each index ITEMS generated words
 * in a hash table of their own, as a program indexing files in parallel
 * would. Per word: a scratch buffer (malloc, free), and for a new word a
 * node and a copy of its text; the tables grow by realloc. The heap grows
 * through the whole run in every thread at once — the case where each
 * sampled allocation sets a new high of the heap (cprof's peak, peak.h) —
 * then everything is freed. Prints the distinct words and a checksum.
 *
 *   mtindex THREADS ITEMS */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct node {
    struct node *next;
    char *word;
    uint64_t count;
} node_t;

typedef struct {
    uint64_t seed;
    long items;
    node_t **heads;
    size_t mask;
    size_t n;
    uint64_t sum;
} index_t;

static uint64_t hash(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 1099511628211ull;
    return h;
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n);
    if (!p)
        abort();
    return p;
}

static void grow(index_t *ix)
{
    size_t slots = (ix->mask + 1) * 2;
    node_t **heads = calloc(slots, sizeof(*heads));
    if (!heads)
        abort();
    for (size_t i = 0; i <= ix->mask; i++)
        for (node_t *e = ix->heads[i], *next; e; e = next) {
            next = e->next;
            node_t **h = &heads[hash(e->word) & (slots - 1)];
            e->next = *h;
            *h = e;
        }
    free(ix->heads);
    ix->heads = heads;
    ix->mask = slots - 1;
}

static void *indexer(void *arg)
{
    index_t *ix = arg;
    uint64_t x = ix->seed;
    ix->mask = 1023;
    ix->heads = calloc(ix->mask + 1, sizeof(*ix->heads));
    if (!ix->heads)
        abort();
    for (long i = 0; i < ix->items; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        /* Words of 4 to 35 letters, half of them seen before. */
        int len = 4 + (int)(x % 32);
        char *buf = xmalloc((size_t)len + 1);
        uint64_t y = x % ((uint64_t)ix->items / 2 + 1);
        for (int k = 0; k < len; k++, y = y * 6364136223846793005ull + 1442695040888963407ull)
            buf[k] = (char)('a' + (y >> 59));
        buf[len] = 0;
        uint64_t h = hash(buf);
        node_t *e = ix->heads[h & ix->mask];
        while (e && strcmp(e->word, buf) != 0)
            e = e->next;
        if (!e) {
            e = xmalloc(sizeof(*e));
            e->word = xmalloc((size_t)len + 1);
            memcpy(e->word, buf, (size_t)len + 1);
            e->count = 0;
            e->next = ix->heads[h & ix->mask];
            ix->heads[h & ix->mask] = e;
            if (++ix->n > ix->mask)
                grow(ix);
        }
        e->count++;
        free(buf);
    }
    for (size_t i = 0; i <= ix->mask; i++)
        for (node_t *e = ix->heads[i], *next; e; e = next) {
            next = e->next;
            ix->sum += hash(e->word) * e->count;
            free(e->word);
            free(e);
        }
    free(ix->heads);
    return NULL;
}

int main(int argc, char **argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : 2;
    long items = argc > 2 ? atol(argv[2]) : 400000;
    if (threads < 1 || threads > 64 || items < 1) {
        fprintf(stderr, "usage: mtindex THREADS ITEMS\n");
        return 2;
    }
    index_t ix[64] = {{0}};
    pthread_t ids[64];
    for (int t = 0; t < threads; t++) {
        ix[t].seed = 88172645463325252ull + (uint64_t)t * 7919;
        ix[t].items = items;
        if (pthread_create(&ids[t], NULL, indexer, &ix[t]) != 0)
            return 1;
    }
    size_t words = 0;
    uint64_t sum = 0;
    for (int t = 0; t < threads; t++) {
        pthread_join(ids[t], NULL);
        words += ix[t].n;
        sum += ix[t].sum;
    }
    printf("%zu words, checksum %016llx\n", words, (unsigned long long)sum);
    return 0;
}
