// The TimeGate at CloudFront: a Lambda@Edge function (Node 22, origin-request) beside the CloudFront
// Functions, which have no room for it within their 10 KB. The viewer-request function checks the key
// and, for a request that asks for an instant (Accept-Datetime, ?as_of=), passes on the header
// x-timegate: [path as sent, query, Accept-Datetime, the id of the release live now]. This answers it
// with the edge core's own timegate() — the same 302, 400, 404 and 410 as nginx and the Worker — from
// gate.json, which `riskapi deploy cloudfront` writes beside it: the live periods of the releases. A
// gate.json that does not know the release live now (a release went live since this function was
// last published) answers 503 rather than a past release for the present: publish it again. Any other
// request goes on to the S3 origin untouched.
import { readFileSync } from "node:fs";
import { finish, json, normalise, timegate } from "./core.mjs";

const gate = JSON.parse(readFileSync(new URL("./gate.json", import.meta.url), "utf8"));
const STALE = "The lookup of instants is being updated to the newest release; ask again in a minute, or ask " +
  "for a release by its id (GET /api/v1/releases/ lists the releases kept).";

// Lambda@Edge's headers: lower-case name → [{key, value}]
function lambdaHeaders(headers) {
  const out = {};
  for (const name in headers) out[name.toLowerCase()] = [{ key: name, value: String(headers[name]) }];
  return out;
}

export async function handler(event) {
  const request = event.Records[0].cf.request;
  const asked = request.headers["x-timegate"];
  if (!asked) return request;
  const [path, query, acceptDatetime, live] = JSON.parse(asked[0].value);
  const result = live === gate.live ? timegate(normalise(path), query, acceptDatetime, gate.table, gate.prefix)
    : json(503, STALE, { "Retry-After": "60" });
  finish(result, { id: live, cache_control: gate.cache_control }, request.method, false);
  return { status: String(result.status), headers: lambdaHeaders(result.headers), body: result.body || "" };
}
