/* fuzz_http.c — libFuzzer harness: what the HTTP server does with a
 * request's URI and credentials before any endpoint runs (src/http/query.h):
 * the URI check, the query lookups of every parameter the endpoints read,
 * the number parsers on the values, path cleaning, and the Basic
 * credentials' base64. The input is taken as a raw request URI. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "http/query.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *uri = malloc(size + 1);
    if (!uri)
        return 0;
    memcpy(uri, data, size);
    uri[size] = '\0';
    (void)query_check_uri(uri);
    char *q = strchr(uri, '?');
    if (q)
        *q++ = '\0';
    char *clean = query_clean_path(uri);
    free(clean);
    static const char *const keys[] = {"seconds", "debug", "gc", "token", "sample_index", ""};
    for (size_t i = 0; q && i < sizeof(keys) / sizeof(keys[0]); i++) {
        char *v = query_get(q, keys[i]);
        if (!v)
            continue;
        int64_t n;
        uint64_t u;
        (void)query_atoi(v, &n);
        (void)query_parse_uint0(v, strlen(v), &u);
        char dec[256];
        (void)query_base64_decode(v, dec, sizeof(dec));
        (void)query_secret_equal(v, strlen(v), "s3cret", 6);
        free(v);
    }
    free(uri);
    return 0;
}
