"""docs/api.md against every server of the same release of the tiny fixture: the real nginx, and the edge
Worker in the real workerd (`riskapi deploy cloudflare` + `wrangler dev`) and S3 + CloudFront (the
real Ceph gateway and the functions' harness): routes, case, filters,
orderings, keys, errors. Each case runs against each server; a difference between them is a failure."""
import gzip
import json
import re

import pytest

from generator.contract import serving

from ..conftest import ROOT, SERVERS
from ..live import digest_of
from ..waiting import wait_for

SERVED_BY = SERVERS  # every test taking `live` runs on nginx, the Worker and CloudFront (conftest.py)
API = "/api/v1"


def doc(path: str) -> str:
    return f"api/v1/{path}/index.json"


# (request path, file of the current release that must come back byte for byte)
ROUTES = [
    (f"{API}/configuration/riskscoremodels/", doc("configuration/riskscoremodels/audience=acme_aml")),
    (f"{API}/configuration/riskscoresmodels/", doc("configuration/riskscoremodels/audience=acme_aml")),
    (f"{API}/configuration/riskscoremodels", doc("configuration/riskscoremodels/audience=acme_aml")),
    (f"{API}/configuration/countries/", doc("configuration/countries")),
    (f"{API}/configuration/countries", doc("configuration/countries")),
    (f"{API}/riskscores/sovereign/", doc("riskscores/sovereign")),
    (f"{API}/riskscores/sdg", doc("riskscores/sdg")),
    (f"{API}/riskscores/acme_aml/", doc("riskscores/acme_aml")),
    (f"{API}/riskscores/sovereign/AUT/", doc("riskscores/sovereign/AUT")),
    (f"{API}/riskscores/sovereign/aut/", doc("riskscores/sovereign/AUT")),
    (f"{API}/riskscores/sovereign/Aut", doc("riskscores/sovereign/AUT")),
    (f"{API}/riskscores/sdg/civ/", doc("riskscores/sdg/CIV")),
    (f"{API}/riskscores/acme_aml/NGA/", doc("riskscores/acme_aml/NGA")),
    (f"{API}/riskscores/country/ZZZ/".replace("ZZZ", "NGA"), doc("riskscores/country/NGA/audience=acme_aml")),
    (f"{API}/riskscores/country/nga", doc("riskscores/country/NGA/audience=acme_aml")),
    (f"{API}/openapi.json", "api/v1/openapi.json"),
]


@pytest.mark.parametrize("path, file", ROUTES)
def test_every_route_answers_its_file(live, path, file):
    answer = live.get(path)
    assert answer.status == 200, answer.body
    assert answer.header("content-type") == "application/json; charset=utf-8"
    assert answer.body == live.release_file(file)


ORDERINGS = [
    ("configuration/countries/", "", "configuration/countries"),
    ("configuration/countries/", "?model=code", "configuration/countries"),
    ("configuration/countries/", "?model=-code", "configuration/countries/model=-code"),
    ("configuration/countries/", "?model=name", "configuration/countries/model=name"),
    ("configuration/countries/", "?model=-name", "configuration/countries/model=-name"),
    ("riskscores/sovereign/", "?ordering=country_code", "riskscores/sovereign"),
    ("riskscores/sovereign/", "?ordering=-country_code", "riskscores/sovereign/ordering=-country_code"),
    ("riskscores/sovereign/", "?ordering=country_name", "riskscores/sovereign/ordering=country_name"),
    ("riskscores/sovereign/", "?ordering=-country_name", "riskscores/sovereign/ordering=-country_name"),
    ("riskscores/sovereign", "?ordering=-country_name&unknown=1", "riskscores/sovereign/ordering=-country_name"),
]


@pytest.mark.parametrize("path, query, file", ORDERINGS)
def test_every_ordering(live, path, query, file):
    answer = live.get(f"{API}/{path}{query}")
    assert answer.status == 200, answer.body
    assert answer.body == live.release_file(doc(file))


def test_arguments_named_like_javascript_internals_are_unknown_arguments(live):
    # To nginx `__proto__` is a name like any other: ignored, and nothing answered after it changes
    # (a JavaScript edge that keyed an object by it would change every object's prototype).
    for query in ("__proto__=x&__proto__=y", "constructor=1", "hasOwnProperty=1&toString=2"):
        answer = live.get(f"{API}/riskscores/sovereign/?{query}&ordering=-country_name")
        assert answer.status == 200, (query, answer.body)
        assert answer.body == live.release_file(doc("riskscores/sovereign/ordering=-country_name"))
    again = live.get(f"{API}/configuration/countries/?model=name&code=aut")
    assert again.body == live.release_file(doc("configuration/countries/filter=AUT"))


