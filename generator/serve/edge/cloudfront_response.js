// The CloudFront Function (cloudfront-js-2.0, viewer response) of the country risk API: adds to every
// answer the headers nginx sends around it (the edge core's `finish` above), from what the key gate
// (viewer request) worked out, by the contract's HANDOFF: the answer's fields (the release answering, its
// Cache-Control, which S3's 304 lacks, a release-scoped answer's Memento-Datetime and Link). The object's
// type says whether it is a
// page (the pages' CSP); an export's download name and an original's Link (its TimeGate) came with the
// object from the origin-response Lambda (cloudfront_origin.js); the download name goes with a 200 or 206
// only.
import { HANDOFF, NAMES, PAGE_TYPES, useContract } from "./contract.js";
import { finish } from "./core.js";

useContract(DEPLOYED.contract);  // the parts of the serving contract it uses, declared before it by the deploy

function value(headers, name) {
  return headers[name] ? headers[name].value : "";
}

async function handler(event) {
  const response = event.response;
  const headers = response.headers;
  const status = response.statusCode;
  const handed = event.request.headers || {};
  const answering = value(handed, HANDOFF.answering);
  if (!answering) return response;
  const type = value(headers, "content-type");
  // a route's own Cache-Control (the log's, by its name in the contract), handed on by the origin-response
  // Lambda (an object's own metadata never counts: one body serves many paths)
  const result = { status, headers: {}, cache: value(headers, HANDOFF.cache) };
  delete headers[HANDOFF.cache];
  finish(result, { id: answering, cache_control: value(handed, HANDOFF.answering_cache) }, event.request.method,
    PAGE_TYPES.indexOf(type) >= 0);
  const memento = value(handed, HANDOFF.memento_datetime);
  const link = value(handed, HANDOFF.memento_link);
  if (memento && status < 400) result.headers[NAMES.memento] = memento;
  if (link && status < 400) result.headers[NAMES.link] = link;
  if (status !== 200 && status !== 206) delete headers["content-disposition"];
  // a 304 carries the ETag of what the client holds (§15.4.5); an origin that leaves it out (Ceph's) matched
  // the one tag the client sent
  const sent = value(handed, "if-none-match");
  if (status === 304 && !headers.etag && /^\s*(?:W\/)?"[^",]*"\s*$/.test(sent)) {
    result.headers["ETag"] = sent.trim().replace(/^W\//, "");
  }
  for (const name in headers) {
    if (/^(?:x-amz-|x-rgw-|server$)/.test(name)) delete headers[name];  // S3's own (Ceph's too), not the API's
  }
  for (const name in result.headers) headers[name.toLowerCase()] = { value: result.headers[name] };
  return response;
}
