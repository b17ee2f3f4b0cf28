// heaplife_cpp.cc — C++ objects for the leak profile: a std::vector kept
// through a heap object (its buffer reachable through the vector), a
// pointer to a base subobject in the middle of its object, a new[] array
// of objects with destructors (the pointer lies past the array cookie),
// and a std::vector whose last pointer is dropped (object and buffer
// leaked). Prints "TRUTH LEAK fn objects bytes" and "TRUTH KEPT fn".
// Uses <vector>: go tool pprof 1.19 cannot read this binary's DWARF, so
// the test reads its profiles with cprof.
#include <cstdio>
#include <vector>

struct Base1 {
    long a[4];
    virtual ~Base1() {}
};
struct Base2 {
    long b[4];
    virtual ~Base2() {}
};
struct Derived : Base1, Base2 {
    long c[100];
};
struct WithDtor {
    long x;
    ~WithDtor() { x = 0; }
};

std::vector<char> *g_vec; // not static: every store is kept
Base2 *g_base2;
WithDtor *g_arr;

template <typename T> static inline T *escape(T *p)
{
    __asm__ volatile("" : : "g"(p) : "memory");
    return p;
}

extern "C" __attribute__((noinline)) void cpp_vector_kept()
{
    g_vec = new std::vector<char>(9000);
}

extern "C" __attribute__((noinline)) void cpp_interior_kept()
{
    g_base2 = new Derived();
    g_arr = new WithDtor[50];
}

extern "C" __attribute__((noinline)) void cpp_vector_leaked()
{
    static std::vector<char> *volatile last;
    last = escape(new std::vector<char>(13000));
    last = nullptr;
}

int main()
{
    cpp_vector_kept();
    cpp_interior_kept();
    cpp_vector_leaked();
    std::printf("TRUTH LEAK cpp_vector_leaked 2 %zu\n", sizeof(std::vector<char>) + 13000);
    std::printf("TRUTH KEPT cpp_vector_kept\nTRUTH KEPT cpp_interior_kept\n");
    return 0;
}
