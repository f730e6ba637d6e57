# mypy: ignore-errors
"""How the kernel's one source runs: compiled by numba when it is installed, else as plain Python.

``kjit`` is ``numba.njit(cache=True)`` or nothing; ``popcount``, ``lowest_bit`` and ``highest_bit`` are
LLVM's ``ctpop``/``cttz``/``ctlz`` under numba and ``int`` methods otherwise. ``MOONSHOT_NO_NUMBA=1`` (or numba not
installed) runs the same functions uncompiled, so the test pass without numba checks the same code.
"""

from __future__ import annotations

import importlib.util
import os

NUMBA = not os.environ.get("MOONSHOT_NO_NUMBA") and importlib.util.find_spec("numba") is not None

if NUMBA:
    from llvmlite import ir
    from numba import njit, types
    from numba.extending import intrinsic

    def kjit(fn):
        return njit(cache=True, nogil=True, error_model="numpy")(fn)

    def kjit_inline(fn):
        # inlined into its callers in numba's own IR: no call, no reference counting of the arrays
        return njit(cache=True, nogil=True, inline="always", error_model="numpy")(fn)

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

    @njit(cache=True, inline="always")
    def popcount(x):
        return _ctpop(x)

    @njit(cache=True, inline="always")
    def lowest_bit(x):
        return _cttz(x)

else:

    def kjit(fn):
        return fn

    kjit_inline = kjit

    def popcount(x):
        return int(x).bit_count()

    def lowest_bit(x):
        x = int(x)
        return (x & -x).bit_length() - 1

    def highest_bit(x):
        return int(x).bit_length() - 1
