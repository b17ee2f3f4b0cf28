/* check_gate.c — a "service" for cprof check's gate (tests/e2e/check_gate.sh):
 * handle() parses N requests, each with parse_request's fixed allocations.
 * Built with -DGROW, parse_request also allocates in a loop (the regression
 * the gate must catch: alloc_objects grows by GROW_PER * N). Prints what it
 * allocated so the test can check its output. Blocks are kept reachable in
 * kept[] and read back, so the compiler cannot drop them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 1000
#define GROW_PER 3

static char *kept[N];

static __attribute__((noinline)) char *parse_request(int i)
{
    char *req = malloc(64);
    if (!req)
        exit(3);
    snprintf(req, 64, "request %d", i);
#ifdef GROW
    for (int j = 0; j < GROW_PER; j++) {
        char *tmp = malloc(32);
        if (!tmp)
            exit(3);
        memcpy(tmp, req, 32);
        req[0] ^= tmp[1] & 0; /* a use the compiler must keep */
        free(tmp);
    }
#endif
    return req;
}

static __attribute__((noinline)) long handle(void)
{
    long sum = 0;
    for (int i = 0; i < N; i++) {
        kept[i] = parse_request(i);
        sum += (long)strlen(kept[i]);
    }
    return sum;
}

int main(void)
{
    long sum = handle();
    int objects = N;
#ifdef GROW
    objects += N * GROW_PER;
#endif
    printf("parsed %d requests, %ld bytes, %d objects\n", N, sum, objects);
    for (int i = 0; i < N; i++)
        free(kept[i]);
    return 0;
}
