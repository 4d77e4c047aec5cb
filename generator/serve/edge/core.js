// The country risk API's routing and key check at the edge of a CDN: what nginx.conf does, for a
// Cloudflare Worker or a CloudFront Function. No framework, no I/O: `answer` takes the request, the
// release's settings and a lookup into its tables and the hashed keys, and says which file of the
// release to serve, with which headers, or which JSON error to send.
//
//   answer({method, path, query, authorization, acceptDatetime}, release, lookup, platform)
//     → Promise<{status, headers, body?} or {status, headers, file, size, mtime, sha256}>
//
// `path` and `query` are as the client sent them (percent-escapes kept); `authorization` the header's
// value, "" when absent, null when sent twice; `acceptDatetime` the header's value or "". `release`
// holds the live release's settings (id, prefix, cache_control, compressed_over), the
// `immutable` Cache-Control of release-scoped answers, the TimeGate's table (`gate`) and the route
// table (`routes`: routes.py's edge_table, the one URL grammar every server is generated from; this
// file names no route of its own). `lookup(table, key, release)` answers from a release's tables
// (countries, country_names, models, files, users; `timeline`'s files: the list of releases and the
// TimeMap), the keys, and `states`: each id answered or gone, as [state (k kept, s staged, g gone), when
// it first went live (an HTTP-date) or null]. In a Worker and the origin-request Lambda@Edge from the
// description bundled with them and the releases' manifests in the bucket (manifests.js); in the
// benchmarks from memory (benchmarks/edge_core.mjs). A file answer names the release it is of (`release`) and the
// SHA-256 of its body (`sha256`: the object it is stored as).
// `platform` is {keyDigest, atob, btoa} (keys are stored only as digests: SHA-1 of the site's key secret
// and the key, contract/key_format.py). Every rule below names the
// nginx.conf directive it mirrors; the contract tests run the same cases against nginx and this.
//
// Written in the JavaScript CloudFront Functions run (cloudfront-js-2.0; checked with njs 0.7.9):
// no spread, destructuring, default parameters, optional chaining, for-of or catch without a binding.

import { BINARY, FOLDERS, HEADERS, LINK_TYPE, LINKS, NAMES, REDIRECT, TYPES } from "./contract.js";
import { acceptDatetimeMillis, asOfMillis, recorded, releaseAt, rfc3339 } from "./instants.js";
import {
  asciiLower, error, fill, header, json, link, mementoLinks, normalise, routeOfScoped, sameRoute, timeLinks, uriOf,
  digestField, user,
} from "./keycheck.js";
import { argument, audienceDir, variantFolder } from "./variants.js";

export { acceptDatetimeMillis, asOfMillis, error, json, normalise, releaseAt };

// The lookup of one release (or `timeline`): what routing asks, for the release answering.
function within(lookup, release) {
  const bound = (table, key) => lookup(table, key, release);
  bound.release = release;
  bound.parent = lookup;
  return bound;
}

// ---- the TimeGate (RFC 7089): the 302 to the release live at an instant (instants.js finds it) ----
// The path a past release answered a route under: RELEASES/{id} and the route's rest, but for the
// routes a release-scoped path answers as (the table's scope aliases: the release itself, what it
// changed) and the API root, whose past answer is the release itself.
function mementoPath(rest, scope, release) {
  let scoped = rest === "" ? "/" : rest;
  for (let i = 0; i < scope.aliases.length; i++) {
    if (sameRoute(rest, scope.aliases[i][1])) scoped = scope.aliases[i][0];
  }
  return `${scope.under}/${release}${uriOf(scoped, false)}`;
}

// The TimeGate's answer to a request that asks (asksInstant; as_of wins where both are sent): the 302
// to the release-scoped URL of the release live at that instant (the other arguments kept, as_of left
// out), or the 400/404/410 (a 404 too for an instant past the table's horizon: instants.js). `path` is
// normalised; `api` the prefix; `table` the route table; `site` the API's public address, which every
// Link URI starts with (RFC 7089 clients follow them as they are); `now`: no instant was asked.
export function timegate(path, query, acceptDatetime, gate, api, table, site, now) {
  const asOf = argument(query, "as_of");  // wins where both are sent; empty counts as absent
  const millis = asOf ? asOfMillis(asOf) : acceptDatetimeMillis(acceptDatetime);
  if (millis === null) return error(400, asOf ? "bad_as_of" : "bad_accept_datetime");
  const found = releaseAt(gate, millis, table.scope, now);
  if (!found.release) return found;
  const kept = query.split("&").filter((pair) => pair !== "" && asciiLower(pair.split("=")[0]) !== "as_of");
  const memento = mementoPath(path.slice(api.length), table.scope, found.release);
  const location = memento + (kept.length ? "?" + uriOf(kept.join("&"), true) : "");
  const original = uriOf(path, false) + (kept.length ? "?" + kept.join("&") : "");
  return json(302, fill(REDIRECT, { id: found.release, location }), Object.assign(header("location", location),
    header("link", fill(LINKS.redirect, { memento: mementoLinks(original, table.scope, site), site, location }))));
}

