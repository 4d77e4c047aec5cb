// generator/serve/edge/contract.js
var TYPES, DEFAULT_TYPE, HEADERS, LINK_TYPE, PAGE_TYPES, ERRORS;
var REDIRECT, LINK, LINK_PARAMETER, LINKS, STALE_RETRY_AFTER, RECORD_RETRY_AFTER, FOLDERS;
var NO_MATCH, PUBLIC_AUDIENCE, STORE, NAMES, BINARY, AUTHORIZATION, KEY_FORMAT, HANDOFF, CODE_SENT;
function useContract(contract) {
  TYPES = contract.TYPES;
  DEFAULT_TYPE = contract.DEFAULT_TYPE;
  HEADERS = contract.HEADERS;
  LINK_TYPE = contract.LINK_TYPE;
  PAGE_TYPES = contract.PAGE_TYPES;
  ERRORS = contract.ERRORS;
  REDIRECT = contract.REDIRECT;
  LINK = contract.LINK;
  LINK_PARAMETER = contract.LINK_PARAMETER;
  LINKS = contract.LINKS;
  STALE_RETRY_AFTER = contract.STALE_RETRY_AFTER;
  RECORD_RETRY_AFTER = contract.RECORD_RETRY_AFTER;
  FOLDERS = contract.FOLDERS;
  NO_MATCH = contract.NO_MATCH;
  PUBLIC_AUDIENCE = contract.PUBLIC_AUDIENCE;
  STORE = contract.STORE;
  NAMES = contract.NAMES;
  BINARY = contract.BINARY;
  AUTHORIZATION = contract.AUTHORIZATION;
  KEY_FORMAT = contract.KEY_FORMAT;
  HANDOFF = contract.HANDOFF;
  CODE_SENT = contract.CODE_SENT;
}

