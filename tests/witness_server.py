"""A witness (C2SP tlog-witness, add-checkpoint) on loopback for the tests: it trusts one log's key,
keeps the size and root it last cosigned, checks the old size (409 with its size), the consistency
proof (422) and the log's signature (403), and answers a timestamped Ed25519 cosignature
(tlog-cosignature). Written from the specification; started in a thread, stopped by the test."""
from __future__ import annotations

import base64
import http.server
import threading
import time

from generator.history.proof.note import COSIGNATURE, NoteError, Signer, open_note, read_checkpoint, read_verifier
from generator.history.proof.tree import EMPTY_ROOT, verify_consistency


class Witness:
    def __init__(self, name: str, log_vkey: str):
        self.signer = Signer.generate(name, COSIGNATURE)
        self.log = read_verifier(log_vkey)
        self.size, self.root = 0, EMPTY_ROOT
        self.lock = threading.Lock()
        self.refuse = False  # a witness that answers 500 (down for maintenance)
        self.seen: list[bytes] = []

    @property
    def vkey(self) -> str:
        return self.signer.verifier.vkey

    def add_checkpoint(self, body: bytes) -> tuple[int, bytes, str]:
        if self.refuse:
            return 500, b"down\n", "text/plain"
        head, _, note = body.partition(b"\n\n")
        lines = head.decode().split("\n")
        if not lines[0].startswith("old ") or not lines[0][4:].isdigit():
            return 400, b"bad old size\n", "text/plain"
        old, proof = int(lines[0][4:]), [base64.b64decode(line) for line in lines[1:] if line]
        try:
            checkpoint = read_checkpoint(open_note(note, [self.log]).text)
        except NoteError as error:
            return 403, f"{error}\n".encode(), "text/plain"
        with self.lock:
            self.seen.append(note)
            if old > checkpoint.size:
                return 400, b"old size past the checkpoint\n", "text/plain"
            if old != self.size:
                return 409, f"{self.size}\n".encode(), "text/x.tlog.size"
            consistent = (not proof and (old == 0 or (old == checkpoint.size and self.root == checkpoint.root))) \
                or (old > 0 and verify_consistency(old, checkpoint.size, self.root, checkpoint.root, proof))
            if not consistent:
                return 422, b"inconsistent\n", "text/plain"
            self.size, self.root = checkpoint.size, checkpoint.root
            line = self.signer.signature_line(open_note(note, [self.log]).text, int(time.time()))
            return 200, line.encode(), "text/plain; charset=utf-8"


def serve(witness: Witness) -> tuple[http.server.ThreadingHTTPServer, str]:
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            status, answer, kind = witness.add_checkpoint(body) if self.path.endswith("/add-checkpoint") \
                else (404, b"", "text/plain")
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, *args: object) -> None:
            pass
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/witness"