def test_orderings_really_order(live):
    codes = [c["code"] for c in json.loads(live.get(f"{API}/configuration/countries/?model=-code").body)]
    assert codes == ["NGA", "CIV", "AUT"]
    names = [c["name"] for c in json.loads(live.get(f"{API}/configuration/countries/?model=name").body)]
    assert names == ["Austria", "Côte d'Ivoire", "Nigeria"]  # Côte among the C's: accents folded


FILTERS = [
    # endpoint 2: code and name, every client encoding
    ("configuration/countries/?code=CIV", "configuration/countries/filter=CIV"),
    ("configuration/countries/?code=civ", "configuration/countries/filter=CIV"),
    ("configuration/countries/?code=cIv&model=-name", "configuration/countries/filter=CIV"),
    ("configuration/countries/?name=Austria", "configuration/countries/filter=AUT"),
    ("configuration/countries/?name=AUSTRIA", "configuration/countries/filter=AUT"),
    ("configuration/countries/?name=C%C3%B4te%20d%27Ivoire", "configuration/countries/filter=CIV"),  # curl
    ("configuration/countries/?name=C%C3%B4te+d%27Ivoire", "configuration/countries/filter=CIV"),  # requests
    ("configuration/countries/?name=C%c3%b4te%20d'Ivoire", "configuration/countries/filter=CIV"),  # lower escapes
    ("configuration/countries/?name=c%C3%B4te%20D%27IVOIRE", "configuration/countries/filter=CIV"),
    ("configuration/countries/?name=C%C3%94TE%20D%27IVOIRE", "configuration/countries/filter=CIV"),  # Ô upper
    ("configuration/countries/?code=CIV&name=C%C3%B4te+d%27Ivoire", "configuration/countries/filter=CIV"),
    ("configuration/countries/?code=AUT&name=Nigeria", "configuration/countries/filter=none"),  # AND
    ("configuration/countries/?code=XXX", "configuration/countries/filter=none"),
    ("configuration/countries/?name=Atlantis", "configuration/countries/filter=none"),
    ("configuration/countries/?name=Austri", "configuration/countries/filter=none"),  # exact, not partial
    # endpoint 3: country_code and country_name
    ("riskscores/sovereign/?country_code=aut", "riskscores/sovereign/filter=AUT"),
    ("riskscores/sovereign/?country_name=austria&ordering=-country_name", "riskscores/sovereign/filter=AUT"),
    ("riskscores/sovereign/?country_name=C%C3%B4te%20d%27Ivoire", "riskscores/sovereign/filter=CIV"),
    ("riskscores/sovereign/?country_code=NGA", "riskscores/sovereign/filter=NGA"),  # listed, no score → []
    ("riskscores/sovereign/?country_code=AUT&country_name=Nigeria", "riskscores/sovereign/filter=none"),
    ("riskscores/sovereign/?country_code=QQQ", "riskscores/sovereign/filter=none"),
    ("riskscores/acme_aml?country_code=civ", "riskscores/acme_aml/filter=CIV"),
]


@pytest.mark.parametrize("path, file", FILTERS)
def test_filters(live, path, file):
    answer = live.get(f"{API}/{path}")
    assert answer.status == 200, answer.body
    assert answer.body == live.release_file(doc(file))


def test_filter_that_matches_nothing_is_an_empty_list(live):
    assert json.loads(live.get(f"{API}/configuration/countries/?name=Atlantis").body) == []
    assert json.loads(live.get(f"{API}/riskscores/sovereign/?country_code=NGA").body)["data"] == []
    assert [e["entity"]["countryCode"] for e in
            json.loads(live.get(f"{API}/riskscores/sovereign/?country_name=Austria").body)["data"]] == ["AUT"]


BAD_REQUESTS = [
    ("configuration/countries/?model=size", "model"),
    ("configuration/countries/?model=NAME", "model"),  # orderings are exact
    ("configuration/countries/?code=AU", "code"),
    ("configuration/countries/?code=AUST", "code"),
    ("riskscores/sovereign/?ordering=score", "ordering"),
    ("riskscores/sovereign/?ordering=-country_code,country_name", "ordering"),
    ("riskscores/sovereign/?country_code=AUTT", "country_code"),
    ("riskscores/sovereign/?country_code=A", "country_code"),
]


