// The edge core's own time per request in Node: `answer()` on a mix of requests, each call timed.
//   node benchmarks/edge_core.mjs PROJECT_DIR CASES_JSON ROUNDS  → one JSON line: per-call µs
import { readFileSync } from "node:fs";
import { createHash } from "node:crypto";

const [project, casesFile, rounds] = process.argv.slice(2);
const { answer } = await import(`${project}/core.js`);
const { stored } = await import(`${project}/manifests.js`);
const release = JSON.parse(readFileSync(`${project}/release.json`, "utf8"));
const keys = JSON.parse(readFileSync(`${project}/keys.json`, "utf8"));
// the Worker's lookup: its description, and the manifests as read from the bucket (objects.json) and kept
const objects = JSON.parse(readFileSync(`${project}/objects.json`, "utf8"));
const cases = JSON.parse(readFileSync(casesFile, "utf8"));
// the Worker's own SHA-1 is WebCrypto (async); Node's is the same digest (contract/key_format.py)
const secret = readFileSync(`${project}/.keys-secret`, "utf8").trim();
const keyDigest = async (key) => createHash("sha1").update(secret + key).digest("hex");
const releases = stored(release, async (key) => objects[key] ?? null);
const lookup = (table, key, id) => table === "keys" ? keys.keys[key] : table === "users" ? keys.users[id]?.[key]
  : releases(table, key, id);
const platform = { keyDigest, atob: (text) => atob(text), btoa: (text) => btoa(text) };  // unbound, as core calls them

const times = [];
for (let round = 0; round < Number(rounds); round++) {
  for (const request of cases) {
    const started = process.hrtime.bigint();
    await answer(request, release, lookup, platform);
    times.push(Number(process.hrtime.bigint() - started) / 1000);
  }
}
// The floor, in the same run: what a key check by digest cannot avoid, one digest of a key.
const floor = [];
for (let i = 0; i < times.length; i++) {
  const started = process.hrtime.bigint();
  await keyDigest(`key${i}`);
  floor.push(Number(process.hrtime.bigint() - started) / 1000);
}
const at = (values, q) => values.sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(q * values.length))];
console.log(JSON.stringify({ calls: times.length, median_us: at(times, 0.5), p99_us: at(times, 0.99),
  floor_median_us: at(floor, 0.5) }));
