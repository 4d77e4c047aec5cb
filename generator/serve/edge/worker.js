// The Cloudflare Worker of a site's releases (written by `riskapi deploy cloudflare`): the edge core
// decides; the releases are in R2 (the RELEASES binding) as `riskapi deploy s3` put them there, through
// R2's S3 API: a manifest per release over content-addressed objects (manifests.js), each body and each
// of its encodings stored once. release.json, bundled, is the live release's settings, the route table,
// the releases' states and the files of the list of releases and the TimeMap. What nginx does around a
// file is done here too: Last-Modified from the file's mtime, conditional requests (304, 412), ranges
// (R2's own `range`). Compression as nginx's gzip_static/brotli_static: a file over 1 KB has its twins in
// the bucket, and the one the client takes (brotli first) is sent as stored (`encodeBody: "manual"`), each
// encoding with its own ETag.
import {
  DEFAULT_TYPE, ERRORS, HEADERS, KEY_FORMAT, NAMES, PUBLIC_AUDIENCE, STALE_RETRY_AFTER, STORE, TYPES, useContract,
} from "./contract.js";
import { answer, encoding, error, finish, quality } from "./core.js";
import { Unavailable, objectKey, stored } from "./manifests.js";
import release from "./release.json";

useContract(release.contract);  // the serving contract, as the description carries it

// The keys are in Workers KV (the KEYS binding), not in the script: the script stays the same size
// whatever the number of clients, and a key change reaches the edge without a new version
// (update-keys.sh: `wrangler kv bulk put` / `bulk delete`). An entry `k:<keyed hash>` holds the key's
// user, the custom models its user's active keys grant ("models"), their grant set's name ("set") and
// whether it may preview; release.json holds, per release, each grant set held → the audience variant
// that release serves it (rows grow with releases × grant sets, never with clients).
// Read entries are kept in the isolate for KEYS_CACHE_MS (a var; 30 s by default), and KV caches them
// at the edge for 60 s (its least cacheTtl): a revocation reaches every edge within ~90 s (KV is
// eventually consistent).
const CACHE_MS = 30_000;
const cached = new Map();  // keyed hash → [entry or null, when read]
let tables = null;  // per isolate: the bundled description and the manifests read from R2 (kept)

function releasesOf(env) {
  const prefix = release.store_prefix || "";
  tables = tables || stored(release, async (key) => {
    const found = await env.RELEASES.get(prefix + key);
    return found === null ? null : found.json();
  });
  return tables;
}

async function keyEntry(env, hash) {
  const now = Date.now();
  const hit = cached.get(hash);
  if (hit && now - hit[1] < Number(env.KEYS_CACHE_MS ?? CACHE_MS)) return hit[0];
  const entry = await env.KEYS.get(STORE.key + hash, { type: "json", cacheTtl: 60 });
  if (cached.size > 10_000) cached.clear();  // a bound on the isolate's memory (guessed keys are cached too)
  cached.set(hash, [entry, now]);
  return entry;
}

// The core's lookup for one request: its key entry (the core asks for "keys" before "users"), and the
// short id of the key looked up (contract/key_format.py: the start of its digest) kept in `asked`, for the
// usage line.
function lookupFor(env, asked) {
  let entry = null;
  return async (table, key, id) => {
    if (table === "keys") {
      asked.key = key.slice(0, KEY_FORMAT.id_characters);
      entry = await keyEntry(env, key);
      return entry === null ? undefined : entry;
    }
    if (table === "users") {
      if (entry === null || entry.user !== key) return undefined;
      const audience = (await releasesOf(env)("audiences", entry.set, id)) || PUBLIC_AUDIENCE;
      return { models: entry.models, audience, ...(entry.preview ? { preview: true } : {}) };
    }
    return releasesOf(env)(table, key, id);
  };
}

// The entries hold the keys' digests under the site's key secret, the KEYS_SECRET binding (`wrangler
// secret put KEYS_SECRET`; `wrangler dev` reads .dev.vars): the store alone gives no key back.
function platformFor(secret) {
  async function keyDigest(key) {  // contract/key_format.py: the SHA-1 of the secret and the key, in hex
    const digest = await crypto.subtle.digest("SHA-1", new TextEncoder().encode(secret + key));
    return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
  }
  return { keyDigest, atob: (text) => atob(text), btoa: (text) => btoa(text) };  // unbound, as core calls them
}

const NOT_CONFIGURED = (what) => JSON.stringify({ detail: ERRORS.not_configured.replace("{what}", what) });

