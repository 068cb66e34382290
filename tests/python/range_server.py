"""A static HTTP server for the remote-load tests: serves a directory on 127.0.0.1 with
HEAD, GET and single-range GETs (206 with Content-Range), and counts what it sends.

    python range_server.py DIR [--no-ranges] [--deny PREFIX] [--port-file FILE]

It listens on a free port and prints ``PORT <n>`` on its first line of stdout (and
writes the number to ``--port-file`` when given). ``GET /_stats`` answers
``{"bytes": <body bytes sent>, "requests": <GETs served>}`` and ``POST /_reset`` sets
both to zero; neither is counted. ``--no-ranges`` answers every GET with the whole file
(200), as a server without range support does; ``--deny PREFIX`` answers 403 for paths
under that prefix. It exits when stdin closes, so a test that dies never leaves it
behind.
"""

import argparse
import json
import os
import re
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

_RANGE = re.compile(r"^bytes=(\d*)-(\d*)$")


class _Stats:
    def __init__(self):
        self.lock = threading.Lock()
        self.bytes = 0
        self.requests = 0

    def add(self, n):
        with self.lock:
            self.bytes += n
            self.requests += 1


def _handler(root, stats, ranges, deny):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def _send(self, status, body=b"", headers=()):
            self.send_response(status)
            for k, v in headers:
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD" and body:
                self.wfile.write(body)

        def _file(self):
            rel = self.path.split("?", 1)[0].lstrip("/")
            if deny and rel.startswith(deny):
                self._send(403, b"forbidden")
                return None
            path = os.path.realpath(os.path.join(root, rel))
            if not path.startswith(os.path.realpath(root) + os.sep) or not os.path.isfile(path):
                self._send(404, b"not found")
                return None
            return path

        def do_POST(self):
            if self.path == "/_reset":
                with stats.lock:
                    stats.bytes = 0
                    stats.requests = 0
                self._send(200, b"{}")
            else:
                self._send(405)

        def do_HEAD(self):
            path = self._file()
            if path is not None:
                size = os.path.getsize(path)
                self.send_response(200)
                self.send_header("Content-Length", str(size))
                if ranges:
                    self.send_header("Accept-Ranges", "bytes")
                self.end_headers()

        def do_GET(self):
            if self.path == "/_stats":
                with stats.lock:
                    body = json.dumps({"bytes": stats.bytes, "requests": stats.requests})
                self._send(200, body.encode())
                return
            path = self._file()
            if path is None:
                return
            size = os.path.getsize(path)
            wanted = self.headers.get("Range")
            m = _RANGE.match(wanted or "") if ranges else None
            with open(path, "rb") as f:
                if m and (m.group(1) or m.group(2)):
                    if m.group(1):
                        start = int(m.group(1))
                        end = min(int(m.group(2)), size - 1) if m.group(2) else size - 1
                    else:
                        start = max(size - int(m.group(2)), 0)
                        end = size - 1
                    if start >= size or start > end:
                        self._send(416, headers=[("Content-Range", f"bytes */{size}")])
                        return
                    f.seek(start)
                    body = f.read(end - start + 1)
                    stats.add(len(body))
                    self._send(
                        206,
                        body,
                        [("Content-Range", f"bytes {start}-{end}/{size}"), ("Accept-Ranges", "bytes")],
                    )
                else:
                    body = f.read()
                    stats.add(len(body))
                    self._send(200, body)

    return Handler


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        # A client that closes its connection mid-body (it had what it wanted) is not
        # an error of the server's.
        if isinstance(sys.exc_info()[1], (ConnectionError, BrokenPipeError)):
            return
        super().handle_error(request, client_address)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("root")
    p.add_argument("--no-ranges", action="store_true")
    p.add_argument("--deny", default=None)
    p.add_argument("--port-file", default=None)
    a = p.parse_args()
    stats = _Stats()
    server = _Server(("127.0.0.1", 0), _handler(a.root, stats, not a.no_ranges, a.deny))
    port = server.server_address[1]
    if a.port_file:
        with open(a.port_file + ".tmp", "w") as f:
            f.write(str(port))
        os.replace(a.port_file + ".tmp", a.port_file)
    print(f"PORT {port}", flush=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    # Until the parent closes stdin (or dies).
    sys.stdin.read()
    server.shutdown()


if __name__ == "__main__":
    main()
