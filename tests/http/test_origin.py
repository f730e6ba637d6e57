"""The origin and content-type guard (moonshot.http.origin) on its own: which requests
it refuses and why; the attacks on a real server are in tests/security/test_origin.py."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from moonshot.http.origin import normalise_origin, refusal

JSON = {"content-type": "application/json"}
HOST = {"host": "127.0.0.1:7380"}


@pytest.mark.parametrize("method", ["GET", "HEAD", "OPTIONS", "get"])
def test_reads_are_never_refused(method: str) -> None:
    assert refusal(method, {"origin": "http://evil.test", "content-type": "text/plain"}) is None


@pytest.mark.parametrize(
    "ctype", ["", "text/plain", "text/plain;charset=UTF-8", "application/x-www-form-urlencoded", "multipart/form-data"]
)
def test_a_state_change_needs_a_json_body(ctype: str) -> None:
    why = refusal("POST", {"content-type": ctype, "origin": "http://127.0.0.1:7380", **HOST})
    assert why is not None and "application/json" in why


@pytest.mark.parametrize(
    "headers",
    [
        {"origin": "http://127.0.0.1:7380"},
        {"origin": "http://127.0.0.1:7380", "sec-fetch-site": "same-origin"},
        {"sec-fetch-site": "same-origin"},
        {"sec-fetch-site": "none"},
        {},  # a program: no browser headers at all
        {"content-type": "Application/JSON; charset=utf-8", "origin": "http://127.0.0.1:7380"},
    ],
)
def test_the_servers_own_pages_and_programs_may(headers: dict[str, str]) -> None:
    assert refusal("POST", {**JSON, **HOST, **headers}) is None


@pytest.mark.parametrize(
    "headers",
    [
        {"origin": "http://127.0.0.1:1"},  # another port of the same host: same site, not same origin
        {"origin": "http://localhost:7380"},
        {"origin": "null"},
        {"origin": "http://127.0.0.1:7380", "sec-fetch-site": "same-site"},
        {"origin": "http://127.0.0.1:7380", "sec-fetch-site": "cross-site"},
        {"sec-fetch-site": "cross-site"},
        {"origin": "http://127.0.0.1:7380", "host": "other:7380"},
        {"origin": "not an origin"},
    ],
)
def test_other_origins_are_refused(headers: dict[str, str]) -> None:
    assert refusal("POST", {**JSON, **HOST, **headers}) is not None


def test_an_origin_without_a_host_header_is_refused() -> None:
    assert refusal("POST", {**JSON, "origin": "http://127.0.0.1:7380"}) is not None


def test_default_ports_match_a_host_without_one() -> None:
    assert refusal("POST", {**JSON, "origin": "https://hearts.example.org", "host": "hearts.example.org"}) is None
    assert refusal("POST", {**JSON, "origin": "http://hearts.example.org", "host": "hearts.example.org:80"}) is None
    assert refusal("POST", {**JSON, "origin": "http://hearts.example.org", "host": "hearts.example.org:81"})


def test_allowed_origins_pass_even_cross_site() -> None:
    allowed = {"https://hearts.example.org"}
    headers = {**JSON, **HOST, "origin": "https://hearts.example.org", "sec-fetch-site": "cross-site"}
    assert refusal("POST", headers, allowed) is None
    assert refusal("POST", {**headers, "origin": "https://evil.example.org"}, allowed) is not None


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("HTTPS://Hearts.Example.ORG", "https://hearts.example.org"),
        ("https://hearts.example.org:443/", "https://hearts.example.org"),
        ("http://hearts.example.org:8080", "http://hearts.example.org:8080"),
        ("http://[::1]:80", "http://[::1]"),
    ],
)
def test_origins_are_normalised(given: str, expected: str) -> None:
    assert normalise_origin(given) == expected


@pytest.mark.parametrize(
    "bad", ["hearts.example.org", "ftp://x", "https://x/path", "https://u:p@x", "https://x?q", "http://x:99999", ""]
)
def test_what_is_not_an_origin(bad: str) -> None:
    with pytest.raises(ValueError):
        normalise_origin(bad)


@given(st.dictionaries(st.sampled_from(["origin", "host", "sec-fetch-site", "content-type"]), st.text(max_size=40)))
def test_any_headers_give_an_answer_never_an_exception(headers: dict[str, str]) -> None:
    why = refusal("POST", headers, {"https://a.example"})
    assert why is None or isinstance(why, str)
