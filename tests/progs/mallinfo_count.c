/* mallinfo_count.c — preloaded after libcprof.so: counts the mallinfo2
 * calls made from libcprof.so (mallinfo_count_cprof) and forwards them. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <malloc.h>
#include <string.h>

static int from_cprof;

struct mallinfo2 mallinfo2(void)
{
    struct mallinfo2 (*next)(void) = (struct mallinfo2 (*)(void))dlsym(RTLD_NEXT, "mallinfo2");
    Dl_info i;
    if (dladdr(__builtin_return_address(0), &i) && i.dli_fname && strstr(i.dli_fname, "libcprof"))
        __atomic_add_fetch(&from_cprof, 1, __ATOMIC_RELAXED);
    return next();
}

int mallinfo_count_cprof(void)
{
    return __atomic_load_n(&from_cprof, __ATOMIC_RELAXED);
}
