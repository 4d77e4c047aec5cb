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

// The one country the code and name filters agree on ("" without either; NO_MATCH where none or they differ).
function oneCountry(code, name) {  // `map "$countries_code:$countries_name" $countries_country`
  if (code === "" && name === "") return "";
  // each is "", NO_MATCH or the code its table gave (`invalid` was answered before)
  if (code !== "" && code !== NO_MATCH && (name === "" || name === code)) return code;
  if (code === "" && name !== NO_MATCH) return name;
  return NO_MATCH;
}

async function codeFilter(raw, table, lookup) {  // `map $arg_code $countries_code`
  if (raw === "") return "";
  const code = await lookup(table, asciiLower(raw));
  if (code !== undefined) return code;
  return threeCharacters(raw) ? NO_MATCH : "invalid";
}

async function nameFilter(raw, table, lookup) {  // `map $arg_name $countries_name`
  if (raw === "") return "";
  const code = await lookup(table, asciiLower(raw));
  return code === undefined ? NO_MATCH : code;
}

function ordering(raw, orderings, parameter) {  // `map $arg_ordering $scores_order`: exact, case-sensitive
  if (raw === "" || raw === orderings[0]) return "";
  return orderings.includes(raw) ? fill(FOLDERS.order, { parameter, value: raw }) : "invalid";
}

function inSelection(own, selection) {  // each folder of the selection is one of the country's own
  const pieces = selection.split("/");
  for (let i = 0; i < pieces.length; i++) {
    if (pieces[i] !== "" && `/${own}`.indexOf(`/${pieces[i]}/`) < 0) return false;
  }
  return true;
}

export function audienceDir(grants) {  // `map $audience $audience_dir`
  const audience = grants && grants.audience;
  return audience && audience !== PUBLIC_AUDIENCE ? fill(FOLDERS.audience, { audience }) : "";
}

// The query variant folder of a list rule (`variants`: its filters, ordering and tables), or the 400: the
// ordering's first, then each filter's in the rule's order, as nginx's chain of maps says.
export async function variantFolder(query, variants, lookup) {
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
    } else if (raw !== "") {  // a group: a value of the release's, as the URL writes it
      const value = await lookup(filter.table, asciiLower(raw));
      if (value === undefined) {
        const values = await lookup(filter.values, "");
        return { bad: error(400, "bad_value", { parameter: filter.parameter, values: values === undefined ? "" : values }) };
      }
      selection += fill(FOLDERS.group, { parameter: filter.parameter, value });
    }
  }
  const one = oneCountry(code, name);
  if (selection === "") return { folder: one === "" ? order : fill(FOLDERS.filter, { code: one }) };
  if (await lookup(variants.selections, selection) === undefined) return { folder: fill(FOLDERS.filter, { code: NO_MATCH }) };
  if (one === "") return { folder: selection + order };
  const own = one === NO_MATCH ? undefined : await lookup(variants.country_groups, one);
  return { folder: fill(FOLDERS.filter, { code: own !== undefined && inSelection(own, selection) ? one : NO_MATCH }) };
}
