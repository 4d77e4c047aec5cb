// The edge core's lookup over releases kept in a bucket as manifests over content-addressed objects
// (`riskapi deploy s3`, generator/deploy/objects.py): a Worker reads them from R2, CloudFront's origin
// Lambda from S3. `read(key)` gives a stored JSON object (or null where there is none). A release's
// manifest head (its routing tables, its layers of shards, newest first) is read once per isolate or
// container and kept; a shard (file path → [mtime, size, sha256], or null: not in this release; split
// by fnv1a32 of the path) when a request first needs it — the one of each layer the path falls in, all
// at once — and kept while at most SHARDS_KEPT are. A file's entry is the newest layer's that lists it. What the description bundled with the code holds (the
// states, the grant sets' audiences, the files of the list of releases and the TimeMap) is read from it.

const SHARDS_KEPT = 512;  // ~50 MB at most: a shard is ~1,024 files of ~100 bytes

// A manifest the bucket lacks (an upload not finished, or a release pruned there before the edge was
// updated): the caller answers 503, never another release's answer.
export class Unavailable extends Error {}

function own(object, key) {
  return object !== undefined && object !== null && Object.prototype.hasOwnProperty.call(object, key)
    ? object[key] : undefined;
}

// 32-bit FNV-1a of the UTF-8 bytes (objects.fnv1a)
export function fnv1a(text) {
  const bytes = new TextEncoder().encode(text);
  let value = 0x811c9dc5;
  for (let i = 0; i < bytes.length; i++) value = Math.imul(value ^ bytes[i], 0x01000193) >>> 0;
  return value;
}

// The key of a file answer's body, or of its encoding ("gzip" → .gz, "br" → .br): objects.object_key.
export function objectKey(result, coding) {
  const dot = result.file.lastIndexOf(".");
  const twin = coding === "br" ? ".br" : coding === "gzip" ? ".gz" : "";
  return `objects/${result.sha256}${dot < 0 ? "" : result.file.slice(dot)}${twin}`;
}

// The core's lookup(table, key, release) over the description bundled with the code and the
// manifests `read` gives; "keys" and "users" are the caller's (the Worker's Workers KV, the gate's).
export function stored(description, read) {
  const heads = new Map();  // release → Promise of its manifest head
  const shards = new Map();  // shard key → Promise of the shard
  function cached(map, key, limit) {
    let found = map.get(key);
    if (found === undefined) {
      if (map.size >= limit) map.clear();
      found = read(key).then((body) => {
        if (body === null) {
          map.delete(key);  // asked again next time: the upload may have finished
          throw new Unavailable(`${key} is not in the bucket`);
        }
        return body;
      }, (error) => {
        map.delete(key);
        throw error;
      });
      map.set(key, found);
    }
    return found;
  }
  return async (table, key, release) => {
    if (table === "states") return own(description.states, key);
    if (table === "audiences" || release === "timeline") return own(own(own(description.tables, release), table), key);
    const head = await cached(heads, `manifests/${release}.json`, 64);
    if (table !== "files") return own(own(head.tables, table), key);
    const at = fnv1a(key);
    let found;
    try {
      found = await Promise.all(head.layers.map((layer) => cached(shards, layer[at % layer.length], SHARDS_KEPT)));
    } catch (error) {
      heads.delete(`manifests/${release}.json`);  // read the head again next time: it may have been replaced
      throw error;
    }
    for (let i = 0; i < found.length; i++) {
      const entry = own(found[i], key);
      if (entry !== undefined) return entry === null ? undefined : entry;
    }
    return undefined;
  };
}
