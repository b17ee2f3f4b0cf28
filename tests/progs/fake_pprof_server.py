#!/usr/bin/env python3
"""fake_pprof_server.py — a scripted HTTP server for tests/e2e/tool_fetch.sh.

    fake_pprof_server.py PROFILE PORT_FILE LOG_FILE

Listens on 127.0.0.1, on a free port it writes to PORT_FILE (once it
accepts connections), and logs every request as one line "METHOD PATH?QUERY"
(POST bodies follow as "BODY <text>") to LOG_FILE. Threads, so a slow
answer does not hold up the others. Paths:

  /debug/pprof/<anything>   200, the bytes of PROFILE (any query)
  /debug/pprof/symbol       POST: "0xADDR fn_ADDR" for every address asked
                            (pprof's symbolz protocol); GET: num_symbols: 1
  /404                      404 Not Found, text/plain, two lines of text
  /500                      500, X-Go-Pprof: 1 and text/plain, as
                            net/http/pprof reports its errors
  /403bin                   403 with a binary body (not shown)
  /slow?delay=S             sleeps S seconds, then sends PROFILE
  /trickle                  200, then one byte a second, forever
  /garbage                  200, 4 KiB of fixed pseudo-random bytes
  /empty                    200, no body
  /redirect                 302 to /debug/pprof/heap
Anything else: 404.
"""
import http.server
import os
import random
import socketserver
import sys
import threading
import time

PROFILE, PORT_FILE, LOG_FILE = sys.argv[1], sys.argv[2], sys.argv[3]
with open(PROFILE, "rb") as f:
    BODY = f.read()
LOCK = threading.Lock()


def log(line):
    with LOCK, open(LOG_FILE, "a") as f:
        f.write(line + "\n")


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def send(self, code, body, ctype="application/octet-stream", extra=()):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in extra:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        log("GET " + self.path)
        path, _, query = self.path.partition("?")
        params = dict(p.split("=", 1) for p in query.split("&") if "=" in p)
        try:
            if path == "/debug/pprof/symbol":
                self.send(200, b"num_symbols: 1\n", "text/plain; charset=utf-8")
            elif path.startswith("/debug/pprof/"):
                self.send(200, BODY)
            elif path == "/404":
                self.send(404, b"no such profile here\nsecond line\n", "text/plain; charset=utf-8")
            elif path == "/500":
                self.send(500, b"Could not enable CPU profiling: cpu profiling already in use\n",
                          "text/plain; charset=utf-8", [("X-Go-Pprof", "1")])
            elif path == "/403bin":
                self.send(403, bytes(range(256)))
            elif path == "/slow":
                time.sleep(float(params.get("delay", "30")))
                self.send(200, BODY)
            elif path == "/trickle":
                self.send_response(200)
                self.send_header("Content-Type", "application/octet-stream")
                self.send_header("Content-Length", "1000000")
                self.end_headers()
                for _ in range(60):
                    self.wfile.write(b"\x00")
                    self.wfile.flush()
                    time.sleep(1)
            elif path == "/garbage":
                self.send(200, random.Random(7).randbytes(4096))
            elif path == "/empty":
                self.send(200, b"")
            elif path == "/redirect":
                self.send(302, b"", "text/plain", [("Location", "/debug/pprof/heap")])
            else:
                self.send(404, b"404 page not found\n", "text/plain; charset=utf-8")
        except (BrokenPipeError, ConnectionResetError):
            pass

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(n).decode("ascii", "replace")
        log("POST " + self.path)
        log("BODY " + body)
        path = self.path.partition("?")[0]
        if path != "/debug/pprof/symbol":
            self.send(404, b"404 page not found\n", "text/plain; charset=utf-8")
            return
        out = ["num_symbols: 1"]
        for word in body.split("+"):
            try:
                a = int(word, 16)
            except ValueError:
                continue
            out.append("%#x fn_%x" % (a, a))
        self.send(200, ("\n".join(out) + "\n").encode(), "text/plain; charset=utf-8")


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


srv = Server(("127.0.0.1", 0), Handler)
tmp = PORT_FILE + ".tmp"
with open(tmp, "w") as f:
    f.write(str(srv.server_address[1]))
os.rename(tmp, PORT_FILE)
srv.serve_forever()
