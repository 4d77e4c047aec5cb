// CloudFront's own time per request in Node: the key gate (viewer-request function as deployed, its
// KeyValueStore a Map over kvs.json: each get a resolved promise, as the harness has it) and the
// origin-request Lambda@Edge (origin-lambda/, the whole core) on what the gate handed on, each call timed.
//   node benchmarks/cloudfront_function.mjs FUNCTIONS_DIR CASES_JSON ROUNDS  → one JSON line: per-call µs
import { readFileSync } from "node:fs";
import http from "node:http";
import { pathToFileURL } from "node:url";
import { loadFunctions } from "../tests/clients/cloudfront_runtime.mjs";

const [folder, casesFile, rounds] = process.argv.slice(2);
const gate = loadFunctions(folder).viewerRequest;
const origin = (await import(pathToFileURL(`${folder}/origin-lambda/index.js`).href)).handler;

function event(request) {  // CloudFront's viewer-request event of one case
  const querystring = {};
  for (const pair of request.query === "" ? [] : request.query.split("&")) {
    const at = pair.indexOf("=");
    querystring[at < 0 ? pair : pair.slice(0, at)] = { value: at < 0 ? "" : pair.slice(at + 1) };
  }
  return { version: "1.0", context: { eventType: "viewer-request" }, viewer: { ip: "127.0.0.1" },
    request: { method: request.method, uri: request.path, querystring, cookies: {},
      headers: { authorization: { value: request.authorization }, "accept-encoding": { value: "gzip, br" } } } };
}

// the bucket's manifests (objects.json, benchmarks/edge.py) from a local origin the Lambda reads once
const objects = JSON.parse(readFileSync(`${folder}/objects.json`, "utf8"));
const bucket = http.createServer((asked, answer) => {
  const found = objects[asked.url.slice(1)];
  answer.writeHead(found ? 200 : 404, { "Content-Type": "application/json" });
  answer.end(found ? JSON.stringify(found) : "");
});
await new Promise((listening) => bucket.listen(0, "127.0.0.1", listening));
const ORIGIN = { custom: { domainName: "127.0.0.1", port: bucket.address().port, protocol: "http", path: "" } };

function lambdaEvent(handed, query) {  // Lambda@Edge's origin-request event of what the gate handed on
  const headers = {};
  for (const [name, field] of Object.entries(handed.headers)) headers[name] = [{ key: name, value: field.value }];
  return { Records: [{ cf: { config: { eventType: "origin-request" }, request: { method: handed.method,
    uri: handed.uri, querystring: query, headers, origin: ORIGIN } } }] };
}

const cases = JSON.parse(readFileSync(casesFile, "utf8"));
const gated = [];
const routed = [];
const elapsed = (started) => Number(process.hrtime.bigint() - started) / 1000;
for (let round = 0; round < Number(rounds); round++) {
  for (const request of cases) {
    let started = process.hrtime.bigint();
    const handed = await gate(event(request));  // the handler rewrites the request it is given
    gated.push(elapsed(started));
    const asked = lambdaEvent(handed, request.query);
    started = process.hrtime.bigint();
    await origin(asked);
    routed.push(elapsed(started));
  }
}
const at = (values, q) => values.sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(q * values.length))];
console.log(JSON.stringify({ calls: gated.length, median_us: at(gated, 0.5), p99_us: at(gated, 0.99),
  origin_median_us: at(routed, 0.5), origin_p99_us: at(routed, 0.99) }));
bucket.close();
