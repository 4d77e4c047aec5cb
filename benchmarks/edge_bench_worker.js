// A Worker that runs the edge core N times per request on one case (benchmarks/edge.py): workerd's
// clocks do not move during computation, so the time is taken outside, per request, minus N = 0.
import { answer } from "./core.js";
import { stored } from "./manifests.js";
import release from "./release.json";
import keys from "./keys.json";
import cases from "./cases.json";
import objects from "./objects.json";  // the manifests as read from R2 and kept (benchmarks/edge.py)

function platformFor(secret) {  // as worker.js: the SHA-1 of the KEYS_SECRET binding (.dev.vars) and the key
  async function keyDigest(key) {
    const digest = await crypto.subtle.digest("SHA-1", new TextEncoder().encode(secret + key));
    return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
  }
  return { keyDigest, atob: (text) => atob(text), btoa: (text) => btoa(text) };
}

const releases = stored(release, async (key) => objects[key] ?? null);
const lookup = (table, key, id) => table === "keys" ? keys.keys[key] : table === "users" ? keys.users[id]?.[key]
  : releases(table, key, id);

export default {
  async fetch(request, env) {
    const platform = platformFor(env.KEYS_SECRET);
    const url = new URL(request.url);
    const n = Number(url.searchParams.get("n"));
    const which = Number(url.searchParams.get("case"));
    for (let i = 0; i < n; i++) await answer(cases[(which + i) % cases.length], release, lookup, platform);
    return new Response("ok");
  },
};
