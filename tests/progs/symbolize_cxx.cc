// symbolize_cxx.cc — C++ call sites for the symbolize tests: a member
// function, a template, an anonymous namespace. Output as symbolize_prog.c.
#include <cinttypes>
#include <cstdio>
#include <cstring>

__attribute__((noinline)) static void site(const char *tag)
{
    std::printf("site %s %p\n", tag, (void *)((char *)__builtin_return_address(0) - 1));
}

namespace ns {
class Klass {
public:
    explicit Klass(int v) : v_(v) {}
    __attribute__((noinline)) int method(int x);
    template <class T> __attribute__((noinline)) T tm(T a)
    {
        site("template");
        return a + (T)v_;
    }

private:
    int v_;
};

int Klass::method(int x)
{
    site("method");
    return x * v_;
}

namespace {
__attribute__((noinline)) int anon(int x)
{
    site("anon");
    return x + 1;
}
} // namespace
} // namespace ns

static void print_maps()
{
    FILE *f = std::fopen("/proc/self/maps", "r");
    char line[4096];
    while (f && std::fgets(line, sizeof(line), f)) {
        uint64_t start, end, off;
        char perms[8], path[3000] = "";
        if (std::sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %*s %*s %2999[^\n]",
                        &start, &end, perms, &off, path) >= 4 &&
            std::strcmp(perms, "r-xp") == 0)
            std::printf("map %" PRIx64 " %" PRIx64 " %" PRIx64 " %s\n", start, end, off, path);
    }
    if (f)
        std::fclose(f);
}

int main(int argc, char **)
{
    ns::Klass k(argc);
    int r = k.method(3) + (int)k.tm<long>(2) + ns::anon(1);
    print_maps();
    return r == 0;
}
