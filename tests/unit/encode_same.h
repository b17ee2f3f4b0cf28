/* encode_same.h — for the unit tests of the profile's storage and merge:
 * two profiles are the same profile when they encode to the same bytes. */
#ifndef CPROF_TEST_ENCODE_SAME_H
#define CPROF_TEST_ENCODE_SAME_H

#include "profile/profile.h"

static void assert_same_encoding(const profile_t *a, const profile_t *b)
{
    pbuf_t x = {0}, y = {0};
    assert_int_equal(profile_encode(a, &x), 0);
    assert_int_equal(profile_encode(b, &y), 0);
    assert_int_equal(x.len, y.len);
    assert_memory_equal(x.data, y.data, x.len);
    pbuf_free(&x);
    pbuf_free(&y);
}

#endif
