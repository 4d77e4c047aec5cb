// The TimeGate (RFC 7089) of the country risk API: which release was live at an instant, and the 302 to
// its release-scoped URL. Runs after the edge core (core.js: json, asciiLower, argument) in one script:
// nginx's under njs (runtime/timegate.js), the edges'. Written in the JavaScript core.js is written in.

const MONTHS = "JanFebMarAprMayJunJulAugSepOctNovDec";
const HTTP_DATE = /^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), ([0-9]{2}) (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) ([0-9]{4}) ([0-9]{2}):([0-9]{2}):([0-9]{2}) GMT$/;
const RFC3339 = /^([0-9]{4})-([0-9]{2})-([0-9]{2})(?:[Tt ]([0-9]{2}):([0-9]{2}):([0-9]{2})(\.[0-9]+)?(?:([Zz])|([+ -])([0-9]{2}):([0-9]{2})))?$/;
const BAD_ACCEPT_DATETIME = "Invalid Accept-Datetime: send an HTTP-date, such as Tue, 24 Nov 2026 09:00:00 GMT.";
const BAD_AS_OF = "Invalid value for as_of: use an RFC 3339 date (2026-11-24, its 00:00:00Z) or date-time " +
  "(2026-11-24T09:00:00Z, 2026-11-24T10:00:00+01:00).";
const RELEASES_LISTED = "GET /api/v1/releases/ lists the releases kept.";
// The paths that are not TimeGates: the list of releases, the TimeMap and the releases under their id.
const NOT_GATED = /^\/releases(?:\/?|\/timemap|\/[0-9]{8}T[0-9]{6}Z(?:-[0-9]+)?(?:\/.*)?)$/;

// A UTC instant in milliseconds from its parts, or null where a part is out of range (31 April, 25:00).
// A leap second (:60) is the second before it.
function utcMillis(year, month, day, hour, minute, second, fraction, offsetMinutes) {
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 60) return null;
  const t = Date.UTC(year, month - 1, day, hour, minute, Math.min(second, 59), fraction);
  if (new Date(t).getUTCDate() !== day) return null;
  return t - offsetMinutes * 60000;
}

// Accept-Datetime: an HTTP-date (IMF-fixdate, RFC 9110 §5.6.7) in milliseconds, or null.
export function acceptDatetimeMillis(text) {
  const m = HTTP_DATE.exec(text.trim());
  if (!m) return null;
  return utcMillis(Number(m[3]), MONTHS.indexOf(m[2]) / 3 + 1, Number(m[1]), Number(m[4]), Number(m[5]),
    Number(m[6]), 0, 0);
}

// ?as_of=, as sent (percent-escapes kept; a `+` of an offset may arrive as a space): an RFC 3339 date,
// meaning its 00:00:00Z, or date-time with any offset, in milliseconds; null when it is neither.
export function asOfMillis(raw) {
  let text;
  try {
    text = decodeURIComponent(raw.replace(/\+/g, "%2B"));
  } catch (malformed) {
    return null;
  }
  const m = RFC3339.exec(text);
  if (!m) return null;
  if (m[4] === undefined) return utcMillis(Number(m[1]), Number(m[2]), Number(m[3]), 0, 0, 0, 0, 0);
  const fraction = m[7] ? Math.floor(Number("0" + m[7]) * 1000) : 0;
  let offset = 0;
  if (!m[8]) {
    if (Number(m[10]) > 23 || Number(m[11]) > 59) return null;
    offset = (m[9] === "-" ? -1 : 1) * (Number(m[10]) * 60 + Number(m[11]));
  }
  return utcMillis(Number(m[1]), Number(m[2]), Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6]),
    fraction, offset);
}

function rfc3339(millis) {
  return new Date(millis).toISOString().replace(/\.[0-9]+Z$/, "Z");
}

// The release live at an instant, from the table of live periods ("seconds id state" per period, oldest
// first, comma-separated; state k: answered, g: pruned): {release} or the error answer.
export function releaseAt(table, millis) {
  const rows = table ? table.split(",") : [];
  let found = null;
  let oldest = null;
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i].split(" ");
    const start = Number(row[0]) * 1000;
    if (row[2] === "k" && oldest === null) oldest = { id: row[1], start };
    if (start <= millis) found = { id: row[1], kept: row[2] === "k" };
  }
  if (oldest === null) return json(404, `No release is kept. ${RELEASES_LISTED}`);
  if (found === null || millis < oldest.start) {
    return json(404, `No kept release was live at ${rfc3339(millis)}: the oldest kept, ${oldest.id}, went live at ` +
      `${rfc3339(oldest.start)}. ${RELEASES_LISTED}`);
  }
  if (!found.kept) {
    return json(410, `Release ${found.id}, live at ${rfc3339(millis)}, is no longer kept. ${RELEASES_LISTED}`);
  }
  return { release: found.id };
}

// Whether an argument of that name (any letter case) is in the query, empty or not.
function hasArgument(query, name) {
  const pairs = query.split("&");
  for (let i = 0; i < pairs.length; i++) {
    if (asciiLower(pairs[i].split("=")[0]) === name) return true;
  }
  return false;
}

// A request that asks for a past answer (RFC 7089's TimeGate: `Accept-Datetime`, or `?as_of=` for clients
// that cannot set headers; as_of wins where both are sent): the 302 to the release-scoped URL of the
// release live at that instant (the other arguments kept, as_of left out), or the 400/404/410 — or null
// when the request asks for none, or its path is not a TimeGate. `path` is normalised; `api` the prefix.
export function timegate(path, query, acceptDatetime, table, api) {
  const asOf = hasArgument(query, "as_of");
  if (!asOf && !acceptDatetime) return null;
  if (path !== api && !path.startsWith(`${api}/`)) return null;
  const rest = path.slice(api.length);
  if (NOT_GATED.test(rest)) return null;
  const millis = asOf ? asOfMillis(argument(query, "as_of")) : acceptDatetimeMillis(acceptDatetime);
  if (millis === null) return json(400, asOf ? BAD_AS_OF : BAD_ACCEPT_DATETIME);
  const found = releaseAt(table, millis);
  if (!found.release) return found;
  const scoped = /^\/(?:releases\/current\/?)?$|^$/.test(rest) ? "/" : rest;
  const kept = query.split("&").filter((pair) => pair !== "" && asciiLower(pair.split("=")[0]) !== "as_of");
  const memento = `${api}/releases/${found.release}${encodeURI(scoped)}`;
  const location = memento + (kept.length ? "?" + kept.join("&") : "");
  const original = path + (kept.length ? "?" + kept.join("&") : "");
  return { status: 302, body: JSON.stringify({ detail: `Release ${found.release} was live then: ${location}` }),
    headers: { "Content-Type": "application/json; charset=utf-8", "Location": location,
    "Link": `<${encodeURI(original)}>; rel="original", <${api}/releases/timemap>; rel="timemap"; ` +
      `type="application/link-format", <${location}>; rel="memento"` } };
}
