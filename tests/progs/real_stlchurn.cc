/* real_stlchurn.cc — an ordinary C++ program: std::map, std::string,
 * std::vector and std::unordered_map churn (inserts, erases, growth,
 * copies), printing checksums that must not change under the preload.
 * Argument: rounds (default 20). */
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? std::atoi(argv[1]) : 20;
    std::map<std::string, std::vector<int>> m;
    std::unordered_map<int, std::string> u;
    unsigned long sum = 0;
    for (int r = 0; r < rounds; r++) {
        for (int i = 0; i < 2000; i++) {
            std::string k = "key-" + std::to_string((i * 7919 + r) % 3001);
            std::vector<int> &v = m[k];
            for (int j = 0; j < (i % 17) + 1; j++)
                v.push_back(i ^ j ^ r);
            u[i * 31 + r] = k + std::string(static_cast<size_t>(i % 40), 'x');
        }
        /* Erase about half of each. */
        for (auto it = m.begin(); it != m.end();)
            it = (it->second.size() % 2) ? m.erase(it) : std::next(it);
        for (auto it = u.begin(); it != u.end();)
            it = (it->first % 3 == r % 3) ? u.erase(it) : std::next(it);
        std::vector<std::unique_ptr<std::string>> owned;
        for (auto &kv : m)
            owned.emplace_back(new std::string(kv.first + "/" + std::to_string(kv.second.size())));
        for (auto &s : owned)
            sum += s->size();
        std::map<std::string, std::vector<int>> copy = m;
        for (auto &kv : copy)
            for (int x : kv.second)
                sum += static_cast<unsigned>(x) & 0xff;
    }
    for (auto &kv : u)
        sum += kv.second.size();
    std::printf("map %zu unordered %zu sum %lu\n", m.size(), u.size(), sum);
    return 0;
}
