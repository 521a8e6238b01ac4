"""The expression language (Relay-like, with Relax's ``MatchCast`` and ``Dataflow``).

Expressions compare by identity, like Relay's nodes: a :class:`Var` is a binding, and two calls
built separately are two program points. Structural comparison is
:func:`~symshape.ir.structural_equal.structural_equal`.
Every expression records the source span of the code that built it
(:func:`symshape.source.user_span`: the first frame outside this package, or the span of an
enclosing :func:`~symshape.source.span_scope`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from symshape.encoding.dims import DimLike, as_dim, check_nonnegative_constant
from symshape.encoding.dtypes import dtype_name
from symshape.encoding.types import (
    Attrs,
    GlobalTypeVar,
    Tensor,
    TensorType,
    TupleType,
    Type,
    TypeVar,
    check_identifier,
    check_type,
    type_tuple,
)
from symshape.errors import BAD_ATTRIBUTE, INVALID_ARGUMENT, SymshapeError
from symshape.ir.indexing import ExpandStep, SliceStep, SqueezeStep, TakeStep, index_plan
from symshape.source import Span, user_span
from symshape.views import View, show

__all__ = [
    "Expr",
    "Var",
    "var",
    "GlobalVar",
    "Constant",
    "const",
    "Call",
    "Tuple",
    "TupleGetItem",
    "Let",
    "Function",
    "If",
    "Match",
    "Clause",
    "Pattern",
    "PatternConstructor",
    "PatternVar",
    "PatternWildcard",
    "PatternTuple",
    "MatchCast",
    "Dataflow",
    "call_pure",
    "children",
    "operands",
    "Callee",
    "Constructor",
    "static_kind",
    "static_arity",
    "static_dtype",
    "set_operator_lookup",
]

_EMPTY_ATTRS = Attrs()  # shared: attributes are immutable


def _as_attrs(attrs: Mapping[str, Any] | None) -> Attrs:
    """``attrs`` as :class:`Attrs` (an :class:`Attrs` is shared, not copied)."""
    if type(attrs) is Attrs:
        return attrs
    if attrs is None:
        return _EMPTY_ATTRS
    if not isinstance(attrs, Mapping):
        raise SymshapeError(
            BAD_ATTRIBUTE, f"attributes must be a mapping, got {type(attrs).__name__} {attrs!r}"
        )
    return Attrs(attrs) if attrs else _EMPTY_ATTRS


def _expr(x: object, what: str) -> Expr:
    if not isinstance(x, Expr):
        raise SymshapeError(INVALID_ARGUMENT, f"{what} must be an expression, got {type(x).__name__} {x!r}")
    return x


def _items(xs: object, what: str) -> tuple[Any, ...]:
    """``xs`` (a list or tuple; other iterables are read once) as a tuple. An expression, a string
    or a non-iterable is an ``invalid-argument`` error (an expression is never iterated)."""
    if type(xs) is tuple:
        return xs
    if type(xs) is list:
        return tuple(xs)
    if isinstance(xs, Expr):
        raise SymshapeError(
            INVALID_ARGUMENT,
            f"{what} must be a list, got the expression `{xs!r}`; wrap it in a list",
        )
    if isinstance(xs, (str, bytes, Mapping)) or not isinstance(xs, Iterable):
        raise SymshapeError(INVALID_ARGUMENT, f"{what} must be a list, got {type(xs).__name__} {xs!r}")
    return tuple(xs)


def _exprs(xs: object, what: str) -> tuple[Expr, ...]:
    out = _items(xs, what)
    for x in out:
        if not isinstance(x, Expr):
            raise SymshapeError(
                INVALID_ARGUMENT, f"{what} must be expressions, got {type(x).__name__} {x!r}"
            )
    return out


class Callee:
    """What a :class:`Call` applies besides a function value: an operator
    (:class:`~symshape.ir.op.Op`) or an ADT :class:`Constructor`."""

    __slots__ = ()


class Expr:
    """Base class of expressions; ``span`` is where the expression was built."""

    __slots__ = ("__weakref__", "span")
    span: Span | None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise SymshapeError(
            INVALID_ARGUMENT,
            "Expr is the base class of expressions: build a Var, Call, Tuple, Function, ... instead",
        )

    def __call__(self, *args: Expr) -> Call:
        return Call(self, list(args))

    def __getitem__(self, index: Any) -> Expr:
        """``t[0]`` of a tuple is a :class:`TupleGetItem`; a tensor is indexed like numpy
        (``x[..., 1:, ::2]``, ``x[:, 0]``, ``x[None]``, ``x[idx]``) by ``strided_slice``,
        ``squeeze``, ``expand_dims`` and ``take`` (``boolean_mask`` for a bool tensor known
        when it is built, on the leading axes). Which one is decided by the type the
        expression is known to have when it is built (:func:`static_kind`); an int index of an
        expression of unknown kind (an unannotated variable, a function's result) stays a
        :class:`TupleGetItem`."""
        kind = static_kind(self)
        if kind == "tuple" or (kind is None and _is_int_index(index)):
            if not _is_int_index(index):
                raise SymshapeError(
                    INVALID_ARGUMENT,
                    f"a tuple is indexed by an int, got {type(index).__name__} {index!r}",
                )
            i = int(index)
            if i < 0:
                n = static_arity(self)
                if n is None:
                    raise SymshapeError(
                        INVALID_ARGUMENT,
                        f"a negative tuple index ({i}) needs the tuple's arity, which is not known "
                        "when the expression is built",
                    )
                i += n
            return TupleGetItem(self, i)
        return _index_tensor(self, index)

    def __iter__(self) -> Iterator[Expr]:
        # without this, Python would iterate through __getitem__ forever (e[0], e[1], ...)
        n = static_arity(self)
        if n is None:
            raise SymshapeError(
                INVALID_ARGUMENT,
                f"an expression ({type(self).__name__}) cannot be iterated or unpacked: its arity "
                "is not known when it is built (a tuple annotation, a Tuple, split with a literal "
                "number of sections or batch_norm have one); index it (`e[0]`, `e[1]`) instead",
            )
        return iter([TupleGetItem(self, i) for i in range(n)])

    # -- arithmetic, comparisons and methods (numpy-like; see the module's docstring) --------------
    def __add__(self, other: Any) -> Call:
        return _binary("add", self, other)

    def __radd__(self, other: Any) -> Call:
        return _binary("add", other, self)

    def __sub__(self, other: Any) -> Call:
        return _binary("subtract", self, other)

    def __rsub__(self, other: Any) -> Call:
        return _binary("subtract", other, self)

    def __mul__(self, other: Any) -> Call:
        return _binary("multiply", self, other)

    def __rmul__(self, other: Any) -> Call:
        return _binary("multiply", other, self)

    def __truediv__(self, other: Any) -> Call:
        return _binary("divide", self, other)

    def __rtruediv__(self, other: Any) -> Call:
        return _binary("divide", other, self)

    def __floordiv__(self, other: Any) -> Call:
        return _binary("floor_divide", self, other)

    def __rfloordiv__(self, other: Any) -> Call:
        return _binary("floor_divide", other, self)

    def __mod__(self, other: Any) -> Call:
        return _binary("mod", self, other)

    def __rmod__(self, other: Any) -> Call:
        return _binary("mod", other, self)

    def __pow__(self, other: Any) -> Call:
        return _binary("power", self, other)

    def __rpow__(self, other: Any) -> Call:
        return _binary("power", other, self)

    def __matmul__(self, other: Any) -> Call:
        return _binary("matmul", self, other)

    def __rmatmul__(self, other: Any) -> Call:
        return _binary("matmul", other, self)

    def __and__(self, other: Any) -> Call:
        return _binary("logical_and", self, other)

    def __rand__(self, other: Any) -> Call:
        return _binary("logical_and", other, self)

    def __or__(self, other: Any) -> Call:
        return _binary("logical_or", self, other)

    def __ror__(self, other: Any) -> Call:
        return _binary("logical_or", other, self)

    def __neg__(self) -> Call:
        return _op_call("negative", [self])

    def __pos__(self) -> Expr:
        return self

    def __abs__(self) -> Call:
        return _op_call("abs", [self])

    def __invert__(self) -> Call:
        return _op_call("logical_not", [self])

    def __lt__(self, other: Any) -> Call:
        return _binary("less", self, other)

    def __le__(self, other: Any) -> Call:
        return _binary("less_equal", self, other)

    def __gt__(self, other: Any) -> Call:
        return _binary("greater", self, other)

    def __ge__(self, other: Any) -> Call:
        return _binary("greater_equal", self, other)

    def eq(self, other: Any) -> Call:
        """Elementwise ``==`` (bool); the operator ``==`` compares expressions by identity."""
        return _binary("equal", self, other)

    def ne(self, other: Any) -> Call:
        """Elementwise ``!=`` (bool); the operator ``!=`` compares expressions by identity."""
        return _binary("not_equal", self, other)

    @property
    def T(self) -> Call:
        """The axes reversed (``transpose`` without axes)."""
        return _op_call("transpose", [self], {"axes": None})

    def transpose(self, *axes: Any) -> Call:
        """``x.transpose(1, 0, 2)`` or ``x.transpose((1, 0, 2))``; no axes reverses them."""
        ax = _varargs(axes, "transpose axes")
        return _op_call("transpose", [self], {"axes": ax if ax else None})

    def reshape(self, *shape: Any) -> Call:
        """``x.reshape(n, -1)`` or ``x.reshape((n, -1))`` (Relay's special values apply)."""
        return _op_call("reshape", [self], {"newshape": _varargs(shape, "a reshape's shape")})

    def astype(self, dtype: Any) -> Call:
        """``x`` converted to ``dtype`` (numpy and torch spellings accepted)."""
        return _op_call("cast", [self], {"dtype": dtype_name(dtype)})

    def squeeze(self, axis: Any = None) -> Call:
        """Remove axes of size 1."""
        return _op_call("squeeze", [self], {"axis": axis})

    def expand_dims(self, axis: int, num_newaxis: int = 1) -> Call:
        """Insert ``num_newaxis`` axes of size 1 at ``axis``."""
        return _op_call("expand_dims", [self], {"axis": axis, "num_newaxis": num_newaxis})

    def sum(self, axis: Any = None, keepdims: bool = False) -> Call:
        """Sum over ``axis`` (None: all axes)."""
        return _reduce("sum", self, axis, keepdims)

    def mean(self, axis: Any = None, keepdims: bool = False) -> Call:
        """Mean over ``axis`` (None: all axes)."""
        return _reduce("mean", self, axis, keepdims)

    def prod(self, axis: Any = None, keepdims: bool = False) -> Call:
        """Product over ``axis`` (None: all axes)."""
        return _reduce("prod", self, axis, keepdims)

    def max(self, axis: Any = None, keepdims: bool = False) -> Call:
        """Maximum over ``axis`` (None: all axes)."""
        return _reduce("max", self, axis, keepdims)

    def min(self, axis: Any = None, keepdims: bool = False) -> Call:
        """Minimum over ``axis`` (None: all axes)."""
        return _reduce("min", self, axis, keepdims)

    def all(self, axis: Any = None, keepdims: bool = False) -> Call:
        """Logical and over ``axis``."""
        return _reduce("all", self, axis, keepdims)

    def any(self, axis: Any = None, keepdims: bool = False) -> Call:
        """Logical or over ``axis``."""
        return _reduce("any", self, axis, keepdims)

    def argmax(self, axis: Any = None, keepdims: bool = False) -> Call:
        """Index of the maximum over ``axis``."""
        return _reduce("argmax", self, axis, keepdims)

    def argmin(self, axis: Any = None, keepdims: bool = False) -> Call:
        """Index of the minimum over ``axis``."""
        return _reduce("argmin", self, axis, keepdims)

    def __hash__(self) -> int:
        return id(self)

    def __eq__(self, other: object) -> bool:
        return self is other

    def __repr__(self) -> str:
        try:
            return str(show(View.TEXT, self))  # the printer (symshape.ir.printer)
        except SymshapeError:
            return object.__repr__(self)


class Var(Expr):
    """A local variable, optionally annotated with a type."""

    __slots__ = ("name", "type_annotation")

    def __init__(self, name: str, type_annotation: Type | None = None) -> None:
        if not isinstance(name, str):
            raise SymshapeError(INVALID_ARGUMENT, f"a variable name must be a string, got {name!r}")
        if type_annotation is not None:
            check_type(type_annotation)
        self.name = name
        self.type_annotation = type_annotation
        self.span = user_span()


_new_var = object.__new__


def var(name: str, type_annotation: Type | None = None) -> Var:
    """A variable: ``ss.var("x", ss.Tensor((n, 3), "float32"))``."""
    if not isinstance(name, str):
        raise SymshapeError(INVALID_ARGUMENT, f"a variable name must be a string, got {name!r}")
    if type_annotation is not None:
        check_type(type_annotation)
    v = _new_var(Var)
    v.name = name
    v.type_annotation = type_annotation
    v.span = user_span()
    return v


class GlobalVar(Expr):
    """The name of a global function in a :class:`~symshape.ir.module.Module`."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        if not isinstance(name, str):
            raise SymshapeError(INVALID_ARGUMENT, f"a global name must be a string, got {name!r}")
        self.name = name
        self.span = user_span()

    def __hash__(self) -> int:
        return hash(("GlobalVar", self.name))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, GlobalVar) and other.name == self.name


class Constant(Expr):
    """A tensor constant, from a shape and dtype or from an array (``data``)."""

    __slots__ = ("data", "type")

    def __init__(
        self,
        shape: Sequence[DimLike] | None = None,
        dtype: Any = "float32",
        data: Any = None,
    ) -> None:
        if data is not None:
            if not (hasattr(data, "shape") and hasattr(data, "dtype")):
                raise SymshapeError(
                    INVALID_ARGUMENT,
                    f"Constant data must be an array (with shape and dtype), got {type(data).__name__}; "
                    "use ss.const for Python values",
                )
            try:
                shape = tuple(int(x) for x in data.shape)
            except (TypeError, ValueError):
                raise SymshapeError(
                    INVALID_ARGUMENT, f"Constant data has a bad shape {data.shape!r}"
                ) from None
            dtype = str(data.dtype)
        if shape is None:
            shape = ()
        dtype = dtype_name(dtype)
        shape = _items(shape, "a Constant's shape")
        dims = tuple(as_dim(d) for d in shape)
        for d in dims:
            check_nonnegative_constant(d)
        self.type: TensorType = Tensor(dims, dtype)
        self.data = data
        self.span = user_span()


def const(value: Any, dtype: Any = None) -> Constant:
    """A constant from a numpy array (or anything ``numpy.asarray`` accepts); ``dtype`` in
    symshape's, numpy's or torch's spelling."""
    try:
        import numpy as np
    except ImportError:  # pragma: no cover
        raise SymshapeError(INVALID_ARGUMENT, "ss.const needs numpy") from None
    if dtype is not None:
        dtype = dtype_name(dtype)
    if isinstance(value, Expr):
        raise SymshapeError(INVALID_ARGUMENT, "ss.const takes an array or numbers, not an expression")
    try:
        arr = np.asarray(value, dtype=dtype)
    except (ValueError, TypeError, OverflowError) as e:
        raise SymshapeError(
            INVALID_ARGUMENT, f"ss.const cannot make an array of {type(value).__name__}: {e}"
        ) from None
    if arr.dtype == np.float64 and dtype is None and not isinstance(value, np.ndarray):
        arr = arr.astype(np.float32)
    if arr.dtype == np.int64 and dtype is None and not isinstance(value, np.ndarray):
        arr = arr.astype(np.int32)
    c = Constant(data=arr)
    c.span = user_span()
    return c


@dataclass(frozen=True)
class Constructor(Callee):
    """An ADT constructor: ``Constructor("Cons", [a, TypeCall(L, [a])], L)``.

    Calling it (in a program) builds a value of ``TypeCall(belong_to, type_params)``.
    """

    name: str
    inputs: tuple[Type, ...]
    belong_to: GlobalTypeVar

    def __post_init__(self) -> None:
        check_identifier(self.name, "a constructor's name")
        object.__setattr__(self, "inputs", type_tuple(self.inputs, f"the inputs of constructor {self.name}"))
        if not isinstance(self.belong_to, GlobalTypeVar):
            raise SymshapeError(
                INVALID_ARGUMENT,
                f"constructor {self.name} must belong to a GlobalTypeVar, got {self.belong_to!r}",
            )

    def __str__(self) -> str:
        return self.name

    def __call__(self, *args: Expr) -> Call:
        return Call(self, list(args))


class Call(Expr):
    """A call of an operator, a function (value), a global function or a constructor."""

    __slots__ = ("args", "attrs", "callee", "pure_override")

    def __init__(
        self,
        callee: Any,
        args: Sequence[Expr],
        attrs: Mapping[str, Any] | None = None,
    ) -> None:
        if not isinstance(callee, (Expr, Callee)):
            raise SymshapeError(INVALID_ARGUMENT, f"cannot call {type(callee).__name__} {callee!r}")
        args = _exprs(args, "call arguments")
        self.callee = callee
        self.args: tuple[Expr, ...] = args
        self.attrs = _as_attrs(attrs)
        self.pure_override = False
        self.span = user_span()


class Tuple(Expr):
    """A tuple of expressions."""

    __slots__ = ("fields",)

    def __init__(self, fields: Sequence[Expr]) -> None:
        self.fields: tuple[Expr, ...] = _exprs(fields, "tuple fields")
        self.span = user_span()


class TupleGetItem(Expr):
    """``tup[index]``."""

    __slots__ = ("index", "tuple_value")

    def __init__(self, tuple_value: Expr, index: int) -> None:
        if not isinstance(index, int) or isinstance(index, bool):
            raise SymshapeError(
                INVALID_ARGUMENT,
                f"a tuple index must be an int, got {index!r}"
                + (" (iterating an expression is not supported)" if isinstance(index, slice) else ""),
            )
        if not isinstance(tuple_value, Expr):
            raise SymshapeError(INVALID_ARGUMENT, "TupleGetItem needs an expression")
        self.tuple_value = tuple_value
        self.index = index
        self.span = user_span()


class Let(Expr):
    """``let var = value; body``."""

    __slots__ = ("body", "value", "var")

    def __init__(self, var: Var, value: Expr, body: Expr) -> None:
        if not isinstance(var, Var):
            raise SymshapeError(INVALID_ARGUMENT, f"Let binds a Var, got {type(var).__name__} {var!r}")
        self.var = var
        self.value = _expr(value, "a let's value")
        self.body = _expr(body, "a let's body")
        self.span = user_span()


class Function(Expr):
    """``fn(params) -> ret_type { body }``.

    ``pure``: True (declared pure: an impure call inside is an error), False (impure), or None
    (inferred from the body). ``attrs`` may hold ``force_pure=True``.
    """

    __slots__ = ("attrs", "body", "params", "pure", "ret_type", "type_params")

    def __init__(
        self,
        params: Sequence[Var],
        body: Expr,
        ret_type: Type | None = None,
        type_params: Sequence[TypeVar] = (),
        pure: bool | None = None,
        attrs: Mapping[str, Any] | None = None,
    ) -> None:
        ps = _items(params, "function parameters")
        for p in ps:
            if not isinstance(p, Var):
                raise SymshapeError(INVALID_ARGUMENT, f"function parameters must be Vars, got {p!r}")
        if not isinstance(body, Expr):
            raise SymshapeError(INVALID_ARGUMENT, "a function body must be an expression")
        if ret_type is not None:
            check_type(ret_type)
        tps = _items(type_params, "type parameters")
        for tp in tps:
            if not isinstance(tp, TypeVar):
                raise SymshapeError(INVALID_ARGUMENT, f"type parameters must be TypeVars, got {tp!r}")
        if pure is not None and not isinstance(pure, bool):
            raise SymshapeError(INVALID_ARGUMENT, f"pure must be True, False or None, got {pure!r}")
        self.params: tuple[Var, ...] = ps
        self.body = body
        self.ret_type = ret_type
        self.type_params: tuple[TypeVar, ...] = tps
        self.pure = pure
        self.attrs = _as_attrs(attrs)
        self.span = user_span()


class If(Expr):
    """``if (cond) { then } else { else }``; the result is the join of the branches."""

    __slots__ = ("cond", "else_branch", "then_branch")

    def __init__(self, cond: Expr, then_branch: Expr, else_branch: Expr) -> None:
        self.cond = _expr(cond, "an if's condition")
        self.then_branch = _expr(then_branch, "an if's then branch")
        self.else_branch = _expr(else_branch, "an if's else branch")
        self.span = user_span()


class Pattern:
    """Base of match patterns."""

    __slots__ = ()


class PatternWildcard(Pattern):
    __slots__ = ()

    def __repr__(self) -> str:
        return "_"


class PatternVar(Pattern):
    __slots__ = ("var",)

    def __init__(self, var: Var) -> None:
        if not isinstance(var, Var):
            raise SymshapeError(INVALID_ARGUMENT, "PatternVar binds a Var")
        self.var = var

    def __repr__(self) -> str:
        return self.var.name


class PatternConstructor(Pattern):
    __slots__ = ("constructor", "patterns")

    def __init__(self, constructor: Constructor, patterns: Sequence[Pattern] = ()) -> None:
        if not isinstance(constructor, Constructor):
            raise SymshapeError(INVALID_ARGUMENT, "PatternConstructor needs a Constructor")
        self.constructor = constructor
        self.patterns: tuple[Pattern, ...] = _patterns(patterns)

    def __repr__(self) -> str:
        return f"{self.constructor.name}({', '.join(map(repr, self.patterns))})"


class PatternTuple(Pattern):
    __slots__ = ("patterns",)

    def __init__(self, patterns: Sequence[Pattern]) -> None:
        self.patterns: tuple[Pattern, ...] = _patterns(patterns)

    def __repr__(self) -> str:
        return f"({', '.join(map(repr, self.patterns))})"


def _patterns(ps: object) -> tuple[Pattern, ...]:
    out = _items(ps, "sub-patterns")
    for p in out:
        if not isinstance(p, Pattern):
            raise SymshapeError(INVALID_ARGUMENT, f"sub-patterns must be Patterns, got {p!r}")
    return out


class Clause:
    """``| pattern => body`` of a :class:`Match`."""

    __slots__ = ("body", "pattern")

    def __init__(self, pattern: Pattern, body: Expr) -> None:
        if not isinstance(pattern, Pattern):
            raise SymshapeError(
                INVALID_ARGUMENT, f"a clause needs a Pattern, got {type(pattern).__name__} {pattern!r}"
            )
        self.pattern = pattern
        self.body = _expr(body, "a clause's body")


class Match(Expr):
    """``match (value) { clauses }``; the result is the join of the clause bodies."""

    __slots__ = ("clauses", "complete", "value")

    def __init__(self, value: Expr, clauses: Sequence[Clause], complete: bool = True) -> None:
        self.value = _expr(value, "a match's value")
        cs = _items(clauses, "match clauses")
        for c in cs:
            if not isinstance(c, Clause):
                raise SymshapeError(INVALID_ARGUMENT, f"match clauses must be Clauses, got {c!r}")
        self.clauses: tuple[Clause, ...] = cs
        self.complete = bool(complete)
        self.span = user_span()


class MatchCast(Expr):
    """Relax ``match_cast``: bind ``var`` to ``value`` cast to ``type``; new symbols in ``type``
    are bound from the value's shape, known ones are checked."""

    __slots__ = ("body", "type", "value", "var")

    def __init__(self, var: Var, value: Expr, type: Type, body: Expr) -> None:
        if not isinstance(var, Var):
            raise SymshapeError(
                INVALID_ARGUMENT, f"MatchCast binds a Var, got {var.__class__.__name__} {var!r}"
            )
        check_type(type)
        self.var = var
        self.value = _expr(value, "a match_cast's value")
        self.type = type
        self.body = _expr(body, "a match_cast's body")
        self.span = user_span()


class Dataflow(Expr):
    """A pure region: ``bindings`` evaluated in order, then ``body``; impure calls are errors."""

    __slots__ = ("bindings", "body")

    def __init__(self, bindings: Sequence[tuple[Var, Expr]], body: Expr) -> None:
        bs = []
        for b in _items(bindings, "Dataflow bindings"):
            if not (
                isinstance(b, tuple) and len(b) == 2 and isinstance(b[0], Var) and isinstance(b[1], Expr)
            ):
                raise SymshapeError(INVALID_ARGUMENT, f"Dataflow bindings are (Var, Expr) pairs, got {b!r}")
            bs.append(b)
        self.bindings: tuple[tuple[Var, Expr], ...] = tuple(bs)
        self.body = _expr(body, "a dataflow block's body")
        self.span = user_span()


def call_pure(callee: Any, *args: Expr) -> Call:
    """A call that is declared pure even if the callee is impure (Relax ``call_pure_packed``)."""
    c = Call(callee, list(args))
    c.pure_override = True
    c.span = user_span()
    return c


def operands(e: Expr) -> list[Expr]:
    """The sub-expressions that are evaluated, in order (binding variables excluded)."""
    match e:
        case Call():
            return ([e.callee] if isinstance(e.callee, Expr) else []) + list(e.args)
        case Tuple():
            return list(e.fields)
        case TupleGetItem():
            return [e.tuple_value]
        case Let():
            return [e.value, e.body]
        case Function():
            return [e.body]
        case If():
            return [e.cond, e.then_branch, e.else_branch]
        case Match():
            return [e.value] + [c.body for c in e.clauses]
        case MatchCast():
            return [e.value, e.body]
        case Dataflow():
            return [x for _, x in e.bindings] + [e.body]
        case _:
            return []


def children(e: Expr) -> Iterator[Expr]:
    """The direct sub-expressions, in evaluation order."""
    match e:
        case Call():
            if isinstance(e.callee, Expr):
                yield e.callee
            yield from e.args
        case Tuple():
            yield from e.fields
        case TupleGetItem():
            yield e.tuple_value
        case Let():
            yield e.var
            yield e.value
            yield e.body
        case Function():
            yield from e.params
            yield e.body
        case If():
            yield e.cond
            yield e.then_branch
            yield e.else_branch
        case Match():
            yield e.value
            for c in e.clauses:
                yield c.body
        case MatchCast():
            yield e.var
            yield e.value
            yield e.body
        case Dataflow():
            for v, x in e.bindings:
                yield v
                yield x
            yield e.body
        case _:
            return


# ----------------------------------------------------------------------------------------------
# the Pythonic front-end: operators, indexing and methods build operator calls. The operators
# live in the registry of symshape.ir.op, which imports this module: it hands its lookup over
# with set_operator_lookup (so this module imports nothing above it).

_operator_lookup: Callable[[str], Callable[..., Call]] | None = None


def set_operator_lookup(lookup: Callable[[str], Callable[..., Call]]) -> None:
    """Install the operator lookup the front-end uses (done once by :mod:`symshape.ir.op`)."""
    global _operator_lookup
    _operator_lookup = lookup


def _op_call(name: str, args: Sequence[Expr], attrs: Mapping[str, Any] | None = None) -> Call:
    if _operator_lookup is None:  # pragma: no cover - symshape.ir.op is imported by the package
        raise SymshapeError(INVALID_ARGUMENT, "the operators are not registered: import symshape")
    return _operator_lookup(name)(*args, **(attrs or {}))


# operators whose result has the dtype of their first argument (followed when a scalar operand
# needs a dtype, and to tell a tensor from a tuple)
_SAME_DTYPE = frozenset(
    """add subtract multiply divide power maximum minimum floor_divide mod nn.relu sigmoid tanh exp
    log sqrt negative abs floor ceil round sign erf rsqrt copy trunc sin cos log2 log10
    zeros_like ones_like nn.leaky_relu clip flatten nn.batch_flatten reshape reshape_like
    concatenate stack transpose squeeze expand_dims broadcast_to nn.pad tile expand sum mean prod
    max min take strided_slice nn.dense matmul nn.batch_matmul nn.conv1d nn.conv2d nn.conv3d
    nn.max_pool1d nn.max_pool2d nn.max_pool3d nn.avg_pool1d nn.avg_pool2d nn.avg_pool3d
    nn.global_avg_pool2d nn.global_max_pool2d nn.adaptive_avg_pool2d nn.adaptive_max_pool2d
    nn.softmax nn.log_softmax nn.bias_add nn.layer_norm unique boolean_mask""".split()
)
_BOOL_RESULT = frozenset(
    "equal not_equal less less_equal greater greater_equal logical_and logical_or logical_not "
    "isnan isinf isfinite all any".split()
)
_OTHER_TENSOR = frozenset(
    "cast cast_like where argmax argmin shape_of int_tensor arange constant_of_shape nonzero zeros "
    "ones full".split()
)
_TUPLE_OPS = frozenset(("split", "nn.batch_norm"))


def _op_name(e: Call) -> str | None:
    name = getattr(e.callee, "name", None) if isinstance(e.callee, Callee) else None
    return name if isinstance(name, str) and not isinstance(e.callee, Constructor) else None


def _annotated_type(e: Expr) -> Type | None:
    """The type ``e`` is known to have when it is built: a variable's annotation, a constant's
    type, a field of an annotated tuple; None otherwise (no inference is run)."""
    if isinstance(e, Var):
        return e.type_annotation
    if isinstance(e, Constant):
        return e.type
    if isinstance(e, TupleGetItem):
        t = _annotated_type(e.tuple_value) if isinstance(e.tuple_value, (Var, Constant)) else None
        if isinstance(t, TupleType) and 0 <= e.index < len(t.fields):
            return t.fields[e.index]
    return None


def static_kind(e: Expr) -> str | None:
    """``"tensor"``, ``"tuple"`` or None (not known when ``e`` is built): from an annotation, a
    constant, a :class:`Tuple`, or the operator a call applies (``split`` and ``batch_norm``
    give tuples, the other built-in operators tensors; a custom operator is not known).

    >>> import symshape as ss
    >>> static_kind(ss.var("x")), static_kind(ss.ops.relu(ss.var("x")))
    (None, 'tensor')
    """
    t = _annotated_type(e)
    if isinstance(t, TensorType):
        return "tensor"
    if isinstance(t, TupleType):
        return "tuple"
    if isinstance(e, Tuple):
        return "tuple"
    if isinstance(e, Call):
        name = _op_name(e)
        if name in _TUPLE_OPS:
            return "tuple"
        if name in _SAME_DTYPE or name in _BOOL_RESULT or name in _OTHER_TENSOR:
            return "tensor"
    if isinstance(e, TupleGetItem) and isinstance(e.tuple_value, Call):
        if _op_name(e.tuple_value) in _TUPLE_OPS:
            return "tensor"
    return None


def static_arity(e: Expr) -> int | None:
    """The number of fields of a tuple-valued ``e`` when it is known at build time: an annotated
    tuple, a :class:`Tuple`, ``split`` with a literal number of sections (or literal indices),
    ``batch_norm`` (3). None otherwise."""
    t = _annotated_type(e)
    if isinstance(t, TupleType):
        return len(t.fields)
    if isinstance(e, Tuple):
        return len(e.fields)
    if isinstance(e, Call):
        name = _op_name(e)
        if name == "nn.batch_norm":
            return 3
        if name == "split":
            ios = e.attrs.get("indices_or_sections")
            if isinstance(ios, int) and not isinstance(ios, bool):
                return ios
            if isinstance(ios, tuple):
                return len(ios) + 1
    return None


def static_dtype(e: Expr) -> str | None:
    """The dtype ``e`` is known to have when it is built (following the first argument of
    dtype-preserving operators), or None.

    >>> import symshape as ss
    >>> x = ss.var("x", ss.Tensor((2,), "float16"))
    >>> static_dtype(ss.ops.relu(ss.ops.add(x, x))), static_dtype(ss.ops.less(x, x))
    ('float16', 'bool')
    """
    cur: Expr | None = e
    for _ in range(100_000):  # a chain of calls is followed iteratively
        if cur is None:
            return None
        t = _annotated_type(cur)
        if t is not None:
            return t.dtype if isinstance(t, TensorType) and isinstance(t.dtype, str) else None
        if isinstance(cur, TupleGetItem):
            cur = cur.tuple_value
            continue
        if isinstance(cur, Tuple):
            cur = cur.fields[0] if cur.fields else None
            continue
        if not isinstance(cur, Call):
            return None
        name = _op_name(cur)
        if name in _BOOL_RESULT:
            return "bool"
        if name == "cast":
            v = cur.attrs.get("dtype")
            return v if isinstance(v, str) else None
        if name in ("argmax", "argmin"):
            return "int32"
        if name in ("shape_of", "nonzero"):
            v = cur.attrs.get("dtype", "int64")
            return v if isinstance(v, str) else "int64"
        if name == "cast_like" and len(cur.args) == 2:
            cur = cur.args[1]
            continue
        if name in ("nn.dense", "nn.conv1d", "nn.conv2d", "nn.conv3d", "nn.batch_matmul"):
            v = cur.attrs.get("out_dtype")
            if isinstance(v, str) and v:
                return v
        if name in _SAME_DTYPE or name in _TUPLE_OPS:
            cur = cur.args[0] if cur.args else None
            continue
        return None
    return None  # pragma: no cover


def _is_scalar(v: object) -> bool:
    """A Python (or numpy) number: bool, int or float."""
    if isinstance(v, (bool, int, float)):
        return True
    mod = (getattr(type(v), "__module__", "") or "").split(".")[0]
    return mod == "numpy" and getattr(v, "shape", None) == () and hasattr(v, "dtype")


def _scalar_like(v: Any, other: Expr) -> Expr:
    """The number ``v`` as a 0-d constant of ``other``'s dtype: a :class:`Constant` when that
    dtype is known at build time (a float for an int or bool tensor keeps its own float dtype,
    as numpy would promote), else ``cast_like(v, other)``."""
    import numpy as np

    dt = static_dtype(other)
    is_float = isinstance(v, float) or (not isinstance(v, (bool, int)) and np.asarray(v).dtype.kind == "f")
    if dt is not None and not (is_float and (dt == "bool" or dt.startswith(("int", "uint")))):
        try:
            return const(np.array(v, dtype=dt))
        except (OverflowError, ValueError, TypeError):
            pass
    c = const(v)
    if dt is not None:
        return c
    return _op_call("cast_like", [c, other])


def _operand(v: Any, other: Expr, opname: str) -> Expr:
    if isinstance(v, Expr):
        return v
    if _is_scalar(v):
        return _scalar_like(v, other)
    if hasattr(v, "shape") and hasattr(v, "dtype"):  # a numpy array
        return const(v)
    from symshape.encoding.dims import Dim

    if isinstance(v, Dim):
        raise SymshapeError(
            INVALID_ARGUMENT,
            f"{opname}: a dimension ({v}) is not a tensor; make it one with "
            "ss.ops.int_tensor(d) (its value is the dimension)",
        )
    raise SymshapeError(
        INVALID_ARGUMENT, f"{opname}: cannot combine an expression with {type(v).__name__} {v!r}"
    )


def _binary(name: str, a: Any, b: Any) -> Call:
    if isinstance(a, Expr):
        ea = a
        eb = _operand(b, a, name)
    else:
        assert isinstance(b, Expr)
        eb = b
        ea = _operand(a, b, name)
    return _op_call(name, [ea, eb])


def _reduce(name: str, x: Expr, axis: Any, keepdims: bool) -> Call:
    if isinstance(axis, list):
        axis = tuple(axis)
    return _op_call(name, [x], {"axis": axis, "keepdims": keepdims})


def _varargs(xs: tuple[Any, ...], what: str) -> tuple[Any, ...]:
    """``f(1, 2)`` and ``f((1, 2))`` alike (numpy's ``reshape``/``transpose`` convention)."""
    if len(xs) == 1 and isinstance(xs[0], (tuple, list)):
        return tuple(xs[0])
    if len(xs) == 1 and xs[0] is None:
        return ()
    return tuple(xs)


def _is_int_index(v: object) -> bool:
    if isinstance(v, bool) or isinstance(v, Expr):
        return False
    if isinstance(v, int):
        return True
    mod = (getattr(type(v), "__module__", "") or "").split(".")[0]
    return mod == "numpy" and hasattr(v, "__index__")


def _index_tensor(x: Expr, index: Any) -> Expr:
    """numpy indexing of a tensor (see :mod:`symshape.ir.indexing`)."""
    items = index if isinstance(index, tuple) else (index,)
    out: Expr = x
    for step in index_plan(index, lambda v: isinstance(v, Expr)):
        match step:
            case SliceStep(begin, end, strides, axes):
                out = _op_call(
                    "strided_slice", [out], {"begin": begin, "end": end, "strides": strides, "axes": axes}
                )
            case SqueezeStep(axes):
                out = _op_call("squeeze", [out], {"axis": axes})
            case ExpandStep(axis):
                out = _op_call("expand_dims", [out], {"axis": axis, "num_newaxis": 1})
            case TakeStep(item, axis):
                idx = items[item]
                if static_dtype(idx) == "bool":
                    if axis != 0:
                        raise SymshapeError(
                            INVALID_ARGUMENT,
                            "a boolean mask index is supported on the leading axes only "
                            "(x[mask]); use ss.ops.boolean_mask",
                        )
                    out = _op_call("boolean_mask", [out, idx], {"size": None})
                else:
                    out = _op_call("take", [out, idx], {"axis": axis})
            case _:  # pragma: no cover - the plan has only these steps
                raise TypeError(step)
    return out
