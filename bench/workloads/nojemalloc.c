/* nojemalloc.c — a stand-in for libjemalloc.so.2 that lets Debian's
 * redis-server run on glibc's malloc, as `cprof attach` requires (it
 * profiles programs on glibc's malloc only), so bench/redis.sh measures
 * every configuration on the same allocator.
 *
 * Debian builds redis with USE_SYSTEM_JEMALLOC: the allocation calls are
 * plain malloc/calloc/realloc/free/malloc_usable_size, bound to the first
 * library that defines them. Placed first on LD_LIBRARY_PATH under the
 * name libjemalloc.so.2, this library defines none of them (glibc's are
 * found) and only the jemalloc extensions redis also imports: mallctl
 * fails as for an unknown name (redis then reports zeros for its
 * allocator statistics), nallocx (the size jemalloc would round a
 * request to) gives the size asked and malloc_stats_print prints nothing. */
#include <errno.h>
#include <stddef.h>

int mallctl(const char *name, void *oldp, size_t *oldlenp, void *newp, size_t newlen)
{
    (void)name, (void)oldp, (void)oldlenp, (void)newp, (void)newlen;
    return ENOENT;
}

size_t nallocx(size_t size, int flags)
{
    (void)flags;
    return size;
}

void malloc_stats_print(void (*write_cb)(void *, const char *), void *opaque, const char *opts)
{
    (void)write_cb, (void)opaque, (void)opts;
}
