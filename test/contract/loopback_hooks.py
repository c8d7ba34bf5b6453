"""Schemathesis hooks of the contract test: every target the service would reach stays on loopback.

Generated cases carry URLs and domains (Fetch `url`, crawl and batch task URLs, webhook URLs, Extract
domains); the service would fetch them or deliver to them. Each such value that names a host other
than the loopback fixture is rewritten to the fixture, keeping its shape (scheme, path), so the case
still tests what it was generated to test and no request leaves this machine.
"""
import os
import re
from urllib.parse import urlsplit, urlunsplit

import schemathesis

FIXTURE = urlsplit(os.environ["CONTRACT_FIXTURE_URL"])  # http://127.0.0.1:<port>/
FIXTURE_DOMAIN = os.environ.get("CONTRACT_FIXTURE_DOMAIN", "fixture.test")
LOCAL_HOSTS = {"127.0.0.1", "localhost", "[::1]", "::1"}
HOST_LIKE = re.compile(r"^[\w-]+(\.[\w-]+)+$")
URL_IN_TEXT = re.compile(r"[a-zA-Z][\w+.-]*://[^\s,\"']+")


def _local(host):
    host = (host or "").lower()
    return host in LOCAL_HOSTS or host == FIXTURE_DOMAIN or host.endswith("." + FIXTURE_DOMAIN)


def _url(value):
    try:
        parts = urlsplit(value)
    except ValueError:
        return value
    if not parts.scheme or not parts.netloc or _local(parts.hostname):
        return value
    return urlunsplit((parts.scheme, FIXTURE.netloc, parts.path, parts.query, parts.fragment))


def _rewrite(value, key=None):
    if isinstance(value, dict):
        return {k: _rewrite(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_rewrite(item, key) for item in value]
    if isinstance(value, str):
        if key == "domain" and HOST_LIKE.match(value.strip()) and not _local(value.strip()):
            return "site." + FIXTURE_DOMAIN
        if "://" in value:
            return URL_IN_TEXT.sub(lambda match: _url(match.group(0)), value)
    return value


@schemathesis.hook
def map_case(context, case):
    if isinstance(case.query, dict):
        case.query = _rewrite(case.query)
    if isinstance(case.path_parameters, dict):
        case.path_parameters = _rewrite(case.path_parameters)
    if case.body is not None and isinstance(case.body, (dict, list, str)):
        case.body = _rewrite(case.body)
    elif isinstance(case.body, bytes) and b"://" in case.body:
        case.body = _rewrite(case.body.decode("utf-8", "replace")).encode()
    return case