@pytest.mark.parametrize("path, parameter", BAD_REQUESTS)
def test_invalid_parameter_values_are_400(live, path, parameter):
    answer = live.get(f"{API}/{path}")
    assert answer.status == 400
    detail = json.loads(answer.body)["detail"]
    assert detail.startswith(f"Invalid value for {parameter}:")


def test_400_names_the_allowed_values(live):
    detail = json.loads(live.get(f"{API}/riskscores/aml/?ordering=x".replace("aml", "sdg")).body)["detail"]
    assert detail == ("Invalid value for ordering: use one of country_code, -country_code, country_name, "
                      "-country_name.")


@pytest.mark.parametrize("form", ["apikey", "bare", "basic"])
@pytest.mark.parametrize("user", ["alice", "bob"])
def test_all_three_header_forms(live, form, user):
    assert live.get(f"{API}/riskscores/sovereign/AUT/", user=user, form=form).status == 200


@pytest.mark.parametrize("header", [
    "APIKEY {alice}:{key}", "ApiKey    {alice}:{key}", "apikey {alice}:{KEY}", "  {key}  ", "basic {basic}",
])
def test_header_spellings(live, header):
    import base64
    key = live.keys["alice"]
    value = header.format(alice="alice", key=key, KEY=key.upper(),
                          basic=base64.b64encode(f"alice:{key}".encode()).decode())
    assert live.get(f"{API}/riskscores/sovereign/", headers={"Authorization": value}).status == 200


@pytest.mark.parametrize("header, detail", [
    (None, "Authentication credentials were not provided."),
    ("apikey alice:0123456789abcdef0123456789abcdef", "Invalid API key."),  # wrong key
    ("0123456789abcdef0123456789abcdef", "Invalid API key."),
    ("apikey bob:{alice_key}", "Invalid API key."),  # right key, wrong user
    ("apikey mallory:{alice_key}", "Invalid API key."),
    ("{carol_key}", "Invalid API key."),  # revoked
    ("apikey carol:{carol_key}", "Invalid API key."),
    ("Basic Ym9iOnNlY3JldA==", "Invalid API key."),  # bob:secret
    ("apikey", "Invalid API key."),
])
def test_forbidden(live, header, detail):
    headers = {} if header is None else {
        "Authorization": header.format(alice_key=live.keys["alice"], carol_key=live.keys["carol"])}
    for path in (f"{API}/riskscores/sovereign/AUT/", f"{API}/configuration/countries/",
                 f"{API}/riskscores/country/AUT/", f"{API}/riskscores/sdg/", f"{API}/configuration/riskscoremodels/"):
        answer = live.get(path, headers=headers, user=None)
        assert answer.status == 403, path
        assert json.loads(answer.body) == {"detail": detail}


def test_openapi_needs_no_key(live):
    assert live.get(f"{API}/openapi.json", user=None).status == 200


NOT_FOUND = [
    f"{API}/riskscores/nosuchmodel/",
    f"{API}/riskscores/nosuchmodel/AUT/",
    f"{API}/riskscores/sovereign/XXX/",
    f"{API}/riskscores/sovereign/AUTT/",
    f"{API}/riskscores/SOVEREIGN/AUT/",  # model codes are lower-case and exact
    f"{API}/riskscores/country/",
    f"{API}/riskscores/country",
    f"{API}/riskscores/country/XXX/",
    f"{API}/riskscores/",
    f"{API}/index.json",
    f"{API}/releases/lists/index.json",  # the timeline's files only through their routes
    "/lists/index.json",
    "/timemap.link",
    f"{API}/releases/current/audience=acme_aml/",
    f"{API}/releases/current/index.json",
    f"{API}/exports/",
    f"{API}/exports/scores.csv.gz",
    f"{API}/exports/scores.jsonl.br",
    f"{API}/exports/audience=acme_aml/scores.csv",
    f"{API}/exports/scores.xml",
    f"{API}/exports/scores.csv/",
    "/api/v2/riskscores/sovereign/",
    "/docs/models/acme_aml/",  # custom models are never documented publicly
    "/docs/models/nosuchmodel/",
    "/docs/index.html.gz",
    "/docs/../manifest.json",
    f"{API}/riskscores/sovereign/AUT/index.json",
    f"{API}/riskscores/sovereign/index.json",
    f"{API}/riskscores/sovereign/index.json.gz",
    f"{API}/riskscores/sovereign/AUT/index.json.gz",
    f"{API}/riskscores/sovereign/filter=AUT/",
    f"{API}/riskscores/sovereign/ordering=-country_name/",
    f"{API}/riskscores/country/AUT/audience=acme_aml/",
    f"{API}/configuration/riskscoremodels/audience=acme_aml/",
    "/manifest.json",
    "/nginx/release.json",
    "/nginx/country-codes.conf",
    "/api/v1/../manifest.json",
    f"{API}/riskscores/sovereign/..%2f..%2f..%2fmanifest.json",
    f"{API}/riskscores/sovereign/%2e%2e/%2e%2e/%2e%2e/manifest.json",
    "/releases/",
    "/current/api/v1/openapi.json",
]


