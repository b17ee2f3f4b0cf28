/* fuzz_decode.c — libFuzzer harness: the profile decoder (profile_parse:
 * gzip sniffing and inflating, profile.proto, then the legacy parsers),
 * and, for what it accepts, validation and encoding back. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "profile/decode.h"
#include "profile/parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[512];
    profile_t *p = NULL;
    if (profile_parse(data, size, &p, err, sizeof(err)) < 0)
        return 0;
    if (profile_validate(p, err, sizeof(err)) == 0) {
        pbuf_t b = {0};
        if (profile_encode(p, &b) == 0) {
            profile_t *q = NULL;
            if (profile_decode_proto(b.data, b.len, &q, err, sizeof(err)) == 0)
                profile_free(q);
        }
        pbuf_free(&b);
    }
    profile_free(p);
    return 0;
}
