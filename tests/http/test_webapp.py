"""The web app's static files: every ES module parses (a module that does not parse stops every
page that imports it, which a browser test finds only on the pages it opens)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

import moonshot.http
import moonshot.server

STATIC = Path(moonshot.http.__file__).parent / "static"
MODULES = sorted([*STATIC.glob("js/*.js"), *(Path(moonshot.server.__file__).parent / "trend_static").glob("**/*.js")])


@pytest.mark.parametrize("module", MODULES, ids=[m.name for m in MODULES])
def test_every_module_parses(module: Path) -> None:
    node = shutil.which("node")
    if node is None:
        pytest.skip("no node on this machine: the browser tests load every module instead")
    out = subprocess.run(
        [node, "--experimental-default-type=module", "--no-warnings", "--check", str(module)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr


def test_a_doubled_import_is_caught(tmp_path: Path) -> None:
    """The check can fail: the same name imported twice is a SyntaxError in a module."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("no node on this machine")
    bad = tmp_path / "bad.js"
    bad.write_text('import { t } from "./i18n.js";\nimport { t } from "./i18n.js";\n', encoding="utf-8")
    out = subprocess.run(
        [node, "--experimental-default-type=module", "--no-warnings", "--check", str(bad)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode != 0 and "already been declared" in out.stderr
