// The query variant folder of a list route, as nginx.conf's generated maps pick it: its country filters
// (exact, case-insensitive, at most one country matches) and orderings, from the serving contract's
// folder grammar (contract.js); and the audience folder a key's grants select. core.js imports it.
//
// Written in the JavaScript CloudFront Functions run (cloudfront-js-2.0; checked with njs 0.7.9):
// no spread, destructuring, default parameters, optional chaining, for-of or catch without a binding.

import { CODE_SENT, FOLDERS, NO_MATCH, PUBLIC_AUDIENCE } from "./contract.js";
import { asciiLower, error, fill } from "./keycheck.js";

// nginx.conf's 3-character check of a code filter (the contract's CODE_SENT), compiled once per contract.
let codeSent = null, codeSentFrom = null;
function threeCharacters(raw) {
  if (codeSentFrom !== CODE_SENT) {
    codeSent = new RegExp(`^${CODE_SENT}$`);
    codeSentFrom = CODE_SENT;
  }
  return codeSent.test(raw);
}

// nginx's $arg_NAME: the first argument of that name (in any letter case), its value as sent.
export function argument(query, name) {
  const pairs = query.split("&");
  for (let i = 0; i < pairs.length; i++) {
    const pair = pairs[i];
    const at = pair.indexOf("=");
    if (at >= 0 && asciiLower(pair.slice(0, at)) === name) return pair.slice(at + 1);
    if (at < 0 && asciiLower(pair) === name) return "";
  }
  return "";
}

function countryFilter(code, name, noMatch) {  // `map "$countries_code:$countries_name" $countries_filter`
  if (code === "" && name === "") return "";
  if (/^[A-Z]{3}$/.test(code) && (name === "" || name === code)) return fill(FOLDERS.filter, { code });
  if (code === "" && /^[A-Z]{3}$/.test(name)) return fill(FOLDERS.filter, { code: name });
  return fill(FOLDERS.filter, { code: noMatch });
}

async function codeFilter(raw, lookup) {  // `map $arg_code $countries_code`
  if (raw === "") return "";
  const code = await lookup("countries", asciiLower(raw));
  if (code !== undefined) return code;
  return threeCharacters(raw) ? NO_MATCH : "invalid";
}

async function nameFilter(raw, lookup) {  // `map $arg_name $countries_name`
  if (raw === "") return "";
  const code = await lookup("country_names", asciiLower(raw));
  return code === undefined ? NO_MATCH : code;
}

function ordering(raw, orderings, parameter) {  // `map $arg_ordering $scores_order`: exact, case-sensitive
  if (raw === "" || raw === orderings[0]) return "";
  return orderings.includes(raw) ? fill(FOLDERS.order, { parameter, value: raw }) : "invalid";
}

function badRequest(order, code, orderParameter, orderings, codeParameter) {
  if (order === "invalid") return error(400, "bad_ordering", { parameter: orderParameter, values: orderings.join(", ") });
  if (code === "invalid") return error(400, "bad_code", { parameter: codeParameter });
  return null;
}

export function audienceDir(grants) {  // `map $audience $audience_dir`
  const audience = grants && grants.audience;
  return audience && audience !== PUBLIC_AUDIENCE ? fill(FOLDERS.audience, { audience }) : "";
}

// The query variant folder of a list rule (`variants`: its filter and ordering parameters), or the 400.
export async function variantFolder(query, variants, release, lookup) {
  const code = await codeFilter(argument(query, variants.code), lookup);
  const name = await nameFilter(argument(query, variants.name), lookup);
  const order = ordering(argument(query, variants.order), variants.orderings, variants.order);
  const bad = badRequest(order, code, variants.order, variants.orderings, variants.code);
  if (bad) return { bad };
  return { folder: countryFilter(code, name, release.no_match) || order };
}