@pytest.mark.parametrize("path", NOT_FOUND)
def test_not_found(live, path):
    answer = live.get(path)
    assert answer.status in (404, 400), path
    assert json.loads(answer.body)["detail"] in ("Not found.", "Bad request.")
    assert answer.status == 404 or path.count("..") > 0


def test_custom_model_exists_only_for_clients_granted_it(live):
    for path in (f"{API}/riskscores/acme_aml/", f"{API}/riskscores/acme_aml/AUT/",
                 f"{API}/riskscores/acme_aml/?country_code=AUT"):
        assert live.get(path, user="alice").status == 200
        bob = live.get(path, user="bob")
        assert (bob.status, json.loads(bob.body)) == (404, {"detail": "Not found."})
    # endpoints 1 and 5: bob gets exactly the document of a client without custom models
    for path, public, granted in ((f"{API}/configuration/riskscoremodels/", doc("configuration/riskscoremodels"),
                                   doc("configuration/riskscoremodels/audience=acme_aml")),
                                  (f"{API}/riskscores/country/NGA/", doc("riskscores/country/NGA"),
                                   doc("riskscores/country/NGA/audience=acme_aml"))):
        assert live.get(path, user="bob").body == live.release_file(public)
        assert live.get(path, user="alice").body == live.release_file(granted)
    assert "acme_aml" not in live.get(f"{API}/configuration/riskscoremodels/", user="bob").body.decode()
    assert json.loads(live.get(f"{API}/riskscores/country/NGA/", user="bob").body)["riskscores"] == []


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH", "TRACE", "PROPFIND"])
def test_other_methods_are_405_with_allow(live, method):
    answer = live.request(method, f"{API}/riskscores/sovereign/AUT/")
    assert answer.status == 405
    assert answer.header("allow") == "GET, HEAD, OPTIONS"
    assert json.loads(answer.body) == {"detail": f'Method "{method}" not allowed.'}


def test_connect_is_405_on_nginx(nginx_server):
    # A CDN answers CONNECT itself: it never reaches a Worker (wrangler's dev server: a plain 500).
    answer = nginx_server.request("CONNECT", f"{API}/riskscores/sovereign/AUT/")
    assert (answer.status, json.loads(answer.body)) == (405, {"detail": 'Method "CONNECT" not allowed.'})


def test_head_answers_like_get_without_body(live):
    get, head = live.get(f"{API}/riskscores/sovereign/AUT/"), live.request("HEAD", f"{API}/riskscores/sovereign/AUT/")
    assert (head.status, head.body) == (200, b"")
    assert head.header("content-length") == get.header("content-length")
    assert head.header("etag") == get.header("etag")


@pytest.mark.parametrize("path", [f"{API}/configuration/riskscoremodels/", f"{API}/configuration/countries/",
                                  f"{API}/riskscores/sovereign/", f"{API}/riskscores/sovereign/AUT/",
                                  f"{API}/riskscores/country/AUT/", f"{API}/openapi.json",
                                  f"{API}/riskscores/acme_aml/"])
def test_preflight_without_key(live, path):
    answer = live.request("OPTIONS", path, user=None, headers={
        "Origin": "https://app.example.org", "Access-Control-Request-Method": "GET",
        "Access-Control-Request-Headers": "authorization"})
    assert answer.status == 204
    assert answer.header("access-control-allow-origin") == "*"
    assert "Authorization" in answer.header("access-control-allow-headers")
    assert answer.header("allow") == "GET, HEAD, OPTIONS"


def test_cors_headers_on_answers_and_errors(live):
    for answer in (live.get(f"{API}/riskscores/sovereign/"), live.get(f"{API}/riskscores/sovereign/", user=None),
                   live.get(f"{API}/nothing")):
        assert answer.header("access-control-allow-origin") == "*"


