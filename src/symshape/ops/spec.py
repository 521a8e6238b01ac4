"""What every operator family module shares: the operator table (:class:`OpSpec`,
:func:`register_ops`), the builder of typed wrappers that differ only in the operator they call
(:func:`specialize`), looking an operator up, attribute checkers built from per-attribute parsers,
the normalize hook for negative axes, and the small argument helpers.

Each family module holds its operators as a table of :class:`OpSpec` rows (relation, attributes,
attribute checker, normalize hook, purity) registered once by :func:`register_ops`, and a typed
wrapper per operator (``ss.ops.<name>``). Adding an operator is one row and one wrapper.
"""

from __future__ import annotations

import builtins
import inspect
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Concatenate, ParamSpec, TypeVar, cast

from symshape.encoding.dims import Dim
from symshape.encoding.types import Attrs, TensorType, TupleType, Type
from symshape.errors import INVALID_ARGUMENT, SymshapeError
from symshape.ir.expr import Call, Constant, Expr, const
from symshape.ir.op import OPS, NormalizeFn, Op, register_op
from symshape.relations.common import (
    attr_bool,
    attr_dtype,
    attr_int,
    bad,
)

__all__ = [
    "AttrCheck",
    "OpSpec",
    "register_ops",
    "specialize",
    "CheckFn",
    "NO_ATTRS",
    "Axes",
    "Exprs",
    "IntOrInts",
    "rank_of",
    "rebuild",
    "axis_normalizer",
    "checked",
    "chk_axis",
    "by_nargs",
    "dimlike",
    "get_op",
    "number_const",
    "size_arg",
    "py_abs",
    "py_all",
    "py_any",
    "py_max",
    "py_min",
    "py_sum",
]


py_sum, py_max, py_min, py_abs, py_all, py_any = (
    builtins.sum,
    builtins.max,
    builtins.min,
    builtins.abs,
    builtins.all,
    builtins.any,
)


CheckFn = Callable[[Attrs, int], Mapping[str, Any] | None]


def rank_of(types: Sequence[Type], stacked: bool = False) -> int | None:
    if not types:
        return None
    t = types[0]
    if isinstance(t, TupleType):
        if not t.fields:
            return None
        t = t.fields[0]
    if isinstance(t, TensorType) and t.ndim is not None:
        return t.ndim + (1 if stacked else 0)
    return None


def rebuild(call: Call, changes: Mapping[str, object]) -> Call:
    attrs = dict(call.attrs)
    attrs.update(changes)
    new = Call(call.callee, call.args, attrs)
    new.span = call.span
    return new


def axis_normalizer(
    name: str, *, extra: int = 0, default: object = None
) -> Callable[[Call, Sequence[Type]], Expr | None]:
    """Negative axes (an int or a sequence) become non-negative, once the rank is known."""

    def normalize(call: Call, types: Sequence[Type]) -> Expr | None:
        v = call.attrs.get(name, default)
        rank = rank_of(types)
        if v is None or rank is None:
            return None
        r = rank + extra
        if isinstance(v, int) and not isinstance(v, bool):
            if -r <= v < 0:
                return rebuild(call, {name: v + r})
            return None
        if isinstance(v, tuple) and py_any(isinstance(a, int) and -r <= a < 0 for a in v):
            return rebuild(call, {name: tuple(a + r if isinstance(a, int) and -r <= a < 0 else a for a in v)})
        return None

    return normalize


def checked(fn: Callable[[Attrs, str], object], op: str) -> CheckFn:
    def check(attrs: Attrs, nargs: int) -> None:
        fn(attrs, op)
        return None

    return check


def chk_axis(attrs: Attrs, op: str) -> None:
    attr_int(attrs, "axis", None, op)


def by_nargs(
    fn: Callable[[Attrs, str], object], op: str, literal: int, dynamic: int, names: Sequence[str]
) -> CheckFn:
    """A checker for an operator that takes its shape (or sizes) either as the attributes
    ``names`` (with ``literal`` inputs) or as one more input tensor (``dynamic`` inputs)."""

    def check(attrs: Attrs, nargs: int) -> None:
        if nargs == literal:
            fn(attrs, op)
        elif nargs == dynamic:
            given = [n for n in names if attrs.get(n) is not None]
            if given:
                raise bad(op, f"{given[0]} is given both as an input and as an attribute")
            if attrs.get("dtype") is not None:
                attr_dtype(attrs, "dtype", op)
            if attrs.get("allowzero") is not None:
                attr_bool(attrs, "allowzero", False, op)
        else:
            raise SymshapeError(INVALID_ARGUMENT, f"{op} takes {literal} or {dynamic} inputs, got {nargs}")
        return None

    return check


def dimlike(x: object) -> bool:
    return isinstance(x, (int, Dim)) and not isinstance(x, bool)


NO_ATTRS: dict[str, str] = {}


def get_op(name: str) -> Op:
    """The operator registered as ``name`` (looked up at each call: a re-registration counts)."""
    return OPS[name]


IntOrInts = int | Sequence[int]


Axes = int | Sequence[int] | None


Exprs = Sequence[Expr] | Expr


def number_const(v: Any, dtype: str | None) -> Constant:
    import numpy as np

    if dtype is None:
        dtype = "float32" if isinstance(v, float) else "int64" if isinstance(v, int) else None
    return const(np.array(v, dtype=dtype))


