// The CloudFront Function (cloudfront-js-2.0, viewer response) of the country risk API: adds to a
// file from the S3 origin the headers nginx sends around it (the edge core's `finish` above). The
// object's metadata says which release it belongs to (x-amz-meta-release, written by `riskapi deploy
// s3`), else (a 304 carries no metadata) the object's key the viewer-request function asked for; its
// type says whether it is a page (the pages' CSP) or an export (a download name). A release-scoped
// answer's own headers come from the viewer-request function (x-scoped). Answers the
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
  if (format && (response.statusCode === 200 || response.statusCode === 206)) result.headers["Content-Disposition"] = attachment(releaseId, format);
  const scoped = value(event.request.headers || {}, "x-scoped");  // [Cache-Control, Memento-Datetime, Link]
  const memento = scoped ? JSON.parse(scoped) : null;
  finish(result, { id: releaseId, cache_control: memento ? memento[0] : value(headers, "cache-control") },
    event.request.method, /^text\/(?:html|javascript)/.test(type));
  if (memento && response.statusCode < 400) {
    if (memento[1]) result.headers["Memento-Datetime"] = memento[1];
    result.headers["Link"] = memento[2];
  }
  for (const name in headers) {
    if (name.startsWith("x-amz-") || name === "server") delete headers[name];  // S3's own, not the API's
  }
  for (const name in result.headers) headers[name.toLowerCase()] = { value: result.headers[name] };
  return response;
}
