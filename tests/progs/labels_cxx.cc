// labels_cxx.cc — cprof::label_scope (cprof.h's C++ helper): alloc_n's
// blocks under nested scopes, a scope left by an exception, and none.
// At CPROF_RATE=1 alloc_n's objects are: kind=cxx 42 (of which step=inner
// 20, step=throws 3), unlabeled 7. Prints "ok".
#include "cprof.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>

static void use(void *p)
{
    __asm__ volatile("" : : "r"(p) : "memory");
}

__attribute__((noinline)) static void alloc_n(int n)
{
    for (int i = 0; i < n; i++) {
        void *p = malloc(100);
        use(p);
        free(p);
    }
}

__attribute__((noinline)) static void fails()
{
    cprof::label_scope s("step", "throws");
    alloc_n(3);
    throw 1;
}

int main()
{
    {
        cprof::label_scope outer("kind", "cxx");
        alloc_n(10);
        {
            cprof::label_scope inner("step", "inner");
            alloc_n(20);
        }
        alloc_n(5);
        try {
            fails();
        } catch (int) {
        }
        alloc_n(4); // step popped by the unwinding
    }
    alloc_n(7);
    if (cprof_labels_pop() != -ENOENT)
        return 1;
    std::puts("ok");
    return 0;
}
