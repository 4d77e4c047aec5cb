// A Worker that runs the edge core N times per request on one case (benchmarks/edge.py): workerd's
// clocks do not move during computation, so the time is taken outside, per request, minus N = 0.
import { answer } from "./core.js";
import { stored } from "./manifests.js";
import release from "./release.json";
import keys from "./keys.json";
import cases from "./cases.json";
import objects from "./objects.json";  // the manifests as read from R2 and kept (benchmarks/edge.py)

let signing = null;

function platformFor(secret) {  // as worker.js: HMAC-SHA256 under the KEYS_SECRET binding (.dev.vars)
  signing = signing || crypto.subtle.importKey("raw", new TextEncoder().encode(secret),
    { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  async function keyhash(text) {
    const digest = await crypto.subtle.sign("HMAC", await signing, new TextEncoder().encode(text));
    return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
  }
  return { keyhash, atob: (text) => atob(text), btoa: (text) => btoa(text) };
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
