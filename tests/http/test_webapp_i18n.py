"""The web app's catalogues (static/i18n/<lang>.json) against the pages that use them.

Every key the JavaScript asks for (``t("key")``, a template key's fixed prefix) and every
``data-i18n*`` key of the HTML is in every catalogue; the catalogues have the same keys and the
same arguments in each message; a plural message in Polish says its one/few/many forms; no text
a person reads is left as an English literal in the JavaScript or the HTML (a small reviewed
allow-list aside). With Node installed, i18n.js itself is run on the Polish catalogue: plural
forms, card names, ordinals.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from moonshot.http.webapp import STATIC_DIR

LANGS = ("en", "pl")
JS_DIR = STATIC_DIR / "js"
# the Trend node's seat page speaks through the same catalogue (server/trend_static)
TREND_DIR = Path(__file__).parents[2] / "src" / "moonshot" / "server" / "trend_static"
CATALOGUES = {lang: json.loads((STATIC_DIR / "i18n" / f"{lang}.json").read_text(encoding="utf-8")) for lang in LANGS}
EN = CATALOGUES["en"]

# ---- reading messages (the format i18n.js implements) ---------------------------------------------


def _matching(text: str, start: int) -> int:
    depth = 0
    for j in range(start, len(text)):
        if text[j] == "{":
            depth += 1
        elif text[j] == "}":
            depth -= 1
            if depth == 0:
                return j
    raise ValueError(f"unbalanced braces in {text!r}")


def _branches(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    i = 0
    while i < len(text):
        open_ = text.find("{", i)
        if open_ < 0:
            assert not text[i:].strip(), f"text outside a branch: {text[i:]!r}"
            break
        close = _matching(text, open_)
        out[text[i:open_].strip()] = text[open_ + 1 : close]
        i = close + 1
    return out


def arguments(message: str) -> list[tuple[str, str, dict[str, str]]]:
    """Every {argument} of a message, nested ones too: (name, kind, branches)."""
    found: list[tuple[str, str, dict[str, str]]] = []
    i = 0
    while i < len(message):
        if message[i] != "{":
            i += 1
            continue
        end = _matching(message, i)
        body = message[i + 1 : end]
        parts = body.split(",", 2)
        name = parts[0].strip()
        assert re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name), f"a bad argument name {name!r} in {message!r}"
        kind = parts[1].strip() if len(parts) > 1 else ""
        branches = _branches(parts[2]) if len(parts) > 2 else {}
        found.append((name, kind, branches))
        for branch in branches.values():
            found.extend(arguments(branch))
        i = end + 1
    return found


def test_the_catalogues_have_the_same_keys() -> None:
    en, pl = set(CATALOGUES["en"]), set(CATALOGUES["pl"])
    assert en - pl == set(), "keys only in en.json"
    assert pl - en == set(), "keys only in pl.json"
    for lang, cat in CATALOGUES.items():
        for key, value in cat.items():
            assert isinstance(value, str) and value.strip(), f"{lang}: {key} is empty"
            assert re.fullmatch(r"[a-z0-9_]+(\.[A-Za-z0-9_]+)+", key), f"{lang}: a bad key {key!r}"


def test_every_message_has_the_same_arguments_in_each_language() -> None:
    for key, en in CATALOGUES["en"].items():
        names = {lang: {name for name, _, _ in arguments(cat[key])} for lang, cat in CATALOGUES.items()}
        assert names["pl"] == names["en"], f"{key}: arguments differ: {names}"
        for lang, cat in CATALOGUES.items():
            for name, kind, branches in arguments(cat[key]):
                assert kind in ("", "number", "plural", "select"), f"{lang} {key}: unknown kind {kind!r}"
                if kind in ("plural", "select"):
                    assert "other" in branches, f"{lang} {key}: {name} has no 'other' branch"
                if kind == "plural" and lang == "pl":
                    missing = {"one", "few", "many"} - set(branches)
                    assert not missing, f"pl {key}: Polish plurals need one, few and many: {missing} missing"
        del en


# ---- keys the pages use ------------------------------------------------------------------------------

T_CALL = re.compile(r"""\bt\(\s*(["'])([^"'`]+)\1""")
T_TEMPLATE = re.compile(r"""\bt\(\s*`([^`$]*)\$\{""")
KEY_LITERAL = re.compile(r"""["']([a-z0-9_]+(?:\.[a-z0-9_]+)+)["']""")
DATA_I18N = re.compile(r"""data-i18n(?:-[a-z-]+)?="([^"]+)\"""")


def js_files() -> list[Path]:
    return sorted(JS_DIR.glob("*.js")) + sorted(TREND_DIR.glob("*.js"))


def html_files() -> list[Path]:
    return sorted(STATIC_DIR.glob("*.html")) + sorted(TREND_DIR.glob("*.html"))


def code_of(path: Path) -> str:
    """A module's text without its comments (they name keys and English in prose)."""
    text = re.sub(r"/\*.*?\*/", " ", path.read_text(encoding="utf-8"), flags=re.S)
    return re.sub(r"(^|\s)//.*$", r"\1", text, flags=re.M)


def test_every_key_the_javascript_asks_for_is_in_the_catalogues() -> None:
    namespaces = {key.split(".")[0] for key in EN}
    missing: list[str] = []
    prefixes_missing: list[str] = []
    for path in js_files():
        text = code_of(path)
        for _, key in T_CALL.findall(text):
            if key not in EN:
                missing.append(f"{path.name}: {key}")
        for prefix in T_TEMPLATE.findall(text):
            if prefix and not any(k.startswith(prefix) for k in EN):
                prefixes_missing.append(f"{path.name}: {prefix}...")
        # keys handed to t() through a variable (a list of column keys): a literal in a namespace
        # of the catalogue is a key and must be there
        for key in KEY_LITERAL.findall(text):
            if key.split(".")[0] in namespaces and key not in EN and not key.endswith(".js"):
                missing.append(f"{path.name}: {key} (a literal)")
    assert not missing, f"keys missing from the catalogues: {missing}"
    assert not prefixes_missing, f"no key starts with: {prefixes_missing}"


def test_every_data_i18n_key_of_the_html_is_in_the_catalogues() -> None:
    missing = []
    for path in html_files():
        for key in DATA_I18N.findall(path.read_text(encoding="utf-8")):
            if key not in EN:
                missing.append(f"{path.name}: {key}")
    assert not missing


class _Visible(HTMLParser):
    """Text and attributes a person reads that carry no data-i18n key."""

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[dict[str, str | None]] = []
        self.bare: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        for attr in ("title", "aria-label", "placeholder", "alt"):
            if a.get(attr) and f"data-i18n-{attr}" not in a:
                self.bare.append(f"<{tag} {attr}={a[attr]!r}>")
        if tag not in ("meta", "link", "br", "img", "input"):
            self.stack.append({"tag": tag, **a})

    def handle_endtag(self, tag: str) -> None:
        while self.stack and self.stack.pop()["tag"] != tag:
            pass

    def handle_data(self, data: str) -> None:
        if not re.search(r"[A-Za-z]", data) or not self.stack:
            return
        top = self.stack[-1]
        if any(open_tag["tag"] in ("script", "style", "code", "pre") for open_tag in self.stack):
            return  # not words: code (the Trend page's WebSocket address and join message)
        if "data-i18n" not in top:
            self.bare.append(f"<{top['tag']}> {data.strip()!r}")


def test_the_html_has_no_text_without_a_key() -> None:
    assert any(p.parent == TREND_DIR for p in html_files())
    for path in html_files():
        parser = _Visible()
        parser.feed(path.read_text(encoding="utf-8"))
        assert not parser.bare, f"{path.name}: text without data-i18n: {parser.bare}"


# ---- no English left in the JavaScript ----------------------------------------------------------

STRING = r"""(?:"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`(?:[^`\\]|\\.)*`)"""
# where a string literal becomes text a person reads
SINKS = [
    re.compile(r"""\.(?:textContent|innerText|innerHTML|title|placeholder|alt|label)\s*=\s*(""" + STRING + ")"),
    re.compile(
        r"""setAttribute\(\s*["'](?:aria-label|aria-valuetext|title|placeholder|alt)["']"""
        r"""\s*,\s*(""" + STRING + ")"
    ),
    re.compile(r"""createTextNode\(\s*(""" + STRING + ")"),
    re.compile(r"""\bel\(\s*["'][a-z0-9]+["']\s*,\s*[^,()]+,\s*(""" + STRING + r")\s*\)"),
    re.compile(r"""\b(?:button|btn|mk|link)\(\s*(""" + STRING + ")"),
    re.compile(r"""\b(?:alert|confirm|prompt)\(\s*(""" + STRING + ")"),
]

# reviewed: text that is the same in every language
ALLOWED = {
    "moonshot",  # the brand
    "XXXX-XXXX-XXXX-XXXX-XXXX",  # the shape of a recovery code
}


def words_of(literal: str) -> str:
    """What a person reads of a literal: without ${...} parts, escapes and punctuation."""
    body = literal[1:-1]
    body = re.sub(r"\$\{(?:[^{}]|\{[^{}]*\})*\}", " ", body)
    body = re.sub(r"\\u[0-9a-fA-F]{4}|\\.", " ", body)
    body = re.sub(r"<[^>]*>", " ", body)  # markup: only its text is read
    return body.strip()


def english_literals(text: str) -> list[str]:
    found = []
    for sink in SINKS:
        for m in sink.finditer(text):
            words = words_of(m.group(1))
            if re.search(r"[A-Za-z]{2,}", words) and words not in ALLOWED:
                found.append(m.group(0))
    return found


def test_no_english_literal_reaches_the_page_from_the_javascript() -> None:
    left = {path.name: english_literals(code_of(path)) for path in js_files()}
    left = {k: v for k, v in left.items() if v}
    assert not left, f"text a person reads, not through t(): {left}"


def test_the_scan_finds_english_where_it_is() -> None:
    # the scan itself: each sink with English is found, the same through t() is not
    bad = [
        'node.textContent = "Your turn";',
        "b.title = `${name} charged`;",
        'x.setAttribute("aria-label", "your hand");',
        'p.append(document.createTextNode(" Right: "));',
        'row.append(el("div", "empty-hand", "no cards"));',
        'const go = button("Pass 3 cards", "btn primary", f);',
        'if (confirm("Leave the game?")) go();',
        'root.innerHTML = `<div class="panel">No game given.</div>`;',
    ]
    for line in bad:
        assert english_literals(line), line
    good = [
        'node.textContent = t("clock.your_move");',
        'b.title = t("table.charged", { card });',
        'el("span", "moon", "\\u263e ")',
        'node.textContent = "";',
        "x.textContent = `${a} \\u00b7 ${b}`;",
        'document.createTextNode("moonshot")',
        'box.innerHTML = "";',
        'box.innerHTML = `<span class="x">${t("a.b")}</span>`;',
    ]
    for line in good:
        assert not english_literals(line), line


# ---- i18n.js itself, on the Polish catalogue ----------------------------------------------------------

NODE_SCRIPT = """
import fs from "node:fs";
const dir = process.argv[2];
Object.defineProperty(globalThis, "navigator", { value: { languages: ["pl-PL", "en-GB"] }, configurable: true });
globalThis.fetch = async (url) => ({
  ok: true,
  json: async () => JSON.parse(fs.readFileSync(`${dir}/i18n/${url.split("/").pop()}`, "utf8")),
});
const m = await import(`${dir}/js/i18n.js`);
const out = {
  lang: m.lang,
  tricks: [1, 2, 4, 5, 12, 21, 22, 25].map((count) => m.t("table.tricks", { count })),
  card: m.t("card.name", { rank: m.t("rank.name.Q"), suit: m.t("suit.of.S") }),
  ordinal: m.formatOrdinal(3),
  number: m.formatNumber(1234.5),
  unknown: m.t("no.such.key", { a: 1 }, "fallback {a}"),
  choose: [m.chooseLanguage(null, ["de-DE", "pl"]), m.chooseLanguage(null, ["de"]), m.chooseLanguage("en", ["pl"])],
};
console.log(JSON.stringify(out));
"""


def test_i18n_js_writes_polish_plurals_cards_and_numbers(tmp_path: Path) -> None:
    node = shutil.which("node")
    if node is None:
        pytest.skip("no node to run i18n.js with (apt-get install nodejs)")
    script = tmp_path / "run.mjs"
    script.write_text(NODE_SCRIPT)
    done = subprocess.run([node, str(script), str(STATIC_DIR)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["lang"] == "pl"
    assert out["tricks"] == ["1 lewa", "2 lewy", "4 lewy", "5 lew", "12 lew", "21 lew", "22 lewy", "25 lew"]
    assert out["card"] == "dama pik"
    assert out["ordinal"] == "3."
    assert out["number"].replace("\u00a0", " ") == "1234,5"  # Polish groups only from five digits
    assert out["unknown"] == "fallback 1"
    assert out["choose"] == ["pl", "en", "en"]
