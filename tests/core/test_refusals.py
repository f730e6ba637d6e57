"""The engine's refusals as codes: every code the engine raises is in REASON_CODES (found in its
source, so a new refusal without a code or with an unlisted one fails), every listed code is
raised somewhere, and a refused action carries its code and parameters (the web app's
catalogues are held to the same list in tests/http/test_webapp_i18n.py)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import moonshot.core
from core.test_engine import std_pass, std_trick2
from gamekit import c, cs
from moonshot.core.actions import Pass, Play
from moonshot.core.engine import Game
from moonshot.core.refusals import REASON_CODES, IllegalAction, Reason
from moonshot.core.variants import STANDARD

N = 0  # the seat North


def engine_codes() -> set[str]:
    """The reason codes engine.py can produce: the literal codes of its IllegalAction(...) calls
    and of the reasons _why_illegal returns."""
    # the source file, also where the compiled module is what imports
    tree = ast.parse((Path(moonshot.core.__file__).parent / "engine.py").read_text(encoding="utf-8"))
    codes: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "IllegalAction":
            assert len(node.args) >= 2, f"a refusal without a code, line {node.lineno}"
            code = node.args[1]
            if isinstance(code, ast.Constant):
                codes.add(str(code.value))
            else:  # passed on: _why_illegal's code, or a replayed refusal's own
                assert isinstance(code, (ast.Name, ast.Attribute)), f"line {node.lineno}"
        if isinstance(node, ast.FunctionDef) and node.name == "_why_illegal":
            for ret in ast.walk(node):
                if isinstance(ret, ast.Return) and isinstance(ret.value, ast.Tuple):
                    code = ret.value.elts[1]
                    assert isinstance(code, ast.Constant), f"line {ret.lineno}"
                    codes.add(str(code.value))
    return codes


def test_every_code_the_engine_raises_is_listed_and_every_listed_code_is_raised() -> None:
    codes = engine_codes()
    assert codes - set(REASON_CODES) == set()
    assert set(REASON_CODES) - codes == set()


def test_a_refused_play_says_why_as_a_code_with_its_parameters() -> None:
    g = std_trick2()  # W led 2S; N holds a spade
    with pytest.raises(IllegalAction) as err:
        g.apply(Play.of(N, c("5D")))
    assert str(err.value) == "N may not play 5D: must follow spades"
    assert (err.value.code, err.value.params) == ("must_follow", {"seat": N, "card": "5D", "suit": "spades"})
    with pytest.raises(IllegalAction) as err:
        std_pass().apply(Pass(N, cs("2C 6C")))
    assert (err.value.code, err.value.params) == ("pass_count", {"count": 2, "expected": 3})


def test_reason_is_the_english_text_with_the_code() -> None:
    r = IllegalAction("N does not hold 3C", "not_held", {"seat": 0, "cards": ["3C"]}).reason
    assert isinstance(r, Reason) and r == "N does not hold 3C"
    assert (r.code, r.params) == ("not_held", {"seat": 0, "cards": ["3C"]})
    with pytest.raises(IllegalAction):
        Game(STANDARD, 1).apply(Play(9, 0))