def test_gzip_negotiation(live):
    path, file = f"{API}/riskscores/sovereign/AUT/", doc("riskscores/sovereign/AUT")
    zipped = live.get(path, headers={"Accept-Encoding": "gzip, deflate"})
    assert zipped.header("content-encoding") == "gzip"
    assert zipped.all("vary") == ["Accept-Encoding, Authorization, Accept-Datetime"]
    assert gzip.decompress(zipped.body) == live.release_file(file)
    plain = live.get(path)
    assert plain.header("content-encoding") is None and plain.body == live.release_file(file)


def test_brotli_negotiation(live):
    import brotli
    path, file = f"{API}/riskscores/sdg/CIV/", doc("riskscores/sdg/CIV")
    answer = live.get(path, headers={"Accept-Encoding": "br"})
    assert answer.header("content-encoding") == "br"
    assert brotli.decompress(answer.body) == live.release_file(file)
    assert answer.all("vary") == ["Accept-Encoding, Authorization, Accept-Datetime"]
    assert live.get(path, headers={"Accept-Encoding": "gzip"}).header("content-encoding") == "gzip"


def test_nginx_serves_the_twins_it_has(nginx_server):
    # nginx chooses among the release's own twins: brotli first when both are accepted, and plain
    # under 1 KB (no twin). Cloudflare encodes every answer itself, in the client's first choice.
    from generator.serve.nginx.configuration import BROTLI_MODULE
    assert BROTLI_MODULE.exists(), "scripts/install.sh installs libnginx-mod-http-brotli-static"
    live = nginx_server
    assert live.get(f"{API}/riskscores/sdg/CIV/", headers={"Accept-Encoding": "gzip, deflate, br"}).header(
        "content-encoding") == "br"
    small = live.get(f"{API}/configuration/countries/?code=AUT", headers={"Accept-Encoding": "gzip"})
    assert small.header("content-encoding") is None


def test_conditional_requests(live):
    path = f"{API}/riskscores/sovereign/AUT/"
    first = live.get(path)
    assert first.header("etag") and first.header("last-modified")
    again = live.get(path, headers={"If-None-Match": first.header("etag")})
    assert (again.status, again.body) == (304, b"")
    for name in ("x-release", "access-control-allow-origin", "vary"):  # a 304 carries nginx's headers too
        assert again.header(name) == first.header(name), name
    since = live.get(path, headers={"If-Modified-Since": first.header("last-modified")})
    assert since.status == 304


def test_cache_control(live):
    assert live.get(f"{API}/riskscores/sovereign/").header("cache-control") == "private, no-cache"
    assert live.get(f"{API}/riskscores/sovereign/", user=None).header("cache-control") == "no-store"


def test_server_version_is_hidden(live):
    server = live.get(f"{API}/riskscores/sovereign/").header("server")  # nginx: `nginx`; workerd: none
    assert server is None or not re.search(r"\d", server)


ERRORS = [("GET", f"{API}/riskscores/sovereign/", None), ("GET", f"{API}/riskscores/zzz/", "alice"),
          ("GET", f"{API}/riskscores/sovereign/?ordering=zz", "alice"), ("POST", f"{API}/", "alice"),
          ("TRACE", "/", None), ("GET", "/" + "a" * 9000, None), ("DELETE", "/x", None)]


@pytest.mark.parametrize("method, path, user", ERRORS, ids=[f"{m}-{p[:40]}" for m, p, _ in ERRORS])
def test_every_error_is_json_with_detail(live, method, path, user):
    answer = live.request(method, path, user=user)
    assert answer.status >= 400
    assert answer.header("content-type").startswith("application/json")
    body = json.loads(answer.body)
    assert isinstance(body["detail"], str) and body["detail"]
    assert b"<html" not in answer.body.lower()


