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
missing=""
for p in $PKGS; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" = 0 ]; then
  echo "deps: installing$missing"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq --no-install-recommends $missing >/dev/null
else
  echo "deps: missing Debian packages. Run:" >&2
  echo "  sudo apt-get install -y$missing" >&2
  exit 1
fi