// generator/serve/edge/keycheck.js
function json(status, detail, extra) {
  return { status, body: JSON.stringify({ detail }), headers: Object.assign(header("type", TYPES[DEFAULT_TYPE]), extra) };
}
function header(name, value) {
  const one = {};
  one[NAMES[name]] = value;
  return one;
}
var BASE64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
function digestField(hex) {
  let out = "";
  for (let i = 0; i < hex.length; i += 6) {
    const part = hex.slice(i, i + 6);
    const bits = parseInt(part.padEnd(6, "0"), 16);
    for (let j = 0; j <= part.length / 2; j++) out += BASE64[bits >> 18 - 6 * j & 63];
  }
  return `sha-256=:${out.padEnd(Math.ceil(out.length / 4) * 4, "=")}:`;
}
function fill(template, values) {
  return template.replace(/\{(\w+)\}/g, (whole, name) => values[name]);
}
function error(status, name, values, extra) {
  return json(status, fill(ERRORS[name], values || {}), extra);
}
function asciiLower(text) {
  return text.replace(/[A-Z]/g, (c) => c.toLowerCase());
}
function normalise(rawPath) {
  let decoded;
  try {
    decoded = decodeURIComponent(rawPath);
  } catch (malformed) {
    decoded = rawPath;
  }
  if (/%(?![\dA-F]{2})|%00/i.test(rawPath)) return null;
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
function credential(header2) {
  const forms = authorizationForms();
  for (let i = 0; i < forms.length; i++) {
    const m = forms[i][0].exec(header2);
    if (m) return [forms[i][1], m[1]];
  }
  return ["", ""];
}
var compiledForms = [], compiledFrom = null;
function authorizationForms() {
  if (compiledFrom !== AUTHORIZATION) {
    compiledForms = [];
    for (let i = 0; i < AUTHORIZATION.length; i++) {
      const form = AUTHORIZATION[i];
      compiledForms.push([new RegExp(form[0], form[2] ? "i" : ""), form[1]]);
    }
    compiledFrom = AUTHORIZATION;
  }
  return compiledForms;
}
var keyPattern = null, keyPatternFrom = null;
function mistyped(key) {
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
    for (let bit = 0; bit < 8; bit++) crc = crc >>> 1 ^ 3988292384 & -(crc & 1);
  }
  let sum = ((crc ^ -1) >>> 0).toString(36);
  while (sum.length < KEY_FORMAT.checksum_characters) sum = "0" + sum;
  return sum !== m[2];
}
async function user(header2, lookup, platform) {
  const sent = credential(header2);
  let given = asciiLower(sent[1]);
  if (sent[0]) {
    const encoded = sent[1];
    let decoded;
    try {
      decoded = platform.atob(encoded);
    } catch (malformed) {
      return "";
    }
    if (platform.btoa(decoded) !== encoded || !decoded.includes(":")) return "";
    given = decoded;
  }
  const colon = given.indexOf(":");
  const name = colon >= 0 ? given.slice(0, colon) : null;
  const key = asciiLower(colon >= 0 ? given.slice(colon + 1) : given);
  if (!key) return "";
  if (mistyped(key)) return null;
  const digest = await platform.keyDigest(key);
  const entry = await lookup("keys", digest);
  if (entry === void 0 || name !== null && asciiLower(name) !== entry.user) return "";
  return entry.expires !== void 0 && Date.now() >= entry.expires ? entry.expires : entry.user;
}
function sameRoute(a, b) {
  return a.replace(/\/$/, "") === b.replace(/\/$/, "");
}
function routeOfScoped(rest, scope) {
  for (let i = 0; i < scope.aliases.length; i++) {
    if (sameRoute(rest, scope.aliases[i][0])) return scope.prefix + scope.aliases[i][1];
  }
  return scope.prefix + rest;
}
function uriOf(text, sent) {
  const unsafe = sent ? /%(?![0-9A-Fa-f]{2})|[\x00-\x20"#<>[\\\]^`{|}\x7F]/g : /[\x00-\x20"#%<>?[\\\]^`{|}\x7F]/g;
  return text.replace(unsafe, (c) => (c.charCodeAt(0) < 16 ? "%0" : "%") + c.charCodeAt(0).toString(16).toUpperCase()).replace(/[^\x00-\x7F]+/g, utf8Escapes);
}
function utf8Escapes(run) {
  try {
    return encodeURIComponent(run);
  } catch (lone) {
    return "%EF%BF%BD";
  }
}
function timeLinks(uri, scope, site) {
  return fill(LINKS.original, { site, timegate: scope.timegate, timemaps: scope.timemaps, uri: uriOf(uri, true) });
}
function mementoLinks(uri, scope, site) {
  return fill(LINKS.memento, { site, uri: uriOf(uri, true), original: timeLinks(uri, scope, site) });
}
function link(uri, rel, parameters) {
  return fill(LINK, { uri, rel }) + (parameters || []).map((pair) => fill(LINK_PARAMETER, {
    name: pair[0],
    value: pair[1]
  })).join("");
}

// generator/serve/edge/instants.js
var MONTHS = "JanFebMarAprMayJunJulAugSepOctNovDec";
var HTTP_DATE = /^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), ([0-9]{2}) (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) ([0-9]{4}) ([0-9]{2}):([0-9]{2}):([0-9]{2}) GMT$/;
var RFC850_DATE = /^(?:Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)day, ([0-9]{2})-(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)-([0-9]{2}) ([0-9]{2}):([0-9]{2}):([0-9]{2}) GMT$/;
var ASCTIME_DATE = /^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) ( [1-9]|[0-9]{2}) ([0-9]{2}):([0-9]{2}):([0-9]{2}) ([0-9]{4})$/;
var RFC3339 = /^([0-9]{4})-([0-9]{2})-([0-9]{2})(?:[Tt ]([0-9]{2}):([0-9]{2}):([0-9]{2})(\.[0-9]+)?(?:([Zz])|([+ -])([0-9]{2}):([0-9]{2})))?$/;
function utcMillis(year, month, day, hour, minute, second, fraction, offsetMinutes) {
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 60) return null;
  const t = /* @__PURE__ */ new Date(0);
  t.setUTCFullYear(year, month - 1, day);
  t.setUTCHours(hour, minute, Math.min(second, 59), fraction);
  if (t.getUTCDate() !== day) return null;
  return t.getTime() - offsetMinutes * 6e4;
}
function acceptDatetimeMillis(text, now) {
  const trimmed = text.trim();
  let m = HTTP_DATE.exec(trimmed);
  if (m) {
    return utcMillis(
      Number(m[3]),
      MONTHS.indexOf(m[2]) / 3 + 1,
      Number(m[1]),
      Number(m[4]),
      Number(m[5]),
      Number(m[6]),
      0,
      0
    );
  }
  m = RFC850_DATE.exec(trimmed);
  if (m) {
    const thisYear = new Date(now === void 0 ? Date.now() : now).getUTCFullYear();
    let year = thisYear - thisYear % 100 + Number(m[3]);
    if (year > thisYear + 50) year -= 100;
    return utcMillis(year, MONTHS.indexOf(m[2]) / 3 + 1, Number(m[1]), Number(m[4]), Number(m[5]), Number(m[6]), 0, 0);
  }
  m = ASCTIME_DATE.exec(trimmed);
  if (!m) return null;
  return utcMillis(
    Number(m[6]),
    MONTHS.indexOf(m[1]) / 3 + 1,
    Number(m[2]),
    Number(m[3]),
    Number(m[4]),
    Number(m[5]),
    0,
    0
  );
}
function asOfMillis(raw) {
  let text;
  try {
    text = decodeURIComponent(raw.replace(/\+/g, "%2B"));
  } catch (malformed) {
    return null;
  }
  const m = RFC3339.exec(text);
  if (!m) return null;
  if (m[4] === void 0) return utcMillis(Number(m[1]), Number(m[2]), Number(m[3]), 0, 0, 0, 0, 0);
  const fraction = m[7] ? Math.floor(Number("0" + m[7]) * 1e3) : 0;
  let offset = 0;
  if (!m[8]) {
    if (Number(m[10]) > 23 || Number(m[11]) > 59) return null;
    offset = (m[9] === "-" ? -1 : 1) * (Number(m[10]) * 60 + Number(m[11]));
  }
  return utcMillis(
    Number(m[1]),
    Number(m[2]),
    Number(m[3]),
    Number(m[4]),
    Number(m[5]),
    Number(m[6]),
    fraction,
    offset
  );
}
function recorded(table, record) {
  if (!record || typeof record.at !== "number" || typeof record.periods !== "string") return table;
  const rows = table ? table.split(",") : [];
  const periods = [];
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i].split(" ");
    if (row[2] !== "h") periods.push(`${row[0]} ${row[1]}`);
  }
  return record.periods === periods.join(",") ? withHorizon(table, record.at) : table;
}
function withHorizon(table, at) {
  return table ? `${table},${at} - h` : `${at} - h`;
}
function rfc3339(millis) {
  return new Date(millis).toISOString().replace(/\.[0-9]+Z$/, "Z");
}
function releaseAt(table, millis, scope, now) {
  const rows = table ? table.split(",") : [];
  let found = null;
  let oldest = null;
  let horizon = null;
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i].split(" ");
    const start = Number(row[0]);
    if (row[2] === "h") {
      horizon = horizon === null ? start : Math.max(horizon, start);
      continue;
    }
    if (row[2] === "k" && oldest === null) oldest = { id: row[1], start };
    if (start <= millis) found = { id: row[1], kept: row[2] === "k" };
  }
  if (!now && horizon !== null && millis > horizon) {
    return error(
      404,
      "beyond_record",
      { instant: rfc3339(millis), horizon: rfc3339(horizon) },
      millis <= Date.now() ? { [NAMES.retry]: RECORD_RETRY_AFTER } : {}
    );
  }
  if (found === null) {
    if (oldest === null) return error(404, "none_kept", { list: scope.list });
    return error(404, "none_live", {
      instant: rfc3339(millis),
      id: oldest.id,
      since: rfc3339(oldest.start),
      list: scope.list
    });
  }
  if (!found.kept) return error(410, "gone_at", { id: found.id, instant: rfc3339(millis), list: scope.list });
  return { release: found.id };
}