def size_arg(v: Any, dtype: str = "int64") -> Expr:
    """A size given literally (an int or a dimension) as a 0-d int tensor carrying it; an
    expression as it is; a float as a float constant (no value)."""
    if isinstance(v, Expr):
        return v
    if isinstance(v, float):
        return number_const(v, None)
    return OPS["int_tensor"].wrapper_call(value=v, dtype=dtype)


AttrCheck = Callable[[Attrs, str], object]
"""Checks an operator's literal attributes (the operator's name for messages); raises
``bad-attribute``."""


@dataclass(frozen=True)
class OpSpec:
    """One operator of a family table.

    ``name`` (Relay's, with ``nn.`` where Relay has it) is typed by the registered relation
    ``relation`` over ``num_inputs`` inputs (-1: any number) and takes the attributes ``attrs``
    (name -> kind of :data:`symshape.ir.op.ATTR_KINDS`). ``check`` validates literal attributes
    when a call is built; ``normalize`` rewrites a call once its argument types are known.
    ``as_input`` names the attributes that may come as one more input instead (a shape given as a
    1-d int tensor): the operator then takes ``num_inputs`` or ``num_inputs + 1`` inputs.
    ``check_nargs`` replaces ``check`` where the inputs decide what to check.
    """

    name: str
    relation: str
    num_inputs: int
    attrs: Mapping[str, str]
    check: AttrCheck | None = None
    normalize: NormalizeFn | None = None
    doc: str = ""
    pure: bool = True
    as_input: tuple[str, ...] = ()
    check_nargs: CheckFn | None = None

    def register(self) -> Op:
        """Registers the operator (:func:`symshape.ir.op.register_op`)."""
        check = self.check_nargs
        num_inputs = self.num_inputs
        if self.as_input:
            assert self.check is not None
            check = by_nargs(self.check, self.name, num_inputs, num_inputs + 1, self.as_input)
            num_inputs = -1
        elif check is None and self.check is not None:
            check = checked(self.check, self.name)
        return register_op(
            self.name,
            self.relation,
            num_inputs,
            pure=self.pure,
            normalize=self.normalize,
            check_attrs=check,
            doc=self.doc,
            attr_types=self.attrs,
        )


def register_ops(table: Iterable[OpSpec]) -> None:
    """Registers every operator of a family table, in order."""
    for spec in table:
        spec.register()


P = ParamSpec("P")
R = TypeVar("R")
T = TypeVar("T")


def specialize(
    template: Callable[Concatenate[T, P], R], first: T, name: str, doc: str, **defaults: object
) -> Callable[P, R]:
    """A public wrapper made from ``template``: ``template`` with its first argument ``first`` (the
    operator, or what selects it), named ``name`` with the docstring ``doc``, and with other
    ``defaults`` for some parameters. ``help()`` and :func:`inspect.signature` show the wrapper's
    own signature: the template's without its first parameter, with those defaults.

    >>> def _scale(op: str, x: int, factor: int = 2) -> str:
    ...     return f"{op}({x}, {factor})"
    >>> triple = specialize(_scale, "mul", "triple", "Three times ``x``.", factor=3)
    >>> triple(5), triple(5, 4), triple.__name__, str(inspect.signature(triple))
    ('mul(5, 3)', 'mul(5, 4)', 'triple', "(x: 'int', factor: 'int' = 3) -> 'str'")
    >>> triple(5, factr=4)
    Traceback (most recent call last):
    TypeError: got an unexpected keyword argument 'factr'
    """
    sig = inspect.signature(template)
    head, *params = sig.parameters.values()
    unknown = set(defaults) - {p.name for p in params}
    if unknown:
        raise TypeError(f"{template.__name__} has no parameter {sorted(unknown)[0]!r}")
    params = [p.replace(default=defaults[p.name]) if p.name in defaults else p for p in params]
    own = sig.replace(parameters=params)
    names = frozenset(p.name for p in params)
    required = [p.name for p in params if p.default is inspect.Parameter.empty]
    # (position, name, default) of each parameter whose default differs from the template's
    overrides = [(i, p.name, p.default) for i, p in enumerate(params) if p.name in defaults]

    nparams, nrequired = len(params), len(required)

    def wrapper(*args: Any, **kwargs: Any) -> R:
        n = len(args)
        if (
            n > nparams
            or (kwargs and not names.issuperset(kwargs))
            or (n < nrequired and py_any(k not in kwargs for k in required[n:]))
        ):
            own.bind(*args, **kwargs)  # a wrong call: the TypeError names the wrong argument
        for i, key, value in overrides:
            if n <= i and key not in kwargs:
                kwargs[key] = value
        return template(first, *args, **kwargs)

    wrapper.__name__ = wrapper.__qualname__ = name
    wrapper.__doc__ = doc
    wrapper.__module__ = template.__module__
    wrapper.__signature__ = own  # type: ignore[attr-defined]
    wrapper.__wrapped__ = template  # type: ignore[attr-defined]  # (typing.get_type_hints' names)
    wrapper.__annotations__ = {k: v for k, v in template.__annotations__.items() if k != head.name}
    return cast(Callable[P, R], wrapper)
