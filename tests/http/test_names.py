"""Names (moonshot.http.names): what makes two names one, what is not a name, the records the
store keeps and the recovery codes. The attacks are in tests/security/test_names.py."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from moonshot.http.names import NameRecord, NameRefused, digest, display_name, name_key, new_recovery_code


@pytest.mark.parametrize("spelling", ["Alice", "alice", "ALICE", "Ａｌｉｃｅ", " alice ", "ａＬＩＣＥ"])
def test_spellings_of_one_name_have_one_key(spelling: str) -> None:
    assert name_key(spelling) == "alice"


def test_casefolding_goes_beyond_lower_case() -> None:
    assert name_key("STRASSE") == name_key("straße")
    assert name_key("ﬁsh") == name_key("FISH")  # a ligature (NFKC)


def test_the_shown_name_keeps_its_case_and_loses_compatibility_forms() -> None:
    assert display_name("  Ａｌｉｃｅ ") == "Alice"
    assert display_name("Zoë") == "Zoë"


@pytest.mark.parametrize(
    "bad",
    ["", "   ", "x" * 41, "tab\tname", "zero\u200bwidth", "rtl\u202eoverride", "ada (bot)", "ada (BOT)", "a （bot）"],
)
def test_what_is_not_a_name(bad: str) -> None:
    with pytest.raises(NameRefused):
        display_name(bad)


@given(st.text(max_size=60))
def test_a_name_key_is_stable(text: str) -> None:
    key = name_key(text)
    assert name_key(key) == key  # comparing keys again changes nothing
    try:
        shown = display_name(text)
    except NameRefused:
        return
    assert name_key(shown) == key


def test_recovery_codes_read_back_however_typed() -> None:
    code = new_recovery_code()
    assert len(code) == 24 and code.count("-") == 4
    rec = NameRecord("alice", digest("nonce"), digest(code))
    assert rec.code_matches(code)
    assert rec.code_matches(code.lower().replace("-", " "))
    assert not rec.code_matches(code[:-1])
    assert not rec.code_matches(new_recovery_code())
    assert not NameRecord("alice", digest("nonce")).code_matches(code)  # bound before codes: none works
    assert len({new_recovery_code() for _ in range(200)}) == 200


def test_records_round_trip_and_old_bindings_read() -> None:
    rec = NameRecord("Alice", "s" * 64, "r" * 64, rated=True)
    assert NameRecord.from_json("alice", rec.to_json()) == rec
    old = NameRecord.from_json("alice", "d" * 64)  # a binding kept before records: the nonce's digest
    assert old == NameRecord("alice", "d" * 64, None, False)
    for junk in (None, 5, [], {"session": 5}, {"name": "x"}):
        assert NameRecord.from_json("alice", junk) is None
