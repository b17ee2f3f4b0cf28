#!/usr/bin/env python3
"""gen.py — writes the inputs of bench/heap_overhead.sh into a directory.

    python3 gen.py OUTDIR [SCALE]

Deterministic: a fixed-seed PRNG (no dependence on hash order or the
clock), so every machine measures the same inputs. SCALE (default 1.0)
multiplies every size; at 1.0 each program makes 1-4 million allocations
(the script prints the exact counts, measured with cprof at rate 1).

  data.json  array of records, for jq
  load.sql   schema, inserts in one transaction, index, queries, for sqlite3
  doc.xml    a catalogue of nested elements with attributes, for xmllint
  big.cc     C++ for g++ -O2 (cc1plus): record types, each instantiating
             std::map, std::unordered_map, std::vector, std::sort,
             std::function and std::ostringstream code of its own
"""
import os
import random
import sys

WORDS = ("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo "
         "lima mike november oscar papa quebec romeo sierra tango uniform "
         "victor whiskey xray yankee zulu").split()


def words(rng, n):
    return " ".join(rng.choice(WORDS) for _ in range(n))


def gen_json(path, n, rng):
    with open(path, "w") as f:
        f.write("[\n")
        for i in range(n):
            tags = ",".join('"%s"' % rng.choice(WORDS) for _ in range(rng.randint(1, 5)))
            scores = ",".join(str(rng.randint(0, 100)) for _ in range(rng.randint(2, 8)))
            f.write('{"id":%d,"name":"%s %s","active":%s,"tags":[%s],'
                    '"scores":[%s],"address":{"city":"%s","zip":"%05d"},'
                    '"note":"%s"}%s\n'
                    % (i, rng.choice(WORDS), rng.choice(WORDS),
                       "true" if rng.random() < 0.7 else "false",
                       tags, scores, rng.choice(WORDS), rng.randint(0, 99999),
                       words(rng, rng.randint(3, 12)), "," if i + 1 < n else ""))
        f.write("]\n")


def gen_sql(path, n, rng):
    with open(path, "w") as f:
        f.write("PRAGMA journal_mode=OFF;\nPRAGMA synchronous=OFF;\n")
        f.write("CREATE TABLE item(id INTEGER PRIMARY KEY, name TEXT, "
                "cat TEXT, price REAL, qty INTEGER, note TEXT);\n")
        f.write("BEGIN;\n")
        for i in range(n):
            f.write("INSERT INTO item VALUES(%d,'%s-%d','%s',%.2f,%d,'%s');\n"
                    % (i, rng.choice(WORDS), i, rng.choice(WORDS),
                       rng.random() * 1000, rng.randint(0, 500),
                       words(rng, rng.randint(2, 10))))
        f.write("COMMIT;\n")
        f.write("CREATE INDEX item_cat ON item(cat, price);\n")
        f.write("SELECT cat, count(*), sum(qty), round(avg(price), 2) FROM item "
                "GROUP BY cat ORDER BY cat;\n")
        f.write("SELECT count(DISTINCT note) FROM item;\n")
        f.write("SELECT name, price FROM item WHERE cat = 'kilo' "
                "ORDER BY price DESC LIMIT 5;\n")
        f.write("SELECT a.cat, count(*) FROM item a JOIN item b ON b.id = a.id + 1 "
                "WHERE a.cat = b.cat GROUP BY a.cat ORDER BY 2 DESC LIMIT 3;\n")


def gen_xml(path, n, rng):
    with open(path, "w") as f:
        f.write('<?xml version="1.0" encoding="UTF-8"?>\n<catalog>\n')
        for i in range(n):
            f.write('<book id="b%d" lang="%s" year="%d">' % (i, rng.choice(WORDS)[:2], 1900 + rng.randint(0, 124)))
            f.write("<title>%s</title>" % words(rng, rng.randint(1, 5)))
            f.write("<author><first>%s</first><last>%s</last></author>"
                    % (rng.choice(WORDS), rng.choice(WORDS)))
            f.write('<price currency="EUR">%.2f</price>' % (rng.random() * 100))
            f.write("<tags>%s</tags>" % "".join("<tag>%s</tag>" % rng.choice(WORDS)
                                                for _ in range(rng.randint(1, 4))))
            f.write("<summary>%s</summary></book>\n" % words(rng, rng.randint(5, 20)))
        f.write("</catalog>\n")


CXX_HEAD = r"""#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>
template <int N> struct Tag { static constexpr int v = N; };
template <class K, class V, int N> struct Index {
  std::map<K, std::vector<V>> by;
  std::unordered_map<std::string, V> names;
  void add(const K& k, const V& v) {
    by[k].push_back(v);
    names[std::to_string(N) + ":" + std::to_string(by.size())] = v;
  }
  V sum() const { V s{}; for (auto& [k, vs] : by) for (auto& x : vs) s = s + x; return s; }
  std::vector<K> keys() const {
    std::vector<K> r;
    for (auto& kv : by) r.push_back(kv.first);
    std::sort(r.begin(), r.end(), std::greater<K>());
    return r;
  }
};
"""

CXX_TYPE = r"""struct R%(i)d {
  int a = %(i)d; std::string s = "r%(i)d"; double d = %(i)d.5;
  R%(i)d operator+(const R%(i)d& o) const {
    R%(i)d r; r.a = a + o.a; r.s = s.size() < 64 ? s + o.s : s; r.d = d + o.d; return r;
  }
  bool operator<(const R%(i)d& o) const { return a < o.a || (a == o.a && s < o.s); }
};
long f%(i)d(int n) {
  Index<std::string, R%(i)d, %(i)d> ix; Index<int, R%(i)d, %(i)d> iy;
  std::function<R%(i)d(int)> mk = [&](int k) { R%(i)d r; r.a = k * %(m)d; r.s = std::to_string(k); return r; };
  for (int k = 0; k < n; k++) { ix.add(std::to_string(k %% 17), mk(k)); iy.add(k %% 5, mk(k)); }
  std::ostringstream os;
  for (auto& k : ix.keys()) os << k << ',';
  for (auto k : iy.keys()) os << k;
  auto p = std::make_shared<std::map<std::string, R%(i)d>>();
  (*p)[os.str()] = ix.sum() + iy.sum();
  return (long)os.str().size() + p->begin()->second.a + Tag<%(i)d>::v;
}
"""


def gen_cxx(path, n):
    # cc1plus's time and allocations grow with the distinct instantiations:
    # about a second of -O2 per record type on a 2.5 GHz core.
    with open(path, "w") as f:
        f.write(CXX_HEAD)
        for i in range(n):
            f.write(CXX_TYPE % {"i": i, "m": i % 7 + 1})
        f.write("int main(int argc, char** argv) {\n  long t = 0; int n = argc > 1 ? std::atoi(argv[1]) : 3;\n")
        for i in range(n):
            f.write("  t += f%d(n);\n" % i)
        f.write('  std::printf("%ld\\n", t);\n  return 0;\n}\n')


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit("usage: gen.py OUTDIR [SCALE]")
    out = sys.argv[1]
    scale = float(sys.argv[2]) if len(sys.argv) == 3 else 1.0
    os.makedirs(out, exist_ok=True)
    gen_json(os.path.join(out, "data.json"), int(40000 * scale), random.Random(1))
    gen_sql(os.path.join(out, "load.sql"), int(100000 * scale), random.Random(2))
    gen_xml(os.path.join(out, "doc.xml"), int(60000 * scale), random.Random(3))
    gen_cxx(os.path.join(out, "big.cc"), max(1, round(8 * scale)))


if __name__ == "__main__":
    main()
