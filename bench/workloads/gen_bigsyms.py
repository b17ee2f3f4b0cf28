#!/usr/bin/env python3
"""gen_bigsyms.py — the sources of bench/http_symbols.sh's workload: a
program with many functions in its .symtab, as a large C++ server built
with symbols has.

    python3 gen_bigsyms.py OUTDIR NFUNCS CHUNKS MIDS LEAVES

fill<k>.s (k < CHUNKS) hold NFUNCS / CHUNKS tiny global functions with
mangled names of C++ length; alloc<k>.c hold MIDS / CHUNKS callers and
LEAVES / CHUNKS allocating functions; linked fill0 alloc0 fill1 alloc1 ...,
the allocating code lies spread over the binary between the fillers.
main.c: `bigsyms [N]` makes N (at most MIDS * LEAVES) distinct stacks
main -> mid<i % MIDS> -> leaf<i / MIDS> -> malloc, keeps the blocks,
prints "ready" and waits until killed.
"""
import os
import sys

d, nfuncs, chunks, mids, leaves = sys.argv[1], *map(int, sys.argv[2:])
per = nfuncs // chunks
for k in range(chunks):
    with open(os.path.join(d, f"fill{k}.s"), "w") as f:
        f.write('\t.section .note.GNU-stack,"",@progbits\n\t.text\n')
        for i in range(per):
            n = f"_ZN4bulk7Service{k:03d}Handler{i:06d}12processFrameEPKcmRNS_5StateE"
            f.write(f"\t.globl {n}\n\t.type {n},@function\n{n}:\n"
                    f"\tlea 1(%rdi),%rax\n\tret\n\t.size {n},.-{n}\n")
    with open(os.path.join(d, f"alloc{k}.c"), "w") as f:
        f.write("#include <stdlib.h>\nextern void *keep[];\nextern unsigned nkeep;\n")
        for m in range(k * mids // chunks, (k + 1) * mids // chunks):
            f.write(f"__attribute__((noinline)) void mid{m}(void (*leaf)(void))\n"
                    "{ leaf(); __asm__ volatile(\"\" ::: \"memory\"); }\n")
        for l in range(k * leaves // chunks, (k + 1) * leaves // chunks):
            f.write(f"__attribute__((noinline)) void leaf{l}(void)\n"
                    f"{{ keep[nkeep++] = malloc({16 + 8 * (l % 32)}); "
                    "__asm__ volatile(\"\" ::: \"memory\"); }\n")
with open(os.path.join(d, "main.c"), "w") as f:
    f.write("#include <stdio.h>\n#include <stdlib.h>\n#include <unistd.h>\n")
    f.write(f"void *keep[{mids * leaves}];\nunsigned nkeep;\n")
    for m in range(mids):
        f.write(f"void mid{m}(void (*)(void));\n")
    for l in range(leaves):
        f.write(f"void leaf{l}(void);\n")
    f.write("static void (*const mids[])(void (*)(void)) = {" +
            ",".join(f"mid{m}" for m in range(mids)) + "};\n")
    f.write("static void (*const leaves[])(void) = {" +
            ",".join(f"leaf{l}" for l in range(leaves)) + "};\n")
    f.write(f"""int main(int argc, char **argv)
{{
    unsigned n = argc > 1 ? (unsigned)atoi(argv[1]) : {mids * leaves};
    for (unsigned i = 0; i < n && i < {mids * leaves}; i++)
        mids[i % {mids}](leaves[i / {mids}]);
    printf("ready\\n");
    fflush(stdout);
    for (;;)
        pause();
}}
""")
