#!/usr/bin/env python3
"""push_receiver.py — a Pyroscope /ingest receiver for tests/e2e/push.sh.

usage: push_receiver.py DIR MODE [CPU_GOAL]
  MODE ok:    answers 200; saves each profile as DIR/NNNN.pb.gz and a line in
              DIR/log: "NNNN kind name from until auth" (kind: cpu when the
              request has sampleRate, else heap); after CPU_GOAL CPU profiles
              creates DIR/goal (the program then ends).
  MODE stall: accepts connections and never reads or answers them.
Listens on 127.0.0.1, any free port, written to DIR/port once listening.
Rejects (400) what Pyroscope would: no name, format other than pprof, a
body that is not multipart/form-data with a "profile" file field.
"""
import os
import socket
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

DIR, MODE = sys.argv[1], sys.argv[2]
GOAL = int(sys.argv[3]) if len(sys.argv) > 3 else 0
lock = threading.Lock()
count = [0, 0]  # requests, cpu profiles


def multipart_field(body, ctype, name):
    params = dict(p.strip().split("=", 1) for p in ctype.split(";")[1:] if "=" in p)
    boundary = params.get("boundary", "").strip('"').encode()
    if not ctype.startswith("multipart/form-data") or not boundary:
        return None
    for part in body.split(b"--" + boundary):
        head, sep, data = part.partition(b"\r\n\r\n")
        if not sep:
            continue
        if ('name="%s"' % name).encode() in head:
            return data[:-2] if data.endswith(b"\r\n") else data
    return None


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_POST(self):
        url = urllib.parse.urlsplit(self.path)
        q = urllib.parse.parse_qs(url.query)
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        prof = multipart_field(body, self.headers.get("Content-Type", ""), "profile")
        ok = (url.path == "/ingest" and q.get("name") and q.get("format") == ["pprof"]
              and q.get("from") and q.get("until") and prof)
        if not ok:
            self.send_response(400)
            self.send_header("Content-Length", "0")
            self.end_headers()
            with open(os.path.join(DIR, "rejected"), "a") as f:
                f.write(self.path + "\n")
            return
        kind = "cpu" if "sampleRate" in q else "heap"
        with lock:
            count[0] += 1
            n = count[0]
            if kind == "cpu":
                count[1] += 1
            with open(os.path.join(DIR, "%04d.pb.gz" % n), "wb") as f:
                f.write(prof)
            with open(os.path.join(DIR, "log"), "a") as f:
                f.write("%04d %s %s %s %s %s\n" % (n, kind, q["name"][0], q["from"][0], q["until"][0],
                                                   self.headers.get("Authorization", "-").replace(" ", "_")))
            if GOAL and count[1] == GOAL:
                open(os.path.join(DIR, "goal"), "w").close()
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()


def stall():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(64)
    write_port(s.getsockname()[1])
    held = []
    while True:
        c, _ = s.accept()
        held.append(c)  # never read, never answered, never closed


def write_port(port):
    tmp = os.path.join(DIR, "port.tmp")
    with open(tmp, "w") as f:
        f.write("%d\n" % port)
    os.rename(tmp, os.path.join(DIR, "port"))


if MODE == "stall":
    stall()
else:
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    write_port(srv.server_address[1])
    srv.serve_forever()
