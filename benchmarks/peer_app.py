"""The dynamic peer a user might run instead: a minimal FastAPI app answering the same documents
from memory after the same key check, by the key's digest (started by benchmarks/serving.py with uvicorn,
2 workers)."""
from __future__ import annotations

import os
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.responses import Response

from generator.contract.key_format import key_digest
from generator.serve.keys import load_keys, read_secret

RELEASE = Path(os.environ["RISKAPI_PEER_RELEASE"])
KEYS = Path(os.environ["RISKAPI_PEER_KEYS"])

DOCUMENTS = {"/" + str(p.relative_to(RELEASE).parent) + "/": p.read_bytes() for p in RELEASE.rglob("index.json")}
USERS = {k.digest: k.user for k in load_keys(KEYS).keys if k.active}
SECRET = read_secret(KEYS)

app = FastAPI()


@app.get("/{path:path}")
async def document(path: str, request: Request) -> Response:
    header = request.headers.get("authorization", "")
    key = header.split(":", 1)[-1].strip() if header.lower().startswith("apikey") else header.strip()
    if key_digest(SECRET, key.lower()) not in USERS:
        return Response(b'{"detail":"Invalid API key."}', status_code=403, media_type="application/json")
    body = DOCUMENTS.get("/" + path.rstrip("/") + "/")
    if body is None:
        return Response(b'{"detail":"Not found."}', status_code=404, media_type="application/json")
    return Response(body, media_type="application/json")
