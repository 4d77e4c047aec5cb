// The CloudFront Function (cloudfront-js-2.0, viewer request) of the country risk API: the edge core
// above decides; the release's tables and the keyed hashes of the keys are in the function's KeyValueStore
// (kvs.json, written by `riskapi deploy cloudfront`). A file answer becomes the request for its
// object, releases/<id>/<file> or its .br/.gz twin, which the S3 origin serves; every other answer
// (errors, OPTIONS, 204) is made here. The KeyValueStore's `release` entry names the live release and
// its settings: one write switches every edge to a new release, whose entries were written before.
const crypto = require("crypto");
const kvs = cf.kvs();

function parse(table, value) {  // the stored text of an entry, as the core's tables hold it
  // a file's entry is its size alone: its mtime (the core's Last-Modified) goes unused, as S3 sends its own
  if (table === "files") return [0, +value];
  // users: {"models": [...], "audience": "..."}; releases: [state, when it went live]
  return /^[ur]/.test(table) ? JSON.parse(value) : value;
}

// An entry of the store, or undefined (get() rejects a missing key): each table by its first letter
// (country_names: n); keys (k:) and the releases' states (r:) are the same for every release, the
// other tables under the release's id. A file's key leaves out a final "index.json" (the store holds
// 5 MB: see deploy/cloudfront.py).
function stored(releaseId, table, key) {
  const short = table === "files" ? key.replace(/index\.json$/, "") : key;
  const name = /^[kr]/.test(table) ? `${table[0]}:${key}` : `${releaseId}:${table === "country_names" ? "n" : table[0]}:${short}`;
  return kvs.get(name).then((value) => parse(table, value), () => undefined);
}

// the deployment's secret, written here by `riskapi deploy cloudfront`: the store holds HMACs under it
const SECRET = "__KEYS_SECRET__";

function keyhash(text) {
  return crypto.createHmac("sha256", SECRET).update(text).digest("hex");
}

const platform = { keyhash,
  atob: (text) => Buffer.from(text, "base64").toString("utf8"),
  btoa: (text) => Buffer.from(text, "utf8").toString("base64") };

function header(request, name) {
  return request.headers[name] ? request.headers[name].value : "";
}

// The query as nginx's $args has it: CloudFront hands it over as an object of names and values
// (a repeated name as multiValue, in the order sent).
function queryString(querystring) {
  const pairs = [];
  for (const name in querystring) {
    const values = querystring[name].multiValue || [querystring[name]];
    for (let i = 0; i < values.length; i++) pairs.push(`${name}=${values[i].value}`);
  }
  return pairs.join("&");
}

function response(result) {
  const headers = {};
  for (const name in result.headers) headers[name.toLowerCase()] = { value: result.headers[name] };
  const made = { statusCode: result.status, headers };
  if (result.body !== undefined) made.body = { encoding: "text", data: result.body };
  return made;
}

async function handler(event) {
  const request = event.request;
  const settings = await kvs.get("release");  // (no await inside a call's arguments in this runtime)
  const release = JSON.parse(settings);
  const lookup = (table, key, id) => stored(id, table, key);
  const asked = { method: request.method, path: request.uri, query: queryString(request.querystring),
    authorization: (request.headers.authorization || {}).multiValue ? null : header(request, "authorization"),
    acceptDatetime: header(request, "accept-datetime") };
  const result = await answer(asked, release, lookup, platform);
  // an instant asked for (Accept-Datetime, as_of), once the key is checked: the origin-request Lambda@Edge
  // answers it (timegate-lambda/; this function has no room for the TimeGate), from what was asked (never
  // the key) and the release live now
  if (result.elsewhere) {
    request.headers["x-timegate"] = { value: JSON.stringify([asked.path, asked.query, asked.acceptDatetime, release.id]) };
    return request;
  }
  if (result.file === undefined) return response(result);
  // S3 answers a range past the end with its own XML 416: the JSON one here, from the file's size
  const range = /^bytes=(\d+)-\d*$/i.exec(header(request, "range"));
  if (range && +range[1] >= result.size) {
    return response(finish(json(416, "Requested range not satisfiable.", { "Content-Range": `bytes */${result.size}` }),
      { id: result.release }, request.method));
  }
  // If-None-Match compares weakly (RFC 9110 §13.1.2) where S3 compares strongly: every ETag is strong
  const tags = request.headers["if-none-match"];
  if (tags) tags.value = tags.value.replace(/W\//g, "");
  const twin = encoding(header(request, "accept-encoding"), result.size, release);
  // the list of releases and the TimeMap are the files of `timeline` (releases/timeline/ in the bucket)
  request.uri = `/releases/${result.release}/${result.file}${twin === "br" ? ".br" : twin === "gzip" ? ".gz" : ""}`;
  // the answer's own headers, for the viewer-response function: its Cache-Control (which S3's 304 lacks)
  // and, for a release-scoped answer, Memento-Datetime and Link
  request.headers["x-answer"] = { value: JSON.stringify([result.headers["Cache-Control"],
    result.headers["Memento-Datetime"] || "", result.headers.Link || ""]) };
  request.querystring = {};
  return request;
}
