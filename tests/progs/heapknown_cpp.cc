// heapknown_cpp.cc — C++ allocations with known totals: new/delete arrive
// through malloc/free, and the leaf frame must be the allocating function,
// not operator new. Prints TRUTH lines like heapknown.c.
// No STL headers: go tool pprof 1.19 silently fails to read the DWARF of
// binaries that include <vector>/<string>, and this program is checked
// with it.
#include <cstdio>

struct Big {
    char b[4000];
};

static Big *keep[100];

// Keeps the compiler from deleting new/delete pairs.
template <typename T> static inline T *escape(T *p)
{
    __asm__ volatile("" : : "g"(p) : "memory");
    return p;
}

__attribute__((noinline)) void cpp_new_object()
{
    for (int i = 0; i < 20; i++)
        keep[i] = escape(new Big());
}

__attribute__((noinline)) void cpp_new_array()
{
    for (int i = 0; i < 5; i++) {
        char *p = escape(new char[10000]);
        p[0] = 1;
        delete[] p;
    }
}

int main()
{
    cpp_new_object();
    cpp_new_array();
    std::printf("TRUTH cpp_new_object 20 80000 20 80000\n");
    std::printf("TRUTH cpp_new_array 5 50000 0 0\n");
    return 0;
}
