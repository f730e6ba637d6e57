# mypy: ignore-errors
"""How the kernel's one source runs: compiled by numba when it is installed, else as plain Python.

``kjit`` is ``numba.njit(cache=True)`` or nothing (``kjit_leaf`` the same for functions that allocate
nothing, compiled without reference counting); ``popcount``, ``lowest_bit`` and ``highest_bit`` are
LLVM's ``ctpop``/``cttz``/``ctlz`` under numba and ``int`` methods otherwise. ``MOONSHOT_NO_NUMBA=1`` (or numba not
installed) runs the same functions uncompiled, so the test pass without numba checks the same code.

numba's on-disk cache is keyed by each function's own source file: after editing only this file or
:mod:`moonshot.core.tricks` (whose functions the kernel compiles into its own), delete the kernel's cached
code (``src/moonshot/kernel/__pycache__/*.nbi``, ``*.nbc``) or touch ``_core.py``.

:func:`plain` hands numba the Python source of a function that mypyc may have compiled
(:mod:`moonshot.core.tricks` is in the mypyc build: the search deal calls it natively).
:func:`python_of` goes the other way: a compiled function as plain Python, all the way down.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import types as _pytypes
from typing import Any

NUMBA = not os.environ.get("MOONSHOT_NO_NUMBA") and importlib.util.find_spec("numba") is not None
if NUMBA:
    try:
        from llvmlite import ir
        from numba import carray, njit, types
        from numba.extending import intrinsic
    except ImportError:  # e.g. a numba that does not support the installed NumPy: plain Python
        NUMBA = False


def plain(fn):
    """``fn`` as Python code: the same function loaded afresh from its module's ``.py`` source, as
    module ``<module>._plain``, whether or not mypyc compiled the module. Always that copy, so the
    kernel's cached code names one module in either build: a cache written by a compiled process
    names ``_plain``, and a process on the sources (``MOONSHOT_PURE_PYTHON=1``, or a build gone
    stale after an edit) that compiled ``tricks`` from the module itself could not load it."""
    name = fn.__module__ + "._plain"
    mod = sys.modules.get(name)
    if mod is None:
        import moonshot  # (a compiled module's __file__ may not name its folder: go from the package's)

        root = os.path.dirname(os.path.abspath(moonshot.__file__))
        source = os.path.join(root, *fn.__module__.split(".")[1:]) + ".py"
        spec = importlib.util.spec_from_file_location(name, source)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
    return getattr(mod, fn.__name__)


def _bit_count(x):
    return int(x).bit_count()


def _trailing_zeros(x):
    x = int(x)
    return (x & -x).bit_length() - 1


def _leading_zeros(x):
    return 64 - int(x).bit_length()


# the Python meaning of the LLVM intrinsics below, for python_of
_PY_INTRINSICS = {"_ctpop": _bit_count, "_cttz": _trailing_zeros, "_ctlz": _leading_zeros}
_PY_FUNCS: dict[int, object] = {}


def python_of(fn: Any) -> Any:
    """``fn`` run as plain Python even where numba compiled it: its Python source, and so on for every
    compiled function (and intrinsic) it calls, with the same results (the batched env's ``numpy``
    backend runs its loops so, to check the compiled ones against). Without numba: ``fn`` itself."""
    py = getattr(fn, "py_func", None)
    if py is None:
        return fn
    hit = _PY_FUNCS.get(id(fn))
    if hit is not None:
        return hit
    scope = dict(py.__globals__)
    for name in py.__code__.co_names:
        value = scope.get(name)
        if name in _PY_INTRINSICS:
            scope[name] = _PY_INTRINSICS[name]
        elif hasattr(value, "py_func"):
            scope[name] = python_of(value)
    out = _pytypes.FunctionType(py.__code__, scope, py.__name__, py.__defaults__, py.__closure__)
    _PY_FUNCS[id(fn)] = out
    return out


if NUMBA:
    import numpy as np

    def kjit(fn):
        return njit(cache=True, nogil=True, error_model="numpy")(fn)

    def kjit_leaf(fn):
        # a function that allocates nothing, compiled without numba's reference counting (whose
        # atomic increments cost more than a card's play); LLVM inlines it into its callers
        return njit(cache=True, nogil=True, error_model="numpy", _nrt=False)(fn)

    @intrinsic
    def _ctpop(typingctx, x):
        sig = types.int64(types.int64)

        def codegen(context, builder, signature, args):
            return builder.ctpop(args[0])

        return sig, codegen

    @intrinsic
    def _cttz(typingctx, x):
        sig = types.int64(types.int64)

        def codegen(context, builder, signature, args):
            return builder.cttz(args[0], ir.Constant(ir.IntType(1), 0))

        return sig, codegen

    @intrinsic
    def _ctlz(typingctx, x):
        sig = types.int64(types.int64)

        def codegen(context, builder, signature, args):
            return builder.ctlz(args[0], ir.Constant(ir.IntType(1), 0))

        return sig, codegen

    @njit(cache=True, inline="always")
    def highest_bit(x):
        return 63 - _ctlz(x)

    @intrinsic
    def _voidptr(typingctx, address):
        sig = types.voidptr(types.uintp)

        def codegen(context, builder, signature, args):
            return builder.inttoptr(args[0], ir.IntType(8).as_pointer())

        return sig, codegen

    @njit(cache=True, inline="always")
    def raw(a):
        """A view of the int64 array ``a`` that owns nothing: passing it to a function counts no
        references (numba's reference counts are atomic instructions, which cost more than a
        card's play). The caller keeps ``a`` alive while the view is used."""
        return carray(_voidptr(a.ctypes.data), a.size, np.int64)

    @njit(cache=True, inline="always")
    def popcount(x):
        return _ctpop(x)

    @njit(cache=True, inline="always")
    def lowest_bit(x):
        return _cttz(x)

else:

    def kjit(fn):
        return fn

    kjit_leaf = kjit

    def raw(a):
        return a

    popcount = _bit_count
    lowest_bit = _trailing_zeros

    def highest_bit(x):
        return int(x).bit_length() - 1
