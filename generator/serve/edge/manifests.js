// The edge core's lookup over releases kept in a bucket as manifests over content-addressed objects
// (`riskapi deploy s3`, generator/serve/deploy/objects.py): a Worker reads them from R2, CloudFront's origin
// Lambda from S3. `read(key)` gives a stored JSON object (or null where there is none). A release's
// manifest head (its routing tables, and its shards with the first path of each one's range of sorted
// paths) is read once per isolate or container and kept; a shard (file path → [mtime, size, sha256, and
// for a file with encodings their SHA-256s by coding]) when a request first needs it — the one whose
// range holds the path, by a binary search over the head's bounds — and kept while at most SHARDS_KEPT
// are. What the description bundled with the code holds (the states, the grant sets' audiences, the files
// of the list of releases and the TimeMap) is read from it.
import { digestField } from "./keycheck.js";

const SHARDS_KEPT = 512;  // ~50 MB at most: a shard is ~1,024 files of ~100 bytes
const RECORD_MS = 1000;  // the bucket's record of what was live, read at most once a second

// A manifest the bucket lacks (an upload not finished, or a release pruned there before the edge was
// updated): the caller answers 503, never another release's answer.
export class Unavailable extends Error {}

function own(object, key) {
  return object !== undefined && object !== null && Object.prototype.hasOwnProperty.call(object, key)
    ? object[key] : undefined;
}

// The shard whose range holds `path`: the last bound at or before it (bounds[0] is "", sorted as
// JavaScript's `<` sorts: objects.path_order)
export function shardOf(head, path) {
  let low = 0, high = head.bounds.length - 1;
  while (low < high) {
    const middle = (low + high + 1) >> 1;
    if (head.bounds[middle] <= path) low = middle; else high = middle - 1;
  }
  return head.shards[low];
}

// The key of a file answer's body, or of its encoding ("gzip" → .gz, "br" → .br): objects.object_key.
export function objectKey(result, coding) {
  const dot = result.file.lastIndexOf(".");
  const twin = coding === "br" ? ".br" : coding === "gzip" ? ".gz" : "";
  return `objects/${result.sha256}${dot < 0 ? "" : result.file.slice(dot)}${twin}`;
}

// The Repr-Digest (RFC 9530) of a file's answer sent with `coding` ("gzip", "br"; null: as stored): of
// those bytes, from the files table; undefined where it lacks that coding's hash (no header, never the
// digest of other bytes).
export function codedDigest(result, coding) {
  const hex = coding ? result.codings[coding] : result.sha256;
  return hex ? digestField(hex) : undefined;
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
  let record = null;  // [the bucket's record of what was live, or null, and when it was read]
  return async (table, key, release) => {
    if (table === "states") return own(description.states, key);
    if (table === "record") {  // read again after RECORD_MS: a deploy moves it on
      if (!description.record) return undefined;
      if (record === null || Date.now() - record[1] > RECORD_MS) {
        record = [await read(description.record).catch(() => null), Date.now()];
      }
      return record[0] === null ? undefined : record[0];
    }
    if (table === "audiences" || release === "timeline") return own(own(own(description.tables, release), table), key);
    const head = await cached(heads, `manifests/${release}.json`, 64);
    if (table !== "files") return own(own(head.tables, table), key);
    if (head.format !== description.manifest_format) {  // a bucket not yet deployed to by this version
      heads.delete(`manifests/${release}.json`);
      throw new Unavailable(`manifests/${release}.json is of format ${head.format}, not ${description.manifest_format}`);
    }
    let found;
    try {
      found = await cached(shards, shardOf(head, key), SHARDS_KEPT);
    } catch (error) {
      heads.delete(`manifests/${release}.json`);  // read the head again next time: it may have been replaced
      throw error;
    }
    return own(found, key);
  };
}
