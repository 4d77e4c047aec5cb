// The explorer: calls the API from the browser with the visitor's key (CORS and the key check
// for real), draws a model's score series for one country, its sections and indicators, and the
// ranking of every country. No framework; every value reaches the page through textContent.
"use strict";

const $ = (id) => document.getElementById(id);
const state = { base: "", authorization: "", ranking: [], sort: { key: "rank", descending: false }, urls: {} };
// The API root's path (the page's script tag says it, from the route table): it lists every endpoint's
// URL template by operationId, which is all the explorer knows of the API's URLs.
const ROOT = document.currentScript.dataset.root;
const VERIFY = document.currentScript.dataset.verify;  // the citation verifier, an ES module

// A URL of the API root as a path: the API is asked at the address the visitor chose.
const pathOf = (url) => url.replace(/^\w+:\/\/[^/]*/, "");

// An endpoint's path (and query) from its template in the API root, its {segments} filled in.
function urlFor(operation, values, query) {
  const path = state.urls[operation].replace(/\{(\w+)\}/g, (whole, name) => encodeURIComponent(values[name]));
  return path + (query ? "?" + query : "");
}

function authorizationFor(key) {
  // USER:KEY travels as `apikey USER:KEY`, a bare key as itself (both documented forms).
  const trimmed = key.trim();
  return trimmed.includes(":") ? "apikey " + trimmed : trimmed;
}

class ApiError extends Error {}

async function api(path, answered) {
  let answer;
  try {
    answer = await fetch(state.base + path, { headers: { Authorization: state.authorization } });
  } catch (failure) {
    throw new ApiError("Could not reach the API at " + (state.base || location.origin) + " (" + failure.message + ").");
  }
  const bytes = new Uint8Array(await answer.arrayBuffer());
  if (answered) Object.assign(answered, { bytes, release: answer.headers.get("X-Release") });
  let body = null;
  try { body = JSON.parse(new TextDecoder().decode(bytes)); } catch (ignored) { /* an answer that is not JSON */ }
  if (!answer.ok) {
    const detail = body && body.detail ? body.detail : answer.statusText;
    const hint = answer.status === 403 ? " Check the key: paste USER:KEY or the bare key you were given." : "";
    throw new ApiError("The API answered " + answer.status + ": " + detail + hint);
  }
  return body;
}

function say(text, isError) {
  const status = $("status");
  status.textContent = text;
  status.className = isError ? "error" : "muted";
}

function element(tag, text, attributes) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  for (const [name, value] of Object.entries(attributes || {})) node.setAttribute(name, value);
  return node;
}

function fill(select, options, chosen) {
  select.replaceChildren(...options.map(([value, label]) => {
    const option = element("option", label, { value });
    if (value === chosen) option.selected = true;
    return option;
  }));
}

function tableOf(table, headings, rows) {
  const head = element("tr");
  headings.forEach((heading) => head.append(element("th", heading)));
  const body = rows.map((cells) => {
    const row = element("tr");
    cells.forEach((cell) => row.append(element("td", cell)));
    return row;
  });
  table.replaceChildren(element("thead"), element("tbody"));
  table.tHead.append(head);
  table.tBodies[0].append(...body);
}

const number = (value) => (value === null || value === undefined ? "–" : String(value));
const year = (result) => result.timestamp.slice(0, 4);

function currentOf(results) {
  // The `current` result; failing that the latest actual one.
  return results.find((r) => r.type === "current") || results.filter((r) => r.type !== "projection").pop() || null;
}

function rawValue(result) {
  if (!result || !result.data || result.data.value === null) return "missing";
  return result.data.value.map((value, i) => {
    const name = result.data.name[i];
    return i === 0 ? String(value) : name + ": " + value;
  }).join("; ");
}

function pointsOf(result) {
  if (!result) return "–";
  if (result.riskPointsMax !== undefined && result.riskPointsMax !== null) {
    return number(result.riskPoints) + " / " + result.riskPointsMax;
  }
  return result.sdgColor ? result.sdgColor + " " + (result.sdgTrendArrow || "") : "–";
}

// ---- the chart: inline SVG, history and current solid, projection dashed --------------------
const SVG = "http://www.w3.org/2000/svg";

function svg(tag, attributes) {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  return node;
}

