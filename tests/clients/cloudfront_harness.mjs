// A thin stand-in for CloudFront around the functions `riskapi deploy cloudfront` wrote, for the
// contract tests: there is no local CloudFront runtime. Per request it builds CloudFront's event
// (viewer-request: method, uri as sent, querystring as an object of names → {value, multiValue},
// lower-case headers as {value}), runs viewer-request.js as written (the key gate;
// cloudfront_runtime.mjs: its KeyValueStore over kvs.json), then the origin-request Lambda@Edge
// (origin-lambda/, as Lambda runs it: Node, its handler; the origin a custom one, the S3 server, which
// the Lambda reads the releases' manifests from, signed with the AWS_* credentials of this process as
// Lambda gives a function its role's) on what the gate handed on, and either sends the answer the Lambda
// made, or asks the origin — a real S3 server, here Ceph's RADOS Gateway — for the object the Lambda
// named, with only the conditional headers (CloudFront sends no Authorization to S3), and runs the same
// Lambda on the origin response; every answer goes through viewer-response.js. Not emulated: CloudFront's cache (every request
// is a miss, so the Lambda runs on each), its compression, its header normalisation, and the runtime
// itself (this is Node's engine, not CloudFront's).
//   node cloudfront_harness.mjs FUNCTIONS_DIR ORIGIN_URL PORT
import http from "node:http";
import { pathToFileURL } from "node:url";
import { loadFunctions } from "./cloudfront_runtime.mjs";

const [folder, origin, port] = process.argv.slice(2);
const { viewerRequest, viewerResponse } = loadFunctions(folder);
// the Lambda@Edge of the origin request and response (origin-lambda/), run as Lambda runs it: Node, its handler
const originLambda = (await import(pathToFileURL(`${folder}/origin-lambda/index.js`).href)).handler;

// Lambda@Edge's event of the request the viewer-request function handed on: headers as name → [{key,
// value}] (CloudFront forwards the gate's x- headers: the origin request policy names them), the query
// as sent
const originUrl = new URL(origin);
const ORIGIN = { custom: { domainName: originUrl.hostname, port: Number(originUrl.port), protocol: "http",
  path: originUrl.pathname.replace(/\/$/, ""), readTimeout: 30, keepaliveTimeout: 5, customHeaders: {} } };

function lambdaEvent(request, query) {
  const headers = {};
  for (const [name, field] of Object.entries(request.headers)) headers[name] = [{ key: name, value: field.value }];
  return { Records: [{ cf: { config: { eventType: "origin-request" }, request: { method: request.method,
    uri: request.uri, querystring: query, headers, clientIp: "127.0.0.1", origin: ORIGIN } } }] };
}

// Lambda@Edge's event of the origin's answer: the request as it went to the origin, the response's
// status and headers (as name → [{key, value}]), no body
function responseEvent(sent, got) {
  const headers = {};
  for (const [name, value] of Object.entries(got.headers)) {
    if (!HOP_BY_HOP.has(name)) headers[name] = [{ key: name, value: String(value) }];
  }
  return { Records: [{ cf: { config: { eventType: "origin-response" }, request: sent,
    response: { status: String(got.status), statusDescription: "", headers } } }] };
}

// A name from the request becomes an own property, even `__proto__` (plain assignment would set the
// object's prototype instead; a client's `?__proto__=…` must not reach Object.prototype here).
function own(object, name, value) {
  Object.defineProperty(object, name, { value, enumerable: true, writable: true, configurable: true });
}

function querystring(raw) {
  const parsed = {};
  for (const pair of raw === "" ? [] : raw.split("&")) {
    const at = pair.indexOf("=");
    const name = at < 0 ? pair : pair.slice(0, at);
    const value = { value: at < 0 ? "" : pair.slice(at + 1) };
    if (!Object.hasOwn(parsed, name)) own(parsed, name, value);
    else (parsed[name].multiValue ??= [{ value: parsed[name].value }]).push(value);
  }
  return parsed;
}

function fromOrigin(method, uri, headers) {
  return new Promise((resolve, reject) => {
    const sent = http.request(`${origin}${uri}`, { method, headers }, (answer) => {
      const chunks = [];
      answer.on("data", (chunk) => chunks.push(chunk));
      answer.on("end", () => resolve({ status: answer.statusCode, headers: answer.headers, body: Buffer.concat(chunks) }));
    });
    sent.on("error", reject);
    sent.end();
  });
}

function send(out, status, headers, body) {
  const flat = {};
  for (const [name, field] of Object.entries(headers)) flat[name] = field.value;
  out.writeHead(status, flat);
  out.end(body);  // Node sends no body for HEAD
}

const HOP_BY_HOP = new Set(["connection", "keep-alive", "transfer-encoding"]);

const server = http.createServer(async (incoming, out) => {
  try {
    // the target as CloudFront hands it over: an absolute-form target (GET http://host/path) as its path
    const target = incoming.url.replace(/^https?:\/\/[^/?]*/i, "") || "/";
    const question = target.indexOf("?");
    const headers = {};
    for (const [name, values] of Object.entries(incoming.headersDistinct)) {  // a repeated header: multiValue
      const field = { value: values[0] };
      if (values.length > 1) field.multiValue = values.map((value) => ({ value }));
      own(headers, name, field);
    }
    const request = { method: incoming.method, uri: question < 0 ? target : target.slice(0, question),
      querystring: querystring(question < 0 ? "" : target.slice(question + 1)), headers, cookies: {} };
    const viewer = { ip: incoming.socket.remoteAddress };
    const decided = await viewerRequest({ version: "1.0", context: { eventType: "viewer-request" }, viewer, request });
    if (decided.statusCode !== undefined) {
      return send(out, decided.statusCode, decided.headers, decided.body ? decided.body.data : "");
    }
    const made = await originLambda(lambdaEvent(decided, question < 0 ? "" : target.slice(question + 1)));
    if (made.status !== undefined) {  // an answer of the Lambda: through viewer-response, as CloudFront does
      const response = { statusCode: Number(made.status), headers: {} };
      for (const [name, fields] of Object.entries(made.headers)) own(response.headers, name, { value: fields[0].value });
      const final = await viewerResponse({ version: "1.0", context: { eventType: "viewer-response" }, viewer,
        request: decided, response });
      return send(out, final.statusCode, final.headers, made.body);
    }
    const conditional = {};
    // what CloudFront sends on to the origin of the viewer's headers: the conditional ones and Range
    for (const name of ["if-match", "if-none-match", "if-modified-since", "if-unmodified-since", "range", "if-range"]) {
      if (made.headers[name]) conditional[name] = made.headers[name][0].value;
    }
    const got = await fromOrigin(made.method, made.uri, conditional);
    const answered = await originLambda(responseEvent(made, got));  // the origin-response trigger
    const response = { statusCode: Number(answered.status), headers: {} };
    for (const [name, fields] of Object.entries(answered.headers)) own(response.headers, name, { value: fields[0].value });
    const final = await viewerResponse({ version: "1.0", context: { eventType: "viewer-response" }, viewer,
      request: decided, response });
    send(out, final.statusCode, final.headers, got.body);
  } catch (error) {
    console.error(error);
    out.writeHead(502, { "Content-Type": "application/json; charset=utf-8" });
    out.end(JSON.stringify({ detail: "The edge harness failed." }));
  }
});
server.keepAliveTimeout = 0;  // no Keep-Alive header of Node's own: CloudFront sends none
server.listen(Number(port), "127.0.0.1");
