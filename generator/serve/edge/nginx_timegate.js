// nginx's TimeGate (njs: `js_content timegate.respond` in runtime/timegate.conf): the edge core above
// decides, from the table of live periods `riskapi serve` rendered into $timegate_table. nginx.conf
// sends a request here only after its key check, for a path that is a TimeGate and asks for an instant
// (Accept-Datetime, ?as_of=); its other headers (CORS, Vary, X-Release, Cache-Control) are nginx's.
// DEPLOYED, declared before it by serve: `routes`, the route table (routes.py's edge_table); `contract`, the
// serving contract (serving.py's edge_contract); where the releases, their lookup tables and the horizon
// are. $site_url is the address every Link starts with.
import fs from "fs";
import { DEFAULT_TYPE, NAMES, PUBLIC_AUDIENCE, TYPES, useContract } from "./contract.js";
import { asksInstant, error, finish, normalise, timegate, timegateOfUri, timemapOf, uriAfter } from "./core.js";
import { rfc3339, withHorizon } from "./instants.js";
import { asciiLower, mistyped } from "./keycheck.js";

useContract(DEPLOYED.contract);
const ROUTES = DEPLOYED.routes;
const RELEASES_DIR = DEPLOYED.releases, TABLES_DIR = DEPLOYED.tables, HORIZON_FILE = DEPLOYED.horizon;

// The table of live periods with the horizon `riskapi serve` moves on while nothing changes (HORIZON_FILE,
// in ms: the record is whole up to it, serve/runtime.py); the table's own horizon where there is none.
function gateOf(r) {
  const table = r.variables.timegate_table;
  let at = "";
  try {
    at = fs.readFileSync(HORIZON_FILE, "utf8").trim();
  } catch (missing) {
    return table;
  }
  return /^[0-9]+$/.test(at) ? withHorizon(table, Number(at)) : table;
}

function respond(r) {
  const uri = r.variables.request_uri;
  const at = uri.indexOf("?");
  const path = normalise(at < 0 ? uri : uri.slice(0, at));
  const query = at < 0 ? "" : uri.slice(at + 1);
  const asked = r.headersIn["Accept-Datetime"] || "";
  let result = path === null ? error(400, "bad_request")
    : timegate(path, query, asked, gateOf(r), ROUTES.scope.prefix, ROUTES, r.variables.site_url);
  if (path !== null && !asksInstant(path, query, asked, ROUTES)) {
    result = error(500, "server");  // nginx.conf's test and the core's differ: a bug
  }
  send(r, result);
}

// `js_content timegate.respondToUri`: Memento's TimeGate of an original by its absolute URI
// ({site}/api/v1/timegate/{URI}), the URI as sent after the prefix.
function respondToUri(r) {
  const uri = r.variables.request_uri;
  const at = uri.indexOf("?");
  const target = uriAfter(at < 0 ? uri : uri.slice(0, at), ROUTES.scope.timegate);
  send(r, timegateOfUri(target, at < 0 ? "" : uri.slice(at + 1), r.headersIn["Accept-Datetime"] || "",
    gateOf(r), ROUTES.scope.prefix, ROUTES, r.variables.site_url));
}

// `js_content timegate.respondTimemap`: the TimeMap of an original by its absolute URI. Each kept
// release is routed as the core routes it, over that release's files (RELEASES_DIR) and its lookup tables
// (TABLES_DIR/<id>.json: contract/filters.py's, written by serve with this configuration), for the
// key nginx checked ($api_user, its grant set, its audience here).
const routings = {};

function releaseTables(id) {
  if (!routings[id]) routings[id] = JSON.parse(fs.readFileSync(`${TABLES_DIR}/${id}.json`, "utf8"));
  return routings[id];
}

function onDisk(table, key, id) {  // the core's lookup: a file is there or not; the other tables from routing.json
  if (table === "files") {
    try {
      fs.accessSync(`${RELEASES_DIR}/${id}/${key}`);
      return [0, 0];
    } catch (missing) {
      return undefined;
    }
  }
  const rows = releaseTables(id)[table];
  return rows && Object.prototype.hasOwnProperty.call(rows, key) ? rows[key] : undefined;
}

