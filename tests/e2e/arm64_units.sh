#!/bin/sh
# arm64: unit tests cross-compiled for aarch64 and run under qemu-aarch64:
# test_cfi (the cfi walk gives libunwind's stacks and hashes, reuses the
# last walk, stays in bounds), test_glibcusable (the hooks' fast path
# reads aarch64 glibc's chunk headers as malloc_usable_size does) and
# test_glibcheap's test_arena (the leak scan tells a thread arena's heap
# by glibc's heap_info; its other tests read the heap's start from
# /proc/self/stat and [heap] in /proc/self/maps, which qemu-user fakes or
# lacks). And the
# arm64 cprof refuses attach with one line (ptrace, x86-64 only, cannot
# be tested under qemu-user).
# timeout: 180
. "$(dirname "$0")/arm64_common.inc"
[ -e /usr/lib/aarch64-linux-gnu/libcmocka.so ] || skip "skip: no libcmocka-dev:arm64 (scripts/deps.sh)"

for run in test_cfi test_glibcusable "test_glibcheap test_arena"; do
  set -- $run; t=$1; shift
  src=$TOP/tests/unit/$t.c
  links=$(sed -n '1s|^// links:||p' "$src")
  (cd "$TOP" && aarch64-linux-gnu-gcc -std=gnu11 -Wall -Wextra -Werror -O2 -g -fno-omit-frame-pointer \
    -D_GNU_SOURCE -Iinclude -Isrc -I"$A64/gen" -Itests -o "$T/$t" "$src" $links "$A64/lib/base.a" \
    -lcmocka -lunwind -ldl -lpthread) || fail "cannot build $t for arm64"
  timeout 120 qemu-aarch64 -L / "$T/$t" "$@" > "$T/$t.out" 2>&1 || { cat "$T/$t.out"; fail "$t failed on arm64"; }
  grep -q 'PASSED' "$T/$t.out" || { cat "$T/$t.out"; fail "$t: no PASSED line"; }
  note "$t: $(grep PASSED "$T/$t.out")"
done

sleep 60 & victim=$!
timeout 60 qemu-aarch64 -L / "$A64/cprof" attach $victim > "$T/attach.out" 2>&1; rc=$?
kill -0 $victim 2>/dev/null || fail "attach refusal: the target is gone"
kill $victim
[ $rc = 1 ] && [ "$(cat "$T/attach.out")" = \
  "cprof attach: this cprof was not built for x86-64, the only architecture attach supports" ] ||
  { cat "$T/attach.out"; fail "attach on arm64: exit $rc, want 1 and one line"; }
exit 0
