// Instants at the edge (RFC 7089's TimeGate, as nginx's runs it under njs): Accept-Datetime and
// ?as_of= read as UTC milliseconds, and the release live at an instant, from the table of live periods
// the description carries. No I/O. core.js imports it.
//
// Written in the JavaScript CloudFront Functions run (cloudfront-js-2.0; checked with njs 0.7.9):
// no spread, destructuring, default parameters, optional chaining, for-of or catch without a binding.

import { NAMES, RECORD_RETRY_AFTER } from "./contract.js";
import { error } from "./keycheck.js";

const MONTHS = "JanFebMarAprMayJunJulAugSepOctNovDec";
const HTTP_DATE = /^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), ([0-9]{2}) (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) ([0-9]{4}) ([0-9]{2}):([0-9]{2}):([0-9]{2}) GMT$/;
const RFC850_DATE = /^(?:Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)day, ([0-9]{2})-(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)-([0-9]{2}) ([0-9]{2}):([0-9]{2}):([0-9]{2}) GMT$/;
const ASCTIME_DATE = /^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) ( [1-9]|[0-9]{2}) ([0-9]{2}):([0-9]{2}):([0-9]{2}) ([0-9]{4})$/;
const RFC3339 = /^([0-9]{4})-([0-9]{2})-([0-9]{2})(?:[Tt ]([0-9]{2}):([0-9]{2}):([0-9]{2})(\.[0-9]+)?(?:([Zz])|([+ -])([0-9]{2}):([0-9]{2})))?$/;

// A UTC instant in milliseconds from its parts, or null where a part is out of range (31 April, 25:00).
// A leap second (:60) is the second before it.
function utcMillis(year, month, day, hour, minute, second, fraction, offsetMinutes) {
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 60) return null;
  const t = new Date(0);  // not Date.UTC, which reads the years 0-99 as 1900-1999
  t.setUTCFullYear(year, month - 1, day);
  t.setUTCHours(hour, minute, Math.min(second, 59), fraction);
  if (t.getUTCDate() !== day) return null;
  return t.getTime() - offsetMinutes * 60000;
}

// Accept-Datetime: an HTTP-date in milliseconds, or null. RFC 9110 §5.6.7: IMF-fixdate, and the obsolete
// forms a recipient must also accept, rfc850-date (a two-digit year: the latest such year not more than
// 50 years ahead) and asctime-date.
export function acceptDatetimeMillis(text, now) {
  const trimmed = text.trim();
  let m = HTTP_DATE.exec(trimmed);
  if (m) {
    return utcMillis(Number(m[3]), MONTHS.indexOf(m[2]) / 3 + 1, Number(m[1]), Number(m[4]), Number(m[5]),
      Number(m[6]), 0, 0);
  }
  m = RFC850_DATE.exec(trimmed);
  if (m) {
    const thisYear = new Date(now === undefined ? Date.now() : now).getUTCFullYear();
    let year = thisYear - (thisYear % 100) + Number(m[3]);
    if (year > thisYear + 50) year -= 100;
    return utcMillis(year, MONTHS.indexOf(m[2]) / 3 + 1, Number(m[1]), Number(m[4]), Number(m[5]), Number(m[6]), 0, 0);
  }
  m = ASCTIME_DATE.exec(trimmed);
  if (!m) return null;
  return utcMillis(Number(m[6]), MONTHS.indexOf(m[1]) / 3 + 1, Number(m[2]), Number(m[3]), Number(m[4]),
    Number(m[5]), 0, 0);
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

// The table with the horizon of a bucket's record (switch/timeline.py, record_of: what a deploy read) added,
// where the record was made of the very live periods the table holds; else the table as it is.
export function recorded(table, record) {
  if (!record || typeof record.at !== "number" || typeof record.periods !== "string") return table;
  const rows = table ? table.split(",") : [];
  const periods = [];
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i].split(" ");
    if (row[2] !== "h") periods.push(`${row[0]} ${row[1]}`);
  }
  return record.periods === periods.join(",") ? withHorizon(table, record.at) : table;
}

// The table with a horizon row added (switch/timeline.py's horizon_row): the newest horizon counts.
export function withHorizon(table, at) {
  return table ? `${table},${at} - h` : `${at} - h`;
}

export function rfc3339(millis) {
  return new Date(millis).toISOString().replace(/\.[0-9]+Z$/, "Z");
}

// The release live at an instant, from the table of live periods ("milliseconds id state" per period, oldest
// first, comma-separated; state k: answered, g: pruned) and its horizons ("milliseconds - h": the record is
// whole up to the newest one; an instant after it may have a switch this server does not know yet, so it
// is not answered: a 404, with Retry-After where the instant is past and the record will soon reach it;
// unless `now`: the TimeGate asked for no instant, the release this server serves now).
// {release} or the error answer.
export function releaseAt(table, millis, scope, now) {
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
    return error(404, "beyond_record", { instant: rfc3339(millis), horizon: rfc3339(horizon) },
      millis <= Date.now() ? { [NAMES.retry]: RECORD_RETRY_AFTER } : {});
  }
  if (found === null) {  // before the first release ever live; an instant a pruned one was live is a 410
    if (oldest === null) return error(404, "none_kept", { list: scope.list });
    return error(404, "none_live", { instant: rfc3339(millis), id: oldest.id, since: rfc3339(oldest.start),
      list: scope.list });
  }
  if (!found.kept) return error(410, "gone_at", { id: found.id, instant: rfc3339(millis), list: scope.list });
  return { release: found.id };
}
