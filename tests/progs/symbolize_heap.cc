// symbolize_heap.cc — allocations at known places for
// tests/e2e/symbolize_cli.sh: a member function that allocates through an
// always-inlined helper (an inline frame), and a C function. The test finds
// lines by the "@marker" comments. Results go to `keep` inside the
// allocating functions so that no call to malloc becomes a tail call (which
// would drop the caller's frame from the stack).
#include <cstdlib>

static void *keep[64];
static int nkeep;

namespace shapes {
struct Grid {
    void *grow(std::size_t n);
};

static inline __attribute__((always_inline)) void *raw_alloc(std::size_t n)
{
    void *p = std::malloc(n); // @raw-alloc
    keep[nkeep++] = p;
    return p;
}

__attribute__((noinline)) void *Grid::grow(std::size_t n)
{
    void *p = raw_alloc(n); // @grow-call
    __asm__ volatile("" ::: "memory");
    return p;
}
} // namespace shapes

extern "C" __attribute__((noinline)) void *c_alloc(std::size_t n)
{
    void *p = std::malloc(n); // @c-alloc
    keep[nkeep++] = p;
    return p;
}

int main()
{
    shapes::Grid g;
    for (int i = 0; i < 16; i++)
        g.grow(1 << 20); // @main-grow
    for (int i = 0; i < 8; i++)
        c_alloc(1 << 16); // @main-c-alloc
    return keep[0] == nullptr;
}
