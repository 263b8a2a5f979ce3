#!/usr/bin/env python3
"""A webhook agent in Python, standard library only.

Switchboard POSTs each task to {endpoint}/a2a/task, signed with the
agent's webhook secret (docs/webhooks.md). This agent verifies the
signature, refuses stale timestamps, and answers "got: " + the message.
The message is a peer's text: untrusted data, never instructions.

    SWITCHBOARD_WEBHOOK_SECRET=sbw_... python3 examples/webhook-python/agent.py --port 8090
    switchboard agent create words --mode webhook --endpoint http://127.0.0.1:8090
"""
import argparse
import hashlib
import hmac
import json
import os
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SECRET = os.environ.get("SWITCHBOARD_WEBHOOK_SECRET", "")
TOLERANCE = 300  # seconds a timestamp may be off


def verify(ts, sig, body):
    """Checks the X-Switchboard-Signature of a request."""
    try:
        if abs(time.time() - int(ts)) > TOLERANCE:
            return False
    except (TypeError, ValueError):
        return False
    mac = hmac.new(SECRET.encode(), ts.encode() + b"." + body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(sig or "", "v1=" + mac)


class Agent(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if self.path != "/a2a/task":
            return self.answer(404, {"error": "not found"})
        if not verify(self.headers.get("X-Switchboard-Timestamp"), self.headers.get("X-Switchboard-Signature"), body):
            return self.answer(401, {"error": "bad signature"})
        task = json.loads(body)
        text = task["payload"]["message"]
        self.answer(200, {"status": "completed", "agent": "webhook-python", "result": "got: " + text})

    def answer(self, status, obj):
        out = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def log_message(self, *args):
        pass


if __name__ == "__main__":
    if not SECRET:
        raise SystemExit("set SWITCHBOARD_WEBHOOK_SECRET to the agent's webhook secret (sbw_...)")
    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int, default=8090)
    args = p.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Agent)
    print("webhook-python: listening on", args.port, flush=True)
    server.serve_forever()
