// The JavaScript citation verifier (generator/building/render/templates/docs/verify.js) on the cases tests/history/test_verify_js.py
// writes: reads a JSON file of {citation, vkeys, document (base64) or null, since or null, witnesses, quorum},
// prints for each
// {ok, release, periods, pruned} or {ok: false, error}.
import { readFileSync } from "node:fs";
import { verifyCitation } from "../../generator/building/render/templates/docs/verify.js";

const cases = JSON.parse(readFileSync(process.argv[2], "utf8"));
const results = [];
for (const one of cases) {
  const document = one.document === null ? null : Uint8Array.from(Buffer.from(one.document, "base64"));
  try {
    const verified = await verifyCitation(one.citation, one.vkeys, document, one.since, one.witnesses || [],
      one.quorum || 0);
    results.push({ ok: true, release: verified.release, periods: verified.periods, pruned: verified.pruned,
      path: verified.path });
  } catch (error) {
    results.push({ ok: false, error: error.message });
  }
}
const timing = process.argv[3] === "--time" ? await time(cases[0]) : null;
console.log(JSON.stringify({ results, timing }));

async function time(one) {
  const document = Uint8Array.from(Buffer.from(one.document, "base64"));
  for (let i = 0; i < 50; i++) await verifyCitation(one.citation, one.vkeys, document, one.since);  // warm
  const runs = [];
  for (let i = 0; i < 200; i++) {
    const started = performance.now();
    await verifyCitation(one.citation, one.vkeys, document, one.since);
    runs.push(performance.now() - started);
  }
  runs.sort((a, b) => a - b);
  return runs[100];
}