function drawChart(results) {
  const chart = $("chart");
  const points = results.filter((r) => r.score !== null && r.score !== undefined);
  chart.replaceChildren();
  $("chart-empty").hidden = points.length > 0;
  if (!points.length) return;
  const width = 640, height = 260, left = 40, right = 16, top = 12, bottom = 28;
  const years = points.map((r) => Number(year(r)));
  const first = Math.min(...years), last = Math.max(...years);
  const x = (y) => left + (last === first ? (width - left - right) / 2 : (y - first) / (last - first) * (width - left - right));
  const y = (score) => top + (100 - score) / 100 * (height - top - bottom);
  chart.setAttribute("viewBox", `0 0 ${width} ${height}`);
  for (const tick of [0, 25, 50, 75, 100]) {
    chart.append(svg("line", { x1: left, x2: width - right, y1: y(tick), y2: y(tick), class: "grid" }));
    const label = svg("text", { x: left - 6, y: y(tick) + 4, "text-anchor": "end" });
    label.textContent = tick;
    chart.append(label);
  }
  const step = Math.max(1, Math.ceil((last - first) / 8));
  for (let tick = first; tick <= last; tick += step) {
    const label = svg("text", { x: x(tick), y: height - 8, "text-anchor": "middle" });
    label.textContent = tick;
    chart.append(label);
  }
  const actual = points.filter((r) => r.type !== "projection");
  const projected = points.filter((r) => r.type === "projection");
  const path = (series) => series.map((r) => `${x(Number(year(r)))},${y(r.score)}`).join(" ");
  if (actual.length) chart.append(svg("polyline", { points: path(actual), class: "actual" }));
  if (projected.length) {
    const joined = actual.length ? [actual[actual.length - 1], ...projected] : projected;
    chart.append(svg("polyline", { points: path(joined), class: "projection" }));
  }
  for (const r of points) {
    const dot = svg("circle", { cx: x(Number(year(r))), cy: y(r.score), r: 3.5, class: "point " + r.type,
                                "data-year": year(r), "data-type": r.type, "data-score": r.score });
    const tip = svg("title", {});
    tip.textContent = `${year(r)} (${r.type}): ${r.score}`;
    dot.append(tip);
    chart.append(dot);
  }
}

// ---- one country's document --------------------------------------------------------------
async function showCountry() {
  const model = $("model").value, code = $("country").value;
  if (!model || !code) return;
  location.hash = `model=${encodeURIComponent(model)}&country=${encodeURIComponent(code)}`;
  say("Loading " + model + " for " + code + " …");
  let document_;
  const path = urlFor("getModelCountryScores", { model, country_code: code });
  const answered = {};
  try {
    document_ = await api(path, answered);
  } catch (failure) {
    say(failure.message, true);
    return;
  }
  const entity = document_.entity;
  const current = currentOf(document_.results);
  $("country-title").textContent = `${entity.countryName} (${entity.countryCode}) · ${model}`;
  $("country-facts").textContent = [entity.regionName, entity.worldBankClassification,
    entity.oecdMember ? "OECD member" : null].filter(Boolean).join(" · ");
  $("current").textContent = current && current.score !== null
    ? `Current score ${current.score} (${current.riskClassificationCategorical}), ${year(current)}, `
      + (current.countryRank ? `rank ${current.countryRank} of ${current.countryUniverse}` : "not ranked")
      + `, data quality ${current.dataQualityCategorical}`
      + (current.ratingLetter ? `, rating ${current.ratingLetter}` : "")
    : "No current score: too few indicators have data for this country.";
  $("current").dataset.score = current && current.score !== null ? current.score : "";
  drawChart(document_.results);
  tableOf($("sections"), ["section", "default weight", "weight used (%)", "score", "class", "points or colour"],
    document_.sections.map((s) => {
      const r = currentOf(s.results);
      return [s.name, s.defaultWeight, r ? number(r.weight) : "–", r ? number(r.score) : "–",
              r ? number(r.riskClassificationCategorical) : "–", pointsOf(r)];
    }));
  const sectionNames = Object.fromEntries(document_.sections.map((s) => [s.reference, s.name]));
  tableOf($("indicators"), ["indicator", "section", "raw value", "unit", "score", "points or colour", "year"],
    document_.indicators.map((i) => {
      const r = currentOf(i.results);
      return [i.name, sectionNames[i.section] || i.section, rawValue(r), i.unit || "", r ? number(r.score) : "–",
              pointsOf(r), r ? year(r) : "–"];
    }));
  $("country-view").hidden = false;
  markSelected();
  say("Loaded " + model + " for " + entity.countryName + ".");
  proveShown(path, answered);
}

// ---- the answer shown, proved: in its release's tree, the release in the signed log of releases ---------
async function proveShown(path, answered) {
  const proof = $("proof");
  proof.className = "muted";
  proof.textContent = "Checking this answer against the signed log of releases …";
  const get = (authorization) => async (url) => {
    const answer = await fetch(state.base + pathOf(url),
      authorization ? { headers: { Authorization: authorization } } : {});
    if (!answer.ok) throw new Error(`${url}: ${answer.status}`);
    return new Uint8Array(await answer.arrayBuffer());
  };
  try {
    const { verifyAnswer } = await import(VERIFY);
    const root = JSON.parse(new TextDecoder().decode(await get("")(ROOT)));
    const shown = await verifyAnswer({ root, path, bytes: answered.bytes, release: answered.release,
      getKeyed: get(state.authorization), getPublic: get("") });
    const periods = shown.periods.map((p) => `from ${p.from} until ${p.until || "now"}`).join(", ");
    proof.textContent = `Verified: this answer is document ${shown.index + 1} of the ${shown.treeSize} of release `
      + `${shown.release}, which the log ${shown.origin} (${shown.size} entries, signed by ${shown.vkey}) says was live `
      + `${periods}.`;
    proof.dataset.verified = shown.release;
  } catch (failure) {
    proof.className = "error";
    proof.textContent = "Not verified: " + failure.message;
    proof.dataset.verified = "";
  }
}

