// The country risk API's routing and key check at the edge of a CDN: what nginx.conf does, for a
// Cloudflare Worker or a CloudFront Function. No framework, no I/O: `answer` takes the request, the
// release's settings and a lookup into its tables and the hashed keys, and says which file of the
// release to serve, with which headers, or which JSON error to send.
//
//   answer({method, path, query, authorization}, release, lookup, platform)
//     → Promise<{status, headers, body?} or {status, headers, file, size, mtime, parts?}>
//
// `path` and `query` are as the client sent them (percent-escapes kept). `release` holds the release's
// settings (id, prefix, cache_control, no_match, orderings, compressed_over). `lookup(table, key)`
// answers from the tables (countries, country_names, models, files, keys, users): from release.json
// and keys.json in a Worker (`inMemory`), from the KeyValueStore in a CloudFront Function.
// `platform` is {keyhash, atob, btoa} (keys are stored only as keyed hashes: HMAC-SHA256 under the
// deployment's secret). Every rule below names the
// nginx.conf directive it mirrors; the contract tests run the same cases against nginx and this.
//
// Written in the JavaScript CloudFront Functions run (cloudfront-js-2.0; checked with njs 0.7.9):
// no spread, destructuring, default parameters, optional chaining, for-of or catch without a binding.

const ALLOW = "GET, HEAD, OPTIONS";
const JSON_CSP = "default-src 'none'; frame-ancestors 'none'";
const PAGE_CSP = "default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; connect-src *; img-src data:; " +
  "base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
const TYPES = { json: "application/json", html: "text/html", js: "text/javascript", csv: "text/csv",
  jsonl: "application/x-ndjson" };
const NOT_PROVIDED = "Authentication credentials were not provided.";
const INVALID_KEY = "Invalid API key.";
// nginx.conf's 3-character check of a code filter: characters, not bytes (a UTF-8 character may
// come as several escapes, or raw).
const THREE_CHARACTERS = /^(?:[^%\x80-\xFF]|%[0-7][0-9A-Fa-f]|%[C-Fc-f][0-9A-Fa-f](?:%[89ABab][0-9A-Fa-f]){1,3}|[\xC0-\xFF][\x80-\xBF]{1,3}){3}$/;

function json(status, detail, extra) {
  const headers = Object.assign({ "Content-Type": "application/json; charset=utf-8" }, extra);
  return { status, body: JSON.stringify({ detail }), headers };
}

function asciiLower(text) {
  return text.replace(/[A-Z]/g, (c) => c.toLowerCase());
}

// A lookup over release.json and keys.json held in memory (a Worker's bundle; the benchmarks).
export function inMemory(release, keys) {
  const tables = { countries: release.countries, country_names: release.country_names, models: release.models,
    files: release.files, keys: keys.keys, users: keys.users };
  return (table, key) => (Object.prototype.hasOwnProperty.call(tables[table], key) ? tables[table][key] : undefined);
}

// nginx's $arg_NAME: the first argument of that name (in any letter case), its value as sent.
function argument(query, name) {
  const pairs = query.split("&");
  for (let i = 0; i < pairs.length; i++) {
    const pair = pairs[i];
    const at = pair.indexOf("=");
    if (at >= 0 && asciiLower(pair.slice(0, at)) === name) return pair.slice(at + 1);
    if (at < 0 && asciiLower(pair) === name) return "";
  }
  return "";
}

// nginx decodes the path, merges slashes and resolves dot segments before it matches a location; a
// path that climbs above the root is its 400.
function normalise(rawPath) {
  let decoded;
  try {
    decoded = decodeURIComponent(rawPath);
  } catch (malformed) {
    decoded = rawPath;
  }
  const out = [];
  const segments = decoded.split("/");
  for (let i = 1; i < segments.length; i++) {
    const segment = segments[i];
    if (segment === "..") {
      if (out.length === 0) return null;
      out.pop();
    } else if (segment !== "." && segment !== "") {
      out.push(segment);
    }
  }
  const trailing = decoded.endsWith("/") && out.length > 0 ? "/" : "";
  return "/" + out.join("/") + trailing;
}

// `map $http_authorization $credential`: apikey USER:KEY, Bearer/Token KEY, Basic, the bare KEY.
function credential(header) {
  let m;
  if ((m = /^\s*apikey\s+(\S+)\s*$/i.exec(header))) return m[1];
  if ((m = /^\s*(?:bearer|token)\s+([^\s:]+)\s*$/i.exec(header))) return m[1];
  if ((m = /^\s*basic\s+([A-Za-z0-9+/]+=*)\s*$/i.exec(header))) return "basic:" + m[1];
  if ((m = /^\s*([^\s:]+)\s*$/.exec(header))) return m[1];
  return "";
}

