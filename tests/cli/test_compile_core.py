"""``moonshot compile``: a real mypyc build of a copy of the package, and what happens when it fails.

Each test copies the package's sources into a temporary directory and runs ``moonshot compile``
there in a child process (``PYTHONPATH`` puts the copy first), so the checkout's own build is
never touched. The build itself takes about 30 s (minutes on a loaded machine), so these tests run
once, in the compiled pass of ``make test``, and not again under ``MOONSHOT_PURE_PYTHON=1``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

import moonshot
from moonshot.cli import compile_core

pytestmark = pytest.mark.skipif(
    os.environ.get("MOONSHOT_PURE_PYTHON", "") not in ("", "0"), reason="runs once, in the compiled pass"
)


def _copy(tmp: Path) -> Path:
    pkg = tmp / "moonshot"
    shutil.copytree(
        Path(moonshot.__file__).parent,
        pkg,
        ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.pyd", moonshot.STAMP_NAME),
    )
    return pkg


def _moonshot(
    tmp: Path, *args: str, prelude: str = "", env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    code = f"{prelude}import sys; from moonshot.cli.main import main; sys.argv = ['moonshot', *{list(args)!r}]; main()"
    child_env = {**os.environ, "PYTHONPATH": str(tmp), **(env or {})}
    child_env.pop("MOONSHOT_PURE_PYTHON", None)
    return subprocess.run([sys.executable, "-c", code], cwd=tmp, env=child_env, capture_output=True, text=True)


_PLAY_A_GAME = """
import json, random, moonshot
from moonshot.core.actions import Pass
from moonshot.core.cards import card_list
from moonshot.core.engine import Game, Phase
from moonshot.core.variants import find_variant

g = Game(find_variant("turbo"), 3)
rng = random.Random(0)
while not g.over:
    s = g.to_act()[0]
    if g.phase is Phase.PASS or g.phase is Phase.PILE:
        g.apply(Pass(s, sum(1 << c for c in rng.sample(card_list(g.hands[s]), 3))))
    else:
        g.apply(rng.choice(g.legal_actions(s)))
print(json.dumps({"engine": moonshot.core.engine.__file__, "compiled": sorted(moonshot.compiled_modules()),
                  "totals": g.totals}))
"""


def _state(tmp: Path) -> dict[str, object]:
    """Play a whole Turbo game in a child that imports the copy: where the engine came from, the totals."""
    env = {**os.environ, "PYTHONPATH": str(tmp)}
    env.pop("MOONSHOT_PURE_PYTHON", None)
    out = subprocess.run(
        [sys.executable, "-c", _PLAY_A_GAME], cwd=tmp, env=env, capture_output=True, text=True, check=True
    )
    result: dict[str, object] = json.loads(out.stdout)
    return result


_CC = (sysconfig.get_config_var("CC") or "cc").split()[0]


@pytest.mark.skipif(shutil.which(_CC) is None, reason=f"needs the C compiler Python was built with ({_CC})")
@pytest.mark.timeout(900)  # ten modules: minutes on a loaded machine
def test_compile_builds_the_core_that_then_plays_like_the_sources(tmp_path: Path) -> None:
    pkg = _copy(tmp_path)
    pure = _state(tmp_path)
    assert pure["compiled"] == [] and str(pure["engine"]).endswith("engine.py")

    built = _moonshot(tmp_path, "compile", "--if-stale")
    assert built.returncode == 0, built.stderr
    assert (
        "compiled core.cards, core.rules, core.actions, core.events, core.engine, core.views, bots.heuristic"
        in built.stdout
    )
    assert list((pkg / "bots").glob("*.so"))  # the bots that run per decision, in their subpackage
    fast = _state(tmp_path)
    assert fast["compiled"] == [f"moonshot.{m}" for m in sorted(compile_core.MODULES)]
    assert not str(fast["engine"]).endswith(".py")
    assert fast["totals"] == pure["totals"]  # the same game, compiled or not

    again = _moonshot(tmp_path, "compile", "--if-stale")
    assert again.returncode == 0 and "up to date" in again.stdout

    with open(pkg / "core" / "rules.py", "a") as f:  # an edit after the build: the whole core goes back to Python
        f.write("# edited\n")
    assert _state(tmp_path)["compiled"] == []

    removed = _moonshot(tmp_path, "compile", "--clean")
    assert removed.returncode == 0 and "pure Python" in removed.stdout
    assert not list(pkg.glob("**/*.so")) and not (pkg / moonshot.STAMP_NAME).exists()


def test_without_mypyc_optional_warns_and_leaves_pure_python(tmp_path: Path) -> None:
    pkg = _copy(tmp_path)
    hide_mypyc = "import sys; sys.modules['mypyc'] = None; sys.modules['mypyc.build'] = None\n"
    soft = _moonshot(tmp_path, "compile", "--optional", prelude=hide_mypyc)
    assert soft.returncode == 0
    assert "warning: could not compile the core" in soft.stderr and "moonshot[fast]" in soft.stderr
    assert "runs as pure Python" in soft.stderr
    hard = _moonshot(tmp_path, "compile", prelude=hide_mypyc)
    assert hard.returncode == 1 and "could not compile the core" in hard.stderr
    assert not list(pkg.glob("*.so")) and _state(tmp_path)["compiled"] == []


def test_a_compiler_failure_is_reported_and_leaves_no_build(tmp_path: Path) -> None:
    pkg = _copy(tmp_path)
    failed = _moonshot(tmp_path, "compile", env={"CC": "/bin/false"})
    assert failed.returncode == 1
    assert "could not compile the core" in failed.stderr and "C compiler" in failed.stderr
    assert not list(pkg.glob("*.so")) and not (pkg / moonshot.STAMP_NAME).exists()
