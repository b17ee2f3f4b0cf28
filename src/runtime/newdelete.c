/* newdelete.c — C++ operator new and delete, interposed like malloc.
 *
 * libstdc++'s operators call malloc and free, which allochooks.c sees. But an
 * allocator preloaded after cprof (jemalloc, tcmalloc) defines the
 * operators itself, straight on its own heap: without these definitions
 * every C++ allocation would be invisible to cprof. So cprof defines all
 * of them on top of the hooked malloc/posix_memalign/free: each allocation
 * is counted once, the memory comes from the next allocator, and the
 * frames are cprof's (skipped like malloc's).
 *
 * Failure keeps the C++ semantics: when the allocation fails, the next
 * operator in the chain runs in its place (a tail call), so the
 * new_handler loop, std::bad_alloc and the nothrow NULL are the C++
 * runtime's own. */
#include "rt.h"

#include <dlfcn.h>
#include <stdlib.h>

typedef void *(*new_fn)(size_t);
typedef void *(*new_nt_fn)(size_t, const void *);
typedef void *(*new_al_fn)(size_t, size_t);
typedef void *(*new_al_nt_fn)(size_t, size_t, const void *);

/* The next definition of a mangled operator; only needed on failure. */
static void *next_op(const char *name)
{
    void *f = dlsym(RTLD_NEXT, name);
    if (!f) {
        rt_warn("operator new failed and no C++ runtime defines %s; aborting", name);
        abort();
    }
    return f;
}

static void *aligned(size_t size, size_t align)
{
    void *p;
    if (align < sizeof(void *))
        align = sizeof(void *);
    return posix_memalign(&p, align, size) == 0 ? p : NULL;
}

/* operator new(size_t), new[](size_t) */
RT_EXPORT void *_Znwm(size_t size)
{
    void *p = malloc(size);
    return p ? p : ((new_fn)next_op("_Znwm"))(size);
}

RT_EXPORT void *_Znam(size_t size)
{
    void *p = malloc(size);
    return p ? p : ((new_fn)next_op("_Znam"))(size);
}

/* operator new(size_t, const std::nothrow_t &), new[] */
RT_EXPORT void *_ZnwmRKSt9nothrow_t(size_t size, const void *nt)
{
    void *p = malloc(size);
    return p ? p : ((new_nt_fn)next_op("_ZnwmRKSt9nothrow_t"))(size, nt);
}

RT_EXPORT void *_ZnamRKSt9nothrow_t(size_t size, const void *nt)
{
    void *p = malloc(size);
    return p ? p : ((new_nt_fn)next_op("_ZnamRKSt9nothrow_t"))(size, nt);
}

/* operator new(size_t, std::align_val_t), new[] */
RT_EXPORT void *_ZnwmSt11align_val_t(size_t size, size_t align)
{
    void *p = aligned(size, align);
    return p ? p : ((new_al_fn)next_op("_ZnwmSt11align_val_t"))(size, align);
}

RT_EXPORT void *_ZnamSt11align_val_t(size_t size, size_t align)
{
    void *p = aligned(size, align);
    return p ? p : ((new_al_fn)next_op("_ZnamSt11align_val_t"))(size, align);
}

/* operator new(size_t, std::align_val_t, const std::nothrow_t &), new[] */
RT_EXPORT void *_ZnwmSt11align_val_tRKSt9nothrow_t(size_t size, size_t align, const void *nt)
{
    void *p = aligned(size, align);
    return p ? p
             : ((new_al_nt_fn)next_op("_ZnwmSt11align_val_tRKSt9nothrow_t"))(size, align, nt);
}

RT_EXPORT void *_ZnamSt11align_val_tRKSt9nothrow_t(size_t size, size_t align, const void *nt)
{
    void *p = aligned(size, align);
    return p ? p
             : ((new_al_nt_fn)next_op("_ZnamSt11align_val_tRKSt9nothrow_t"))(size, align, nt);
}

/* Every operator delete: plain, sized, nothrow, aligned, and their arrays. */
RT_EXPORT void _ZdlPv(void *p)
{
    free(p);
}

RT_EXPORT void _ZdaPv(void *p)
{
    free(p);
}

RT_EXPORT void _ZdlPvm(void *p, size_t size)
{
    (void)size;
    free(p);
}

RT_EXPORT void _ZdaPvm(void *p, size_t size)
{
    (void)size;
    free(p);
}

RT_EXPORT void _ZdlPvRKSt9nothrow_t(void *p, const void *nt)
{
    (void)nt;
    free(p);
}

RT_EXPORT void _ZdaPvRKSt9nothrow_t(void *p, const void *nt)
{
    (void)nt;
    free(p);
}

RT_EXPORT void _ZdlPvSt11align_val_t(void *p, size_t align)
{
    (void)align;
    free(p);
}

RT_EXPORT void _ZdaPvSt11align_val_t(void *p, size_t align)
{
    (void)align;
    free(p);
}

RT_EXPORT void _ZdlPvmSt11align_val_t(void *p, size_t size, size_t align)
{
    (void)size;
    (void)align;
    free(p);
}

RT_EXPORT void _ZdaPvmSt11align_val_t(void *p, size_t size, size_t align)
{
    (void)size;
    (void)align;
    free(p);
}

RT_EXPORT void _ZdlPvSt11align_val_tRKSt9nothrow_t(void *p, size_t align, const void *nt)
{
    (void)align;
    (void)nt;
    free(p);
}

RT_EXPORT void _ZdaPvSt11align_val_tRKSt9nothrow_t(void *p, size_t align, const void *nt)
{
    (void)align;
    (void)nt;
    free(p);
}
