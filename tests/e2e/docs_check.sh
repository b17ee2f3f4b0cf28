#!/bin/sh
# The documents say what the code does: every CPROF_* variable the runtime
# reads is a row of docs/environment.md, every path the /debug/pprof/ server
# serves a row of docs/http.md, every flag `cprof -h` (and `cprof attach -h`,
# `cprof record -h`, `cprof check -h`) lists is in docs/cprof.1, and every relative link of
# README.md, CONTRIBUTING.md and docs/*.md names a file that exists and, with
# #anchor, a heading of that file (GitHub's slugs).
# timeout: 60
. "$(dirname "$0")/../lib.sh"
cd "$TOP" || fail "no $TOP"
CPROF=$BUILD/cprof
[ -x "$CPROF" ] || fail "no $CPROF: build it first"
{
  "$CPROF" -h 2>&1
  "$CPROF" attach -h 2>&1
  "$CPROF" record -h 2>&1
  "$CPROF" check -h 2>&1
} > "$T/help"

python3 - "$T/help" <<'PY' || fail "the documents do not match the code (above)"
import glob, os, re, sys, unicodedata

bad = []

def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()

def at_least(what, names, n):
    # A pattern that stops matching would make every check below vacuous.
    if len(names) < n:
        bad.append(f"found only {len(names)} {what} (expected {n} or more): "
                   "has the source's form changed? update this test")

# --- CPROF_* variables: every full string literal "CPROF_X" in the runtime
# and the HTTP module (getenv calls, bad() messages, the sessions' .env).
env = set()
for f in glob.glob("src/runtime/*.c") + glob.glob("src/http/*.c"):
    env |= set(re.findall(r'"(CPROF_[A-Z0-9_]+)"', read(f)))
at_least("CPROF_* variables in src/runtime and src/http", env, 15)
rows = set(re.findall(r'^\| `(CPROF_[A-Z0-9_]+)`', read("docs/environment.md"), re.M))
for v in sorted(env - rows):
    bad.append(f"docs/environment.md: no row for {v}, which the runtime reads")

# --- endpoints: the name of each row of src/http/pprof.c's pages[] (the
# server's own) and of src/runtime/profiles.c's profile_kinds[] (one path
# per profile kind), positional rows or designated initializers.
def table_names(path, table):
    m = re.search(r'\b' + table + r'\[\]\s*=\s*\{(.*?)\n\};', read(path), re.S)
    if not m:
        bad.append(f"{path}: no {table}[] table found: update this test")
        return set()
    body = re.sub(r'/\*.*?\*/', '', m.group(1), flags=re.S)
    return set(re.findall(r'(?:^|\n)\s*\{\s*(?:\.name\s*=\s*)?"([a-z_]*)"', body))

paths = table_names("src/http/pprof.c", "pages")
paths |= table_names("src/runtime/profiles.c", "profile_kinds")
at_least("endpoints in src/http/pprof.c and src/runtime/profiles.c", paths, 13)
http = read("docs/http.md")
for p in sorted(paths):
    if not re.search(r'^\|.*`/debug/pprof/' + re.escape(p) + r'[`?]', http, re.M):
        bad.append(f"docs/http.md: no table row names /debug/pprof/{p}, which the server serves")

# --- flags: every "-flag" that starts a line of the help texts.
flags = set(re.findall(r'^\s+-([a-z_0-9]+)', read(sys.argv[1]), re.M))
at_least("flags in cprof -h", flags, 60)
man = read("docs/cprof.1")
for fl in sorted(flags):
    if not re.search(r'\\-' + re.escape(fl) + r'(?![a-z_0-9])', man):
        bad.append(f"docs/cprof.1: no \\-{fl}, which cprof -h lists")

# --- links: [text](target) outside code, relative targets only.
def slug(heading):
    s = re.sub(r'<[^>]+>', '', heading).strip().lower()
    s = re.sub(r'\[([^\]]*)\]\([^)]*\)', r'\1', s)  # a link: its text
    s = ''.join(c for c in s if c in '-_ ' or unicodedata.category(c)[0] in 'LNM')
    return s.replace(' ', '-')

def prose(text):
    # Lines outside fenced code, with inline code removed.
    fence = False
    for line in text.split('\n'):
        if re.match(r'^\s*(```|~~~)', line):
            fence = not fence
            continue
        if not fence:
            yield re.sub(r'`[^`]*`', '', line)

anchors_of = {}
def anchors(path):
    if path not in anchors_of:
        seen, out = {}, set()
        fence = False
        for line in read(path).split('\n'):
            if re.match(r'^\s*(```|~~~)', line):
                fence = not fence
                continue
            m = None if fence else re.match(r'^#{1,6}\s+(.*?)\s*#*\s*$', line)
            if m:
                s = slug(m.group(1))
                n = seen.get(s, 0)
                seen[s] = n + 1
                out.add(s if n == 0 else f"{s}-{n}")
            if not fence:
                out |= set(re.findall(r'<a\s+(?:name|id)="([^"]+)"', line))
        anchors_of[path] = out
    return anchors_of[path]

docs = ["README.md", "CONTRIBUTING.md"] + sorted(glob.glob("docs/*.md"))
links = 0
for doc in docs:
    for line in prose(read(doc)):
        for target in re.findall(r'\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)', line):
            if re.match(r'^[a-z][a-z0-9+.-]*:', target):
                continue  # http:, https:, mailto:
            links += 1
            path, _, frag = target.partition('#')
            dest = os.path.normpath(os.path.join(os.path.dirname(doc), path)) if path else doc
            if not os.path.exists(dest):
                bad.append(f"{doc}: link to {target}: no file {dest}")
            elif frag and dest.endswith('.md') and frag not in anchors(dest):
                bad.append(f"{doc}: link to {target}: no heading #{frag} in {dest}")
at_least("relative links in the documents", range(links), 40)

for b in bad:
    print(b)
print(f"# {len(env)} variables, {len(paths)} endpoints, {len(flags)} flags, "
      f"{links} links in {len(docs)} documents checked")
sys.exit(1 if bad else 0)
PY
