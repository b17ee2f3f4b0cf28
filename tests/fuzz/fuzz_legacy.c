/* fuzz_legacy.c — libFuzzer harness: the legacy text parsers alone (heap,
 * heapz, growth, CPU, contention, thread and Java-style profiles), which
 * profile_parse reaches only after the protobuf decoder gave up. */
#include <stddef.h>
#include <stdint.h>

#include "profile/legacy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[512];
    profile_t *p = NULL;
    if (legacy_parse(data, size, &p, err, sizeof(err)) == 0)
        profile_free(p);
    return 0;
}