def test_access_log_names_the_user_never_the_key(nginx_server):
    live = nginx_server  # nginx's own access log
    live.get(f"{API}/riskscores/sovereign/", user="bob", form="basic", headers={"User-Agent": "logcheck-1"})
    live.get(f"{API}/riskscores/sovereign/", user="alice", form="bare", headers={"User-Agent": "logcheck-2"})
    access_log = live.runtime.prefix / "logs" / "access.log"

    def logged() -> list[str] | None:  # the access log is flushed at least once a second
        lines = [line for line in access_log.read_text().splitlines() if "logcheck" in line]
        return lines if len(lines) >= 2 else None
    lines = wait_for(logged, 5, "two logcheck lines in the access log", every=0.1)
    log = access_log.read_text()
    # each line names the user and the short id of the key it asked with (its digest's start), no key
    ids = {user: digest_of(live.keys_file, key)[:8] for user, key in live.keys.items()}
    assert any(f" {ids['bob']} bob [" in line for line in lines) and any(f" {ids['alice']} alice [" in line
                                                                        for line in lines)
    for key in live.keys.values():
        assert key not in log
    import base64
    assert base64.b64encode(f"bob:{live.keys['bob']}".encode()).decode() not in log


@pytest.mark.parametrize("query", ["Uc%C3%A0", "%C3%92%3B%F0%B0%8F%B2", "a+b", "%41%55%54", "xy%20"])
def test_three_characters_that_are_no_country_match_nothing(live, query):
    # 'Ucà', 'Ò;𰏲', 'a b', 'AUT' escaped (not a known raw code: matches nothing), 'xy '
    answer = live.get(f"{API}/riskscores/sovereign/?country_code={query}")
    assert answer.status == 200, answer.body
    assert json.loads(answer.body)["data"] == [] or query == "%41%55%54"


@pytest.mark.parametrize("path", ["/", "/docs/", "/docs", "/docs/models/sovereign/", "/docs/models/sdg",
                                  "/docs/explorer/", "/docs/explorer", "/docs/changes/"])
def test_pages_need_no_key(live, path):
    answer = live.get(path, user=None)
    assert answer.status == 200
    assert answer.header("content-type") == "text/html; charset=utf-8"
    page = answer.body.decode()
    assert page.startswith("<!doctype html>")
    scripts = re.findall(r"<script[^>]*>", page)
    data = ['<script type="application/ld+json">'] if path.rstrip("/") in ("", "/docs") else []  # never run
    # only the explorer's own script (which imports the citation verifier, /docs/verify.js, from the same
    # origin); the reference page's schema.org Dataset, a data block no browser runs
    assert scripts in (data, ['<script src="/docs/explorer.js" data-root="/api/v1/" data-verify="/docs/verify.js">'])
    # nothing from outside: the one stylesheet is the pages' own (their CSP allows no inline style)
    assert re.findall(r"<link[^>]*>", page) == ['<link rel="stylesheet" href="/docs/style.css">']
    assert "@import" not in page and "<style" not in page and " style=" not in page
    stylesheet = live.get("/docs/style.css", user=None)
    assert (stylesheet.status, stylesheet.header("content-type")) == (200, "text/css; charset=utf-8")
    assert "style-src 'self'" in answer.header("content-security-policy")
    assert "acme_aml" not in page  # custom models stay hidden
    # the browser runs no script but the site's own, and sends no form or frame anywhere
    policy = answer.header("content-security-policy")
    assert "script-src 'self'" in policy and "default-src 'none'" in policy and "frame-ancestors 'none'" in policy


def test_explorer_script_is_served_without_a_key(live):
    answer = live.get("/docs/explorer.js", user=None)
    assert answer.status == 200
    assert answer.header("content-type") == "text/javascript; charset=utf-8"
    assert answer.body == (ROOT / "generator" / "building" / "render" / "templates" / "docs" / "explorer.js").read_bytes()


def test_favicon_is_an_empty_answer_without_a_key(live):
    answer = live.get("/favicon.ico", user=None)
    assert (answer.status, answer.body) == (204, b"")


def test_json_answers_may_run_nothing(live):
    assert live.get("/api/v1/configuration/countries/").header("content-security-policy") == \
        "default-src 'none'; frame-ancestors 'none'"


@pytest.mark.parametrize("path", ["/docs/nosuch/", "/docs/models/nosuch/", "/docs/explorer/x/"])
def test_an_error_under_the_pages_runs_nothing_either(live, path):
    # the pages' CSP is for a page's 2xx and 3xx answers only: a 404 under /docs/ is JSON, as every
    # server says it (nginx by the location that answered, the edge core by its rule and status, the
    # CloudFront function by the answer's type)
    answer = live.get(path, user=None)
    assert answer.status == 404 and answer.header("content-type") == serving.JSON
    assert answer.header("content-security-policy") == serving.CSP["data"]


