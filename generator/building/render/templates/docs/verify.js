// The citation verifier (riskapi verify's checks, generator/transparency/citation.py) as one ES module with
// no build step, on WebCrypto alone (SHA-256, Ed25519): Node 22 and browsers. verifyCitation() resolves to
// what the citation proves — the release, the document's path and hash, each live period — or rejects with
// an Error whose message is the one line saying what does not hold.

const FORMAT = "riskapi-citation/1";
const DASH = "\u2014 ";
const encoder = new TextEncoder();

function fail(message) {
  throw new Error(message);
}

function fromBase64(text, what) {
  if (typeof text !== "string" || !/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4) fail(`${what}: not base64`);
  const binary = atob(text);
  return Uint8Array.from(binary, (c) => c.charCodeAt(0));
}

function equal(a, b) {
  return a.length === b.length && a.every((byte, i) => byte === b[i]);
}

function concat(...parts) {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

async function sha256(bytes) {
  return new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
}

const leafHash = (data) => sha256(concat([0], data));
const nodeHash = (left, right) => sha256(concat([1], left, right));

function hex(bytes) {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

// ---- RFC 9162 §2.1.3.2 and §2.1.4.2, as transparency/tree.py

function sides(fn, sn, length) {
  const left = [];
  for (let i = 0; i < length; i++) {
    if (sn === 0) return null;
    const isLeft = Boolean(fn & 1) || fn === sn;
    left.push(isLeft);
    if (isLeft && !(fn & 1)) {
      while (fn && !(fn & 1)) {
        fn >>= 1;
        sn >>= 1;
      }
    }
    fn >>= 1;
    sn >>= 1;
  }
  return { left, sn };
}

export async function verifyInclusion(leaf, index, size, proof, root) {
  if (!(index >= 0 && index < size)) return false;
  const walk = sides(index, size - 1, proof.length);
  if (walk === null) return false;
  let r = leaf;
  for (let i = 0; i < proof.length; i++) r = walk.left[i] ? await nodeHash(proof[i], r) : await nodeHash(r, proof[i]);
  return walk.sn === 0 && equal(r, root);
}

export async function verifyConsistency(oldSize, newSize, oldRoot, newRoot, proof) {
  if (!(oldSize > 0 && oldSize <= newSize)) return false;
  if (oldSize === newSize) return proof.length === 0 && equal(oldRoot, newRoot);
  if (proof.length === 0) return false;
  const path = (oldSize & (oldSize - 1)) === 0 ? [oldRoot, ...proof] : [...proof];
  let fn = oldSize - 1;
  let sn = newSize - 1;
  while (fn & 1) {
    fn >>= 1;
    sn >>= 1;
  }
  const walk = sides(fn, sn, path.length - 1);
  if (walk === null) return false;
  let fr = path[0];
  let sr = path[0];
  for (let i = 1; i < path.length; i++) {
    if (walk.left[i - 1]) {
      fr = await nodeHash(path[i], fr);
      sr = await nodeHash(path[i], sr);
    } else {
      sr = await nodeHash(sr, path[i]);
    }
  }
  return walk.sn === 0 && equal(fr, oldRoot) && equal(sr, newRoot);
}

// ---- C2SP signed-note and tlog-checkpoint, as transparency/note.py

async function keyId(name, publicKey, kind) {
  return (await sha256(concat(encoder.encode(name + "\n"), [kind], publicKey))).slice(0, 4);
}

// A verifier key (name+id+base64): a log's (Ed25519, type 1) or, with kind 4, a witness's (C2SP
// tlog-cosignature: timestamped Ed25519).
export async function readVerifier(vkey, kind = 1) {
  const parts = String(vkey).trim().split("+");
  if (parts.length < 3) fail(`not a key of the form name+id+base64: ${String(vkey).slice(0, 60)}`);
  const [name, id] = parts;
  const raw = fromBase64(parts.slice(2).join("+"), "a verifier key");
  if (!name || /[\s+]/.test(name) || raw.length !== 33 || raw[0] !== kind) fail(`only Ed25519 keys of type ${kind} are taken`);
  const publicKey = raw.slice(1);
  if (id !== hex(await keyId(name, publicKey, kind))) fail(`the key ID ${id} is not that of the key ${name}`);
  const key = await crypto.subtle.importKey("raw", publicKey, { name: "Ed25519" }, false, ["verify"]);
  return { name, id, vkey: String(vkey).trim(), key, kind };
}

// What a key's signature line signs: the note's text, or for a cosignature its timestamp line first.
function signedBy(verifier, text, payload) {
  if (verifier.kind !== 4) return { message: encoder.encode(text), signature: payload };
  if (payload.length !== 72) return null;
  const time = new DataView(payload.buffer, payload.byteOffset, 8).getBigUint64(0);
  return { message: encoder.encode(`cosignature/v1\ntime ${time}\n${text}`), signature: payload.slice(8) };
}

async function verifiedBy(note, keys, what) {
  const split = note.lastIndexOf("\n\n");
  const text = note.slice(0, split + 1);
  const verified = [];
  for (const line of note.slice(split + 2, -1).split("\n")) {
    const fields = line.startsWith(DASH) ? line.slice(DASH.length).split(" ") : [];
    if (fields.length !== 2) fail(`${what}: a malformed signature line`);
    const payload = fromBase64(fields[1], what);
    if (payload.length < 5) fail(`${what}: a signature too short to hold a key ID`);
    const known = keys.find((v) => v.name === fields[0] && v.id === hex(payload.slice(0, 4)));
    if (!known) continue;
    const signed = signedBy(known, text, payload.slice(4));
    if (!signed || !(await crypto.subtle.verify("Ed25519", known.key, signed.signature, signed.message))) {
      fail(`${what}: the ${known.kind === 4 ? "cosignature" : "signature"} of ${known.name} does not verify`);
    }
    if (!verified.includes(known)) verified.push(known);
  }
  return verified;
}

async function openNote(note, trusted, what) {
  if (/[\u0000-\u0009\u000b-\u001f]/.test(note)) fail(`${what}: a note with a control character`);
  const split = note.lastIndexOf("\n\n");
  if (split < 0 || !note.endsWith("\n")) fail(`${what}: a note without its blank line and signature lines`);
  const text = note.slice(0, split + 1);
  const verified = await verifiedBy(note, trusted, what);
  if (!verified.length) fail(`${what}: no signature of a trusted key`);
  const [origin, size, root, ...rest] = text.split("\n");
  if (rest.length < 1 || !origin || !/^(0|[1-9][0-9]*)$/.test(size)) fail(`${what}: not a checkpoint`);
  const checkpoint = { origin, size: Number(size), root: fromBase64(root, what) };
  if (checkpoint.root.length !== 32) fail(`${what}: a root hash that is not 32 bytes`);
  if (!verified.some((v) => v.name === origin)) fail(`${what}: its origin ${origin} is not the name of a trusted key`);
  return checkpoint;
}

// ---- log entries, as transparency/entries.py: canonical JSON (keys sorted, no space)

function canonical(value) {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value && typeof value === "object") {
    return `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

function readEntry(text, index) {
  let value;
  try {
    value = JSON.parse(text);
  } catch {
    fail(`entry ${index}: not JSON`);
  }
  if (canonical(value) !== text) fail(`entry ${index}: a log entry not in canonical form`);
  if (!["release", "switch", "prune"].includes(value.event)) fail(`entry ${index}: a log entry without a known event`);
  return value;
}

function hashesOf(values, what) {
  if (!Array.isArray(values)) fail(`${what}: not a list of hashes`);
  return values.map((v) => {
    const h = fromBase64(v, what);
    if (h.length !== 32) fail(`${what}: a hash that is not 32 bytes`);
    return h;
  });
}

function periodsOf(entries, release, size) {
  const periods = [];
  const indexes = [...entries.keys()].sort((a, b) => a - b);
  for (const index of indexes.filter((i) => entries.get(i).event === "switch" && entries.get(i).release === release)) {
    let end = null;
    for (let at = index + 1; at < size; at++) {
      if (!entries.has(at)) fail(`entry ${at} is missing: the period from entry ${index} cannot be told`);
      if (entries.get(at).event === "switch") {
        end = entries.get(at).at;
        break;
      }
    }
    periods.push({ from: entries.get(index).at, until: end });
  }
  if (!periods.length) fail(`no switch making ${release} live is cited`);
  return periods;
}

// What a citation proves, checked offline: see transparency/citation.py, verify_citation. `witnessKeys`:
// the witnesses trusted (their cosignature verifier keys), `quorum` of which must have cosigned.
export async function verifyCitation(text, vkeys, documentBytes, sinceNote, witnessKeys = [], quorum = 0) {
  let citation;
  try {
    citation = JSON.parse(typeof text === "string" ? text : new TextDecoder().decode(text));
  } catch (error) {
    fail(`not a citation: ${error.message}`);
  }
  if (!citation || citation.format !== FORMAT) fail(`not a citation of the form ${FORMAT}`);
  const trusted = await Promise.all(vkeys.map((vkey) => readVerifier(vkey)));
  if (typeof citation.checkpoint !== "string") fail("the checkpoint: no checkpoint");
  const checkpoint = await openNote(citation.checkpoint, trusted, "the checkpoint");
  const witnesses = await Promise.all(witnessKeys.map((vkey) => readVerifier(vkey, 4)));
  const cosigners = await verifiedBy(citation.checkpoint, witnesses, "the checkpoint");
  if (cosigners.length < quorum) {
    fail(`the checkpoint is cosigned by ${cosigners.length} of the witnesses given; ${quorum} needed`);
  }
  const release = citation.release;
  if (typeof release !== "string" || !Array.isArray(citation.entries)) fail("the citation: no release or entries");
  const hashes = hashesOf(citation.hashes, "the log's hashes");
  const entries = new Map();
  for (const item of citation.entries) {
    const index = item && item.index;
    if (!Number.isInteger(index) || typeof item.entry !== "string" || !Array.isArray(item.proof)) fail("an entry: malformed");
    if (!item.proof.every((n) => Number.isInteger(n) && n >= 0 && n < hashes.length)) {
      fail(`entry ${index}'s proof names a hash the citation does not hold`);
    }
    const raw = encoder.encode(item.entry);
    const proof = item.proof.map((n) => hashes[n]);
    if (!(await verifyInclusion(await leafHash(raw), index, checkpoint.size, proof, checkpoint.root))) {
      fail(`entry ${index} is not in the log at the checkpoint (size ${checkpoint.size})`);
    }
    entries.set(index, readEntry(item.entry, index));
  }
  const first = [...entries.values()].find((e) => e.event === "release" && e.release === release);
  if (!first || !first.tree) fail(`no entry of the log making ${release} live, with its tree`);
  const tree = citation.tree || {};
  if (tree.size !== first.tree.size || tree.root !== first.tree.root) {
    fail(`the tree cited is not the one the log states for ${release}`);
  }
  const doc = citation.document || {};
  if (typeof doc.path !== "string" || typeof doc.sha256 !== "string") fail("the document: no path or sha256");
  if (documentBytes !== undefined && documentBytes !== null && hex(await sha256(documentBytes)) !== doc.sha256) {
    fail(`the document given is not the one cited (its SHA-256 is not ${doc.sha256})`);
  }
  const leaf = await leafHash(encoder.encode(`${doc.path}\n${doc.sha256}\n`));
  if (!Number.isInteger(tree.index) ||
      !(await verifyInclusion(leaf, tree.index, first.tree.size, hashesOf(tree.proof, "the document's proof"),
        fromBase64(first.tree.root, "the tree's root")))) {
    fail(`${doc.path} with SHA-256 ${doc.sha256} is not in the tree of ${release}`);
  }
  const periods = periodsOf(entries, release, checkpoint.size);
  const pruned = [...entries.values()].find((e) => e.event === "prune" && e.release === release);
  if (sinceNote !== undefined && sinceNote !== null) {
    // the same checkpoint needs no proof, an earlier one the citation's, one of the same size with another
    // root is a fork, a later one this citation cannot prove (as riskapi verify's _check_since)
    const since = await openNote(sinceNote, trusted, "the checkpoint held before");
    if (since.origin !== checkpoint.origin) fail(`the checkpoint held before is of another log (${since.origin})`);
    if (since.size > checkpoint.size) {
      fail(`the checkpoint held before (size ${since.size}) is newer than the citation's (size ${checkpoint.size}): cite again to prove it`);
    }
    if (since.size === checkpoint.size) {
      if (!equal(since.root, checkpoint.root)) {
        fail(`the log at the checkpoint (size ${checkpoint.size}) is not the one held before at the same size: its history was rewritten`);
      }
    } else {
      const held = citation.since;
      if (!held || typeof held.checkpoint !== "string" || held.checkpoint.split("\n\n")[0] !== sinceNote.split("\n\n")[0]) {
        fail(`the citation holds no proof from the checkpoint held before (size ${since.size}): cite again with --since`);
      }
      if (!(await verifyConsistency(since.size, checkpoint.size, since.root, checkpoint.root,
        hashesOf(held.proof, "the consistency proof")))) {
        fail(`the log at the checkpoint (size ${checkpoint.size}) does not extend the one held before (size ${since.size}): its history was rewritten`);
      }
    }
  }
  return { release, path: doc.path, sha256: doc.sha256, origin: checkpoint.origin, size: checkpoint.size, periods,
    pruned: pruned ? pruned.at : null, cosigners: cosigners.map((w) => w.vkey) };
}

