// Apply a Workers project's keys (keys-kv.json, written by `riskapi deploy cloudflare`) to its Workers
// KV namespace, the Worker's KEYS binding: `npm run keys` (`npm run keys:local` for wrangler dev's own
// store; other arguments, such as --persist-to, go to wrangler). What the namespace holds is listed
// first: every key entry there that the project no longer has is deleted (a revocation is a deletion,
// whatever runs were skipped before), and only entries it lacks or holds with another value than the
// last run wrote (.keys-kv-applied[-local].json) are put — KV counts writes (1,000 a day on the Free
// plan). KV is eventually consistent: a change reaches every edge within about a minute (plus the
// time the Worker keeps an entry it read, KEYS_CACHE_MS, 30 s by default).
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

// wrangler 4 needs Node 22.12 or newer: an older one gets this line, not wrangler's stack trace
const [major, minor] = process.versions.node.split(".").map(Number);
if (major < 22 || (major === 22 && minor < 12)) {
  console.error(`update-keys.mjs: Node ${process.versions.node} is too old for wrangler 4 (it needs 22.12 or newer); ` +
    "install Node 22 beside the system's: npm install -g --prefix ~/.local/node22 node@22 && " +
    "export PATH=\"$HOME/.local/node22/bin:$PATH\" (docs/deploy.md)");
  process.exit(1);
}

const here = dirname(fileURLToPath(import.meta.url));
const extra = process.argv.slice(2);
const applied = join(here, extra.includes("--local") ? ".keys-kv-applied-local.json" : ".keys-kv-applied.json");
const wanted = new Map(JSON.parse(readFileSync(join(here, "keys-kv.json"), "utf8")).map((e) => [e.key, e.value]));
// the key entries' prefix, as the serving contract the project's description carries names it
const keyPrefix = JSON.parse(readFileSync(join(here, "release.json"), "utf8")).contract.STORE.key;
const written = existsSync(applied) ? JSON.parse(readFileSync(applied, "utf8")) : {};

function wrangler(args, output) {  // $WRANGLER, else the project's own (package.json pins it)
  const bin = process.env.WRANGLER || join(here, "node_modules", ".bin", "wrangler");
  return execFileSync(bin, [...args, ...extra], { cwd: here, encoding: "utf8", maxBuffer: 1 << 30,
    stdio: ["ignore", output ? "pipe" : "inherit", "inherit"] });
}

const held = new Set(JSON.parse(wrangler(["kv", "key", "list", "--binding", "KEYS", "--prefix", keyPrefix], true))
  .map((entry) => entry.name));
const puts = [...wanted].filter(([key, value]) => !held.has(key) || written[key] !== value)
  .map(([key, value]) => ({ key, value }));
const deletions = [...held].filter((key) => !wanted.has(key));

if (puts.length) {
  writeFileSync(join(here, ".keys-kv-put.json"), JSON.stringify(puts), { mode: 0o600 });
  wrangler(["kv", "bulk", "put", ".keys-kv-put.json", "--binding", "KEYS"]);
}
if (deletions.length) {
  writeFileSync(join(here, ".keys-kv-delete.json"), JSON.stringify(deletions), { mode: 0o600 });
  wrangler(["kv", "bulk", "delete", ".keys-kv-delete.json", "--binding", "KEYS", "--force"]);
}
// written whole, then renamed: a run killed half-way leaves the record before it
writeFileSync(`${applied}.tmp`, JSON.stringify(Object.fromEntries(wanted)), { mode: 0o600 });
renameSync(`${applied}.tmp`, applied);
console.log(`keys: ${puts.length} written, ${deletions.length} deleted, ${wanted.size} in the namespace`);