// `include runtime/keys.conf`: the user a credential belongs to, or "" (keys are known by hash only).
async function user(header, lookup, platform) {
  let given = credential(header);
  if (!given.startsWith("basic:")) given = asciiLower(given);  // nginx's map keys ignore ASCII case
  if (given.startsWith("basic:")) {
    const encoded = given.slice(6);
    let decoded;
    try {
      decoded = platform.atob(encoded);
    } catch (malformed) {
      return "";
    }
    if (platform.btoa(decoded) !== encoded || !decoded.includes(":")) return "";  // nginx matches the exact encoding
    given = decoded;
  }
  const colon = given.indexOf(":");
  const name = colon >= 0 ? given.slice(0, colon) : null;
  const key = colon >= 0 ? given.slice(colon + 1) : given;
  if (!key) return "";
  const hash = await platform.keyhash(key);
  const owner = await lookup("keys", hash);
  if (owner === undefined || (name !== null && name !== owner)) return "";
  return owner;
}

function countryFilter(code, name, noMatch) {  // `map "$countries_code:$countries_name" $countries_filter`
  if (code === "" && name === "") return "";
  if (/^[A-Z]{3}$/.test(code) && (name === "" || name === code)) return `filter=${code}/`;
  if (code === "" && /^[A-Z]{3}$/.test(name)) return `filter=${name}/`;
  return `filter=${noMatch}/`;
}

async function codeFilter(raw, lookup) {  // `map $arg_code $countries_code`
  if (raw === "") return "";
  const code = await lookup("countries", asciiLower(raw));
  if (code !== undefined) return code;
  return THREE_CHARACTERS.test(raw) ? "none" : "invalid";
}

async function nameFilter(raw, lookup) {  // `map $arg_name $countries_name`
  if (raw === "") return "";
  const code = await lookup("country_names", asciiLower(raw));
  return code === undefined ? "none" : code;
}

function ordering(raw, orderings, parameter) {  // `map $arg_ordering $scores_order`: exact, case-sensitive
  if (raw === "" || raw === orderings[0]) return "";
  return orderings.includes(raw) ? `${parameter}=${raw}/` : "invalid";
}

function badRequest(order, code, orderParameter, orderings, codeParameter) {
  if (order === "invalid") return `Invalid value for ${orderParameter}: use one of ${orderings.join(", ")}.`;
  if (code === "invalid") return `Invalid value for ${codeParameter}: a country code has exactly 3 characters.`;
  return "";
}

async function listVariant(query, release, lookup, names) {  // endpoints 2 and 3: a filter answer, else the ordering
  const code = await codeFilter(argument(query, names.code), lookup);
  const name = await nameFilter(argument(query, names.name), lookup);
  const order = ordering(argument(query, names.order), names.orderings, names.order);
  const bad = badRequest(order, code, names.order, names.orderings, names.code);
  if (bad) return { bad };
  const filter = countryFilter(code, name, release.no_match);
  return { variant: filter || order };
}

function audienceDir(grants) {  // `map $audience $audience_dir`
  const audience = grants === undefined ? "public" : grants.audience;
  return audience === "public" ? "" : `audience=${audience}/`;
}

async function modelMissing(model, grants, lookup) {  // `map "$model_kind:$custom_granted" $model_missing`
  const kind = await lookup("models", model);
  if (kind === "public") return false;
  return !(kind === "custom" && grants !== undefined && grants.models.includes(model));
}

function contentType(file) {
  return TYPES[file.slice(file.lastIndexOf(".") + 1)] + "; charset=utf-8";
}

// `map $status:$export_format $export_disposition`: an export downloads under a name with its release.
export function attachment(releaseId, format) {
  return `attachment; filename="country-risk-scores-${releaseId}.${format}"`;
}

// gzip_static/brotli_static: nginx has twins only beside files over `compressed_over` bytes, and
// prefers brotli where the client takes it. Returns "br", "gzip" or null.
export function encoding(accepted, size, release) {
  if (size <= release.compressed_over) return null;
  if (/(^|[\s,])br([\s;,]|$)/.test(accepted)) return "br";
  if (/(^|[\s,])gzip([\s;,]|$)/.test(accepted)) return "gzip";
  return null;
}

// nginx.conf's add_header list, on every answer (errors too). `page`: an HTML page or its script,
// which get the pages' CSP (nginx's `location /docs` and `location = /`).
export function finish(result, release, method, page) {
  const headers = result.headers;
  const ok = result.status >= 200 && result.status < 400;
  headers["Cache-Control"] = ok ? release.cache_control : "no-store";
  headers["Vary"] = "Accept-Encoding, Authorization, Accept-Datetime";
  if (result.status === 204 || result.status === 405) headers["Allow"] = ALLOW;
  if (result.status === 429) headers["Retry-After"] = "1";
  headers["Access-Control-Allow-Origin"] = "*";
  headers["Access-Control-Expose-Headers"] = "ETag, Last-Modified, Retry-After, X-Release, Memento-Datetime, Link";
  if (method === "OPTIONS") {
    headers["Access-Control-Allow-Methods"] = ALLOW;
    headers["Access-Control-Allow-Headers"] = "Authorization, Content-Type, If-None-Match, If-Modified-Since, Accept-Datetime";
    headers["Access-Control-Max-Age"] = "86400";
  }
  headers["X-Content-Type-Options"] = "nosniff";
  headers["Content-Security-Policy"] = page ? PAGE_CSP : JSON_CSP;
  headers["Referrer-Policy"] = "no-referrer";
  headers["X-Release"] = release.id;
  return result;
}

