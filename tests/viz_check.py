#!/usr/bin/env python3
"""viz_check.py — checks for cprof's visual outputs, used by tests/e2e/viz_*.sh.

  viz_check.py dot CPROF.dot PPROF.dot [--ignore-legend] [--tree]
      Parses both DOT files (the subset pprof writes: one statement per
      line) and compares what they describe: the legend lines, the nodes
      (by printable name: label, i.e. flat and cum, font size, colours),
      the tag nodelets (by their node and label) and the edges (by source
      and destination names: value label, weight, pen width, colour,
      style). Node numbering may differ. Prints the differences; exit 1.
      --tree: the graphs are call trees (-call_tree), where a name appears
      once per calling context: a node is named by its path from its root
      (through its only in-edge), and nodes and edges are compared as
      multisets, since pprof orders equal nodes at random.
  viz_check.py folded RAW INDEX FOLDED
      RAW is `go tool pprof -raw` of a profile, FOLDED cprof's -folded of the
      same profile for sample column INDEX. Every distinct stack (function
      names, inline frames expanded, root first) must carry the sum of its
      samples' values, and the values must add up to the column's total.
  viz_check.py svg FILE NAME...
      FILE parses as XML with an <svg> root, is a call graph (nodes with
      titles), and its text mentions every NAME.
  viz_check.py png FILE / pdf FILE
      The PNG signature and a sane IHDR (width, height > 0); "%PDF-".
  viz_check.py html FILE MAXBYTES NAME...
      A flame graph page: no external URL (no src/href to http(s) or //),
      size <= MAXBYTES, the embedded JSON parses, names every NAME, and its
      node list is consistent (children never outweigh their parent).
"""
import json
import re
import struct
import sys
import xml.etree.ElementTree as ET

# --- DOT ---------------------------------------------------------------------

ATTR = re.compile(r'\s*([A-Za-z_]+)\s*=\s*("(?:[^"\\]|\\.)*"|[^\s\]]+)\s*')


def parse_attrs(s):
    out = {}
    pos = 0
    while pos < len(s):
        m = ATTR.match(s, pos)
        if not m:
            raise ValueError("bad attribute list: " + s[pos:pos + 40])
        v = m.group(2)
        if v.startswith('"'):
            v = v[1:-1]
        out[m.group(1)] = v
        pos = m.end()
    return out


def parse_dot(path):
    """{'legend': str, 'nodes': {id: attrs}, 'edges': [(src, dst, attrs)]}"""
    g = {"legend": None, "nodes": {}, "edges": []}
    stmt = re.compile(r'^(N[N0-9_]*)(?:\s*->\s*(N[N0-9_]*))?\s*\[(.*)\]$')
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    if not lines or not lines[0].startswith("digraph "):
        raise ValueError(path + ": not a digraph")
    for ln in lines[1:]:
        ln = ln.strip()
        if not ln or ln == "}" or ln.startswith("node ["):
            continue
        if ln.startswith("subgraph cluster_L"):
            m = re.search(r'label="((?:[^"\\]|\\.)*)"', ln)
            g["legend"] = m.group(1) if m else ""
            continue
        m = stmt.match(ln)
        if not m:
            raise ValueError(path + ": unexpected line: " + ln[:80])
        a = parse_attrs(m.group(3))
        if m.group(2):
            g["edges"].append((m.group(1), m.group(2), a))
        else:
            g["nodes"][m.group(1)] = a
    return g


def node_key(g, nid, tree=False, below=()):
    """A node's identity independent of numbering: its printable name for
    graph nodes (in a tree, prefixed by its parent's), its node's key and
    label for nodelets. below: the nodes under nid on the way up (cycles)."""
    a = g["nodes"].get(nid)
    if a is None:
        return "?" + nid
    if "_" not in nid:  # N12
        name = re.sub(r' \([^()]*\)$', "", a.get("tooltip", ""))
        if tree:
            parents = [s for s, d, _ in g["edges"] if d == nid and "_" not in s]
            if len(parents) > 1 or nid in below:
                raise ValueError("not a tree: " + name + " has several parents")
            if parents:
                name = node_key(g, parents[0], True, below + (nid,)) + " / " + name
        return name
    # nodelets: N12_0 under N12, NN12_0_1 under N12_0 (numeric under label)
    # or NN12_1 under N12 (numeric, no label)
    for src, dst, _ in g["edges"]:
        if dst == nid:
            return node_key(g, src, tree) + " > " + a.get("label", "")
    return "?" + nid