def test_reference_documents_every_endpoint_and_command(live):
    from generator.cli import command_table
    from generator.contract.routes import API, ENDPOINTS
    page = live.get("/", user=None).body.decode()
    paths = [API + p for e in ENDPOINTS for p in (e.path, e.alias) if p] + [f"{API}/openapi.json"]
    assert len(paths) == 26  # 24 endpoints, one alias, openapi.json
    for path in paths:
        assert path in page, path
    for name, _ in command_table():
        assert f"<code>{name}</code>" in page, name
    # a real answer of the current release is shown: the model list a keyless reader may see
    import html
    text = html.unescape(page)
    assert '"code": "sdg"' in text and '"code": "sovereign"' in text


def test_model_page_shows_the_methodology(live):
    page = live.get("/docs/models/sovereign/", user=None).body.decode()
    for text in ("gdp_growth", "0 &lt;= x &lt; 2", "Institutions", "AAA … D", "default weight"):
        assert text in page, text


def test_every_answer_names_its_release(live):
    # docs/api.md: X-Release on every answer, errors included, so a client can cite where a score came from
    from generator.history.site import current_release
    release = current_release(live.site)
    for path, user, status in [(f"{API}/riskscores/sovereign/AUT/", "alice", 200), (f"{API}/riskscores/zzz/", "alice", 404),
                               (f"{API}/riskscores/sovereign/", None, 403), (f"{API}/openapi.json", None, 200)]:
        answer = live.get(path, user=user)
        assert (answer.status, answer.header("x-release")) == (status, release), path
    assert "X-Release" in live.get(f"{API}/riskscores/sovereign/").header("access-control-expose-headers")


def test_an_error_on_a_path_of_a_file_type_is_json(live):
    # nginx gives a `return` the type of the path's extension: a 403 of the CSV export was text/csv
    for path in ("/api/v1/exports/scores.csv", "/api/v1/exports/scores.jsonl"):
        refused = live.get(path, user=None)
        assert (refused.status, refused.header("content-type")) == (403, "application/json; charset=utf-8"), path
        assert json.loads(refused.body) == {"detail": "Authentication credentials were not provided."}


def test_the_list_of_releases_and_the_timemap_answer_on_every_server(live):
    current = live.get("/api/v1/").header("X-Release")
    for user in ("alice", "bob"):  # alice's list is her audience's (acme_aml), bob's the public one
        listed = live.get("/api/v1/releases/", user=user)
        assert listed.status == 200, (user, listed.body[:300])
        assert json.loads(listed.body)["current"] == current
        zipped = live.get("/api/v1/releases/", user=user, headers={"Accept-Encoding": "gzip"})
        assert zipped.status == 200 and json.loads(gzip.decompress(zipped.body)
                                                   if zipped.header("content-encoding") == "gzip" else zipped.body) \
            == json.loads(listed.body)
    timemap = live.get("/api/v1/releases/timemap", user="bob")
    assert timemap.status == 200 and timemap.header("content-type").startswith("application/link-format")
    assert f"/api/v1/releases/{current}/>; rel=\"first last memento\"" in timemap.body.decode()


def test_a_range_of_an_export_is_206_with_those_bytes(live):
    # a download that resumes: nginx, the Worker (which streams the tiny exports from 4 KB parts, so this
    # range starts in a later part) and S3 behind CloudFront answer the same bytes
    whole = live.get("/api/v1/exports/scores.jsonl", user="bob").body
    for asked, first, last in (("bytes=5000-9999", 5000, 9999), ("bytes=-100", len(whole) - 100, len(whole) - 1),
                               (f"bytes={len(whole) - 10}-", len(whole) - 10, len(whole) - 1)):
        part = live.get("/api/v1/exports/scores.jsonl", user="bob", headers={"Range": asked})
        assert part.status == 206, (asked, part.status)
        assert part.body == whole[first:last + 1], asked
        assert part.header("content-range") == f"bytes {first}-{last}/{len(whole)}"
        assert part.header("content-disposition").startswith("attachment")


