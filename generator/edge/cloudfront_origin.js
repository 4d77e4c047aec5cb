// The origin-request Lambda@Edge (Node 22) of the country risk API at CloudFront: the edge core routes
// here, behind the key gate (cloudfront_request.js), on every request CloudFront's cache does not
// answer. From the gate's headers (the live release, whether the key was good, its grant set and
// audience: never the key) and release.json beside it (`riskapi deploy cloudfront`: the route table,
// the tables of every release answered, the TimeGate's live periods) it answers as nginx does: the
// request for the S3 object of the file (releases/<id>/<file>, or its .br/.gz twin), or the JSON error,
// 204 or TimeGate 302 itself. A release.json that does not know the live release (a release went live
// since this function was last published) answers 503 rather than another release's answer: publish it
// again.
import { readFileSync } from "node:fs";
import { answer, encoding, finish, inMemory, json } from "./core.js";

const release = JSON.parse(readFileSync(new URL("./release.json", import.meta.url), "utf8"));
const tables = inMemory(release, { keys: {}, users: {} });
const STALE = "The edge is being updated to the newest release; ask again in a minute.";

function value(headers, name) {  // Lambda@Edge's headers: lower-case name → [{key, value}]
  return headers[name] ? headers[name][0].value : "";
}

function lambdaHeaders(headers) {
  const out = {};
  for (const name in headers) out[name.toLowerCase()] = [{ key: name, value: String(headers[name]) }];
  return out;
}

// The request as the gate handed it on: the key already checked (`identity`), no Authorization.
function asked(request) {
  const headers = request.headers;
  const auth = value(headers, "x-auth");
  const grants = value(headers, "x-grants");
  return { method: request.method, path: request.uri, query: request.querystring,
    authorization: auth === "twice" ? null : "", acceptDatetime: value(headers, "accept-datetime"),
    identity: { user: value(headers, "x-user"), missing: auth === "missing", grants: {
      models: grants && grants !== "public" ? grants.split("+") : [], audience: value(headers, "x-audience") || "public",
      preview: value(headers, "x-preview") === "1" } } };
}

export async function handler(event) {
  const request = event.Records[0].cf.request;
  const headers = request.headers;
  const live = value(headers, "x-release");
  let result;
  if (live !== release.id) {
    result = finish(json(503, STALE, { "Retry-After": "60" }), { id: live }, request.method, false);
  } else {
    result = await answer(asked(request), release, tables, null);
  }
  if (result.file !== undefined) {
    // S3 answers a range past the end with its own XML 416: the JSON one here, from the file's size
    const range = /^bytes=(\d+)-\d*$/i.exec(value(headers, "range"));
    if (range && +range[1] >= result.size) {
      result = finish(json(416, "Requested range not satisfiable.", { "Content-Range": `bytes */${result.size}` }),
        { id: result.release }, request.method, false);
    } else {
      // If-None-Match compares weakly (RFC 9110 §13.1.2) where S3 compares strongly: every ETag is strong
      if (headers["if-none-match"]) headers["if-none-match"][0].value = value(headers, "if-none-match").replace(/W\//g, "");
      const twin = encoding(value(headers, "accept-encoding"), result.size, release);
      request.uri = `/releases/${result.release}/${result.file}${twin === "br" ? ".br" : twin === "gzip" ? ".gz" : ""}`;
      request.querystring = "";
      return request;
    }
  }
  return { status: String(result.status), headers: lambdaHeaders(result.headers), body: result.body || "" };
}