// Conditional requests (RFC 9110 §13.2.2), on the ETag of the representation chosen: If-Match (strong
// comparison) else If-Unmodified-Since → 412; If-None-Match (weak comparison; a list, or `*`) else
// If-Modified-Since (not modified since: the file's mtime at or before the date) → 304. Returns the
// status to answer instead of the file, or null.
function opaque(tag) {
  return tag.trim().replace(/^W\//, "");
}

function listed(header, etag, weak) {
  return header.split(",").some((tag) => tag.trim() === "*" || (weak ? opaque(tag) === opaque(etag)
    : tag.trim() === etag && !etag.startsWith("W/")));
}

function notAfter(header, lastModified) {  // a date the file was not modified after; false if unreadable
  const date = Date.parse(header);
  return !Number.isNaN(date) && Date.parse(lastModified) <= date;
}

function precondition(request, etag, lastModified) {
  const match = request.headers.get("If-Match");
  const unmodified = request.headers.get("If-Unmodified-Since");
  if (match !== null ? !listed(match, etag, false) : unmodified !== null && !notAfter(unmodified, lastModified)) {
    return 412;
  }
  const noneMatch = request.headers.get("If-None-Match");
  const since = request.headers.get("If-Modified-Since");
  if (noneMatch !== null ? listed(noneMatch, etag, true) : since !== null && notAfter(since, lastModified)) return 304;
  return null;
}

// Every file's ETag is nginx's ("mtime-size" in hex, from the route description), not the asset's: a
// document a release did not change is the same file (hard-linked, its mtime kept), so it keeps its ETag
// across releases and a client's If-None-Match still gets a 304 — Static Assets' own differs per release.
function fileEtag(result) {
  return `"${result.mtime.toString(16)}-${result.size.toString(16)}"`;
}

// `Range: bytes=…` as nginx answers it: one range of the file → [first, last] (206); a range that starts
// past the end, or that nginx cannot read → UNSATISFIABLE (416); no Range, another unit, a list of ranges
// (nginx's multipart answer: not made here) or an If-Range the file no longer matches → null (200).
const UNSATISFIABLE = "unsatisfiable";
function byteRange(request, size, etag, lastModified) {
  const header = request.headers.get("Range");
  if (header === null || !/^\s*bytes=/i.test(header)) return null;
  const ifRange = request.headers.get("If-Range");
  if (ifRange !== null && ifRange.trim() !== etag && ifRange.trim() !== lastModified) return null;
  const spec = header.trim().replace(/^bytes=/i, "").trim();
  if (spec.includes(",")) return null;
  const m = /^(\d*)-(\d*)$/.exec(spec);
  if (!m || (m[1] === "" && m[2] === "")) return UNSATISFIABLE;
  if (m[1] === "") {  // the last n bytes
    const n = Number(m[2]);
    return n === 0 || size === 0 ? UNSATISFIABLE : [Math.max(0, size - n), size - 1];
  }
  const first = Number(m[1]);
  if (first >= size || (m[2] !== "" && Number(m[2]) < first)) return UNSATISFIABLE;
  return [first, m[2] === "" ? size - 1 : Math.min(Number(m[2]), size - 1)];
}

// Whether Accept-Encoding names no content coding a client takes (none sent, `identity`, or each at q=0).
function takesNoCoding(accepted) {
  return accepted.split(",").every((item) => {
    const name = item.split(";")[0].trim().toLowerCase();
    return name === "" || name === "identity" || quality(accepted, name) === 0;
  });
}

function withLength(body, length) {  // a stream the runtime knows the length of (Content-Length, not chunked)
  const fixed = new FixedLengthStream(length);
  body.pipeTo(fixed.writable).catch(() => {});  // a client that goes away ends the copy
  return fixed.readable;
}

function failed(result, status, name, extra) {  // a 412, 416 or 500 about a file: JSON, as every error
  const refused = error(status, name, {}, extra);
  const headers = { ...result.headers, ...refused.headers, [NAMES.cache]: HEADERS.error_cache_control };
  for (const header of [NAMES.download, NAMES.modified, "ETag"]) delete headers[header];
  return new Response(refused.body, { status, headers });
}

// One line per request for usage (riskapi usage reads it; Workers Logs and Logpush collect it): when,
// the user (never a key; "-" without a valid one), the path without its query (a key pasted into a URL
// stays out), the status, the bytes of the body (before the runtime's compression; 0 for HEAD and 304)
// and the release that answered.
function logUsage(asked, response) {
  const length = Number(response.headers.get("Content-Length") ?? asked.size ?? 0);
  const bytes = asked.method === "HEAD" || response.status === 304 ? 0 : length;
  console.log(JSON.stringify({ usage: 1, at: new Date().toISOString(), user: asked.user || "-", key: asked.key || "-",
    method: asked.method, path: asked.path, status: response.status, bytes, release: response.headers.get(NAMES.release) }));
}

export default {
  async fetch(request, env) {
    const asked = { method: request.method, path: new URL(request.url).pathname, user: null, key: null, size: null };
    const response = await respond(request, env, asked);
    logUsage(asked, response);
    return response;
  },
};

async function respond(request, env, asked) {
  const missing = !env.KEYS_SECRET ? "KEYS_SECRET" : !env.KEYS ? "KEYS namespace (Workers KV)"
    : !env.RELEASES ? "RELEASES bucket (R2)" : null;
  if (missing) {  // no key could be checked or no file read: say so to the operator, answer nothing else
    return new Response(NOT_CONFIGURED(missing), { status: 500, headers: { [NAMES.type]: TYPES[DEFAULT_TYPE] } });
  }
  const platform = platformFor(env.KEYS_SECRET);
  const url = new URL(request.url);
  const raw = request.url.slice(url.origin.length);  // the path and query as sent
  const question = raw.indexOf("?");
  const authorization = request.headers.get("Authorization");
  const core = {
    method: request.method,
    path: question < 0 ? raw : raw.slice(0, question),
    query: question < 0 ? "" : raw.slice(question + 1),
    // two Authorization headers come joined by ", " (no credential has a comma): null, the core's 400
    authorization: authorization === null ? "" : authorization.includes(",") ? null : authorization,
    acceptDatetime: request.headers.get("Accept-Datetime") ?? "",
  };
  let result;
  try {
    result = await answer(core, release, lookupFor(env, asked), platform);
  } catch (failure) {
    if (!(failure instanceof Unavailable)) throw failure;
    // a release this version answers whose manifest R2 lacks: not another release's answer
    result = finish(error(503, "stale", {}, { [NAMES.retry]: STALE_RETRY_AFTER }), release, request.method, false);
  }
  asked.user = core.user;  // set by the core's key check
  if (!core.user) asked.key = null;  // a key id only for a key that answered
  asked.size = result.size ?? new TextEncoder().encode(result.body ?? "").length;
  const head = request.method === "HEAD";
  if (result.file === undefined) {
    return new Response(head ? null : result.body ?? null, { status: result.status, headers: result.headers });
  }
  const headers = new Headers(result.headers);
  const fileTag = fileEtag(result);
  // brotli or gzip where the client takes it; each encoding is its own representation, with its own
  // strong ETag (§8.8.3) and Repr-Digest, as nginx's twins are. A Range on an encoded answer is not
  // honoured (the whole of it, 200), as nginx's gzip_static does not: a 206 is a slice of the stored bytes.
  const accepted = request.cf?.clientAcceptEncoding ?? request.headers.get("Accept-Encoding") ?? "";
  const chosen = encoding(accepted, result.size, release, result.file);
  const etag = chosen ? fileTag.replace(/"$/, `-${chosen}"`) : fileTag;
  headers.set("ETag", etag);
  // Cloudflare's front line encodes a Worker's answer again (Miniflare, its emulator, decodes and
  // re-compresses every compressible answer sent with a Content-Encoding, `encodeBody: "manual"` or not),
  // and may compress a plain one for a client that takes a coding: the Worker vouches for the bytes
  // sent only to a client that takes no coding (and so gets the stored bytes, whose Repr-Digest the core
  // set). Unencoded-Digest holds on every answer.
  if (!takesNoCoding(accepted)) headers.delete(NAMES.digest);
  const condition = precondition(request, etag, result.headers[NAMES.modified]);
  if (condition === 304) {  // what the 200 would carry, but the body's own headers (§15.4.5); nothing read
    headers.delete(NAMES.download);
    return new Response(null, { status: 304, headers });
  }
  if (condition === 412) return failed(result, 412, "precondition");
  const range = chosen ? null : byteRange(request, result.size, fileTag, result.headers[NAMES.modified]);
  if (range === UNSATISFIABLE) {
    return failed(result, 416, "range", { [NAMES.range]: `bytes */${result.size}` });
  }
  const key = (release.store_prefix || "") + objectKey(result, chosen);
  const lost = () => failed(result, 500, "server");
  // Every body is sent as stored (`encodeBody: "manual"`): the runtime does not compress it again itself.
  if (range !== null) {  // the bytes asked for, as stored (no Content-Encoding): R2 reads only those
    const [first, last] = range;
    headers.set(NAMES.range, `bytes ${first}-${last}/${result.size}`);
    headers.set("Content-Length", String(last - first + 1));
    if (head) return new Response(null, { status: 206, headers });
    const part = await env.RELEASES.get(key, { range: { offset: first, length: last - first + 1 } });
    if (part === null) return lost();  // the manifest names an object R2 does not hold
    return new Response(withLength(part.body, last - first + 1), { status: 206, headers, encodeBody: "manual" });
  }
  // HEAD: the object's size from R2's metadata, its body not read
  const object = head ? await env.RELEASES.head(key) : await env.RELEASES.get(key);
  if (object === null) return lost();
  if (chosen) headers.set("Content-Encoding", chosen);
  headers.set("Content-Length", String(object.size));
  if (head) return new Response(null, { status: 200, headers });
  return new Response(withLength(object.body, object.size), { status: 200, headers, encodeBody: "manual" });
}