def test_the_worker_answers_ranges_as_nginx_does(edge):
    # a range that starts past the end is nginx's 416, as JSON; If-Range that still matches: the range,
    # one that no longer does: the whole file (RFC 9110 §13.1.5)
    path = "/api/v1/exports/scores.jsonl"
    whole = edge.get(path, user="bob")
    size = len(whole.body)
    past = edge.get(path, user="bob", headers={"Range": f"bytes={size}-"})
    assert (past.status, json.loads(past.body)) == (416, {"detail": "Requested range not satisfiable."})
    assert past.header("content-range") == f"bytes */{size}" and past.header("cache-control") == "no-store"
    assert past.header("content-disposition") is None and past.header("x-release") == whole.header("x-release")
    fresh = edge.get(path, user="bob", headers={"Range": "bytes=0-9", "If-Range": whole.header("etag")})
    assert (fresh.status, fresh.body) == (206, whole.body[:10])
    stale = edge.get(path, user="bob", headers={"Range": "bytes=0-9", "If-Range": '"0-0"'})
    assert (stale.status, stale.body) == (200, whole.body)


def test_a_feed_asks_for_credentials_with_a_401_and_the_api_keeps_its_403(live):
    for kind in ("json", "atom"):
        asked = live.get(f"{API}/releases/feed.{kind}", user=None)
        assert asked.status == 401, asked.body
        assert asked.header("WWW-Authenticate") == 'Basic realm="country risk API", charset="UTF-8"'
        assert asked.header("Content-Type").startswith("application/json")  # the error, not the feed's type
        assert json.loads(asked.body) == {"detail": "Authentication credentials were not provided."}
        wrong = live.get(f"{API}/releases/feed.{kind}", user=None, headers={"Authorization": "apikey alice:wrong"})
        assert wrong.status == 403 and wrong.header("WWW-Authenticate") is None
    plain = live.get(f"{API}/riskscores/sovereign/", user=None)  # the API routes: the original's 403
    assert plain.status == 403 and plain.header("WWW-Authenticate") is None


def test_a_feed_reader_that_waits_for_the_challenge_gets_the_feed(live):
    import urllib.request
    url = f"http://127.0.0.1:{live.port}{API}/releases/feed.atom"
    passwords = urllib.request.HTTPPasswordMgrWithDefaultRealm()
    passwords.add_password(None, url, "alice", live.keys["alice"])
    opener = urllib.request.build_opener(urllib.request.HTTPBasicAuthHandler(passwords))
    with opener.open(url, timeout=10) as answer:  # sends the key only after the 401
        assert answer.status == 200 and answer.headers["Content-Type"].startswith("application/atom+xml")
        assert answer.read().startswith(b"<?xml")


@pytest.mark.parametrize("spelled", ["ALICE", "Alice", "alice"])
def test_basic_credentials_match_the_user_in_any_letter_case(live, spelled):
    import base64
    basic = "Basic " + base64.b64encode(f"{spelled}:{live.keys['alice']}".encode()).decode()
    answer = live.get(f"{API}/riskscores/acme_aml/", user=None, headers={"Authorization": basic})
    assert answer.status == 200, answer.body  # alice's custom model: the key is alice's whatever the case
    other = "Basic " + base64.b64encode(f"BOB:{live.keys['alice']}".encode()).decode()
    assert live.get(f"{API}/riskscores/sovereign/", user=None, headers={"Authorization": other}).status == 403


def test_a_key_of_the_api_s_format_whose_checksum_fails_is_named_no_key_of_this_api(live):
    import base64

    from generator.contract import key_format
    key = key_format.new_key()  # of the format, held by no keys file
    typo = key[:-1] + ("0" if key[-1] != "0" else "1")  # its last checksum character mistyped
    refused = {"detail": serving.ERRORS["invalid_key"]}
    not_ours = {"detail": serving.ERRORS["not_our_key"]}
    for header in (f"apikey alice:{typo}", f"Bearer {typo}", typo.upper(), f"apikey {typo[:-3]}",
                   "Basic " + base64.b64encode(f"alice:{typo}".encode()).decode()):
        answer = live.get(f"{API}/riskscores/sovereign/", user=None, headers={"Authorization": header})
        assert (answer.status, json.loads(answer.body)) == (403, not_ours), header
    # a key of the format no keys file holds, and one of the format before it: the one refusal for both
    for header in (f"Bearer {key}", "Bearer 0123456789abcdef0123456789abcdef"):
        answer = live.get(f"{API}/riskscores/sovereign/", user=None, headers={"Authorization": header})
        assert (answer.status, json.loads(answer.body)) == (403, refused), header
    # under a release's id too
    release = live.get(f"{API}/", user="bob").header("X-Release")
    scoped = live.get(f"{API}/releases/{release}/riskscores/sovereign/", user=None,
                      headers={"Authorization": f"Bearer {typo}"})
    assert (scoped.status, json.loads(scoped.body)) == (403, not_ours)
