// The CloudFront Function (cloudfront-js-2.0, viewer request) of the country risk API: the key gate,
// the same for every route and release (the routing runs behind it, in the origin-request Lambda@Edge:
// cloudfront_origin.js). It normalises the path as nginx does, checks the key (its digest, then the
// KeyValueStore), and hands on what the answer depends on, as headers the cache key and the Lambda read
// (the contract's HANDOFF names them): the live release (the store's `release` entry: one write switches
// every edge), how the key fared (ok, missing, invalid, mistyped: of the API's key format, its checksum
// wrong; expired:<ms>; twice: two Authorization headers, nginx's 400), its grant set and whether it may
// preview, the audience variant the answering release serves that set (its `a:` entry; public), whom the
// answer is for (not in the cache key), and for the viewer response the answer's own fields —
// and drops Authorization: no key goes further. The store holds one entry per active key (k:<digest> →
// user, grant set, preview, expiry), one per release and grant set not served the public variant (a:<id>:<set>),
// each release's state and when it went live (r:<id>), and `release`. Keys are known by their digests
// under the site's key secret, which `riskapi deploy cloudfront` writes below with the release-scoped
// paths of the route table (routes.py's edge_table: its `scope`), declared before this script as DEPLOYED.
import { HANDOFF, PUBLIC_AUDIENCE, STORE, useContract } from "./contract.js";
import { mementoLinks, normalise, routeOfScoped, user } from "./keycheck.js";

const crypto = require("crypto");
const kvs = cf.kvs();
useContract(DEPLOYED.contract);  // the parts of the serving contract it uses
const SECRET = DEPLOYED.secret;
const SCOPE = DEPLOYED.scope;
const SCOPED = new RegExp(`^${SCOPE.under}/(${SCOPE.id})(/[\\w./-]*)?$`);

const platform = {
  keyDigest: (key) => crypto.createHash("sha1").update(SECRET + key).digest("hex"),  // contract/key_format.py
  atob: (text) => Buffer.from(text, "base64").toString("utf8"),
  btoa: (text) => Buffer.from(text, "utf8").toString("base64"),
};

function entry(key) {  // an entry of the store as JSON, or undefined (get() rejects a missing key)
  return kvs.get(key).then((value) => JSON.parse(value), () => undefined);
}

// The query as sent: CloudFront hands it over as an object of names and values (a repeated name as
// multiValue, in the order sent).
function queryString(querystring) {
  const pairs = [];
  for (const name in querystring) {
    const values = querystring[name].multiValue || [querystring[name]];
    for (let i = 0; i < values.length; i++) pairs.push(`${name}=${values[i].value}`);
  }
  return pairs.join("&");
}

async function handler(event) {
  const request = event.request;
  const headers = request.headers;
  const release = await entry(STORE.live);  // {id, cache_control, immutable, site_url}
  const twice = !!(headers.authorization && headers.authorization.multiValue);
  const sent = headers.authorization && !twice ? headers.authorization.value : "";
  let found;
  const lookup = async (table, digest) => {
    found = await entry(STORE.key + digest);
    return found || undefined;
  };
  const checked = twice ? "" : await user(sent, lookup, platform);
  const who = typeof checked === "string" ? checked : "";  // else mistyped (null) or expired (when)
  const path = normalise(request.uri);
  const scoped = path === null ? null : SCOPED.exec(path);
  const answering = scoped ? scoped[1] : release.id;
  const set = who ? found.set : "";
  const audience = set && set !== PUBLIC_AUDIENCE ? await entry(`${STORE.audience}${answering}:${set}`) : undefined;
  const query = queryString(request.querystring);
  const site = release.site_url;
  const asked = query ? "?" + query : "";
  // a release-scoped answer's Memento Links (keycheck.js): its original, TimeGate and TimeMap (an
  // original's own come from the router, with its object)
  const auth = twice ? "twice" : who ? "ok" : checked === null ? "mistyped" : typeof checked === "number"
    ? `expired:${checked}` : sent ? "invalid" : "missing";
  const handed = { release: release.id, auth, grants: set, preview: who && found.preview ? "1" : "",
    audience: audience || PUBLIC_AUDIENCE, user: who, answering, answering_cache: release.cache_control,
    memento_datetime: "", memento_link: "" };
  if (scoped) {
    const state = await entry(STORE.state + answering);
    handed.answering_cache = release.immutable;
    handed.memento_datetime = state && state[1] || "";
    handed.memento_link = mementoLinks(routeOfScoped(scoped[2] || "", SCOPE) + asked, SCOPE, site);
  }
  for (const part in handed) headers[HANDOFF[part]] = { value: handed[part] };
  delete headers.authorization;
  return request;
}
