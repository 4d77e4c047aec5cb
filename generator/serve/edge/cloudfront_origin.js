// The Lambda@Edge (Node 22) of the country risk API at CloudFront, on the origin request and the origin
// response: the edge core routes here, behind the key gate (cloudfront_request.js), on every request
// CloudFront's cache does not answer.
// - origin request: from the gate's headers (the live release, whether the key was good, its grant set
//   and audience: never the key), release.json beside it (the route table, the releases' states, the
//   TimeGate's live periods, the files of the list of releases and the TimeMap) and the releases'
//   manifests in the bucket (manifests.js: read from the S3 origin itself, signed with the function's
//   role, kept per container), it answers as nginx does: the request for the object of the file (its
//   body, or its .br/.gz encoding), or the JSON error, 204 or TimeGate 302 itself. What the object cannot
//   carry, because one body serves many paths — an export's download name, an original's TimeGate Link —
//   goes on to the origin response in a header (the contract's HANDOFF.response).
// - origin response: adds those headers to the 200 or 206 of the object (CloudFront caches it so).
// A release.json that does not know the live release (a release went live since this function was last
// published), or a manifest the bucket lacks, answers 503 rather than another release's answer.
import { createHash, createHmac } from "node:crypto";
import { readFileSync } from "node:fs";
import { HANDOFF, NAMES, PUBLIC_AUDIENCE, STALE_RETRY_AFTER, useContract } from "./contract.js";
import { answer, encoding, error, finish } from "./core.js";
import { Unavailable, codedDigest, objectKey, stored } from "./manifests.js";

const release = JSON.parse(readFileSync(new URL("./release.json", import.meta.url), "utf8"));
useContract(release.contract);  // the serving contract, as the description carries it
let tables = null;  // per container: release.json and the manifests read from the bucket

function value(headers, name) {  // Lambda@Edge's headers: lower-case name → [{key, value}]
  return headers[name] ? headers[name][0].value : "";
}

function lambdaHeaders(headers) {
  const out = {};
  for (const name in headers) out[name.toLowerCase()] = [{ key: name, value: String(headers[name]) }];
  return out;
}

// The origin's address: an S3 origin (https, its region) or a custom one (an S3-compatible server).
function originOf(request) {
  const s3 = request.origin && request.origin.s3;
  if (s3) return { base: `https://${s3.domainName}${s3.path || ""}`, region: s3.region || "us-east-1" };
  const custom = request.origin.custom;
  return { base: `${custom.protocol}://${custom.domainName}:${custom.port}${custom.path || ""}`, region: "us-east-1" };
}

// AWS Signature Version 4 of a GET (the function's role: Lambda sets AWS_ACCESS_KEY_ID,
// AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN); unsigned without credentials (a bucket anyone may read).
function signed(url, region) {
  const id = process.env.AWS_ACCESS_KEY_ID;
  const secret = process.env.AWS_SECRET_ACCESS_KEY;
  const target = new URL(url);
  if (!id || !secret) return {};
  const stamp = new Date().toISOString().replace(/[-:]/g, "").replace(/\.\d{3}/, "");
  const day = stamp.slice(0, 8);
  const token = process.env.AWS_SESSION_TOKEN;
  const headers = { host: target.host, "x-amz-content-sha256": "UNSIGNED-PAYLOAD", "x-amz-date": stamp };
  if (token) headers["x-amz-security-token"] = token;
  const names = Object.keys(headers).sort();
  const canonical = ["GET", target.pathname, "", ...names.map((n) => `${n}:${headers[n]}`), "", names.join(";"),
    "UNSIGNED-PAYLOAD"].join("\n");
  const scope = `${day}/${region}/s3/aws4_request`;
  const toSign = ["AWS4-HMAC-SHA256", stamp, scope, createHash("sha256").update(canonical).digest("hex")].join("\n");
  let key = `AWS4${secret}`;
  for (const part of [day, region, "s3", "aws4_request"]) key = createHmac("sha256", key).update(part).digest();
  const signature = createHmac("sha256", key).update(toSign).digest("hex");
  delete headers.host;
  headers.authorization = `AWS4-HMAC-SHA256 Credential=${id}/${scope}, SignedHeaders=${names.join(";")}, ` +
    `Signature=${signature}`;
  return headers;
}

function bucketOf(request) {
  const origin = originOf(request);
  return async (key) => {
    const url = `${origin.base}/${key}`;
    const got = await fetch(url, { headers: signed(url, origin.region) });
    if (got.status === 404 || got.status === 403) return null;  // 403: S3 without ListBucket says so for a missing key
    if (!got.ok) throw new Error(`${key}: the bucket answered ${got.status}`);
    return got.json();
  };
}

