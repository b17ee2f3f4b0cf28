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
 systemtap-sdt-dev bpftrace
 chromium nodejs musl-tools iproute2 procps"
# The newest Go Debian ships, the second oracle beside Go 1.19 (TESTING.md):
# from bookworm-backports, whose source is added when the system lacks it.
BPO_PKGS="golang-1.23-go"
BPO_SOURCE=/etc/apt/sources.list.d/bookworm-backports.sources
# arm64 (make arm64, tests/e2e/arm64_*.sh): the cross compiler, qemu-user,
# and the :arm64 -dev packages of what the Makefile links (multiarch: they
# bring libc6:arm64, which the arm64 tests run on). Installed on their own:
# without them the arm64 tests skip, the rest is unaffected.
ARM64_PKGS="gcc-aarch64-linux-gnu g++-aarch64-linux-gnu qemu-user libc6:arm64
 libunwind-dev:arm64 zlib1g-dev:arm64 libdw-dev:arm64 libelf-dev:arm64 libdebuginfod-dev:arm64
 libmicrohttpd-dev:arm64 libcurl4-openssl-dev:arm64 libedit-dev:arm64 libpcre2-dev:arm64
 libcmocka-dev:arm64"

missing_of() {
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || printf ' %s' "$p"
  done
}
missing=$(missing_of $PKGS)
bpo=""
grep -qs '^VERSION_CODENAME=bookworm' /etc/os-release && bpo=$(missing_of $BPO_PKGS)
arm64=$(missing_of $ARM64_PKGS)
[ -z "$missing$bpo$arm64" ] && exit 0
if [ "$(id -u)" != 0 ]; then
  [ -z "$missing$bpo" ] || echo "deps: missing Debian packages. Run:" >&2
  [ -z "$missing" ] || echo "  sudo apt-get install -y$missing" >&2
  [ -z "$bpo" ] || echo "  (with bookworm-backports in apt's sources) sudo apt-get install -y -t bookworm-backports$bpo" >&2
  if [ -n "$arm64" ]; then
    echo "deps: for the arm64 build and tests (they skip without), run:" >&2
    echo "  sudo dpkg --add-architecture arm64 && sudo apt-get update &&" >&2
    echo "  sudo apt-get install -y$arm64" >&2
  fi
  [ -z "$missing$bpo" ] || exit 1
  exit 0
fi
echo "deps: installing$missing$bpo$arm64"
export DEBIAN_FRONTEND=noninteractive
if [ -n "$bpo" ] && ! grep -rqs '^[^#]*bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then
  printf '%s\n' "Types: deb" "URIs: http://deb.debian.org/debian" "Suites: bookworm-backports" \
    "Components: main" "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg" > "$BPO_SOURCE"
fi
[ -z "$arm64" ] || dpkg --print-foreign-architectures | grep -qx arm64 || dpkg --add-architecture arm64
apt-get update -qq >/dev/null
[ -z "$missing" ] || apt-get install -y -qq --no-install-recommends $missing >/dev/null
[ -z "$bpo" ] || apt-get install -y -qq --no-install-recommends -t bookworm-backports $bpo >/dev/null
# Last, and allowed to fail: multiarch wants the amd64 packages at the
# same versions as the :arm64 ones, which the installs above settled.
[ -z "$arm64" ] || apt-get install -y -qq --no-install-recommends $arm64 >/dev/null ||
  echo "deps: the arm64 packages could not be installed: the arm64 tests will skip" >&2
