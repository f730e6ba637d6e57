"""The guard in ``moonshot/__init__`` that keeps a stale compiled core from being imported."""

from __future__ import annotations

import copy
import hashlib
import importlib.machinery
import json
import os
import pickle
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import moonshot
from moonshot import STAMP_NAME, PreferSource, usable_compiled_modules

SUFFIX = importlib.machinery.EXTENSION_SUFFIXES[0]
MODULES = ("cards", "engine")


def fake_build(tmp: Path, *, tag: str = sys.implementation.cache_tag) -> Path:
    """A package dir as ``make compile`` leaves it (the extension modules are empty files)."""
    pkg = tmp / "moonshot"
    pkg.mkdir()
    sources = {}
    for m in MODULES:
        (pkg / f"{m}.py").write_text(f"NAME = {m!r}\n")
        (pkg / f"{m}{SUFFIX}").write_bytes(b"")
        sources[f"moonshot.{m}"] = hashlib.sha256((pkg / f"{m}.py").read_bytes()).hexdigest()
    (pkg / "views.py").write_text("")
    (pkg / STAMP_NAME).write_text(json.dumps({"python": tag, "sources": sources}))
    return pkg


def test_a_fresh_build_is_used(tmp_path: Path) -> None:
    assert usable_compiled_modules(str(fake_build(tmp_path)), {}) == {"moonshot.cards", "moonshot.engine"}


def test_one_changed_source_turns_every_module_back_to_python(tmp_path: Path) -> None:
    pkg = fake_build(tmp_path)
    with open(pkg / "engine.py", "a") as f:
        f.write("# edited after compiling\n")
    assert usable_compiled_modules(str(pkg), {}) == frozenset()


@pytest.mark.parametrize("damage", ["no stamp", "bad stamp", "other python", "missing extension"])
def test_an_unusable_build_is_ignored(tmp_path: Path, damage: str) -> None:
    pkg = fake_build(tmp_path, tag="cpython-299" if damage == "other python" else sys.implementation.cache_tag)
    if damage == "no stamp":
        (pkg / STAMP_NAME).unlink()
    elif damage == "bad stamp":
        (pkg / STAMP_NAME).write_text("{not json")
    elif damage == "missing extension":
        (pkg / f"cards{SUFFIX}").unlink()
    assert usable_compiled_modules(str(pkg), {}) == frozenset()


def test_the_environment_can_force_pure_python(tmp_path: Path) -> None:
    pkg = str(fake_build(tmp_path))
    assert usable_compiled_modules(pkg, {"MOONSHOT_PURE_PYTHON": "1"}) == frozenset()
    assert usable_compiled_modules(pkg, {"MOONSHOT_PURE_PYTHON": "0"}) != frozenset()


def test_the_finder_sends_disallowed_compiled_modules_to_their_source(tmp_path: Path) -> None:
    pkg = fake_build(tmp_path)
    finder = PreferSource(str(pkg), frozenset({"moonshot.cards"}))
    spec = finder.find_spec("moonshot.engine", None)
    assert spec is not None and spec.origin == str(pkg / "engine.py")
    assert finder.find_spec("moonshot.cards", None) is None  # allowed: the extension module wins
    assert finder.find_spec("moonshot.views", None) is None  # never compiled: normal import
    assert finder.find_spec("json", None) is None


def _import_in_child(path: Path | None, env_extra: dict[str, str]) -> dict[str, object]:
    code = (
        "import json, moonshot, moonshot.core.engine, moonshot.core.cards; "
        "print(json.dumps({'engine': moonshot.core.engine.__file__, 'cards': moonshot.core.cards.__file__, "
        "'compiled': sorted(moonshot.compiled_modules())}))"
    )
    env = {**os.environ, **env_extra}
    if path is not None:
        env["PYTHONPATH"] = str(path)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    result: dict[str, object] = json.loads(out.stdout)
    return result


def test_moonshot_pure_python_forces_the_sources() -> None:
    seen = _import_in_child(None, {"MOONSHOT_PURE_PYTHON": "1"})
    assert str(seen["engine"]).endswith("engine.py") and str(seen["cards"]).endswith("cards.py")
    assert seen["compiled"] == []


@pytest.mark.skipif(not moonshot.compiled_modules(), reason="the core runs as pure Python (make core builds it)")
def test_editing_a_compiled_module_falls_back_to_the_sources(tmp_path: Path) -> None:
    copy = tmp_path / "moonshot"
    shutil.copytree(Path(moonshot.__file__).parent, copy, ignore=shutil.ignore_patterns("__pycache__"))
    assert _import_in_child(tmp_path, {"MOONSHOT_PURE_PYTHON": ""})["compiled"] != []
    with open(copy / "core" / "engine.py", "a") as f:
        f.write("# edited after compiling\n")
    seen = _import_in_child(tmp_path, {"MOONSHOT_PURE_PYTHON": ""})
    assert seen["engine"] == str(copy / "core" / "engine.py") and seen["cards"] == str(copy / "core" / "cards.py")
    assert seen["compiled"] == []


# Compiled classes have no __dict__ and a compiled Game cannot be created without arguments, so
# pickling and copying go through __reduce__; they must work the same in both modes.


def test_rules_pickle_and_copy_to_equal_values() -> None:
    from moonshot.core.variants import VARIANTS

    for name, rules in VARIANTS.items():
        assert pickle.loads(pickle.dumps(rules)) == rules, name
        assert copy.deepcopy(rules) == rules and copy.copy(rules) == rules, name


def test_a_game_pickles_and_copies_with_its_whole_state() -> None:
    from moonshot.core.actions import Play
    from moonshot.core.engine import Game
    from moonshot.core.variants import find_variant

    g = Game(find_variant("standard"), seed=7)
    for s in g.to_act():
        g.apply(g.legal_actions(s)[0])
    for _ in range(5):
        g.apply(Play.of(g.turn, g.legal_play_mask(g.turn).bit_length() - 1))
    for h in (pickle.loads(pickle.dumps(g)), copy.deepcopy(g), copy.copy(g)):
        assert (h.log, h.actions, h.hands, h.trick_cards, h.turn) == (g.log, g.actions, g.hands, g.trick_cards, g.turn)
    h = copy.deepcopy(g)
    h.apply(Play.of(h.turn, h.legal_play_mask(h.turn).bit_length() - 1))
    assert len(h.log) > len(g.log) and h.hands != g.hands  # the copy is independent
    assert copy.copy(g).log is g.log  # a shallow copy shares, as for any object
