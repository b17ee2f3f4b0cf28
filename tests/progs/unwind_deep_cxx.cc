// unwind_deep_cxx.cc — the C++ part of unwind_deep: libstdc++ containers
// (Debian's libstdc++ has no frame pointers), operator new, recursion
// through a template.
#include <map>
#include <string>
#include <vector>

template <int N> struct nest {
    __attribute__((noinline)) static void run(std::map<int, std::string> &m, int n)
    {
        m[n * N] = std::string(static_cast<size_t>(n % 40 + 20), 'x');
        nest<N - 1>::run(m, n + 1);
    }
};
template <> struct nest<0> {
    static void run(std::map<int, std::string> &, int) {}
};

extern "C" __attribute__((noinline)) void cxx_churn(int n)
{
    std::vector<int> v;
    for (int i = 0; i < n % 50 + 1; i++)
        v.push_back(i);
    std::map<int, std::string> m;
    nest<6>::run(m, n);
}