// generator/serve/edge/variants.js
var codeSent = null, codeSentFrom = null;
function threeCharacters(raw) {
  if (codeSentFrom !== CODE_SENT) {
    codeSent = new RegExp(`^${CODE_SENT}$`);
    codeSentFrom = CODE_SENT;
  }
  return codeSent.test(raw);
}
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
function oneCountry(code, name) {
  if (code === "" && name === "") return "";
  if (/^[A-Z]{3}$/.test(code) && (name === "" || name === code)) return code;
  if (code === "" && /^[A-Z]{3}$/.test(name)) return name;
  return NO_MATCH;
}
async function codeFilter(raw, table, lookup) {
  if (raw === "") return "";
  const code = await lookup(table, asciiLower(raw));
  if (code !== void 0) return code;
  return threeCharacters(raw) ? NO_MATCH : "invalid";
}
async function nameFilter(raw, table, lookup) {
  if (raw === "") return "";
  const code = await lookup(table, asciiLower(raw));
  return code === void 0 ? NO_MATCH : code;
}
function ordering(raw, orderings, parameter) {
  if (raw === "" || raw === orderings[0]) return "";
  return orderings.includes(raw) ? fill(FOLDERS.order, { parameter, value: raw }) : "invalid";
}
function inSelection(own, selection) {
  const pieces = selection.split("/");
  for (let i = 0; i < pieces.length; i++) {
    if (pieces[i] !== "" && `/${own}`.indexOf(`/${pieces[i]}/`) < 0) return false;
  }
  return true;
}
function audienceDir(grants) {
  const audience = grants && grants.audience;
  return audience && audience !== PUBLIC_AUDIENCE ? fill(FOLDERS.audience, { audience }) : "";
}
async function variantFolder(query, variants, lookup) {
  const order = ordering(argument(query, variants.order), variants.orderings, variants.order);
  if (order === "invalid") {
    return { bad: error(400, "bad_ordering", { parameter: variants.order, values: variants.orderings.join(", ") }) };
  }
  let code = "", name = "", selection = "";
  for (let i = 0; i < variants.filters.length; i++) {
    const filter = variants.filters[i];
    const raw = argument(query, filter.parameter);
    if (filter.kind === "code") {
      code = await codeFilter(raw, filter.table, lookup);
      if (code === "invalid") return { bad: error(400, "bad_code", { parameter: filter.parameter }) };
    } else if (filter.kind === "name") {
      name = await nameFilter(raw, filter.table, lookup);
    } else if (raw !== "") {
      const value = await lookup(filter.table, asciiLower(raw));
      if (value === void 0) {
        const values = await lookup(filter.values, "");
        return { bad: error(400, "bad_value", { parameter: filter.parameter, values: values === void 0 ? "" : values }) };
      }
      selection += fill(FOLDERS.group, { parameter: filter.parameter, value });
    }
  }
  const one = oneCountry(code, name);
  if (selection === "") return { folder: one === "" ? order : fill(FOLDERS.filter, { code: one }) };
  if (await lookup(variants.selections, selection) === void 0) return { folder: fill(FOLDERS.filter, { code: NO_MATCH }) };
  if (one === "") return { folder: selection + order };
  const own = one === NO_MATCH ? void 0 : await lookup(variants.country_groups, one);
  return { folder: fill(FOLDERS.filter, { code: own !== void 0 && inSelection(own, selection) ? one : NO_MATCH }) };
}

