// The CloudFront viewer-request function's own time per request in Node: the deployed code, its
// KeyValueStore a Map over kvs.json (each get a resolved promise, as the harness has it), each call timed.
//   node benchmarks/cloudfront_function.mjs FUNCTIONS_DIR CASES_JSON ROUNDS  → one JSON line: per-call µs
import { readFileSync } from "node:fs";
import { loadFunctions } from "../tests/clients/cloudfront_runtime.mjs";

const [folder, casesFile, rounds] = process.argv.slice(2);
const handler = loadFunctions(folder).viewerRequest;

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

const cases = JSON.parse(readFileSync(casesFile, "utf8"));
const times = [];
for (let round = 0; round < Number(rounds); round++) {
  for (const request of cases) {
    const fresh = event(request);  // the handler rewrites the request it is given
    const started = process.hrtime.bigint();
    await handler(fresh);
    times.push(Number(process.hrtime.bigint() - started) / 1000);
  }
}
const at = (values, q) => values.sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(q * values.length))];
console.log(JSON.stringify({ calls: times.length, median_us: at(times, 0.5), p99_us: at(times, 0.99) }));
