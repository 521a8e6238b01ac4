"""An initializer's value: its type and expression, built when a converter first asks for them.

The importer binds each initializer (and each constant it folds from ``Constant`` nodes) to a
:class:`LazyConstant`, the :class:`~symshape.onnx.context.Value` whose expression and type are made
on first use: a constant whose value only is read (a ``Reshape`` target, the shape of a
``ConstantOfShape``) never enters the program. It is one object per initializer (a model has
hundreds), without closures.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Callable, Iterable
from typing import Any, Final

import numpy as np
import onnx

import symshape as ss
from symshape import Constant, Expr, TensorType, Type, Var
from symshape.encoding.dim_expr import as_dim
from symshape.encoding.leaf_types import plain_copy
from symshape.encoding.values import VALUE_DTYPES
from symshape.onnx.attrs import tensor_value
from symshape.onnx.context import Value
from symshape.onnx.dtypes import DTYPE_TO_ONNX, DTYPES, INT_DTYPES, ONNX_TO_DTYPE
from symshape.onnx.external import check_file
from symshape.onnx.external import read as read_external
from symshape.onnx.folding import FOLD_LIMIT
from symshape.onnx.spans import OnnxSpan
from symshape.relations.values import constant_type

__all__ = [
    "LazyConstant",
    "CONST_LIMIT",
    "ConstantHome",
    "add_initializers",
    "own_initializers",
    "initializer_value",
    "static_tensor_type",
    "initializer_type",
    "raw_int64s",
]

#: Initializers and ``Constant`` values with at most this many elements keep their values.
CONST_LIMIT: Final = 1 << 16


def initializer_value(
    t: onnx.TensorProto,
    shape: tuple[int, ...],
    et: int,
    base_dir: str | None = None,
    seen: dict[str, bool] | None = None,
) -> tuple[np.ndarray[Any, Any] | None, onnx.TensorProto | None]:
    """What an initializer (``t``, its ``shape`` and element type ``et`` read already) keeps of
    its value: ``(array, None)``; ``(None, t)`` for an int64 vector (a shape, as a rule) and for a
    tensor stored outside the model (read from ``base_dir``, the model's folder), decoded when
    first read (:class:`LazyConstant`); ``(None, None)`` when it is too large (integer ones keep up
    to :data:`CONST_LIMIT` elements, others up to ``FOLD_LIMIT``: enough for what converters read
    of them, scales, bounds, fill values), stored outside a model given without its folder
    (``base_dir`` None), or unreadable. The file of an external one is checked here
    (:func:`~symshape.onnx.external.check_file`, ``seen``: the files checked)."""
    if math.prod(shape) > (CONST_LIMIT if et in _INT_TYPES else FOLD_LIMIT):
        return None, None
    if t.data_location == _EXTERNAL:
        if base_dir is None:
            return None, None
        check_file(t, f"initializer '{t.name}'", base_dir, seen if seen is not None else {})
        return None, t
    if et == _INT64 and len(shape) == 1:
        return None, t
    return _decode(t, shape, et, None, True), None


def _decode(
    t: onnx.TensorProto, shape: tuple[int, ...], et: int, base_dir: str | None, internal: bool = False
) -> np.ndarray[Any, Any] | None:
    """``t``'s value as an array of its dtype (None when unreadable; an external one that cannot
    be read raises ``SymshapeError``); ``internal``: ``t`` is known not to be external."""
    if base_dir is not None and not internal and t.data_location == _EXTERNAL:
        arr = read_external(t, base_dir, f"initializer '{t.name}'")
    else:
        try:
            arr = tensor_value(t, shape, None, et, internal)
        except Exception:
            return None
    dtype = ONNX_TO_DTYPE.get(et)
    if dtype is not None:
        want = _NP_DTYPES.get(dtype)
        if arr.dtype is not want and arr.dtype != want:  # (the same object, as a rule)
            arr = arr.astype(dtype, copy=False)
    return arr


def static_tensor_type(shape: tuple[int, ...], dtype: str) -> TensorType:
    """``ss.Tensor(shape, dtype)`` (a weight's, an initializer's type): for a shape of nonnegative
    ints and a dtype symshape has, made from the shape's dimensions, which the constructor admits
    without the checks of other shapes (the same fields); anything else through ``ss.Tensor``."""
    if dtype in DTYPES:
        for x in shape:
            if type(x) is not int or x < 0:
                break
        else:
            return TensorType(tuple(map(as_dim, shape)), dtype)
    return ss.Tensor(shape, dtype)


def raw_int64s(raw: bytes, n: int) -> tuple[int, ...] | None:
    """The ``n`` entries of an int64 vector's ``raw_data`` (little-endian), without numpy; None
    when ``raw`` is empty or not of that length (what ``tensor_value`` reads)."""
    if not raw or len(raw) != 8 * n:
        return None
    unpack = _UNPACK.get(n)
    if unpack is None:
        unpack = _UNPACK[n] = struct.Struct(f"<{n}q").unpack
    return unpack(raw)


def initializer_type(t: onnx.TensorProto, shape: tuple[int, ...], et: int) -> TensorType:
    """The type of an initializer stored in the model (``shape``, ``et``: its dimensions and
    element type, read already): :attr:`LazyConstant.type`'s, a small int tensor's with its
    entries as its value."""
    base = static_tensor_type(shape, ONNX_TO_DTYPE[et])
    if len(shape) <= 1 and base.dtype in VALUE_DTYPES:
        arr = _decode(t, shape, et, None, True)
        if arr is not None:
            return constant_type(base, arr)
    return base


class ConstantHome:
    """What the constants of one model share: the model's ``label`` (their spans' file), ``outer``
    (the outermost graph's bindings, where a constant is bound when first used) and ``base_dir``
    (the folder external data is read from)."""

    __slots__ = ("label", "outer", "base_dir")

    def __init__(self, label: str, outer: list[tuple[Var, Expr]], base_dir: str | None) -> None:
        self.label, self.outer, self.base_dir = label, outer, base_dir


def own_initializers(g: onnx.GraphProto, values: dict[str, Value]) -> list[tuple[onnx.TensorProto, str]]:
    """A subgraph's initializers with their names (those its inputs define left out: an input
    overrides an initializer, as in the main graph), each name taken out of ``values``: a subgraph's
    constant shadows an outer value of its name."""
    inputs = {vi.name for vi in g.input}
    own = [(t, t.name) for t in g.initializer if t.name not in inputs]
    for _, name in own:
        values.pop(name, None)
    return own


def add_initializers(
    inits: Iterable[tuple[onnx.TensorProto, str]],
    values: dict[str, Value],
    named: dict[str, Value],
    types: dict[tuple[tuple[int, ...], str], TensorType],
    tensor_type: Callable[[tuple[int, ...], str], TensorType],
    home: ConstantHome,
    position: int,
    files: dict[str, bool],
    stand_in: Callable[[str, tuple[int, ...], int, int], None],
) -> int:
    """The initializers (with their names) as :class:`LazyConstant` values in ``values`` and
    ``named`` (but a name defined already), the ``position``-th place of the model onwards; the
    last position taken. ``tensor_type`` makes their types (``types``: those it made, by shape and
    dtype); an initializer of an element type
    symshape does not have is given to ``stand_in(name, shape, elem_type, position)``; ``files``:
    the external data files checked. Of two initializers of one name the last is the value, as
    onnxruntime and onnx's reference evaluator read them. A model has hundreds: each is made as
    ``LazyConstant(...)`` makes it, without the call."""
    d = home.base_dir
    int64 = _INT64  # (read at the call: tests turn the lazy int64 vectors off)
    pairs = list(inits)
    last = {name: k for k, (_, name) in enumerate(pairs)}
    for k, (t, name) in enumerate(pairs):
        if name in values or last[name] != k:
            continue
        shape = tuple(t.dims[:])  # (a slice: iterating a repeated field ends in an IndexError)
        et = t.data_type
        arr: np.ndarray[Any, Any] | None
        source: onnx.TensorProto | None
        if et == int64 and len(shape) == 1 and shape[0] <= CONST_LIMIT and t.data_location != _EXTERNAL:
            arr, source = None, t  # (what initializer_value gives for an int64 vector)
        else:
            arr, source = initializer_value(t, shape, et, d, files)
        dtype = ONNX_TO_DTYPE.get(et)
        position += 1
        if dtype is None:
            stand_in(name, shape, et, position)
            continue
        v: LazyConstant = _new_expr(LazyConstant)
        v.name, v._expr, v._arr, v._type, v.elem_type = name, None, arr, None, et
        v.synthetic, v._make, v._type_fn = False, None, None
        base = types.get((shape, dtype))
        if base is None:
            base = tensor_type(shape, dtype)
        v.shape, v.dtype, v.base, v.kind = shape, dtype, base, "initializer"
        v.position, v.home, v._source = position, home, source
        values[name] = named[name] = v
    return position


class LazyConstant(Value):
    """A constant's :class:`~symshape.onnx.context.Value` (``const`` is its array when kept).
    ``type`` is the constant's type (a small integer tensor's carries its entries as its value);
    ``expr`` builds the constant, binds it to a variable annotated with that type in ``outer`` (the
    outermost graph's bindings: in scope everywhere) and is that variable. ``kind`` is what it is
    in the model (``initializer``), ``position`` its place (for its span).

    An int64 vector initializer, or an external one (``source``: its ``TensorProto``; ``base_dir``
    the folder its file is in), is decoded when its value is first read; :meth:`int_vector` reads
    an int64 vector without numpy (the shape of a weight).
    """

    __slots__ = ("shape", "dtype", "base", "kind", "position", "home", "_arr", "_source")

    def __init__(
        self,
        name: str,
        shape: tuple[int, ...],
        dtype: str,
        base: TensorType,
        arr: np.ndarray[Any, Any] | None,
        kind: str,
        label: str,
        position: int,
        outer: list[tuple[Var, Expr]],
        elem_type: int,
        source: onnx.TensorProto | None = None,
        base_dir: str | None = None,
    ) -> None:
        # (Value's fields set here: its __init__ wants an expression or a maker)
        self.name, self._expr, self._arr, self._type, self.elem_type = name, None, arr, None, elem_type
        self.synthetic, self._make, self._type_fn = False, None, None
        self.shape, self.dtype, self.base, self.kind = shape, dtype, base, kind
        self.position, self.home, self._source = position, ConstantHome(label, outer, base_dir), source

    @property
    def const(self) -> np.ndarray[Any, Any] | None:
        src = self._source
        if src is not None:
            self._source = None
            self._arr = _decode(src, self.shape, self.elem_type, self.home.base_dir)
        return self._arr

    @const.setter
    def const(self, arr: np.ndarray[Any, Any] | None) -> None:
        self._source, self._arr = None, arr

    def int_vector(self) -> tuple[int, ...] | None:
        src = self._source
        if src is not None and not src.HasField("segment"):
            got = raw_int64s(src.raw_data, self.shape[0])
            if got is not None:
                return got
        return super().int_vector()

    @property
    def type(self) -> Type | None:
        t = self._type
        if t is None:
            t = self.base
            if len(self.shape) <= 1 and self.dtype in VALUE_DTYPES:  # (others are not decoded here)
                arr = self.const
                if arr is not None:
                    t = constant_type(self.base, arr)  # a small int tensor: its entries are its value
            self._type = t
        return t

    @property
    def expr(self) -> Expr:
        e = self._expr
        if e is None:
            e = self._expr = self._build()
        return e

    def _build(self) -> Expr:
        # what ss.Constant(shape, dtype) with data, and ss.var, make: built from the fields, without
        # checking again the shape, dtype and type the importer made (as the weights are built)
        home = self.home
        span = OnnxSpan.at(home.label, self.position, f"{self.kind} '{self.name}'")
        c: Constant = _new_expr(Constant)
        c.type, c.data, c.span = plain_copy(self.base), self.const, span
        t = self.type
        v: Var = _new_expr(Var)
        # the constant's own type annotates it unless it has a value (a small int tensor): the
        # shared base is no annotation (one is admitted per type object; the constant a weight)
        v.name, v.type_annotation, v.span = self.name, c.type if t is self.base else t, span
        home.outer.append((v, c))
        return v


#: expressions built without their constructors' checks and span lookup (every field is set here)
_new_expr: Final[Any] = object.__new__
_EXTERNAL: Final = onnx.TensorProto.EXTERNAL
_INT64: Final = onnx.TensorProto.INT64
_NP_DTYPES: Final = {d: np.dtype(d) for d in DTYPES if d != "bfloat16"}
_INT_TYPES: Final = frozenset(DTYPE_TO_ONNX[d] for d in INT_DTYPES | {"bool"})
#: struct's readers of little-endian int64 vectors, by length (a model's shapes have few lengths)
_UNPACK: Final[dict[int, Any]] = {}