def describe(g, tree=False):
    nodes = {}
    for nid, a in g["nodes"].items():
        k = node_key(g, nid, tree)
        keep = ("label", "fontsize", "shape", "color", "fillcolor", "tooltip")
        v = tuple((x, a.get(x)) for x in keep)
        if tree:  # a multiset: equal nodes keep one entry each
            nodes.setdefault(k, []).append(v)
            continue
        if k in nodes:
            k = k + " #" + nid  # same printable name twice: keep both
        nodes[k] = v
    edges = {}
    for s, d, a in g["edges"]:
        keep = ("label", "weight", "penwidth", "color", "style", "minlen", "tooltip")
        k = (node_key(g, s, tree), node_key(g, d, tree))
        v = tuple((x, a.get(x)) for x in keep)
        if tree:
            edges.setdefault(k, []).append(v)
        else:
            edges[k] = v
    if tree:
        nodes = {k: sorted(v, key=repr) for k, v in nodes.items()}
        edges = {k: sorted(v, key=repr) for k, v in edges.items()}
    return nodes, edges


def cmd_dot(args):
    ignore_legend = "--ignore-legend" in args
    tree = "--tree" in args
    args = [a for a in args if not a.startswith("--")]
    a, b = parse_dot(args[0]), parse_dot(args[1])
    bad = []
    if not ignore_legend and a["legend"] != b["legend"]:
        bad.append("legend:\n  cprof: %s\n  pprof: %s" % (a["legend"], b["legend"]))
    try:
        na, ea = describe(a, tree)
        nb, eb = describe(b, tree)
    except ValueError as e:
        print(e)
        return 1
    for k in sorted(set(na) | set(nb)):
        if k not in na:
            bad.append("node only in pprof: %s %s" % (k, nb[k]))
        elif k not in nb:
            bad.append("node only in cprof: %s %s" % (k, na[k]))
        elif na[k] != nb[k]:
            bad.append("node %s:\n  cprof: %s\n  pprof: %s" % (k, na[k], nb[k]))
    for k in sorted(set(ea) | set(eb)):
        if k not in ea:
            bad.append("edge only in pprof: %s -> %s %s" % (k[0], k[1], eb[k]))
        elif k not in eb:
            bad.append("edge only in cprof: %s -> %s %s" % (k[0], k[1], ea[k]))
        elif ea[k] != eb[k]:
            bad.append("edge %s -> %s:\n  cprof: %s\n  pprof: %s" % (k[0], k[1], ea[k], eb[k]))
    if not na:
        bad.append("no nodes at all")
    for x in bad[:15]:
        print(x)
    if bad:
        print("%d differences (%d/%d nodes, %d/%d edges)" % (len(bad), len(na), len(nb), len(ea), len(eb)))
        return 1
    print("same graph: %d nodes (with nodelets), %d edges" % (len(na), len(ea)))
    return 0


# --- folded --------------------------------------------------------------------

def parse_raw(path):
    samples, locs = [], {}
    sec = None
    cur = None
    # "%6d: %#x M=%d [F] name file:line s=start(system name)", further
    # (inlined-into) lines indented below it; "??" for a line without function
    line = r'(?:\?\?|(.*?) (\S*):(-?\d+) s=-?\d+(?:\(.*\))?)'
    locre = re.compile(r'^\s+(\d+): (0x[0-9a-f]+)(?: M=\d+)?(?: \[F\])?(?: ' + line + r')?\s*$')
    contre = re.compile(r'^\s+' + line + r'\s*$')
    with open(path, encoding="utf-8", errors="replace") as f:
        for ln in f:
            ln = ln.rstrip("\n")
            if ln.startswith("Samples:"):
                sec = "s"
                continue
            if ln.startswith("Locations"):
                sec = "l"
                continue
            if ln.startswith("Mappings"):
                sec = None
                continue
            if sec == "s":
                m = re.match(r'^\s*(-?\d+(?:\s+-?\d+)*):((?:\s+\d+)*)\s*$', ln)
                if m:
                    samples.append(([int(x) for x in m.group(1).split()],
                                    [int(x) for x in m.group(2).split()]))
            elif sec == "l":
                m = locre.match(ln)
                if m:
                    cur = int(m.group(1))
                    locs[cur] = [m.group(3)] if m.group(3) is not None else []
                    continue
                m = contre.match(ln)
                if m and cur is not None and m.group(1) is not None:
                    locs[cur].append(m.group(1))
    return samples, locs


