"""What the e2e tests' small HTTP servers share (auth_probe_server.py,
hostile_http_server.py): a threaded server and a quiet request handler.

Server: threads that never keep the process alive, an address that can be
bound again at once. QuietHandler: answers every GET and POST with the
subclass's handle_any() and writes no access log to stderr (the servers keep
their own log, in a file the test reads).
"""
import http.server
import socketserver


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


class QuietHandler(http.server.BaseHTTPRequestHandler):
    def handle_any(self):
        raise NotImplementedError

    def do_GET(self):
        self.handle_any()

    def do_POST(self):
        self.handle_any()

    def log_message(self, *args):
        pass
