"""mkprof.py — writes small profile.proto files (uncompressed) with chosen
sample values, for the extreme-value tests and the fuzzing seed corpora.

    python3 mkprof.py OUT TYPES VALUES...

TYPES is "type/unit,type/unit"; each VALUES argument is one sample,
"v1,v2,...[@stack]" where stack is "f1>f2>..." (leaf first; default
"leaf>main"). Every sample gets a string and a numeric label."""
import sys


def varint(n):
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def field(num, payload):
    if isinstance(payload, int):
        return varint(num << 3) + varint(payload)
    return varint(num << 3 | 2) + varint(len(payload)) + payload


def packed(num, vals):
    return field(num, b"".join(varint(v) for v in vals))


def build(types, samples):
    strings = [""]

    def s(x):
        if x not in strings:
            strings.append(x)
        return strings.index(x)

    funcs, locs = {}, {}
    out = bytearray()
    for t in types:
        ty, unit = t.split("/")
        out += field(1, field(1, s(ty)) + field(2, s(unit)))
    for vals, stack in samples:
        ids = []
        for fn in stack:
            if fn not in funcs:
                funcs[fn] = len(funcs) + 1
                locs[fn] = len(locs) + 1
            ids.append(locs[fn])
        body = packed(1, ids) + packed(2, vals)
        body += field(3, field(1, s("color")) + field(2, s("red" if vals[0] % 2 else "blue")))
        body += field(3, field(1, s("bytes")) + field(3, vals[-1]) + field(4, s("bytes")))
        out += field(2, body)
    out += field(3, field(1, 1) + field(2, 0x400000) + field(3, 0x500000) + field(5, s("/bin/prog")))
    for fn, i in funcs.items():
        out += field(5, field(1, i) + field(2, s(fn)) + field(3, s(fn)) + field(4, s("prog.c")) + field(5, 1))
        out += field(4, field(1, i) + field(2, 1) + field(3, 0x401000 + 16 * i) + field(4, field(1, i) + field(2, 10 + i)))
    out += field(11, field(1, s(types[0].split("/")[0])) + field(2, s(types[0].split("/")[1])))
    out += field(12, 1)
    for x in strings:
        out += field(6, x.encode())
    return bytes(out)


def main():
    path, types = sys.argv[1], sys.argv[2].split(",")
    samples = []
    for a in sys.argv[3:]:
        vals, _, stack = a.partition("@")
        samples.append(([int(v, 0) for v in vals.split(",")], (stack or "leaf>main").split(">")))
    with open(path, "wb") as f:
        f.write(build(types, samples))


if __name__ == "__main__":
    main()