// The request as the gate handed it on: the key already checked (`identity`), no Authorization.
function asked(request) {
  const headers = request.headers;
  const auth = value(headers, HANDOFF.auth);
  const grants = value(headers, HANDOFF.grants);
  return { method: request.method, path: request.uri, query: request.querystring,
    authorization: auth === "twice" ? null : "", acceptDatetime: value(headers, "accept-datetime"),
    identity: { user: value(headers, HANDOFF.user), missing: auth === "missing", mistyped: auth === "mistyped",
      expired: /^expired:\d+$/.test(auth) ? Number(auth.slice(8)) : null, grants: {
      models: grants && grants !== PUBLIC_AUDIENCE ? grants.split("+") : [], audience: value(headers, HANDOFF.audience) || PUBLIC_AUDIENCE,
      preview: value(headers, HANDOFF.preview) === "1" } } };
}

// What a file's answer says that its object cannot: an export's download name, an original's Link, the
// file's integrity fields (S3's metadata would come as x-amz-meta-…).
const CARRIED = [NAMES.download, NAMES.link, NAMES.unencoded];  // and the Repr-Digest of the object asked for
const DIGESTS = [NAMES.digest, NAMES.unencoded];  // on a 304 too

async function originRequest(request) {
  const headers = request.headers;
  const live = value(headers, HANDOFF.release);
  let result;
  if (live !== release.id) {
    result = finish(error(503, "stale", {}, { [NAMES.retry]: STALE_RETRY_AFTER }), { id: live }, request.method, false);
  } else {
    tables = tables || stored(release, bucketOf(request));
    try {
      result = await answer(asked(request), release, tables, null);
    } catch (failure) {
      if (!(failure instanceof Unavailable)) throw failure;
      result = finish(error(503, "stale", {}, { [NAMES.retry]: STALE_RETRY_AFTER }), release, request.method, false);
    }
  }
  if (result.file !== undefined) {
    const twin = encoding(value(headers, "accept-encoding"), result.size, release, result.file);
    if (twin) {  // a Range on an encoded answer is not honoured, as nginx's gzip_static does not: the whole, 200
      delete headers.range;
      delete headers["if-range"];
    }
    // S3 answers a range past the end with its own XML 416: the JSON one here, from the file's size
    const range = /^bytes=(\d+)-\d*$/i.exec(value(headers, "range"));
    if (range && +range[1] >= result.size) {
      result = finish(error(416, "range", {}, { [NAMES.range]: `bytes */${result.size}` }),
        { id: result.release }, request.method, false);
    } else {
      // If-None-Match compares weakly (RFC 9110 §13.1.2) where S3 compares strongly: every ETag is strong
      if (headers["if-none-match"]) headers["if-none-match"][0].value = value(headers, "if-none-match").replace(/W\//g, "");
      const carried = {};
      for (const name of CARRIED) if (result.headers[name]) carried[name] = result.headers[name];
      const digest = codedDigest(result, twin);  // of the object sent: the body's, or its encoding's
      if (digest) carried[NAMES.digest] = digest;
      if (result.cache) carried.cache = result.cache;  // the route's own Cache-Control (finish), by name
      headers[HANDOFF.response] = [{ key: HANDOFF.response, value: JSON.stringify(carried) }];
      request.uri = `/${objectKey(result, twin)}`;
      request.querystring = "";
      return request;
    }
  }
  const made = lambdaHeaders(result.headers);
  if (result.cache) made[HANDOFF.cache] = [{ key: HANDOFF.cache, value: result.cache }];  // the viewer response's
  return { status: String(result.status), headers: made, body: result.body || "" };
}

// The origin response of an object: the headers of its path the origin request handed on, on a 200 (a
// 206 the download name and the digests, a 304 the digests, as nginx sends them); a route's own
// Cache-Control as HANDOFF.cache, which the viewer response sets.
function originResponse(request, response) {
  const carried = JSON.parse(value(request.headers, HANDOFF.response) || "{}");
  const status = Number(response.status);
  for (const name in carried) {
    if (name === "cache" && status < 400) {  // the route's own Cache-Control, for the viewer response to set
      response.headers[HANDOFF.cache] = [{ key: HANDOFF.cache, value: carried[name] }];
    } else if (status === 200 || (status === 206 && name !== NAMES.link) || (status === 304 && DIGESTS.indexOf(name) >= 0)) {
      response.headers[name.toLowerCase()] = [{ key: name, value: carried[name] }];
    }
  }
  return response;
}

export async function handler(event) {
  const cf = event.Records[0].cf;
  return cf.config.eventType === "origin-response" ? originResponse(cf.request, cf.response) : originRequest(cf.request);
}
