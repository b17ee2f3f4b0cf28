"""pywork.py — the python3 workload of bench/heap_overhead.sh.

Run with PYTHONMALLOC=malloc so that every object comes from malloc (and
through cprof). Builds and discards many small objects of the usual
kinds: dicts, tuples, lists, strings, ints, and a sort. Deterministic.

    python3 pywork.py [N]
"""
import sys


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100000
    words = ("alpha bravo charlie delta echo foxtrot golf hotel india juliet "
             "kilo lima mike november oscar papa").split()
    x = 12345
    rows = []
    for i in range(n):
        x = (x * 1103515245 + 12345) & 0x7FFFFFFF
        w = words[x % len(words)]
        rows.append({"id": i, "name": "%s-%d" % (w, i), "cat": w,
                     "vals": [x % 97, x % 89, (x >> 8) % 1000],
                     "key": (w, x % 1000)})
    index = {}
    for r in rows:
        index.setdefault(r["cat"], []).append(r)
    total = 0
    for cat, rs in sorted(index.items()):
        rs.sort(key=lambda r: (r["vals"][2], r["name"]))
        total += sum(sum(r["vals"]) for r in rs)
        total += len(" ".join(r["name"].upper() for r in rs[:2000]))
    pairs = {r["key"]: r["id"] for r in rows}
    print(len(rows), len(index), len(pairs), total)


main()
