// What every server of the country risk API does before routing: the path as nginx reads it, the key
// check (which user a credential belongs to), and the Memento Links an answer carries (what the key gate
// works out for CloudFront's viewer-response). The edge core (core.js) imports it; the CloudFront
// viewer-request function is this and its handler alone (cloudfront_request.js): the key gate.
//
// Written in the JavaScript CloudFront Functions run (cloudfront-js-2.0; checked with njs 0.7.9):
// no spread, destructuring, default parameters, optional chaining, for-of or catch without a binding.

import { AUTHORIZATION, DEFAULT_TYPE, ERRORS, KEY_FORMAT, LINK, LINK_PARAMETER, LINKS, NAMES, TYPES } from "./contract.js";

// A JSON answer {"detail": …}: the API's errors and the TimeGate's 302.
export function json(status, detail, extra) {
  return { status, body: JSON.stringify({ detail }), headers: Object.assign(header("type", TYPES[DEFAULT_TYPE]), extra) };
}

// One header, by its name in the contract (NAMES: "type", "location", …).
export function header(name, value) {
  const one = {};
  one[NAMES[name]] = value;
  return one;
}

const BASE64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// Repr-Digest's or Unencoded-Digest's value from a SHA-256 in hex: serving.digest_field, which nginx's maps
// hold (core.js sets them on a file's answer).
export function digestField(hex) {
  let out = "";
  for (let i = 0; i < hex.length; i += 6) {  // three bytes → four characters; the last two bytes → three and "="
    const part = hex.slice(i, i + 6);
    const bits = parseInt(part.padEnd(6, "0"), 16);
    for (let j = 0; j <= part.length / 2; j++) out += BASE64[(bits >> (18 - 6 * j)) & 63];
  }
  return `sha-256=:${out.padEnd(Math.ceil(out.length / 4) * 4, "=")}:`;
}

export function fill(template, values) {  // a template's {slots} filled
  return template.replace(/\{(\w+)\}/g, (whole, name) => values[name]);
}

// One of the contract's errors (generator/contract/serving.py: ERRORS), its {slots} filled from `values`.
export function error(status, name, values, extra) {
  return json(status, fill(ERRORS[name], values || {}), extra);
}

export function asciiLower(text) {
  return text.replace(/[A-Z]/g, (c) => c.toLowerCase());
}

