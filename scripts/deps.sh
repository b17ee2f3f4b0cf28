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
 chromium nodejs musl-tools iproute2"
# The newest Go Debian ships, the second oracle beside Go 1.19 (TESTING.md):
# from bookworm-backports, whose source is added when the system lacks it.
BPO_PKGS="golang-1.23-go"
BPO_SOURCE=/etc/apt/sources.list.d/bookworm-backports.sources

missing_of() {
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || printf ' %s' "$p"
  done
}
missing=$(missing_of $PKGS)
bpo=""
grep -qs '^VERSION_CODENAME=bookworm' /etc/os-release && bpo=$(missing_of $BPO_PKGS)
[ -z "$missing$bpo" ] && exit 0
if [ "$(id -u)" = 0 ]; then
  echo "deps: installing$missing$bpo"
  export DEBIAN_FRONTEND=noninteractive
  if [ -n "$bpo" ] && ! grep -rqs '^[^#]*bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then
    printf '%s\n' "Types: deb" "URIs: http://deb.debian.org/debian" "Suites: bookworm-backports" \
      "Components: main" "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg" > "$BPO_SOURCE"
  fi
  apt-get update -qq >/dev/null
  [ -z "$missing" ] || apt-get install -y -qq --no-install-recommends $missing >/dev/null
  [ -z "$bpo" ] || apt-get install -y -qq --no-install-recommends -t bookworm-backports $bpo >/dev/null
else
  echo "deps: missing Debian packages. Run:" >&2
  [ -z "$missing" ] || echo "  sudo apt-get install -y$missing" >&2
  [ -z "$bpo" ] || echo "  (with bookworm-backports in apt's sources) sudo apt-get install -y -t bookworm-backports$bpo" >&2
  exit 1
fi