function respondTimemap(r) {
  const uri = r.variables.request_uri;
  const at = uri.indexOf("?");
  const raw = at < 0 ? uri : uri.slice(0, at);
  const grants = r.variables.grant_set;
  const request = { method: "GET", path: raw, query: at < 0 ? "" : uri.slice(at + 1), authorization: "",
    acceptDatetime: "", identity: { user: r.variables.api_user, missing: false, grants: {
      models: grants && grants !== PUBLIC_AUDIENCE ? grants.split("+") : [], audience: r.variables.audience || PUBLIC_AUDIENCE,
      preview: r.variables.preview === "yes" } } };
  const release = { id: r.variables.scope, prefix: ROUTES.scope.prefix, routes: ROUTES, gate: r.variables.timegate_table,
    site_url: r.variables.site_url };
  timemapOf(request, uriAfter(raw, ROUTES.scope.timemaps), release, onDisk, null).then((result) => send(r, result));
}

function send(r, result) {  // the core's answer through nginx: its headers but those nginx sets itself
  const names = Object.keys(result.headers);
  for (let i = 0; i < names.length; i++) {
    if (names[i] !== NAMES.location && names[i] !== NAMES.type) r.headersOut[names[i]] = result.headers[names[i]];
  }
  if (result.status === 302) {  // r.return would send nginx's HTML page: the JSON body, by hand
    r.status = 302;
    r.headersOut[NAMES.location] = result.headers[NAMES.location];
    r.headersOut[NAMES.type] = TYPES[DEFAULT_TYPE];
    r.sendHeader();
    if (r.method !== "HEAD") r.send(result.body);  // a HEAD answer has no body (Memento clients send HEAD)
    r.finish();
  } else {
    r.headersOut[NAMES.type] = result.headers[NAMES.type] || TYPES[DEFAULT_TYPE];
    r.return(result.status, result.body);
  }
}

// `js_header_filter` of nginx's 416 (runtime/timegate.conf): the file's headers, set before its range
// filter found the range past the end, dropped but for what the error needs (its type, length and
// Content-Range); the headers of every error set, for the release answering.
function errorHeaders(r) {
  const names = Object.keys(r.headersOut);
  for (let i = 0; i < names.length; i++) {
    if (!/^Content-(?:Range|Type|Length)$/i.test(names[i])) delete r.headersOut[names[i]];
  }
  const headers = finish({ status: r.status, headers: {} }, { id: r.variables.scope }, "GET", false).headers;
  const added = Object.keys(headers);
  for (let i = 0; i < added.length; i++) r.headersOut[added[i]] = headers[added[i]];
}

// `js_set $basic_pair` (runtime/http.conf): HTTP Basic credentials as USER:KEY, which the key map
// matches ignoring case; "" for any other header, or Base64 that is not exactly its text's encoding
// (the edge core's key check reads them the same way).
function basicPair(r) {
  const m = /^\s*basic\s+([A-Za-z0-9+/]+=*)\s*$/i.exec(r.headersIn.Authorization || "");
  if (!m) return "";
  const decoded = Buffer.from(m[1], "base64").toString();
  return Buffer.from(decoded).toString("base64") === m[1] && decoded.includes(":") ? decoded : "";
}

// `js_set $lowered_key` (runtime/http.conf): a key sent with upper-case letters, lower-cased as keys are kept
// (nginx's maps match any letter case, its SHA-1 does not); read only for such a key.
function loweredKey(r) {
  const credential = r.variables.credential || "";
  return asciiLower(credential.slice(credential.indexOf(":") + 1));
}

// `js_set $unexpired_user` (runtime/http.conf): the key's user while the clock is before its expiry (ms,
// runtime/keys.conf's $key_expires), else "" — read only for a key that has one.
function unexpiredUser(r) {
  return Date.now() < Number(r.variables.key_expires) ? r.variables.key_user : "";
}

// `js_set $key_refusal` (runtime/http.conf): the body of a refused key's 403, read only when one is refused —
// a key of the API's format whose checksum does not match is no key of this API (mistyped), as at the edges.
function keyRefusal(r) {
  const credential = r.variables.credential || "";
  const expires = Number(r.variables.key_expires);
  if (r.variables.key_user && expires) return error(403, "expired_key", { expired: rfc3339(expires) }).body;
  return error(403, mistyped(asciiLower(credential.slice(credential.indexOf(":") + 1))) ? "not_our_key"
    : "invalid_key").body;
}

// what nginx calls (js_content, js_set): the bundle's default export (scripts/edge_bundles.py)
const handlers = { respond, respondToUri, respondTimemap, errorHeaders, basicPair, loweredKey, unexpiredUser, keyRefusal };