// ---- an answer as the explorer shows it, proved from what the servers answer (riskapi cite's fetches)

export async function rootOf(hashes) {
  if (!hashes.length) return sha256(new Uint8Array());
  let level = hashes;
  while (level.length > 1) {
    const next = [];
    for (let i = 0; i + 1 < level.length; i += 2) next.push(await nodeHash(level[i], level[i + 1]));
    if (level.length % 2) next.push(level[level.length - 1]);
    level = next;
  }
  return level[0];
}

// A tile's (or bundle's) path after `tile/` (C2SP tlog-tiles): N in 3-digit parts, an x before all but the last.
export function tilePath(level, index, width) {
  const parts = [String(index % 1000).padStart(3, "0")];
  for (let n = Math.floor(index / 1000); n > 0; n = Math.floor(n / 1000)) parts.unshift("x" + String(n % 1000).padStart(3, "0"));
  return `${level === null ? "" : level + "/"}${parts.join("/")}${width < 256 ? ".p/" + width : ""}`;
}

async function tiled(size, url, get) {
  const out = [];
  for (let n = 0; n * 256 < size; n++) out.push(await get(url(tilePath(null, n, Math.min(256, size - n * 256)))));
  return out;
}

function bundleEntries(bytes) {
  const entries = [];
  for (let at = 0; at < bytes.length;) {
    if (at + 2 > bytes.length) fail("an entry bundle cut short");
    const length = (bytes[at] << 8) | bytes[at + 1];
    if (at + 2 + length > bytes.length) fail("an entry bundle cut short");
    entries.push(bytes.slice(at + 2, at + 2 + length));
    at += 2 + length;
  }
  return entries;
}

