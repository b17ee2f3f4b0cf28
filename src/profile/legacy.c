/* legacy.c — stub, being written. */
#include "legacy.h"

int legacy_parse(const uint8_t *data, size_t len, profile_t **out, char *err, size_t errlen)
{
    (void)data;
    (void)len;
    (void)err;
    (void)errlen;
    *out = NULL;
    return LEGACY_UNRECOGNIZED;
}
