"""Declared ONNX types as symshape types: ``dim_param`` names become dimensions.

:class:`DimNames` gives each ``dim_param`` one dimension: the caller's (``dims={"N": n}``, a
symshape ``Dim`` or an int), else a symbol of that name; a name that is not an identifier is read
as an expression over symbols (``2*N``, as :func:`symshape.onnx.infer_shapes` writes them), else a
symbol named after it. A name joined by hyphens (``batch-size``: no spaces, every part starting
with a letter, where symshape and onnxruntime write ``N - 1``) is a name, not a difference. Every
``dim_param`` has its own symbol: a name made from one that is not an identifier (``a.b``,
``N:0``, ``batch-size``) never takes the symbol of another (``a_b``: then ``a_b_2``).
:meth:`DimNames.fresh` makes new symbols for sizes the model does not name, and
:meth:`DimNames.type_from_proto` converts a ``TypeProto`` (a ``dim_value`` is a constant, an
unnamed or negative dimension ``?``, a missing shape an unknown rank).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

import onnx

import symshape as ss
from symshape import Dim, Type
from symshape.errors import INVALID_ARGUMENT, SymshapeError, expect_mapping
from symshape.onnx.context import SEQUENCE, Unsupported
from symshape.onnx.dtypes import to_dtype

__all__ = ["DimNames"]

_IDENT: Final = re.compile(r"[A-Za-z_][A-Za-z_0-9]*")
_HYPHENATED: Final = re.compile(r"[A-Za-z_][A-Za-z_0-9]*(?:-[A-Za-z_][A-Za-z_0-9]*)+")


class DimNames:
    """The dimensions of one model's ``dim_param`` names (see the module docstring)."""

    def __init__(self, dims: Mapping[str, Any] | None = None) -> None:
        self.user_dims: dict[str, Dim] = {}
        given = (
            {}
            if dims is None
            else expect_mapping(dims, "dims must be a mapping of dim_param names to dimensions")
        )
        for k, v in given.items():
            if not isinstance(k, str):
                raise SymshapeError(INVALID_ARGUMENT, f"dims keys must be dim_param names, got {k!r}")
            d = ss.parse_dim(str(v)) if isinstance(v, int) else v
            if not isinstance(d, Dim):
                raise SymshapeError(
                    INVALID_ARGUMENT, f"dims[{k!r}] must be a symshape Dim or an int, got {v!r}"
                )
            self.user_dims[k] = d
        self.symbols: dict[str, Dim] = {}
        # the dim_param (or fresh hint) each symbol name stands for: one symbol per dim_param; the
        # names of the caller's symbols are taken (by a text no dim_param has): a dim_param read as
        # such a name (``batch-size`` as ``batch_size``) gets another
        self._owners: dict[str, str] = {}
        for k, d in self.user_dims.items():
            for x in d.symbols:
                self._owners.setdefault(str(x), f"\0{k}")
        self._fresh = 0

    def symbol(self, name: str) -> Dim:
        """The dimension of a ``dim_param``: the caller's, else one symbol per name."""
        hit = self.symbols.get(name)
        if hit is not None:
            return hit
        if name in self.user_dims:
            d = self.user_dims[name]
        elif _IDENT.fullmatch(name):
            d = self._named(name, name)
        elif _HYPHENATED.fullmatch(name):
            d = self._named(name, name.replace("-", "_"))
        else:
            d = self._expression_dim(name)
        self.symbols[name] = d
        return d

    def _named(self, text: str, name: str) -> Dim:
        """The symbol of ``dim_param`` ``text``, named ``name`` unless another ``dim_param`` has
        that name already (then ``name_2``, ``name_3``, ...)."""
        owners = self._owners
        candidate, k = name, 1
        while owners.get(candidate, text) != text:
            k += 1
            candidate = f"{name}_{k}"
        owners[candidate] = text
        return ss.dim(candidate)

    def _expression_dim(self, text: str) -> Dim:
        """A ``dim_param`` that is not an identifier: an expression over symbols (as
        :func:`infer_shapes` writes them, ``2*N``), else a symbol named after it."""
        names = {m for m in _IDENT.findall(text)}
        try:
            # (a name in an expression is a symbol's: one named after a dim_param that is not an
            # identifier, ``2*batch_size`` as infer_shapes writes it for ``batch-size``, is that one)
            env = {n: ss.dim(n) if n in self._owners else self.symbol(n) for n in names}
            return ss.parse_dim(text, env)
        except SymshapeError:
            safe = re.sub(r"\W", "_", text)
            if not safe or not (safe[0].isalpha() or safe[0] == "_"):
                safe = "d_" + safe
            return self._named(text, safe)

    def fresh(self, hint: str, least: int = 0) -> Dim:
        """A new symbol (``>= least``) named after ``hint``."""
        base = re.sub(r"\W", "_", hint) or "d"
        while True:
            self._fresh += 1
            name = f"{base}_{self._fresh}"
            if name not in self.symbols and name not in self._owners:
                d = ss.dim(name, min=least)
                self.symbols[name] = d
                self._owners[name] = name
                return d

    def type_from_proto(self, tp: onnx.TypeProto, what: str) -> tuple[Type, int]:
        """A declared ONNX type as a symshape type, with the ONNX element type (an optional's is
        its value's, when present; a sequence of tensors is ``Sequence[element type]``)."""
        if tp.HasField("optional_type"):  # (its value when present)
            tp = tp.optional_type.elem_type
        if tp.HasField("sequence_type") and tp.sequence_type.elem_type.HasField("tensor_type"):
            from symshape.onnx.ops.sequence_types import seq_type  # (converters: imported late)

            elem, et = self.type_from_proto(tp.sequence_type.elem_type, what)
            return seq_type(elem), et
        if not tp.HasField("tensor_type"):
            kind = tp.WhichOneof("value") or "unknown"
            raise Unsupported(SEQUENCE, f"{what} has a {kind.replace('_type', '')} type")
        tt = tp.tensor_type
        dtype = to_dtype(tt.elem_type)
        if not tt.HasField("shape"):
            return ss.Tensor(None, dtype), int(tt.elem_type)
        dims: list[Dim | int] = []
        for d in tt.shape.dim:
            if d.HasField("dim_value") and d.dim_value >= 0:
                dims.append(int(d.dim_value))
            elif d.HasField("dim_param") and d.dim_param:
                dims.append(self.symbol(d.dim_param))
            else:
                dims.append(ss.parse_dim("?"))
        return ss.Tensor(tuple(dims), dtype), int(tt.elem_type)
