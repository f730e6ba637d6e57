"""moonshot: one Hearts engine, every protocol, strong bots, an RL environment.

The package also owns the guard for the optional compiled core. ``moonshot compile`` builds the hot
modules with mypyc into extension modules next to their sources and records each source's hash
in ``_compiled.json``. Python prefers an extension module over a ``.py`` of the same name, so a
compiled module would otherwise still be used after its source changed. The finder below stops
that: compiled modules are used only if every one of them was built from the sources as they are
now (they call each other natively, so they stand or fall together); otherwise, or when
``MOONSHOT_PURE_PYTHON=1`` is set, every module loads from its source.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.machinery
import importlib.util
import json
import os
import sys
from collections.abc import Mapping, Sequence
from types import ModuleType

__version__ = "0.1.0"

_HERE = os.path.dirname(os.path.abspath(__file__))
STAMP_NAME = "_compiled.json"


def _has_extension(base: str) -> bool:
    return any(os.path.exists(base + suffix) for suffix in importlib.machinery.EXTENSION_SUFFIXES)


def _module_base(package_dir: str, fullname: str) -> str:
    return os.path.join(package_dir, *fullname.split(".")[1:])


def usable_compiled_modules(package_dir: str, environ: Mapping[str, str]) -> frozenset[str]:
    """The compiled modules that may be imported: all of the last build's modules, or none.

    None when ``MOONSHOT_PURE_PYTHON`` is set (to anything but ``0``), when there is no build
    stamp, when it was made for another Python, or when any module's source changed since or
    lost its extension module.
    """
    if environ.get("MOONSHOT_PURE_PYTHON", "") not in ("", "0"):
        return frozenset()
    try:
        with open(os.path.join(package_dir, STAMP_NAME), encoding="utf-8") as f:
            stamp = json.load(f)
        if stamp["python"] != sys.implementation.cache_tag:
            return frozenset()
        sources: dict[str, str] = stamp["sources"]  # module name -> sha256 of its .py when compiled
        for name, digest in sources.items():
            base = _module_base(package_dir, name)
            if not _has_extension(base):
                return frozenset()
            with open(base + ".py", "rb") as src:
                if hashlib.sha256(src.read()).hexdigest() != digest:
                    return frozenset()
        return frozenset(sources)
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return frozenset()


class PreferSource:
    """Load a ``moonshot`` module from its ``.py`` when it has a compiled sibling not allowed.

    A meta path finder by its ``find_spec`` alone: deriving from ``importlib.abc.MetaPathFinder``
    would import ``importlib.abc`` (and with it ``importlib.resources``, ``pathlib``, ...) at every
    start of every ``moonshot`` command."""

    def __init__(self, package_dir: str, allowed: frozenset[str]) -> None:
        self.package_dir = package_dir
        self.allowed = allowed

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if not fullname.startswith("moonshot.") or fullname in self.allowed:
            return None
        base = _module_base(self.package_dir, fullname)
        source = base + ".py"
        if not os.path.isfile(source) or not _has_extension(base):
            return None  # nothing compiled here: the normal finders decide
        return importlib.util.spec_from_file_location(
            fullname, source, loader=importlib.machinery.SourceFileLoader(fullname, source)
        )


_ALLOWED = usable_compiled_modules(_HERE, os.environ)
sys.meta_path.insert(0, PreferSource(_HERE, _ALLOWED))


def compiled_modules() -> frozenset[str]:
    """The ``moonshot`` modules that run compiled (empty: everything is pure Python)."""
    out = set()
    for name in _ALLOWED:
        module = importlib.import_module(name)
        if not (module.__file__ or "").endswith(".py"):
            out.add(name)
    return frozenset(out)


BLAS_THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def one_blas_thread() -> None:
    """One BLAS thread for this process and the processes it starts, unless the environment names
    a count.

    moonshot's networks multiply small matrices (a few dozen rows for a search decision's batch of
    leaves, 256 in training), where a second BLAS thread does no work but spins waiting for some. A
    process's CPU clock counts the spinning, and a CPU-time budget (``--cpu-time``) charges it to
    the bot: on the 2-core development machine a ``search`` decision of 30 ms of CPU saw 640 worlds
    with a second thread and 1,386 with one (``benchmarks/search_speed.py``, docs/results.md).
    BLAS reads these variables when NumPy is first imported, so every command calls this first
    thing (the ``moonshot`` group, the Kierki entries, the training modules); it changes nothing in
    a process that has imported NumPy already.
    """
    for name in BLAS_THREAD_VARIABLES:
        os.environ.setdefault(name, "1")