// generator/serve/edge/core.js
function within(lookup, release) {
  const bound = (table, key) => lookup(table, key, release);
  bound.release = release;
  bound.parent = lookup;
  return bound;
}
function mementoPath(rest, scope, release) {
  let scoped = rest === "" ? "/" : rest;
  for (let i = 0; i < scope.aliases.length; i++) {
    if (sameRoute(rest, scope.aliases[i][1])) scoped = scope.aliases[i][0];
  }
  return `${scope.under}/${release}${uriOf(scoped, false)}`;
}
function timegate(path, query, acceptDatetime, gate, api, table, site, now) {
  const asOf = argument(query, "as_of");
  const millis = asOf ? asOfMillis(asOf) : acceptDatetimeMillis(acceptDatetime);
  if (millis === null) return error(400, asOf ? "bad_as_of" : "bad_accept_datetime");
  const found = releaseAt(gate, millis, table.scope, now);
  if (!found.release) return found;
  const kept = query.split("&").filter((pair) => pair !== "" && asciiLower(pair.split("=")[0]) !== "as_of");
  const memento = mementoPath(path.slice(api.length), table.scope, found.release);
  const location = memento + (kept.length ? "?" + uriOf(kept.join("&"), true) : "");
  const original = uriOf(path, false) + (kept.length ? "?" + kept.join("&") : "");
  return json(302, fill(REDIRECT, { id: found.release, location }), Object.assign(
    header("location", location),
    header("link", fill(LINKS.redirect, { memento: mementoLinks(original, table.scope, site), site, location }))
  ));
}
function timegateOfUri(target, query, acceptDatetime, gate, api, table, site) {
  const own = originalOf(target, table, site);
  if (own === null) return error(404, "no_timegate", { uri: target, api: site + api });
  const now = !acceptDatetime && !argument(query, "as_of");
  return timegate(own, query, acceptDatetime || (/* @__PURE__ */ new Date()).toUTCString(), gate, api, table, site, now);
}
function originalOf(target, table, site) {
  const own = target.startsWith(`${site}/`) ? normalise(target.slice(site.length).replace(/[?#].*$/, "")) : null;
  const found = own === null ? null : match(table, own);
  return found !== null && found.rule.timegate ? own : null;
}
function uriAfter(rawPath, prefix) {
  return rawPath.slice(rawPath.indexOf(prefix) + prefix.length);
}
async function timemapOf(request, target, release, lookup, platform) {
  const table = release.routes;
  const site = release.site_url;
  const query = request.query.split("&").filter((pair) => pair !== "" && asciiLower(pair.split("=")[0]) !== "as_of").join("&");
  const own = originalOf(target, table, site);
  if (own === null) {
    return error(404, "no_timemap", { uri: target, api: site + release.prefix });
  }
  const firstLive = {};
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
  const links = [
    link(site + uri, "original"),
    link(`${site}${table.scope.timegate}${site}${uri}`, "timegate"),
    link(`${site}${table.scope.timemaps}${site}${uri}`, "self", [["type", LINK_TYPE]].concat(span))
  ];
  for (let i = 0; i < mementos.length; i++) {
    const rel = [i === 0 ? "first" : "", i === mementos.length - 1 ? "last" : "", "memento"].filter((w) => w).join(" ");
    links.push(link(`${site}${mementoPath(own.slice(release.prefix.length), table.scope, mementos[i])}${query ? "?" + uriOf(query, true) : ""}`, rel, [["datetime", date(mementos[i])]]));
  }
  return {
    status: 200,
    body: links.join(",\n") + "\n",
    headers: header("type", TYPES.link)
  };
}
function asksFor(query, acceptDatetime) {
  return argument(query, "as_of") !== "" || !!acceptDatetime;
}
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
function match(table, path) {
  const rules = rulesOf(table);
  for (let i = 0; i < rules.length; i++) {
    const m = rules[i].regex.exec(path);
    if (m) return { rule: rules[i], m };
  }
  return null;
}
function asksInstant(path, query, acceptDatetime, table) {
  if (!asksFor(query, acceptDatetime)) return false;
  const found = match(table, path);
  return found !== null && found.rule.timegate;
}
async function modelMissing(model, grants, lookup) {
  const kind = await lookup("models", model);
  if (kind === "public") return false;
  return !(kind === "custom" && grants !== void 0 && grants.models.includes(model));
}
function contentType(file) {
  return TYPES[file.slice(file.lastIndexOf(".") + 1)];
}
function quality(header2, coding) {
  const items = header2.split(",");
  for (let i = 0; i < items.length; i++) {
    const m = /^\s*([^\s;]*)\s*(;\s*q=([\d.]*)|;)?/i.exec(items[i]);
    if (asciiLower(m[1]) === coding) return m[2] ? +m[3] || 0 : 1;
  }
  return 0;
}
function encoding(accepted, size, release, file) {
  if (size <= release.compressed_over || BINARY.indexOf(file.slice(file.lastIndexOf(".") + 1)) >= 0) return null;
  return quality(accepted, "br") > 0 ? "br" : quality(accepted, "gzip") > 0 ? "gzip" : null;
}
function finish(result, release, method, page) {
  const headers = result.headers;
  const status = result.status;
  const ok = status >= 200 && status < 400;
  const own = HEADERS.redirects.indexOf(status) >= 0 ? HEADERS.redirect_cache_control : result.cache ? HEADERS.route_cache[result.cache] : "";
  headers[NAMES.cache] = ok ? own || release.cache_control : HEADERS.error_cache_control;
  Object.assign(headers, HEADERS.every, HEADERS.by_status[status] || {}, method === "OPTIONS" ? HEADERS.preflight : {});
  headers[NAMES.csp] = page && ok ? HEADERS.csp.page : HEADERS.csp.data;
  headers[NAMES.release] = release.id;
  return result;
}
async function releaseFile(lookup, name, extra) {
  const known = await lookup("files", name);
  if (known === void 0) return error(404, "not_found");
  const digest = known[2] ? digestField(known[2]) : null;
  const digests = digest ? Object.assign(header("digest", digest), header("unencoded", digest)) : {};
  const headers = Object.assign(
    header("type", contentType(name)),
    header("modified", new Date(known[0] * 1e3).toUTCString()),
    digests,
    extra
  );
  return {
    status: 200,
    release: lookup.release,
    file: name,
    size: known[1],
    sha256: known[2],
    mtime: known[0],
    codings: known[3] || {},
    headers
  };
}
async function refusal(request, lookup, platform, challenge) {
  const checked = request.identity;
  const sent = request.authorization || "";
  const found = checked ? checked.user : await user(sent, lookup, platform);
  const expired = typeof found === "number" ? found : checked && checked.expired;
  const who = typeof found === "string" ? found : "";
  request.user = who;
  if (who) return { who };
  const missing = checked ? checked.missing : sent === "";
  if (missing && challenge) return { refused: error(401, "not_provided") };
  if (expired) return { refused: error(403, "expired_key", { expired: rfc3339(expired) }) };
  return { refused: error(403, missing ? "not_provided" : (checked ? checked.mistyped : found === null) ? "not_our_key" : "invalid_key") };
}
async function scopedRoute(request, m, release, lookup, platform) {
  const id = m[1];
  const table = release.routes;
  const scope = Object.assign({}, release, { id, cache_control: release.immutable });
  const rest = m[2] || "";
  const target = table.refusedRegexes.some((refused) => refused.test(rest)) ? null : routeOfScoped(rest, table.scope);
  const found = target === null ? null : match(table, target);
  const checked = await refusal(request, within(lookup, release.id), platform);
  if (checked.refused && !(found && !found.rule.key)) return { scope, result: checked.refused };
  const known = await lookup("states", id);
  const state = known ? known[0] : void 0;
  if (state === "g") return { scope, result: error(410, "release_gone", { id, list: table.scope.list }) };
  const hidden = state === "s" && !(await grantsOf(request, checked.who, lookup, release.id) || {}).preview;
  if (state === void 0 || hidden) return { scope, result: error(404, "no_release", { id, list: table.scope.list }) };
  const result = target === null ? error(404, "not_found") : await route(Object.assign(
    {},
    request,
    { acceptDatetime: "" }
  ), target, scope, within(lookup, id), platform);
  if (result.status < 400) {
    if (known[1]) result.headers[NAMES.memento] = known[1];
    result.headers[NAMES.link] = mementoLinks(
      `${target}${request.query ? "?" + request.query : ""}`,
      table.scope,
      release.site_url
    );
  }
  return { scope, result };
}
function grantsOf(request, who, lookup, id) {
  return request.identity ? request.identity.grants : lookup("users", who, id);
}
async function segmentValues(rule, m, grants, lookup) {
  const values = {};
  for (let i = 0; i < rule.segments.length; i++) {
    const name = rule.segments[i][0];
    const kind = rule.segments[i][1];
    const raw = m[i + 1];
    if (kind === "model" && await modelMissing(raw, grants, lookup)) return null;
    if (kind === "country") {
      const code = await lookup("countries", asciiLower(raw));
      if (code === void 0) return null;
      values[name] = code;
    } else {
      values[name] = raw;
    }
  }
  return values;
}
async function route(request, path, release, lookup, platform) {
  const method = request.method;
  if (path === null) return error(400, "bad_request");
  if (method === "OPTIONS") return { status: 204, headers: {} };
  if (method !== "GET" && method !== "HEAD") return error(405, "method", { method });
  const table = release.routes;
  const query = request.query;
  const found = match(table, path);
  if (found === null) return error(404, "not_found");
  const rule = found.rule;
  if (rule.timegate && asksFor(query, request.acceptDatetime)) {
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
  if (rule.answer === "timegate") {
    return timegateOfUri(
      uriAfter(request.path, table.scope.timegate),
      query,
      request.acceptDatetime,
      recorded(release.gate, await lookup("record", "", "")),
      release.prefix,
      table,
      release.site_url
    );
  }
  if (rule.answer === "timemap") {
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
  let download;
  if (rule.download) {
    values.release = release.id;
    const name = fill(values.model ? table.download.model : table.download.all, values);
    download = header("download", fill(HEADERS.download, { name }));
  }
  const files = rule.root === "timeline" ? within(lookup.parent, "timeline") : lookup;
  const answered = await releaseFile(files, fill(rule.file, values), download);
  if (rule.cache) answered.cache = rule.cache;
  if (rule.timegate && answered.status === 200) {
    answered.headers[NAMES.link] = timeLinks(`${request.path}${query ? "?" + query : ""}`, table.scope, release.site_url);
  }
  return answered;
}
async function answer(request, release, lookup, platform) {
  const path = request.authorization === null ? null : normalise(request.path);
  rulesOf(release.routes);
  const scopeRegex = release.routes.scopeRegex;
  let scoped = null;
  const m = path === null ? null : scopeRegex.exec(path);
  if (m && (request.method === "GET" || request.method === "HEAD")) {
    scoped = await scopedRoute(request, m, release, lookup, platform);
  }
  const result = scoped ? scoped.result : await route(request, path, release, within(lookup, release.id), platform);
  const page = release.routes.pageRegex.test(path === null ? request.path : path);
  const named = release.routes.namedRegex.exec(request.path);
  return finish(
    result,
    scoped ? scoped.scope : named ? Object.assign({}, release, { id: named[1] }) : release,
    request.method,
    page
  );
}

// generator/serve/edge/nginx_timegate.js
import fs from "fs";
useContract(DEPLOYED.contract);
var ROUTES = DEPLOYED.routes;
var RELEASES_DIR = DEPLOYED.releases, TABLES_DIR = DEPLOYED.tables, HORIZON_FILE = DEPLOYED.horizon;
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
  let result = path === null ? error(400, "bad_request") : timegate(path, query, asked, gateOf(r), ROUTES.scope.prefix, ROUTES, r.variables.site_url);
  if (path !== null && !asksInstant(path, query, asked, ROUTES)) {
    result = error(500, "server");
  }
  send(r, result);
}
function respondToUri(r) {
  const uri = r.variables.request_uri;
  const at = uri.indexOf("?");
  const target = uriAfter(at < 0 ? uri : uri.slice(0, at), ROUTES.scope.timegate);
  send(r, timegateOfUri(
    target,
    at < 0 ? "" : uri.slice(at + 1),
    r.headersIn["Accept-Datetime"] || "",
    gateOf(r),
    ROUTES.scope.prefix,
    ROUTES,
    r.variables.site_url
  ));
}
var routings = {};
function releaseTables(id) {
  if (!routings[id]) routings[id] = JSON.parse(fs.readFileSync(`${TABLES_DIR}/${id}.json`, "utf8"));
  return routings[id];
}
function onDisk(table, key, id) {
  if (table === "files") {
    try {
      fs.accessSync(`${RELEASES_DIR}/${id}/${key}`);
      return [0, 0];
    } catch (missing) {
      return void 0;
    }
  }
  const rows = releaseTables(id)[table];
  return rows && Object.prototype.hasOwnProperty.call(rows, key) ? rows[key] : void 0;
}
function respondTimemap(r) {
  const uri = r.variables.request_uri;
  const at = uri.indexOf("?");
  const raw = at < 0 ? uri : uri.slice(0, at);
  const grants = r.variables.grant_set;
  const request = {
    method: "GET",
    path: raw,
    query: at < 0 ? "" : uri.slice(at + 1),
    authorization: "",
    acceptDatetime: "",
    identity: { user: r.variables.api_user, missing: false, grants: {
      models: grants && grants !== PUBLIC_AUDIENCE ? grants.split("+") : [],
      audience: r.variables.audience || PUBLIC_AUDIENCE,
      preview: r.variables.preview === "yes"
    } }
  };
  const release = {
    id: r.variables.scope,
    prefix: ROUTES.scope.prefix,
    routes: ROUTES,
    gate: r.variables.timegate_table,
    site_url: r.variables.site_url,
    no_match: ROUTES.no_match
  };
  timemapOf(request, uriAfter(raw, ROUTES.scope.timemaps), release, onDisk, null).then((result) => send(r, result));
}
function send(r, result) {
  const names = Object.keys(result.headers);
  for (let i = 0; i < names.length; i++) {
    if (names[i] !== NAMES.location && names[i] !== NAMES.type) r.headersOut[names[i]] = result.headers[names[i]];
  }
  if (result.status === 302) {
    r.status = 302;
    r.headersOut[NAMES.location] = result.headers[NAMES.location];
    r.headersOut[NAMES.type] = TYPES[DEFAULT_TYPE];
    r.sendHeader();
    if (r.method !== "HEAD") r.send(result.body);
    r.finish();
  } else {
    r.headersOut[NAMES.type] = result.headers[NAMES.type] || TYPES[DEFAULT_TYPE];
    r.return(result.status, result.body);
  }
}
function errorHeaders(r) {
  const names = Object.keys(r.headersOut);
  for (let i = 0; i < names.length; i++) {
    if (!/^Content-(?:Range|Type|Length)$/i.test(names[i])) delete r.headersOut[names[i]];
  }
  const headers = finish({ status: r.status, headers: {} }, { id: r.variables.scope }, "GET", false).headers;
  const added = Object.keys(headers);
  for (let i = 0; i < added.length; i++) r.headersOut[added[i]] = headers[added[i]];
}
function basicPair(r) {
  const m = /^\s*basic\s+([A-Za-z0-9+/]+=*)\s*$/i.exec(r.headersIn.Authorization || "");
  if (!m) return "";
  const decoded = Buffer.from(m[1], "base64").toString();
  return Buffer.from(decoded).toString("base64") === m[1] && decoded.includes(":") ? decoded : "";
}
function loweredKey(r) {
  const credential2 = r.variables.credential || "";
  return asciiLower(credential2.slice(credential2.indexOf(":") + 1));
}
function unexpiredUser(r) {
  return Date.now() < Number(r.variables.key_expires) ? r.variables.key_user : "";
}
function keyRefusal(r) {
  const credential2 = r.variables.credential || "";
  const expires = Number(r.variables.key_expires);
  if (r.variables.key_user && expires) return error(403, "expired_key", { expired: rfc3339(expires) }).body;
  return error(403, mistyped(asciiLower(credential2.slice(credential2.indexOf(":") + 1))) ? "not_our_key" : "invalid_key").body;
}
var handlers = { respond, respondToUri, respondTimemap, errorHeaders, basicPair, loweredKey, unexpiredUser, keyRefusal };
export default handlers;