// `root`: the API root document; `path`: the route's path (and query) the answer was asked at; `bytes` its
// body, `release` its X-Release; `getKeyed`, `getPublic`: URL → Uint8Array (the release's tiles need the key).
export async function verifyAnswer({ root, path, bytes, release, getKeyed, getPublic }) {
  const log = root.log;
  if (!log || !log.verifierKey) fail("the log of releases is not signed: nothing to verify against");
  const trusted = [await readVerifier(log.verifierKey)];
  const checkpoint = await openNote(new TextDecoder().decode(await getPublic(log.checkpoint)), trusted, "the checkpoint");
  const bundles = await tiled(checkpoint.size, (p) => `${log.tiles}entries/${p}`, getPublic);
  const raw = bundles.flatMap(bundleEntries);
  const hashes = await Promise.all(raw.map(leafHash));
  if (raw.length !== checkpoint.size || !equal(await rootOf(hashes), checkpoint.root)) {
    fail("the log's entries do not make the signed checkpoint's tree");
  }
  const entries = new Map(raw.map((bytes_, i) => [i, readEntry(new TextDecoder().decode(bytes_), i)]));
  const first = [...entries.values()].find((e) => e.event === "release" && e.release === release);
  if (!first || !first.tree) fail(`the log names no release ${release} with its tree`);
  const tiles = await tiled(first.tree.size, (p) => log.releaseTiles.replace("{release}", release) + "0/" + p, getKeyed);
  const leaves = tiles.flatMap((tile) => Array.from({ length: tile.length / 32 }, (_, i) => tile.slice(i * 32, i * 32 + 32)));
  if (leaves.length !== first.tree.size || !equal(await rootOf(leaves), fromBase64(first.tree.root, "the tree's root"))) {
    fail(`the tiles of ${release}'s tree do not make the tree its log entry states`);
  }
  const leaf = await leafHash(encoder.encode(`${path}\n${hex(await sha256(bytes))}\n`));
  const index = leaves.findIndex((l) => equal(l, leaf));
  if (index < 0) fail(`${path} with these bytes is not a document of ${release}`);
  return { release, index, treeSize: first.tree.size, origin: checkpoint.origin, size: checkpoint.size,
    periods: periodsOf(entries, release, checkpoint.size), vkey: log.verifierKey };
}
