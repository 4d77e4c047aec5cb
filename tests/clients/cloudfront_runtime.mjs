// What stands in for CloudFront's runtime around the functions `riskapi deploy cloudfront` wrote
// (tests/clients/cloudfront_harness.mjs and benchmarks/cloudfront_function.mjs): the deployed code as
// it is, its `import cf from "cloudfront"` line replaced by a KeyValueStore over kvs.json, each
// handler in a strict-mode scope with Node's `require` (for `crypto`).
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";

const IMPORT = 'import cf from "cloudfront";\n';

export function loadFunctions(folder) {
  const store = new Map(JSON.parse(readFileSync(`${folder}/kvs.json`, "utf8")).data.map((e) => [e.key, e.value]));
  const cf = { kvs: () => ({ async get(key) {  // CloudFront's get() rejects a key the store lacks
    if (!store.has(key)) throw new Error(`Key not found: ${key}`);
    return store.get(key);
  } }) };
  const load = (name) => {
    let code = readFileSync(`${folder}/${name}`, "utf8");
    if (code.startsWith(IMPORT)) code = code.slice(IMPORT.length);
    return new Function("cf", "require", `"use strict";\n${code}\nreturn handler;`)(cf, createRequire(import.meta.url));
  };
  return { viewerRequest: load("viewer-request.js"), viewerResponse: load("viewer-response.js") };
}
