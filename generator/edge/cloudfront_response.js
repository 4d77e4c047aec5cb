// The CloudFront Function (cloudfront-js-2.0, viewer response) of the country risk API: adds to a
// file from the S3 origin the headers nginx sends around it (the edge core's `finish` above). The
// object's metadata says which release it belongs to (x-amz-meta-release, written by `riskapi deploy
// s3`), else (a 304 carries no metadata) the object's key the viewer-request function asked for; its
// type says whether it is a page (the pages' CSP) or an export (a download name). The answer's own
// Cache-Control (and a release-scoped answer's Memento headers) come from the viewer-request function
// (x-answer). Answers the
// viewer-request function made itself carry their headers already and pass unchanged.
function value(headers, name) {
  return headers[name] ? headers[name].value : "";
}

async function handler(event) {
  const response = event.response;
  const headers = response.headers;
  const asked = /^\/releases\/([^/]+)\//.exec(event.request.uri);
  const releaseId = value(headers, "x-amz-meta-release") || (asked ? asked[1] : "");
  if (!releaseId) return response;
  const type = value(headers, "content-type");
  const result = { status: response.statusCode, headers: {} };
  const format = /^text\/csv/.test(type) ? "csv" : /^application\/x-ndjson/.test(type) ? "jsonl" : "";
  if (format && (response.statusCode === 200 || response.statusCode === 206)) {
    const model = /\/exports\/([a-z][a-z0-9_]*)\//.exec(event.request.uri);
    result.headers["Content-Disposition"] = attachment(releaseId, format, model ? model[1] : "");
  }
  // [Cache-Control, Memento-Datetime, Link]
  const answered = JSON.parse(value(event.request.headers || {}, "x-answer") || "[]");
  finish(result, { id: releaseId, cache_control: answered[0] || value(headers, "cache-control") },
    event.request.method, /^text\/(?:html|javascript)/.test(type));
  if (answered[1] && response.statusCode < 400) result.headers["Memento-Datetime"] = answered[1];
  if (answered[2] && response.statusCode < 400) result.headers["Link"] = answered[2];
  // a 304 carries the ETag of what the client holds (§15.4.5); an origin that leaves it out (Ceph's) matched
  // the one tag the client sent
  const sent = value(event.request.headers || {}, "if-none-match");
  if (response.statusCode === 304 && !headers.etag && /^\s*(?:W\/)?"[^",]*"\s*$/.test(sent)) {
    result.headers["ETag"] = sent.trim().replace(/^W\//, "");
  }
  for (const name in headers) {
    if (/^(?:x-amz-|x-rgw-|server$)/.test(name)) delete headers[name];  // S3's own (Ceph's too), not the API's
  }
  for (const name in result.headers) headers[name.toLowerCase()] = { value: result.headers[name] };
  return response;
}
