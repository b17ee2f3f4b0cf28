#!/bin/sh
# Installs the Debian packages cprof builds and tests with, when missing.
# As root it runs apt-get; otherwise it prints the one command to run.
set -e
PKGS="gcc g++ make pkg-config clang binutils elfutils
 zlib1g-dev libunwind-dev libdw-dev libelf-dev libdebuginfod-dev debuginfod
 libmicrohttpd-dev libcurl4-openssl-dev libedit-dev libcmocka-dev libpcre2-dev libpcre2-8-0
 golang-go graphviz curl
 libjemalloc2 libtcmalloc-minimal4 google-perftools
 python3 sqlite3 jq libxml2-utils
 perl git ripgrep openssh-client pigz xz-utils redis-server redis-tools lld valgrind linux-perf
 chromium nodejs"
# arm64 (make arm64, tests/e2e/arm64_*.sh): the cross compiler, qemu-user,
# and the :arm64 -dev packages of what the Makefile links (multiarch: they
# bring libc6:arm64, which the arm64 tests run on). Installed on their own:
# without them the arm64 tests skip, the rest is unaffected.
ARM64_PKGS="gcc-aarch64-linux-gnu g++-aarch64-linux-gnu qemu-user libc6:arm64
 libunwind-dev:arm64 zlib1g-dev:arm64 libdw-dev:arm64 libelf-dev:arm64 libdebuginfod-dev:arm64
 libmicrohttpd-dev:arm64 libcurl4-openssl-dev:arm64 libedit-dev:arm64 libpcre2-dev:arm64
 libcmocka-dev:arm64"
missing=""
for p in $PKGS; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
arm64_missing=""
for p in $ARM64_PKGS; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || arm64_missing="$arm64_missing $p"
done
[ -z "$missing$arm64_missing" ] && exit 0
if [ "$(id -u)" = 0 ] && [ -z "$missing" ]; then
  echo "deps: installing$arm64_missing"
  dpkg --print-foreign-architectures | grep -qx arm64 || dpkg --add-architecture arm64
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq --no-install-recommends $arm64_missing >/dev/null ||
    echo "deps: the arm64 packages could not be installed: the arm64 tests will skip" >&2
  exit 0
fi
if [ "$(id -u)" = 0 ]; then
  echo "deps: installing$missing"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq --no-install-recommends $missing >/dev/null
  [ -z "$arm64_missing" ] && exit 0
  exec sh "$0"
elif [ -n "$missing" ]; then
  echo "deps: missing Debian packages. Run:" >&2
  echo "  sudo apt-get install -y$missing" >&2
  exit 1
else
  echo "deps: for the arm64 build and tests (they skip without), run:" >&2
  echo "  sudo dpkg --add-architecture arm64 && sudo apt-get update &&" >&2
  echo "  sudo apt-get install -y$arm64_missing" >&2
fi
