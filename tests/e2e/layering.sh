#!/bin/sh
# The layers of src/ stay layers: no folder includes a folder that includes
# it back (directly or through others), and the bottom of the tree (base,
# profile, runtime) includes nothing above it. The tool's two lowest layers,
# graph and symbolize, stand on base and profile alone, as pprof's
# internal/graph and internal/symbolizer do: a report is built and tested
# without object files, object files are read without reports. A folder is the directory of a
# source file (src/tool/graph, src/runtime, ...); "x/y.h" names src/x/y.h,
# a bare "y.h" a header beside the includer; headers outside src/ (cprof.h,
# the generated assets.h, system headers) do not count. Inside the two
# libraries that depend on nothing (base, profile), the same holds between
# modules (x.c and x.h are module x): parse.c chooses between the protobuf
# decoder and the legacy parsers, so that neither includes the other.
# timeout: 60
. "$(dirname "$0")/../lib.sh"
cd "$TOP/src" || fail "no src/"

# One "FROM TO" line per include of another folder.
find . -name '*.[ch]' | sed 's|^\./||' | sort | while read -r f; do
  dir=$(dirname "$f")
  sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f" |
  while read -r inc; do
    if [ -f "$inc" ]; then to=$(dirname "$inc")
    elif [ -f "$dir/$inc" ]; then to=$(dirname "$dir/$inc")
    else continue
    fi
    [ "$to" = "$dir" ] || echo "$dir $to $f"
    # Between modules of one bottom library: "FROM TO" as src/ paths
    # without the extension, in a second list.
    case "$dir" in base|profile) ;; *) continue ;; esac
    if [ -f "$inc" ]; then m=${inc%.*}; else m=$dir/${inc%.*}; fi
    [ "$to" = "$dir" ] && [ "$m" != "${f%.*}" ] && echo "${f%.*} $m $f" >&3
  done
done > "$T/edges" 3> "$T/medges"

# The bottom layers, each with what it may include.
allowed() {
  case "$1" in
    base) echo "" ;;
    profile) echo "base" ;;
    runtime) echo "base profile" ;;
    tool/graph|tool/symbolize) echo "base profile" ;;
    *) echo "*" ;;
  esac
}
bad=0
while read -r from to file; do
  ok=$(allowed "$from")
  [ "$ok" = "*" ] && continue
  case " $ok " in *" $to "*) ;; *)
    echo "$file: $from/ includes $to/, above it"; bad=1 ;;
  esac
done < "$T/edges"

# Cycles: the transitive closure of a graph ("FROM TO FILE" lines in $1,
# into $2), then any include whose target reaches back to its source.
closure() {
  awk '{ print $1, $2 }' "$1" | sort -u > "$2"
  while :; do
    sort -k2,2 "$2" > "$T/by2"
    join -1 2 -2 1 -o 1.1,2.2 "$T/by2" "$2" | cat - "$2" | sort -u > "$T/next"
    cmp -s "$T/next" "$2" && break
    mv "$T/next" "$2"
  done
}
closure "$T/edges" "$T/reach"
sort -u "$T/edges" | while read -r from to file; do
  grep -qx "$to $from" "$T/reach" && echo "$file: $from/ includes $to/, which includes it back"
done > "$T/cycles"
[ -s "$T/cycles" ] && cat "$T/cycles" && bad=1
closure "$T/medges" "$T/mreach"
sort -u "$T/medges" | while read -r from to file; do
  grep -qx "$to $from" "$T/mreach" && echo "$file: $from includes $to, which includes it back"
done > "$T/mcycles"
[ -s "$T/mcycles" ] && cat "$T/mcycles" && bad=1
[ "$bad" -eq 0 ] || fail "the layers of src/ include each other"
[ "$(grep -c '^profile/' "$T/medges")" -gt 0 ] || fail "no include between profile/'s modules found"
note "$(awk '{ print $1 }' "$T/edges" | sort -u | wc -l) folders, no include cycle, the bottom layers include nothing above them"
note "$(awk '{ print $1 }' "$T/medges" | sort -u | wc -l) modules of base/ and profile/, no include cycle between them"