// ---- the ranking of a model: sortable ----------------------------------------------------
const RANKING_COLUMNS = [
  ["rank", "rank", (e) => e.results[0].countryRank],
  ["code", "code", (e) => e.entity.countryCode],
  ["name", "country", (e) => e.entity.countryName],
  ["region", "region", (e) => e.entity.regionName],
  ["score", "score", (e) => e.results[0].score],
  ["class", "class", (e) => e.results[0].riskClassificationNumeric],
  ["quality", "data quality", (e) => e.results[0].dataQualityNumeric],
];

async function loadRanking() {
  const model = $("model").value;
  try {
    const list = await api(urlFor("getModelScores", { model }));
    state.ranking = list.data.filter((e) => e.results.length);
  } catch (failure) {
    say(failure.message, true);
    return;
  }
  $("ranking-title").textContent = `Ranking: ${model} (${state.ranking.length} countries)`;
  drawRanking();
}

function drawRanking() {
  const { key, descending } = state.sort;
  const pick = RANKING_COLUMNS.find((c) => c[0] === key)[2];
  const rows = [...state.ranking].sort((a, b) => {
    const p = pick(a) ?? Infinity, q = pick(b) ?? Infinity;  // unranked (data quality below Medium) last
    const order = typeof p === "string" ? p.localeCompare(q) : p - q;
    return (descending ? -order : order) || a.entity.countryCode.localeCompare(b.entity.countryCode);
  });
  const head = element("tr");
  for (const [name, label] of RANKING_COLUMNS) {
    const sorted = name === key ? (descending ? "descending" : "ascending") : "none";
    const cell = element("th", null, { "aria-sort": sorted, "data-column": name });
    const button = element("button", label + (sorted === "ascending" ? " ▲" : sorted === "descending" ? " ▼" : ""),
                           { type: "button" });
    button.addEventListener("click", () => {
      state.sort = { key: name, descending: name === key ? !descending : false };
      drawRanking();
    });
    cell.append(button);
    head.append(cell);
  }
  const table = $("ranking");
  table.replaceChildren(element("thead"), element("tbody"));
  table.tHead.append(head);
  table.tBodies[0].append(...rows.map((entry) => {
    const r = entry.results[0];
    const row = element("tr", null, { "data-code": entry.entity.countryCode });
    [r.countryRank, entry.entity.countryCode, entry.entity.countryName, entry.entity.regionName, r.score,
     r.riskClassificationCategorical, r.dataQualityCategorical].forEach((cell) => row.append(element("td", number(cell))));
    row.addEventListener("click", () => { $("country").value = entry.entity.countryCode; showCountry(); });
    return row;
  }));
  $("ranking-view").hidden = false;
  markSelected();
}

function markSelected() {
  for (const row of $("ranking").querySelectorAll("tbody tr")) {
    row.classList.toggle("selected", row.dataset.code === $("country").value);
  }
}

// ---- connecting with a key ---------------------------------------------------------------
async function connect(event) {
  if (event) event.preventDefault();
  state.base = $("base").value.trim().replace(/\/+$/, "");
  state.authorization = authorizationFor($("key").value);
  $("choose").hidden = true;
  $("country-view").hidden = true;
  $("ranking-view").hidden = true;
  if (!state.authorization) {
    say("Paste a key first.", true);
    return;
  }
  say("Checking the key …");
  let models, countries;
  try {
    const root = await api(ROOT);  // answered without a key: each endpoint's URL template
    for (const endpoint of root.endpoints) state.urls[endpoint.operationId] = pathOf(endpoint.url);
    [models, countries] = await Promise.all([api(urlFor("listRiskScoreModels", {})),
                                             api(urlFor("listCountries", {}, "model=name"))]);
  } catch (failure) {
    say(failure.message, true);
    return;
  }
  sessionStorage.setItem("riskapi-explorer", JSON.stringify({ base: $("base").value, key: $("key").value }));
  const wanted = new URLSearchParams(location.hash.slice(1));
  const model = models.some((m) => m.code === wanted.get("model")) ? wanted.get("model") : models[0].code;
  const fallback = countries.some((c) => c.code === "DEU") ? "DEU" : countries[0].code;
  const country = countries.some((c) => c.code === wanted.get("country")) ? wanted.get("country") : fallback;
  fill($("model"), models.map((m) => [m.code, `${m.title} (${m.code})`]), model);
  fill($("country"), countries.map((c) => [c.code, `${c.name} (${c.code})`]), country);
  $("choose").hidden = false;
  say(`Key accepted: ${models.length} models, ${countries.length} countries.`);
  await Promise.all([showCountry(), loadRanking()]);
}

function start() {
  const saved = JSON.parse(sessionStorage.getItem("riskapi-explorer") || "null");
  $("base").value = saved ? saved.base : location.origin;
  if (saved) $("key").value = saved.key;
  $("connect").addEventListener("submit", connect);
  $("model").addEventListener("change", () => Promise.all([showCountry(), loadRanking()]));
  $("country").addEventListener("change", showCountry);
  if (saved && saved.key) connect();
}

start();