def cmd_folded(args):
    raw, idx, folded = args[0], int(args[1]), args[2]
    samples, locs = parse_raw(raw)
    want = {}
    total = 0
    for vals, ids in samples:
        v = vals[idx]
        total += v
        frames = []
        for lid in reversed(ids):
            for name in reversed(locs.get(lid, [])):
                frames.append(name.replace(";", ":"))
        k = ";".join(frames) if frames else "[no stack]"
        want[k] = want.get(k, 0) + v
    want = {k: v for k, v in want.items() if v != 0}
    got = {}
    gsum = 0
    with open(folded, encoding="utf-8") as f:
        for ln in f:
            ln = ln.rstrip("\n")
            m = re.match(r'^(.+) (-?\d+)$', ln)
            if not m:
                print("malformed folded line: " + ln[:100])
                return 1
            if m.group(1) in got:
                print("stack twice: " + m.group(1)[:100])
                return 1
            got[m.group(1)] = int(m.group(2))
            gsum += int(m.group(2))
    bad = 0
    if gsum != total:
        print("folded values sum to %d, the column's total is %d" % (gsum, total))
        bad += 1
    for k in sorted(set(want) | set(got)):
        if want.get(k) != got.get(k):
            if bad < 10:
                print("stack %s: folded %s, samples %s" % (k[:120], got.get(k), want.get(k)))
            bad += 1
    if bad:
        return 1
    print("folded: %d stacks, total %d" % (len(got), gsum))
    return 0


# --- files ---------------------------------------------------------------------

def cmd_svg(args):
    path, names = args[0], args[1:]
    root = ET.parse(path).getroot()
    if not root.tag.endswith("svg"):
        print("root element is %s, not svg" % root.tag)
        return 1
    ns = "{http://www.w3.org/2000/svg}"
    nodes = [g for g in root.iter(ns + "g") if g.get("class") == "node"]
    if not nodes:
        print("no graph nodes in the SVG")
        return 1
    # dot splits labels into lines; the tooltips (xlink:title) hold names whole
    text = " ".join("".join(t.itertext()) for t in root.iter(ns + "text"))
    for e in root.iter():
        text += " " + " ".join(e.attrib.values())
    for n in names:
        if n not in text:
            print("SVG does not mention %s" % n)
            return 1
    print("svg: %d nodes" % len(nodes))
    return 0


def cmd_png(args):
    with open(args[0], "rb") as f:
        head = f.read(33)
    if len(head) < 33 or head[:8] != b"\x89PNG\r\n\x1a\n" or head[12:16] != b"IHDR":
        print("not a PNG")
        return 1
    w, h = struct.unpack(">II", head[16:24])
    if w == 0 or h == 0 or w > 100000 or h > 100000:
        print("PNG size %dx%d" % (w, h))
        return 1
    print("png: %dx%d" % (w, h))
    return 0


def cmd_pdf(args):
    with open(args[0], "rb") as f:
        head = f.read(5)
    if head != b"%PDF-":
        print("not a PDF")
        return 1
    print("pdf ok")
    return 0


def cmd_html(args):
    path, maxb, names = args[0], int(args[1]), args[2:]
    with open(path, "rb") as f:
        page = f.read()
    if len(page) > maxb:
        print("page is %d bytes, more than %d" % (len(page), maxb))
        return 1
    s = page.decode("utf-8")
    ext = re.findall(r'''(?:src|href)\s*=\s*["']?\s*(?:https?:)?//''', s, re.I)
    ext += re.findall(r'''url\(\s*["']?\s*(?:https?:)?//''', s, re.I)
    ext += re.findall(r'''@import''', s, re.I)
    if ext:
        print("external references: %s" % ext[:3])
        return 1
    m = re.search(r'<script type="application/json" id="cprof-flame-data">(.*?)</script>', s, re.S)
    if not m:
        print("no flame data")
        return 1
    d = json.loads(m.group(1))
    stride = 6 if d["diff"] else 4
    nodes = d["nodes"]
    if len(nodes) % stride:
        print("node list length %d" % len(nodes))
        return 1
    # children never outweigh their parent; counts add up
    pos = [0]

    def walk():
        i = pos[0]
        pos[0] += 1
        o = i * stride
        w = nodes[o + 1] + (nodes[o + 2] if d["diff"] else 0)
        nch = nodes[o + stride - 1]
        tot = 0
        for _ in range(nch):
            tot += walk()
        if tot > w:
            raise ValueError("node %d: children %d > %d" % (i, tot, w))
        return w
    sys.setrecursionlimit(100000)
    walk()
    if pos[0] != len(nodes) // stride:
        print("tree covers %d of %d nodes" % (pos[0], len(nodes) // stride))
        return 1
    for n in names:
        if n not in d["names"]:
            print("flame data does not name %s" % n)
            return 1
    print("html: %d bytes, %d frames, %d names" % (len(page), len(nodes) // stride, len(d["names"])))
    return 0


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    cmd = {"dot": cmd_dot, "folded": cmd_folded, "svg": cmd_svg, "png": cmd_png,
           "pdf": cmd_pdf, "html": cmd_html}.get(sys.argv[1])
    if not cmd:
        print(__doc__)
        return 2
    try:
        return cmd(sys.argv[2:])
    except (ValueError, OSError, ET.ParseError, json.JSONDecodeError, KeyError) as e:
        print("error: %s" % e)
        return 1


if __name__ == "__main__":
    sys.exit(main())
