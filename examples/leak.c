/* leak.c — a small program with a memory leak, for `make demo`.
 *
 * A "request handler" parses requests into records; records are supposed to
 * be freed after the reply, but those with a cache hint are kept in a cache
 * that is never trimmed: the leak. The heap profile points at it:
 * cache_insert keeps growing in inuse_space, while parse_request allocates
 * the most in alloc_space but frees it all. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct record {
    char *key;
    char *payload;
    struct record *next;
} record_t;

static record_t *cache; /* never trimmed */

static char *copy_text(const char *s, size_t n)
{
    char *p = malloc(n + 1);
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

__attribute__((noinline)) static record_t *parse_request(int id)
{
    char buf[64];
    int n = snprintf(buf, sizeof(buf), "request-%d", id);
    record_t *r = calloc(1, sizeof(*r));
    r->key = copy_text(buf, (size_t)n);
    r->payload = malloc(2048 + (size_t)(id % 7) * 512);
    memset(r->payload, 'x', 2048);
    return r;
}

__attribute__((noinline)) static void cache_insert(record_t *r)
{
    record_t *c = malloc(sizeof(*c));
    c->key = copy_text(r->key, strlen(r->key));
    c->payload = malloc(4096);
    memcpy(c->payload, r->payload, 2048);
    c->next = cache;
    cache = c;
}

static void free_record(record_t *r)
{
    free(r->key);
    free(r->payload);
    free(r);
}

__attribute__((noinline)) static void handle(int id)
{
    record_t *r = parse_request(id);
    if (id % 3 == 0) /* cache hint */
        cache_insert(r);
    free_record(r);
}

int main(void)
{
    for (int i = 0; i < 200000; i++)
        handle(i);
    size_t n = 0;
    for (record_t *c = cache; c; c = c->next)
        n++;
    printf("handled 200000 requests, %zu records cached\n", n);
    return 0;
}
