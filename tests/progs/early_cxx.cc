// early_cxx.cc — a C++ program with one clear heap peak: libstdc++'s
// emergency pool (allocated in its constructor, before main), then 200
// strings of 1000 bytes and a vector of them, all freed, then 10 small
// strings. Prints a checksum.
#include <cstdio>
#include <string>
#include <vector>

int main()
{
    long sum = 0;
    {
        std::vector<std::string> v;
        v.reserve(200);
        for (int i = 0; i < 200; i++)
            v.push_back(std::string(1000, char('a' + i % 26)));
        for (const std::string &s : v)
            sum += s[999];
    }
    std::vector<std::string> w;
    for (int i = 0; i < 10; i++)
        w.push_back(std::string(40, 'z'));
    std::printf("checksum %ld %zu\n", sum, w.size());
    return 0;
}
