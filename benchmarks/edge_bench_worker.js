// A Worker that runs the edge core N times per request on one case (benchmarks/edge.py): workerd's
// clocks do not move during computation, so the time is taken outside, per request, minus N = 0.
import { answer, inMemory } from "./core.js";
import release from "./release.json";
import keys from "./keys.json";
import cases from "./cases.json";

async function sha256hex(text) {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

const lookup = inMemory(release, keys);
const platform = { sha256hex, atob: (text) => atob(text), btoa: (text) => btoa(text) };  // unbound, as core calls them

export default {
  async fetch(request) {
    const url = new URL(request.url);
    const n = Number(url.searchParams.get("n"));
    const which = Number(url.searchParams.get("case"));
    for (let i = 0; i < n; i++) await answer(cases[(which + i) % cases.length], release, lookup, platform);
    return new Response("ok");
  },
};
