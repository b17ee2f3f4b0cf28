#include "base/hslots.h"

#include <errno.h>
#include <stdlib.h>

int hslots_resize(uint64_t **slots, size_t *mask, size_t nslots)
{
    uint64_t *s = calloc(nslots, sizeof(*s));
    if (!s)
        return -ENOMEM;
    for (size_t i = 0; *slots && i <= *mask; i++) {
        uint64_t e = (*slots)[i];
        if (!e)
            continue;
        size_t h = (e >> 32) & (nslots - 1);
        while (s[h])
            h = (h + 1) & (nslots - 1);
        s[h] = e;
    }
    free(*slots);
    *slots = s;
    *mask = nslots - 1;
    return 0;
}
