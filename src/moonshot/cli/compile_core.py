"""Compile moonshot's hot core with mypyc: ``moonshot compile`` (``make core`` runs it).

Builds ``core.cards``, ``core.rules``, ``core.actions``, ``core.events``, ``core.engine`` and ``core.tricks``, and what
runs for every decision of a simulated game (``core.views``, ``bots.random``, ``bots.heuristic``,
``bots.playout``, ``bots.registry``, ``play.sim``) and ``bots.tree`` (the per-world trees of ``pimc``
and ``search:root=tree``), into extension modules next to their sources (one shared library
``_core__mypyc`` plus a small shim per module) and writes
``_compiled.json`` beside them: the hash of each source as compiled. ``moonshot/__init__`` uses
the compiled modules only while every source still has that hash, so editing a ``.py`` falls
back to pure Python until the next build. It works on a checkout (``src/moonshot``) and on an
installed package alike; the C sources and objects go to a temporary directory.

    moonshot compile               # build (again)
    moonshot compile --if-stale    # build only if the sources changed since the last build
    moonshot compile --optional    # on failure warn and leave moonshot in pure Python
    moonshot compile --clean       # remove the build

Needs mypy (it ships mypyc; the ``fast`` extra), setuptools, a C compiler and the Python headers.
This is a shell module: nothing in the core imports it.
"""

from __future__ import annotations

import glob
import hashlib
import importlib.machinery
import json
import os
import shutil
import sys
import tempfile
from typing import Any

from moonshot import STAMP_NAME, usable_compiled_modules

PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the moonshot package
STAMP = os.path.join(PACKAGE, STAMP_NAME)
# Compiled as one group: the modules call each other natively, so they stand or fall together.
# The engine, and what runs for every decision of a simulated game: the seat's view, the random
# and heuristic bots, the search bot's playouts and the simulator's game loop; and pimc's trees.
MODULES = (
    "core.cards",
    "core.rules",
    "core.actions",
    "core.events",
    "core.engine",
    "core.views",
    "bots.heuristic",
    "bots.random",
    "bots.playout",
    "bots.tree",
    "bots.registry",
    "play.sim",
    "core.tricks",  # card play's small rules, which Deal calls (and the rules kernel compiles with numba)
)
GROUP = "moonshot._core"
_SUFFIXES = importlib.machinery.EXTENSION_SUFFIXES
HINT = "needs mypy (pip install 'moonshot[fast]'), setuptools, a C compiler and the Python headers"


class CompileError(RuntimeError):
    """The core could not be compiled; the message says why."""


def _source(m: str, package: str = PACKAGE) -> str:
    return os.path.join(package, *m.split(".")) + ".py"


def _extensions(package: str) -> list[str]:
    """Every extension module in the package directory and its subpackages."""
    return sorted(
        {p for suffix in _SUFFIXES for p in glob.glob(os.path.join(package, "**", "*" + suffix), recursive=True)}
    )


def source_hashes() -> dict[str, str]:
    out = {}
    for m in MODULES:
        with open(_source(m), "rb") as f:
            out[f"moonshot.{m}"] = hashlib.sha256(f.read()).hexdigest()
    return out


def up_to_date() -> bool:
    """Whether the last build is usable as the sources are now (the import guard's own test)."""
    return usable_compiled_modules(PACKAGE, {}) == {f"moonshot.{m}" for m in MODULES}


def clean() -> None:
    """Remove the stamp and every extension module in the package (back to pure Python)."""
    if os.path.exists(STAMP):
        os.remove(STAMP)
    for path in _extensions(PACKAGE):
        # unlinking keeps a library this process has loaded intact; the build writes new files
        os.remove(path)


_PROBE_C = """#include <Python.h>
PyMODINIT_FUNC PyInit_moonshot_probe(void) { return NULL; }
"""


def _probe_compiler(setup: Any, extension: Any) -> None:
    """Build an empty extension module first (about a second), so that a missing or broken C
    compiler, or missing Python headers, is reported before mypyc's minute of work, not after."""
    with open("moonshot_probe.c", "w", encoding="utf-8") as f:
        f.write(_PROBE_C)
    try:
        setup(
            name="moonshot-probe",
            ext_modules=[extension("moonshot_probe", ["moonshot_probe.c"])],
            script_args=["-q", "build_ext", "--build-lib", "probe-lib", "--build-temp", "probe-obj"],
        )
    except (Exception, SystemExit) as e:  # setuptools reports a compiler failure as SystemExit
        why = f"{type(e).__name__}: {e}"
        raise CompileError(f"the C compiler cannot build a Python extension here ({why}); {HINT}") from e


def build() -> None:
    """Compile the core in place; raises :class:`CompileError` with the reason on failure."""
    try:
        from mypyc.build import mypycify
        from setuptools import Extension, setup  # type: ignore[import-untyped]
    except ImportError as e:
        raise CompileError(f"{e} ({HINT})") from e
    clean()
    before = source_hashes()
    cwd = os.getcwd()
    with tempfile.TemporaryDirectory(prefix="moonshot-mypyc-") as work:
        # mypy reads a copy of the sources: next to an installed package (site-packages) it would
        # take every neighbouring module for the user's own. In the scratch directory neither mypy
        # nor setuptools reads a project's configuration (setuptools would take a pyproject.toml
        # in the working directory for its own project).
        copy = os.path.join(work, "src", "moonshot")
        shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.pyd", STAMP_NAME))
        os.chdir(work)
        try:
            _probe_compiler(setup, Extension)
            extensions = mypycify(
                [_source(m, os.path.join("src", "moonshot")) for m in MODULES],
                opt_level="3",
                group_name=GROUP,
                target_dir=os.path.join(work, "c"),
            )
            setup(
                name="moonshot-core",
                package_dir={"": "src"},
                ext_modules=extensions,
                script_args=["-q", "build_ext", "--inplace", "--build-temp", os.path.join(work, "obj")],
            )
            built = _extensions(copy)
            if len(built) != len(MODULES) + 1:  # a shim per module and the group's shared library
                raise CompileError(f"the build made {len(built)} extension modules, not {len(MODULES) + 1}")
            for path in built:
                shutil.copy2(path, os.path.join(PACKAGE, os.path.relpath(os.path.dirname(path), copy)))
        except (Exception, SystemExit) as e:  # setuptools reports a compiler failure as SystemExit
            clean()
            if isinstance(e, CompileError):
                raise
            raise CompileError(f"{type(e).__name__}: {e} ({HINT})") from e
        finally:
            os.chdir(cwd)
    if source_hashes() != before:
        clean()
        raise CompileError("a source changed while compiling; compile again")
    with open(STAMP, "w", encoding="utf-8") as f:
        json.dump({"python": sys.implementation.cache_tag, "sources": before}, f, indent=1, sort_keys=True)
        f.write("\n")


__all__ = ["GROUP", "MODULES", "PACKAGE", "CompileError", "build", "clean", "source_hashes", "up_to_date"]