// RFC 7089's TimeGate of an original by its absolute URI ({site}{TIMEGATE}{URI}, the form archives and
// Memento clients use): `target` is the URI as sent after the TimeGate's prefix, `query` its query.
// Without Accept-Datetime (or as_of), the release live now. A URI that is not this API's, or not a
// route that has past answers, is a 404.
export function timegateOfUri(target, query, acceptDatetime, gate, api, table, site) {
  const own = originalOf(target, table, site);
  if (own === null) return error(404, "no_timegate", { uri: target, api: site + api });
  const now = !acceptDatetime && !argument(query, "as_of");  // no instant asked: the release served now
  return timegate(own, query, acceptDatetime || new Date().toUTCString(), gate, api, table, site, now);
}

// The path of the original an absolute URI names, where it is one of this API's routes with past
// answers (a TimeGate route), else null.
function originalOf(target, table, site) {
  const own = target.startsWith(`${site}/`) ? normalise(target.slice(site.length).replace(/[?#].*$/, "")) : null;
  const found = own === null ? null : match(table, own);
  return found !== null && found.rule.timegate ? own : null;
}

// The URI a TimeGate or TimeMap request names: the path as sent after `prefix` (no slashes merged, as
// nginx and normalise() would: `http://` stays whole).
export function uriAfter(rawPath, prefix) {
  return rawPath.slice(rawPath.indexOf(prefix) + prefix.length);
}

// RFC 7089's TimeMap of an original by its absolute URI ({site}{TIMEMAPS}{URI}): the original, its
// TimeGate, and each kept release that was live and in which the route answered this key (routed as
// that release answers it), dated when it first went live, oldest first. A URI that is not one of this
// API's routes with past answers is a 404.
export async function timemapOf(request, target, release, lookup, platform) {
  const table = release.routes;
  const site = release.site_url;
  const query = request.query.split("&").filter((pair) => pair !== "" && asciiLower(pair.split("=")[0]) !== "as_of")
    .join("&");
  const own = originalOf(target, table, site);
  if (own === null) {
    return error(404, "no_timemap", { uri: target, api: site + release.prefix });
  }
  const firstLive = {};  // each kept release that was live → when it first went live (ms)
  const rows = release.gate ? release.gate.split(",") : [];
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i].split(" ");
    if (row[2] === "k" && !Object.prototype.hasOwnProperty.call(firstLive, row[1])) firstLive[row[1]] = Number(row[0]);
  }
  const asked = Object.assign({}, request, { query, acceptDatetime: "" });
  const mementos = [];
  const ids = Object.keys(firstLive);
  for (let i = 0; i < ids.length; i++) {
    const scope = Object.assign({}, release, { id: ids[i], cache_control: release.immutable });
    const answered = await route(asked, own, scope, within(lookup, ids[i]), platform);
    if (answered.status === 200) mementos.push(ids[i]);
  }
  const uri = uriOf(own, false) + (query ? "?" + uriOf(query, true) : "");
  const date = (id) => new Date(firstLive[id]).toUTCString();
  const span = mementos.length ? [["from", date(mementos[0])], ["until", date(mementos[mementos.length - 1])]] : [];
  const links = [link(site + uri, "original"), link(`${site}${table.scope.timegate}${site}${uri}`, "timegate"),
    link(`${site}${table.scope.timemaps}${site}${uri}`, "self", [["type", LINK_TYPE]].concat(span))];
  for (let i = 0; i < mementos.length; i++) {
    const rel = [i === 0 ? "first" : "", i === mementos.length - 1 ? "last" : "", "memento"].filter((w) => w).join(" ");
    links.push(link(`${site}${mementoPath(own.slice(release.prefix.length), table.scope, mementos[i])}` +
      `${query ? "?" + uriOf(query, true) : ""}`, rel, [["datetime", date(mementos[i])]]));
  }
  return { status: 200, body: links.join(",\n") + "\n",
    headers: header("type", TYPES.link) };
}

function asksFor(query, acceptDatetime) {  // an instant: a non-empty as_of, or Accept-Datetime
  return argument(query, "as_of") !== "" || !!acceptDatetime;
}

// The route table (routes.py's edge_table): each rule's regex compiled once per table.
function rulesOf(table) {
  if (!table.compiled) {
    table.compiled = table.rules.map((rule) => Object.assign({ regex: new RegExp(rule.re) }, rule));
    table.pageRegex = new RegExp(table.pages);
    table.scopeRegex = new RegExp(`^${table.scope.under}/(${table.scope.id})(/[\\w./-]*)?$`);
    table.namedRegex = new RegExp(`^${table.scope.under}/(${table.scope.id})(?:/|$)`);
    table.refusedRegexes = table.scope.refused.map((pattern) => new RegExp(pattern));
  }
  return table.compiled;
}

// The rule a normalised path answers by, and its match; null where none does.
function match(table, path) {
  const rules = rulesOf(table);
  for (let i = 0; i < rules.length; i++) {
    const m = rules[i].regex.exec(path);
    if (m) return { rule: rules[i], m };
  }
  return null;
}

// Whether a request asks a route of the API for a past answer (RFC 7089's TimeGate: `Accept-Datetime`,
// or a non-empty `?as_of=` for clients that cannot set headers): nginx.conf's $timegate_asked. The
// rules marked `timegate` are TimeGates (the root, openapi.json, the keyed routes); the list of
// releases, the TimeMap, the releases under their id and a path that is no route are not.
export function asksInstant(path, query, acceptDatetime, table) {
  if (!asksFor(query, acceptDatetime)) return false;
  const found = match(table, path);
  return found !== null && found.rule.timegate;
}

async function modelMissing(model, grants, lookup) {  // `map $model_kind $model_missing`
  const kind = await lookup("models", model);
  if (kind === "public") return false;
  return !(kind === "custom" && grants !== undefined && grants.models.includes(model));
}

function contentType(file) {
  return TYPES[file.slice(file.lastIndexOf(".") + 1)];
}

// Accept-Encoding as nginx's gzip_static and brotli_static read it (RFC 9110 §12.5.3): a coding's q is
// the first item naming it (in any letter case): 1 with no parameter, 0 with another parameter than q;
// 0 for a coding not named (`*` names none), which is not taken.
export function quality(header, coding) {
  const items = header.split(",");
  for (let i = 0; i < items.length; i++) {
    const m = /^\s*([^\s;]*)\s*(;\s*q=([\d.]*)|;)?/i.exec(items[i]);
    if (asciiLower(m[1]) === coding) return m[2] ? +m[3] || 0 : 1;
  }
  return 0;
}

// gzip_static/brotli_static: nginx has twins only beside text files over `compressed_over` bytes
// (none beside a BINARY one: a tile's hashes do not compress), and prefers brotli whenever the client
// takes it. Returns "br", "gzip" or null.
export function encoding(accepted, size, release, file) {
  if (size <= release.compressed_over || BINARY.indexOf(file.slice(file.lastIndexOf(".") + 1)) >= 0) return null;
  return quality(accepted, "br") > 0 ? "br" : quality(accepted, "gzip") > 0 ? "gzip" : null;
}

// The serving contract's headers (generator/contract/serving.py: HEADERS), on every answer (errors too), as
// nginx.conf's add_header lines send them. `page`: a page route (an HTML page or its script), whose
// 2xx and 3xx answers get the pages' CSP.
export function finish(result, release, method, page) {
  const headers = result.headers;
  const status = result.status;
  const ok = status >= 200 && status < 400;
  const own = HEADERS.redirects.indexOf(status) >= 0 ? HEADERS.redirect_cache_control  // nothing to validate
    : result.cache ? HEADERS.route_cache[result.cache] : "";  // a route's own (the log's): serving.ROUTE_CACHE
  headers[NAMES.cache] = ok ? own || release.cache_control : HEADERS.error_cache_control;
  Object.assign(headers, HEADERS.every, HEADERS.by_status[status] || {}, method === "OPTIONS" ? HEADERS.preflight : {});
  headers[NAMES.csp] = page && ok ? HEADERS.csp.page : HEADERS.csp.data;
  headers[NAMES.release] = release.id;
  return result;
}

// `try_files FILE =404`: a file of the release (mtime, size, SHA-256, its encodings' SHA-256s by coding, from
// the files table), or a JSON 404. Its Unencoded-Digest, and its Repr-Digest as stored (the caller sets its
// coding's: codedDigest), from the SHA-256 (njs reads files on disk, with none: nginx's maps send them).
async function releaseFile(lookup, name, extra) {
  const known = await lookup("files", name);
  if (known === undefined) return error(404, "not_found");
  const digest = known[2] ? digestField(known[2]) : null;  // njs's stat of a file has no hash
  const digests = digest ? Object.assign(header("digest", digest), header("unencoded", digest)) : {};
  const headers = Object.assign(header("type", contentType(name)),
    header("modified", new Date(known[0] * 1000).toUTCString()), digests, extra);
  return { status: 200, release: lookup.release, file: name, size: known[1], sha256: known[2], mtime: known[0],
    codings: known[3] || {}, headers };
}

// The key check: the user, or the refusal — the 403, or for a rule that challenges and a request without
// credentials, the 401 that asks for them (its WWW-Authenticate: finish(), as for every 401).
async function refusal(request, lookup, platform, challenge) {
  const checked = request.identity;  // a key checked before (the CloudFront key gate): its user, or ""
  const sent = request.authorization || "";
  const found = checked ? checked.user : await user(sent, lookup, platform);
  const expired = typeof found === "number" ? found : checked && checked.expired;
  const who = typeof found === "string" ? found : "";
  request.user = who;  // whom the answer was for: the Worker's usage line
  if (who) return { who };
  const missing = checked ? checked.missing : sent === "";
  if (missing && challenge) return { refused: error(401, "not_provided") };
  if (expired) return { refused: error(403, "expired_key", { expired: rfc3339(expired) }) };
  return { refused: error(403, missing ? "not_provided" : (checked ? checked.mistyped : found === null) ? "not_our_key" : "invalid_key") };
}

// nginx.conf's release-scoped location: RELEASES/{id}/<route> answered as that release answered
// <route>, with today's rules and the key's grants now; 410 once pruned, 404 for an id never built (or
// staged, to a key that may not preview). Its answers name that release (`scope`).
async function scopedRoute(request, m, release, lookup, platform) {
  const id = m[1];
  const table = release.routes;
  const scope = Object.assign({}, release, { id, cache_control: release.immutable });
  const rest = m[2] || "";
  // the release itself is its release document, …/changes/ what it changed (nginx.conf's $scoped_route)
  // the releases' own routes are no route there (their expressions compiled by answer, once per table)
  const target = table.refusedRegexes.some((refused) => refused.test(rest)) ? null
    : routeOfScoped(rest, table.scope);
  const found = target === null ? null : match(table, target);
  // a route answered without a key is so under a release's id too ($scoped_auth_failure); a key sent
  // still says whether it may see a staged release
  const checked = await refusal(request, within(lookup, release.id), platform);
  if (checked.refused && !(found && !found.rule.key)) return { scope, result: checked.refused };
  const known = await lookup("states", id);
  const state = known ? known[0] : undefined;
  if (state === "g") return { scope, result: error(410, "release_gone", { id, list: table.scope.list }) };
  // a staged release is no release at all to a key that may not preview (its grants looked up only then)
  const hidden = state === "s" && !(await grantsOf(request, checked.who, lookup, release.id) || {}).preview;
  if (state === undefined || hidden) return { scope, result: error(404, "no_release", { id, list: table.scope.list }) };
  const result = target === null ? error(404, "not_found") : await route(Object.assign({}, request,
    { acceptDatetime: "" }), target, scope, within(lookup, id), platform);
  if (result.status < 400) {
    if (known[1]) result.headers[NAMES.memento] = known[1];
    result.headers[NAMES.link] = mementoLinks(`${target}${request.query ? "?" + request.query : ""}`, table.scope,
      release.site_url);
  }
  return { scope, result };
}

// The grants of a user (the custom models it may use, its audience variant, whether it may preview):
// given by whoever checked the key before (`request.identity`), else looked up.
function grantsOf(request, who, lookup, id) {
  return request.identity ? request.identity.grants : lookup("users", who, id);
}

// A rule's segment values, checked: a model must be one the key may see, a country code one of the
// release's (answered as its code); a 404 otherwise.
async function segmentValues(rule, m, grants, lookup) {
  const values = {};
  for (let i = 0; i < rule.segments.length; i++) {
    const name = rule.segments[i][0];
    const kind = rule.segments[i][1];
    const raw = m[i + 1];
    if (kind === "model" && await modelMissing(raw, grants, lookup)) return null;
    if (kind === "country") {
      const code = await lookup("countries", asciiLower(raw));
      if (code === undefined) return null;
      values[name] = code;
    } else {
      values[name] = raw;
    }
  }
  return values;
}

// Every location of nginx.conf: the rule the path answers by, its key check (403), its segments
// (404), its query variant (400), then its file — of the release answering, or of the list of
// releases and the TimeMap (`timeline`).
async function route(request, path, release, lookup, platform) {
  const method = request.method;
  if (path === null) return error(400, "bad_request");  // a request nginx refuses before reading it further
  if (method === "OPTIONS") return { status: 204, headers: {} };  // preflight before any key check
  if (method !== "GET" && method !== "HEAD") return error(405, "method", { method });
  const table = release.routes;
  const query = request.query;
  const found = match(table, path);
  if (found === null) return error(404, "not_found");
  const rule = found.rule;
  if (rule.timegate && asksFor(query, request.acceptDatetime)) {  // the TimeGate, once the key is checked
    const checked = await refusal(request, lookup, platform);
    if (checked.refused) return checked.refused;
    const gate = recorded(release.gate, await lookup("record", "", ""));
    return timegate(path, query, request.acceptDatetime, gate, release.prefix, table, release.site_url);
  }
  let grants;
  if (rule.key) {
    const checked = await refusal(request, lookup, platform, rule.challenge);
    if (checked.refused) return checked.refused;
    grants = await grantsOf(request, checked.who, lookup);
  }
  if (rule.status) return { status: rule.status, headers: {} };
  if (rule.answer === "timegate") {  // {site}{TIMEGATE}{URI}: the URI as sent, after the prefix
    return timegateOfUri(uriAfter(request.path, table.scope.timegate), query, request.acceptDatetime,
      recorded(release.gate, await lookup("record", "", "")), release.prefix, table, release.site_url);
  }
  if (rule.answer === "timemap") {  // {site}{TIMEMAPS}{URI}, with its own Cache-Control (finish)
    const map = timemapOf(request, uriAfter(request.path, table.scope.timemaps), release, lookup.parent, platform);
    return Object.assign(await map, { cache: rule.cache });
  }
  const values = await segmentValues(rule, found.m, grants, lookup);
  if (values === null) return error(404, "not_found");
  values.audience = audienceDir(grants);
  values.preview = grants && grants.preview ? FOLDERS.preview : "";
  if (rule.variants) {
    const variant = await variantFolder(query, rule.variants, lookup);
    if (variant.bad) return variant.bad;
    values.variant = variant.folder;
  }
  let download;  // an export's download name (the table's `download`: which release and model it is)
  if (rule.download) {
    values.release = release.id;
    const name = fill(values.model ? table.download.model : table.download.all, values);
    download = header("download", fill(HEADERS.download, { name }));
  }
  const files = rule.root === "timeline" ? within(lookup.parent, "timeline") : lookup;
  const answered = await releaseFile(files, fill(rule.file, values), download);
  if (rule.cache) answered.cache = rule.cache;  // its own Cache-Control, not the operator's (finish)
  if (rule.timegate && answered.status === 200) {  // an original names its TimeGate (RFC 7089)
    answered.headers[NAMES.link] = timeLinks(`${request.path}${query ? "?" + query : ""}`, table.scope, release.site_url);
  }
  return answered;
}

export async function answer(request, release, lookup, platform) {
  // `authorization` null: the header came twice (which key would be meant?), nginx's 400
  const path = request.authorization === null ? null : normalise(request.path);
  rulesOf(release.routes);
  const scopeRegex = release.routes.scopeRegex;
  let scoped = null;
  const m = path === null ? null : scopeRegex.exec(path);
  if (m && (request.method === "GET" || request.method === "HEAD")) {  // other methods: route's 204 or 405
    scoped = await scopedRoute(request, m, release, lookup, platform);
  }
  const result = scoped ? scoped.result : await route(request, path, release, within(lookup, release.id), platform);
  const page = release.routes.pageRegex.test(path === null ? request.path : path);
  // nginx's $scoped_id: X-Release names the release a path names, as sent
  const named = release.routes.namedRegex.exec(request.path);
  return finish(result, scoped ? scoped.scope : (named ? Object.assign({}, release, { id: named[1] }) : release),
    request.method, page);
}
