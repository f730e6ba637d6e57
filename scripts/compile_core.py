"""Compile moonshot's hot core with mypyc (``make core``, which ``make serve`` and ``make test`` run).

Builds cards, rules, actions, events and engine into extension modules next to their sources
(``src/moonshot/*.so``, one shared library ``_core__mypyc`` plus a small shim per module) and
writes ``src/moonshot/_compiled.json``: the hash of each source as compiled. ``moonshot/__init__``
uses the compiled modules only while every source still has that hash, so editing a ``.py``
silently falls back to pure Python until the next build.

    python scripts/compile_core.py               # build (again)
    python scripts/compile_core.py --if-stale    # build only if the sources changed since
    python scripts/compile_core.py --optional    # on failure warn and leave pure Python
    python scripts/compile_core.py --clean       # remove the build

Needs mypy (the ``fast`` extra, also in ``dev``), a C compiler and the Python headers.
"""

from __future__ import annotations

import argparse
import glob
import hashlib
import importlib.machinery
import json
import os
import shutil
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = os.path.join(ROOT, "src", "moonshot")
STAMP = os.path.join(PACKAGE, "_compiled.json")
BUILD = os.path.join(ROOT, "build", "mypyc")
# Dependency order does not matter to mypyc; they are compiled as one group that calls natively.
MODULES = ("cards", "rules", "actions", "events", "engine")
GROUP = "moonshot._core"


def source_hashes() -> dict[str, str]:
    out = {}
    for m in MODULES:
        with open(os.path.join(PACKAGE, m + ".py"), "rb") as f:
            out[f"moonshot.{m}"] = hashlib.sha256(f.read()).hexdigest()
    return out


def clean() -> None:
    if os.path.exists(STAMP):
        os.remove(STAMP)
    # every extension module in the package, also those of modules compiled by an earlier build
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        for path in glob.glob(os.path.join(PACKAGE, "*" + suffix)):
            os.remove(path)
    shutil.rmtree(BUILD, ignore_errors=True)


def build() -> None:
    from mypyc.build import mypycify
    from setuptools import setup

    clean()
    before = source_hashes()
    os.chdir(ROOT)
    extensions = mypycify(
        # the project's mypy config warns about sections for modules outside this build
        ["--no-warn-unused-configs", *(os.path.join("src", "moonshot", m + ".py") for m in MODULES)],
        opt_level="3",
        group_name=GROUP,
        target_dir=BUILD,
    )
    # setuptools reads a pyproject.toml in the working directory as its own project; ours is not
    os.chdir(BUILD)
    setup(
        name="moonshot-core",
        package_dir={"": os.path.join(ROOT, "src")},
        ext_modules=extensions,
        script_args=["-q", "build_ext", "--inplace", "--build-temp", os.path.join(BUILD, "temp")],
    )
    if source_hashes() != before:
        clean()
        raise SystemExit("a source changed while compiling; run `make compile` again")
    with open(STAMP, "w", encoding="utf-8") as f:
        json.dump({"python": sys.implementation.cache_tag, "sources": before}, f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"compiled {', '.join(MODULES)} with mypyc into {os.path.relpath(PACKAGE, ROOT)}/")


def up_to_date() -> bool:
    """Whether the last build is usable as the sources are now (the import guard's own test)."""
    sys.path.insert(0, os.path.join(ROOT, "src"))
    from moonshot import usable_compiled_modules

    return usable_compiled_modules(PACKAGE, {}) == {f"moonshot.{m}" for m in MODULES}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--clean", action="store_true", help="remove the compiled modules (back to pure Python)")
    ap.add_argument("--if-stale", action="store_true", help="do nothing when the build matches the sources")
    ap.add_argument(
        "--optional", action="store_true", help="if the build fails, warn and leave moonshot in pure Python"
    )
    args = ap.parse_args()
    if args.clean:
        clean()
        print("removed the compiled core; moonshot runs as pure Python")
        return
    if args.if_stale and up_to_date():
        print("the compiled core is up to date")
        return
    try:
        build()
    except (Exception, SystemExit) as e:  # setuptools reports a compiler failure as SystemExit
        if not args.optional:
            raise
        clean()
        print(
            f"warning: could not compile the core ({type(e).__name__}: {e}); moonshot runs as pure Python,"
            " its engine about 3x slower (needs mypy from the 'fast' extra, a C compiler, Python headers)",
            file=sys.stderr,
        )


if __name__ == "__main__":
    main()
