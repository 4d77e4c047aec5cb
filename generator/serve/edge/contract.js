// The serving contract (generator/contract/serving.py) as this edge received it in its description: release.json
// for the Worker and the origin Lambda, a constant for njs and each CloudFront function. It holds no value
// of its own; useContract() sets every binding once, before any request.
//
// Written in the JavaScript CloudFront Functions run (cloudfront-js-2.0; checked with njs 0.7.9).

export let TYPES, DEFAULT_TYPE, HEADERS, LINK_TYPE, PAGE_TYPES, ERRORS;
export let REDIRECT, LINK, LINK_PARAMETER, LINKS, STALE_RETRY_AFTER, RECORD_RETRY_AFTER, FOLDERS;
export let NO_MATCH, PUBLIC_AUDIENCE, STORE, NAMES, BINARY, AUTHORIZATION, KEY_FORMAT, HANDOFF, CODE_SENT;

export function useContract(contract) {
  TYPES = contract.TYPES;
  DEFAULT_TYPE = contract.DEFAULT_TYPE;
  HEADERS = contract.HEADERS;
  LINK_TYPE = contract.LINK_TYPE;
  PAGE_TYPES = contract.PAGE_TYPES;
  ERRORS = contract.ERRORS;
  REDIRECT = contract.REDIRECT;
  LINK = contract.LINK;
  LINK_PARAMETER = contract.LINK_PARAMETER;
  LINKS = contract.LINKS;
  STALE_RETRY_AFTER = contract.STALE_RETRY_AFTER;
  RECORD_RETRY_AFTER = contract.RECORD_RETRY_AFTER;
  FOLDERS = contract.FOLDERS;
  NO_MATCH = contract.NO_MATCH;
  PUBLIC_AUDIENCE = contract.PUBLIC_AUDIENCE;
  STORE = contract.STORE;
  NAMES = contract.NAMES;
  BINARY = contract.BINARY;
  AUTHORIZATION = contract.AUTHORIZATION;
  KEY_FORMAT = contract.KEY_FORMAT;
  HANDOFF = contract.HANDOFF;
  CODE_SENT = contract.CODE_SENT;
}
