"""A web app that runs its slow work as triage jobs (stdlib only).

POST /reports {"n": 1000}  queues a report; an Idempotency-Key header makes
                           a retried POST return the same job
GET /reports/ID            its state, output and result
Run: python3 webapp.py [--port 8080] [--socket PATH]
"""
import argparse, json, os, sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import triage

def work(n: int) -> None:
    """The job itself: prints as it goes, leaves its answer in $TRIAGE_RESULT."""
    total = sum(i * i for i in range(n))
    print(f"summed {n} squares")
    if "TRIAGE_RESULT" in os.environ:
        with open(os.environ["TRIAGE_RESULT"], "w") as f:
            json.dump({"n": n, "sum": total}, f)

class Handler(BaseHTTPRequestHandler):
    client: triage.Client  # one connection, shared by the server's threads

    def reply(self, status: int, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        argv = [sys.executable, os.path.abspath(__file__), "--work", str(int(body["n"]))]
        try:
            job = self.client.submit(argv, name="report", labels={"app": "reports"},
                                     key=self.headers.get("Idempotency-Key"))
        except triage.InvalidParams as e:
            return self.reply(400, {"error": e.message, "field": e.field})
        except (triage.QueueFull, triage.ShuttingDown, triage.DaemonUnavailable) as e:
            return self.reply(503, {"error": str(e)})
        self.reply(200 if job.existing else 202, {"id": job.id, "state": job.state})

    def do_GET(self) -> None:
        try:
            job = self.client.get(int(self.path.rsplit("/", 1)[-1]))
        except (ValueError, triage.NotFound):
            return self.reply(404, {"error": "no such report"})
        output = b"".join(self.client.output(job.id)).decode(errors="replace")
        self.reply(200, {"id": job.id, "state": job.state, "exit_code": job.exit_code,
                         "output": output, "result": job.result_json()})

def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=8080)
    ap.add_argument("--socket")
    ap.add_argument("--work", type=int)
    args = ap.parse_args()
    if args.work is not None:
        return work(args.work)
    with triage.Client(args.socket, timeout=30) as Handler.client:
        server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
        print(f"listening on http://127.0.0.1:{server.server_port}", flush=True)
        server.serve_forever()

if __name__ == "__main__":
    main()