// `try_files FILE =404`: a file of the release (its mtime and size from the files table, and the
// number of parts it is stored in where a platform limits the size of a file), or a JSON 404.
async function releaseFile(lookup, name, extra) {
  const known = await lookup("files", name);
  if (known === undefined) return json(404, "Not found.");
  const headers = Object.assign({ "Content-Type": contentType(name),
    "Last-Modified": new Date(known[0] * 1000).toUTCString() }, extra);
  return { status: 200, file: name, size: known[1], parts: known[2], mtime: known[0], headers };
}

const KEYED = /^\/(?:releases\/current\/?|exports\/scores\.(?:csv|jsonl)|configuration\/(?:riskscores?models|countries)\/?|riskscores\/[a-z][a-z0-9_]*\/?|riskscores\/[a-z][a-z0-9_]*\/[^/]+\/?)$/;

async function route(request, path, release, lookup, platform) {
  const method = request.method;
  if (method === "OPTIONS") return { status: 204, headers: {} };  // preflight before any key check
  if (method !== "GET" && method !== "HEAD") return json(405, `Method "${method}" not allowed.`);
  if (path === null) return json(400, "Bad request.");
  const api = release.prefix;
  const query = request.query;

  if (path === `${api}/openapi.json`) return releaseFile(lookup, `${api.slice(1)}/openapi.json`);
  if (path === api || path === `${api}/`) return releaseFile(lookup, `${api.slice(1)}/index.json`);
  if (path === "/") return releaseFile(lookup, "docs/index.html");
  let m;
  if ((m = /^\/docs(?:\/(models\/[a-z][a-z0-9_]*|explorer|changes))?\/?$/.exec(path))) {
    return releaseFile(lookup, `docs/${m[1] ? m[1] + "/" : ""}index.html`);
  }
  if (path === "/docs/explorer.js") return releaseFile(lookup, "docs/explorer.js");
  if (path === "/favicon.ico") return { status: 204, headers: {} };
  if (!path.startsWith(`${api}/`)) return json(404, "Not found.");

  const rest = path.slice(api.length);
  if (!KEYED.test(rest)) return json(404, "Not found.");
  const header = request.authorization || "";
  const who = await user(header, lookup, platform);
  if (!who) return json(403, header === "" ? NOT_PROVIDED : INVALID_KEY);
  const grants = await lookup("users", who);
  const audience = audienceDir(grants);
  const base = api.slice(1);

  if (/^\/releases\/current\/?$/.test(rest)) return releaseFile(lookup, `${base}/releases/current/${audience}index.json`);
  if ((m = /^\/exports\/scores\.(csv|jsonl)$/.exec(rest))) {
    return releaseFile(lookup, `${base}/exports/${audience}scores.${m[1]}`,
      { "Content-Disposition": attachment(release.id, m[1]) });
  }
  if (/^\/configuration\/riskscores?models\/?$/.test(rest)) {
    return releaseFile(lookup, `${base}/configuration/riskscoremodels/${audience}index.json`);
  }
  let list;
  if (/^\/configuration\/countries\/?$/.test(rest)) {
    list = await listVariant(query, release, lookup, { code: "code", name: "name", order: "model",
      orderings: release.country_orderings });
    if (list.bad) return json(400, list.bad);
    return releaseFile(lookup, `${base}/configuration/countries/${list.variant}index.json`);
  }
  let code;
  if ((m = /^\/riskscores\/country\/([^/]+)\/?$/.exec(rest))) {
    code = await lookup("countries", asciiLower(m[1]));
    if (code === undefined) return json(404, "Not found.");
    return releaseFile(lookup, `${base}/riskscores/country/${code}/${audience}index.json`);
  }
  if ((m = /^\/riskscores\/([a-z][a-z0-9_]*)\/?$/.exec(rest))) {
    if (await modelMissing(m[1], grants, lookup)) return json(404, "Not found.");
    list = await listVariant(query, release, lookup, { code: "country_code", name: "country_name",
      order: "ordering", orderings: release.score_orderings });
    if (list.bad) return json(400, list.bad);
    return releaseFile(lookup, `${base}/riskscores/${m[1]}/${list.variant}index.json`);
  }
  m = /^\/riskscores\/([a-z][a-z0-9_]*)\/([^/]+)\/?$/.exec(rest);
  if (await modelMissing(m[1], grants, lookup)) return json(404, "Not found.");
  code = await lookup("countries", asciiLower(m[2]));
  if (code === undefined) return json(404, "Not found.");
  return releaseFile(lookup, `${base}/riskscores/${m[1]}/${code}/index.json`);
}

export async function answer(request, release, lookup, platform) {
  const path = normalise(request.path);
  const result = await route(request, path, release, lookup, platform);
  const page = /^\/(?:docs(?:\/.*)?)?$/.test(path === null ? request.path : path);
  return finish(result, release, request.method, page);
}