// nginx decodes the path, merges slashes and resolves dot segments before it matches a location; a
// path that climbs above the root is its 400.
export function normalise(rawPath) {
  let decoded;
  try {
    decoded = decodeURIComponent(rawPath);
  } catch (malformed) {  // bytes that are no UTF-8 stay escaped, as nginx does not read them as text
    decoded = rawPath;
  }
  if (/%(?![\dA-F]{2})|%00/i.test(rawPath)) return null;  // a broken escape or a NUL: nginx's 400
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

// `map $http_authorization $credential`: the first of the contract's Authorization forms that matches
// (apikey USER:KEY, Bearer/Token KEY, Basic, the bare KEY): [its prefix, its credential]. A form with a
// prefix (Basic's) sends its credential in Base64, which the server decodes.
function credential(header) {
  const forms = authorizationForms();
  for (let i = 0; i < forms.length; i++) {
    const m = forms[i][0].exec(header);
    if (m) return [forms[i][1], m[1]];
  }
  return ["", ""];
}

// The contract's forms as [compiled regular expression, prefix], compiled once per contract given.
let compiledForms = [], compiledFrom = null;
function authorizationForms() {
  if (compiledFrom !== AUTHORIZATION) {
    compiledForms = [];
    for (let i = 0; i < AUTHORIZATION.length; i++) {
      const form = AUTHORIZATION[i];  // its regular expression, its prefix, whether any letter case
      compiledForms.push([new RegExp(form[0], form[2] ? "i" : ""), form[1]]);
    }
    compiledFrom = AUTHORIZATION;
  }
  return compiledForms;
}

// Whether a (lower-cased) key claims the API's format (its prefix) but is not one of its keys: another
// length, or a checksum (the CRC-32 of what comes before it, in base 36) that does not match
// (contract/key_format.py). Such a key is refused without a lookup. Every key of the format is checked, so
// its expression is compiled once per contract given, as the Authorization forms are.
let keyPattern = null, keyPatternFrom = null;
export function mistyped(key) {
  if (key.slice(0, KEY_FORMAT.prefix.length) !== KEY_FORMAT.prefix) return false;
  if (keyPatternFrom !== KEY_FORMAT) {
    keyPattern = new RegExp(KEY_FORMAT.pattern);
    keyPatternFrom = KEY_FORMAT;
  }
  const m = keyPattern.exec(key);
  if (!m) return true;
  let crc = -1;
  for (let i = 0; i < m[1].length; i++) {
    crc ^= m[1].charCodeAt(i);
    for (let bit = 0; bit < 8; bit++) crc = (crc >>> 1) ^ (0xEDB88320 & -(crc & 1));
  }
  let sum = ((crc ^ -1) >>> 0).toString(36);
  while (sum.length < KEY_FORMAT.checksum_characters) sum = "0" + sum;
  return sum !== m[2];
}

// `include runtime/keys.conf`: the user a credential belongs to, or "" (keys are known by digest only); null
// for a key of the API's format that is none of its keys (mistyped), never looked up; for a key past its
// expiry, the instant it expired (ms). `lookup("keys", digest)` gives the key's entry: {user, expires}.
export async function user(header, lookup, platform) {
  const sent = credential(header);
  let given = asciiLower(sent[1]);  // nginx's map keys ignore ASCII case
  if (sent[0]) {  // Base64 (Basic): decoded, its letter case kept
    const encoded = sent[1];
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
  const key = asciiLower(colon >= 0 ? given.slice(colon + 1) : given);  // kept in lower case, as nginx folds it
  if (!key) return "";
  if (mistyped(key)) return null;
  const digest = await platform.keyDigest(key);  // njs reads no await in arguments
  const entry = await lookup("keys", digest);
  // the user's name in any letter case, as nginx's map matches it (owners are stored in lower case)
  if (entry === undefined || (name !== null && asciiLower(name) !== entry.user)) return "";
  return entry.expires !== undefined && Date.now() >= entry.expires ? entry.expires : entry.user;
}


// ---- the Links from an answer to its past (RFC 7089), every URI absolute (`site`) -----------------
export function sameRoute(a, b) {  // two paths alike but for a final "/"
  return a.replace(/\/$/, "") === b.replace(/\/$/, "");
}

// The route a release-scoped path's rest answers as: the release itself and what it changed are the
// route table's scope aliases (`scope`: edge_table's), any other rest the route of that path.
export function routeOfScoped(rest, scope) {
  for (let i = 0; i < scope.aliases.length; i++) {
    if (sameRoute(rest, scope.aliases[i][0])) return scope.prefix + scope.aliases[i][1];
  }
  return scope.prefix + rest;
}

// The one encoder of what a request sent that an answer echoes in a header or a link-format body
// (Location, Link, a TimeMap): every character a URI may not hold (RFC 3986) percent-encoded as UTF-8,
// so nothing a client sends can end a <URI> or add a link. `sent`: the text as sent, its escapes kept
// (a `%` that begins none is encoded); else a decoded path, whose `%`, `?` and `#` are text.
export function uriOf(text, sent) {
  const unsafe = sent ? /%(?![0-9A-Fa-f]{2})|[\x00-\x20"#<>[\\\]^`{|}\x7F]/g : /[\x00-\x20"#%<>?[\\\]^`{|}\x7F]/g;
  return text.replace(unsafe, (c) => (c.charCodeAt(0) < 16 ? "%0" : "%") + c.charCodeAt(0).toString(16).toUpperCase())
    .replace(/[^\x00-\x7F]+/g, utf8Escapes);
}

function utf8Escapes(run) {  // non-ASCII text as UTF-8 escapes; a lone surrogate as U+FFFD's
  try {
    return encodeURIComponent(run);
  } catch (lone) {
    return "%EF%BF%BD";
  }
}

// An original's TimeGate and TimeMap (`uri`: its path and query, as sent): the contract's LINKS.original.
export function timeLinks(uri, scope, site) {
  return fill(LINKS.original, { site, timegate: scope.timegate, timemaps: scope.timemaps, uri: uriOf(uri, true) });
}

// A memento's Links: its original (`uri`, as sent), and the original's TimeGate and TimeMap.
export function mementoLinks(uri, scope, site) {
  return fill(LINKS.memento, { site, uri: uriOf(uri, true), original: timeLinks(uri, scope, site) });
}

// One link of a TimeMap, its parameters ([name, value] pairs) in order.
export function link(uri, rel, parameters) {
  return fill(LINK, { uri, rel }) + (parameters || []).map((pair) => fill(LINK_PARAMETER, { name: pair[0],
    value: pair[1] })).join("");
}
