"""The operator registry.

An :class:`Op` names a relation (its typing rule), the number of inputs, its purity, the
attributes it takes (``attr_types``: name -> kind, see :data:`ATTR_KINDS`), an optional attribute
checker (run when a call is built, so a bad literal attribute raises a
:class:`~symshape.errors.SymshapeError` at the call site) and an optional ``normalize`` hook
(seed 003) applied by :func:`symshape.normalize` after inference.

An operator that declares its attributes rejects, when a call is built, an attribute it does not
know (``bad-attribute``, with a "did you mean" hint for a near miss: ``sum(x, axes=1)``) and a
value of the wrong kind (``layer_norm(..., epsilon="a")``); ``None`` always stands for "not
given". An operator registered without a declaration (``attr_types=None``, the default of
:func:`register_op`) accepts any attribute.

Building a call is on the hot path of every program built in Python, so the checked attributes
are remembered per operator, keyed on the exact (type-tagged) attribute values: the declaration
check and the checker are pure functions of the attributes and the number of arguments, so they
run once per distinct attributes; attributes they reject are not remembered, and raise at every
call.

>>> import symshape as ss
>>> ss.Op.get("power").relation
'broadcast'
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from symshape.encoding.dims import Dim
from symshape.encoding.dtypes import dtype_name
from symshape.encoding.types import Attrs, Type
from symshape.errors import BAD_ATTRIBUTE, INVALID_ARGUMENT, UNKNOWN_RELATION, SymshapeError
from symshape.ir.expr import _EMPTY_ATTRS, Call, Callee, Expr, Tuple, Var, set_operator_lookup
from symshape.relations.base import RelationFn, get_relation, register_relation
from symshape.source import SPAN_SCOPE_UNSET, span_scope, span_scope_get, user_span

__all__ = [
    "Op",
    "OPS",
    "PreparedCall",
    "register_op",
    "NormalizeFn",
    "AttrCheckFn",
    "ATTR_KINDS",
    "check_declared",
]

NormalizeFn = Callable[["Call", Sequence[Type]], "Expr | None"]
AttrCheckFn = Callable[[Attrs, int], Mapping[str, Any] | None]


def _int(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _seq(v: object, item: Callable[[object], bool]) -> bool:
    return isinstance(v, tuple) and all(item(x) for x in v)


def _dimlike(v: object) -> bool:
    return _int(v) or isinstance(v, Dim)


#: The kinds of attribute values an operator can declare: kind -> (test, description). ``None``
#: passes every kind (it means "not given"); the operator's checker validates the values further.
ATTR_KINDS: dict[str, tuple[Callable[[object], bool], str]] = {
    "int": (_int, "an int"),
    "float": (lambda v: _int(v) or isinstance(v, float), "a number"),
    "bool": (lambda v: isinstance(v, bool) or (_int(v) and v in (0, 1)), "a bool"),
    "str": (lambda v: isinstance(v, str), "a string"),
    "dtype": (lambda v: isinstance(v, str), "a dtype string"),
    "ints": (lambda v: _int(v) or _seq(v, _int), "an int or a sequence of ints"),
    "shape": (lambda v: _dimlike(v) or _seq(v, _dimlike), "a sequence of dimensions"),
    "indices": (
        lambda v: _dimlike(v) or _seq(v, lambda x: x is None or _dimlike(x)),
        "a sequence of ints, dimensions or None",
    ),
    "sizes": (
        lambda v: _int(v) or _seq(v, lambda x: x is None or _int(x)),
        "an int or a sequence of ints or None",
    ),
    "pairs": (
        lambda v: _int(v) or _seq(v, lambda p: _seq(p, _int)),
        "an int or a sequence of (before, after) pairs",
    ),
    "any": (lambda v: True, "any value"),
}


def check_declared(op: str, attrs: Attrs, declared: Mapping[str, str]) -> None:
    """Raise ``bad-attribute`` for an attribute ``op`` does not declare (with a "did you mean"
    hint) or a value of the wrong kind.

    >>> from symshape.encoding.types import Attrs
    >>> try:
    ...     check_declared("sum", Attrs({"axes": 1}), {"axis": "ints", "keepdims": "bool"})
    ... except SymshapeError as e:
    ...     print(e.message)
    sum: unknown attribute axes; did you mean `axis`? (sum takes axis, keepdims)
    """
    for name, v in attrs.items():
        kind = declared.get(name)
        if kind is None:
            import difflib

            known = sorted(declared)
            takes = f"{op} takes {', '.join(known)}" if known else f"{op} takes no attributes"
            near = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
            hint = f"; did you mean `{near[0]}`?" if near else ""
            raise SymshapeError(BAD_ATTRIBUTE, f"{op}: unknown attribute {name}{hint} ({takes})")
        if v is None:
            continue
        test, what = ATTR_KINDS[kind]
        if not test(v):
            raise SymshapeError(BAD_ATTRIBUTE, f"{op}: attribute {name} must be {what}, got {v!r}")


class _Registry(dict[str, "Op"]):
    """The operators by name; ``OPS[name]`` of an unknown name raises ``unknown-relation`` (the
    wrappers of :mod:`symshape.ops` look their operator up at each call, by subscript)."""

    __slots__ = ()

    def __missing__(self, name: str) -> Op:
        raise SymshapeError(UNKNOWN_RELATION, f"no operator named {name!r}")


OPS: dict[str, Op] = _Registry()

_new_call = object.__new__
_scope_get, _UNSCOPED = span_scope_get, SPAN_SCOPE_UNSET


def _convert(a: Any) -> Any:
    """A list or tuple of expressions becomes a :class:`~symshape.ir.expr.Tuple`."""
    if isinstance(a, (list, tuple)) and all(isinstance(x, Expr) for x in a):
        return Tuple(list(a))
    return a


_FLAT = frozenset({int, str, bool, type(None), Dim})  # told apart by type and ==
_SEQ = object()  # marks a sequence in an attribute key
_SEQ_INTS = object()  # marks a sequence of ints (a tuple of them follows)
_INTS = frozenset({int})
_FLAT_OR_FLOAT = _FLAT | {float}
_CACHE_MAX = 512  # attribute keys remembered per operator


def _seq_key(seq: list[Any] | tuple[Any, ...]) -> tuple[object, ...] | None:
    """The key of a list/tuple attribute value (see :func:`_attrs_key`), or None."""
    if _INTS.issuperset(map(type, seq)):  # (the common case, ints: one key of its own form)
        return (_SEQ_INTS, tuple(seq))
    out: list[object] = [_SEQ]
    for x in seq:
        t = type(x)
        if t in _FLAT:
            out.append(t)
            out.append(x)
        elif t is float:
            if x != x:  # nan
                return None
            out.append(t)
            out.append(x if x else str(x))  # 0.0 == -0.0
        elif t is tuple or t is list:
            sub = _seq_key(x)
            if sub is None:
                return None
            out.append(sub)
        else:
            return None
    return tuple(out)


def _immutable(v: object) -> bool:
    """A value of a type :func:`_attrs_key` keys, immutable all the way down (no list inside)."""
    t = type(v)
    if t is tuple:  # (flat, as a rule: its items' types checked at once)
        return _FLAT_OR_FLOAT.issuperset(map(type, v)) or all(map(_immutable, v))  # type: ignore[call-overload]
    return t in _FLAT or t is float


def _attrs_key(nargs: int, attrs: dict[str, Any]) -> tuple[object, ...] | None:
    """A key under which the checked attributes of a call can be remembered, or None.

    Values are tagged with their exact type, so only values that freeze to the same attributes
    share a key: ``1``, ``True``, ``1.0``, ``0.0``, ``-0.0`` and a constant ``Dim`` all differ.
    Ints, strings, bools, None, floats (but nan), dimensions (canonical, compared structurally)
    and lists/tuples of those are cacheable; anything else is checked every time.
    """
    out: list[object] = [nargs]
    for k, v in attrs.items():
        t = type(v)
        if t in _FLAT:
            out.append(k)
            out.append(t)
            out.append(v)
        elif t is float:
            if v != v:
                return None
            out.append(k)
            out.append(t)
            out.append(v if v else str(v))
        elif t is tuple or t is list:
            sub = _seq_key(v)
            if sub is None:
                return None
            out.append(k)
            out.append(sub)
        else:
            return None
    return tuple(out)


def _make_call(depth: int) -> Callable[..., Call]:
    """``Op.__call__``, whose span is that of :func:`~symshape.source.user_span` ``(depth)``: 2
    when the caller may be user code, 3 when it is a function of this package (the wrappers)."""

    def call(self: Op, *args: Any, **attrs: Any) -> Call:
        for x in args:
            if not isinstance(x, Expr):
                args = self._converted(args, attrs)
                break
        nargs = len(args)
        if nargs != self.num_inputs and self.num_inputs >= 0:
            raise self._arity_error(nargs)
        a: Attrs | None
        if attrs:
            # the names, then the values' ids (names are strings, ids ints: never confused);
            # one or two attributes are unpacked (cheaper than the general form, the same key)
            n = len(attrs)
            if n == 1:
                ((k, v),) = attrs.items()
                idk: tuple[object, ...] = (nargs, k, id(v))
            elif n == 2:
                (k, v), (k2, v2) = attrs.items()
                idk = (nargs, k, k2, id(v), id(v2))
            else:
                idk = (nargs, *attrs, *map(id, attrs.values()))
            try:
                a = self._by_id[idk][1]
            except KeyError:
                a = self._attrs_by_id(attrs, nargs, idk)
        elif self._check_attrs is None:
            a = _EMPTY_ATTRS  # nothing to check: no attribute is ever unknown or mistyped
        else:
            a = self._attrs_cache.get(nargs)
            if a is None:
                a = self._attrs(attrs, nargs, nargs)
        c = _new_call(Call)
        c.callee = self
        c.args = args
        c.attrs = a
        c.pure_override = False
        # user_span(depth), with the span scope a front-end's per-node loop entered read here
        # (unentered, the variable holds its default: user_span looks the caller up)
        span = _scope_get()
        c.span = user_span(depth) if span is _UNSCOPED else span
        return c

    return call


class Op(Callee):
    """An operator: ``op(*args, **attrs)`` builds a :class:`~symshape.ir.expr.Call`."""

    __slots__ = (
        "name",
        "relation",
        "num_inputs",
        "pure",
        "normalize",
        "_check_attrs",
        "_attr_types",
        "doc",
        "_attrs_cache",
        "_by_id",
    )

    def __init__(
        self,
        name: str,
        relation: str,
        num_inputs: int,
        pure: bool = True,
        normalize: NormalizeFn | None = None,
        check_attrs: AttrCheckFn | None = None,
        doc: str = "",
        attr_types: Mapping[str, str] | None = None,
    ) -> None:
        self.name = name
        self.relation = relation
        self.num_inputs = num_inputs
        self.pure = pure
        self.normalize = normalize
        self._attrs_cache: dict[object, Attrs] = {}
        # checked attributes by the identity of immutable values (the values kept with them, so
        # their ids are not reused): a program calls an operator with the very same objects again
        self._by_id: dict[tuple[object, ...], tuple[tuple[object, ...], Attrs]] = {}
        self._check_attrs = check_attrs
        self._attr_types = _declaration(name, attr_types)
        self.doc = doc

    @property
    def check_attrs(self) -> AttrCheckFn | None:
        """The attribute checker (None: any attributes)."""
        return self._check_attrs

    @check_attrs.setter
    def check_attrs(self, fn: AttrCheckFn | None) -> None:
        self._check_attrs = fn
        self._attrs_cache = {}
        self._by_id = {}

    @property
    def attr_types(self) -> Mapping[str, str] | None:
        """The declared attributes, name -> kind (None: any attribute is accepted)."""
        return self._attr_types

    @attr_types.setter
    def attr_types(self, decl: Mapping[str, str] | None) -> None:
        self._attr_types = _declaration(self.name, decl)
        self._attrs_cache = {}
        self._by_id = {}

    def _attrs(self, attrs: dict[str, Any], nargs: int, key: object) -> Attrs:
        """The checked (and fixed) attributes of a call with ``nargs`` arguments, remembered
        under ``key`` unless it is None (see :func:`_attrs_key`; ``nargs`` for no attributes).

        A check that passed passes again for the same values (checkers are pure), and one that
        raised is run (and raises) again, as nothing is remembered for it.
        """
        if self._attr_types is not None:
            for name, kind in self._attr_types.items():
                v = attrs.get(name)
                if kind == "dtype" and v is not None and not isinstance(v, str):
                    try:
                        attrs = {**attrs, name: dtype_name(v)}  # np.float32, torch.float32
                    except SymshapeError:
                        pass  # not a dtype: check_declared says so (bad-attribute)
        a = Attrs(attrs) if attrs else _EMPTY_ATTRS
        if self._attr_types is not None:
            check_declared(self.name, a, self._attr_types)
        check = self._check_attrs
        if check is not None:
            fixed = check(a, nargs)
            if fixed is not None:
                a = Attrs(fixed)
        if key is not None:
            cache = self._attrs_cache
            if len(cache) >= _CACHE_MAX:
                cache.clear()
            cache[key] = a
        return a

    def _converted(self, args: tuple[Any, ...], attrs: dict[str, Any]) -> tuple[Expr, ...]:
        """``args`` with each list or tuple of expressions made a :class:`Tuple`; a call with
        another argument that is not an expression is an error, raised after those of the
        number of arguments and of the attributes (the call checks them again, in that order)."""
        conv = tuple(map(_convert, args))
        for x in conv:
            if not isinstance(x, Expr):
                nargs = len(conv)
                if nargs != self.num_inputs and self.num_inputs >= 0:
                    raise self._arity_error(nargs)
                if attrs or self._check_attrs is not None:
                    self._attrs(attrs, nargs, None)  # raises for bad attributes
                raise SymshapeError(
                    INVALID_ARGUMENT, f"call arguments must be expressions, got {type(x).__name__}"
                )
        return conv

    def _arity_error(self, nargs: int) -> SymshapeError:
        return SymshapeError(INVALID_ARGUMENT, f"{self.name} takes {self.num_inputs} inputs, got {nargs}")

    def _attrs_by_id(self, attrs: dict[str, Any], nargs: int, idk: tuple[object, ...]) -> Attrs:
        """The checked attributes of a call whose identity key ``idk`` (see :func:`_make_call`)
        is not remembered: by their value key, else checked; remembered under ``idk`` when every
        value is immutable."""
        key: object = _attrs_key(nargs, attrs)
        a = None if key is None else self._attrs_cache.get(key)
        if a is None:
            a = self._attrs(attrs, nargs, key)
        if key is not None and all(map(_immutable, attrs.values())):
            if len(self._by_id) >= _CACHE_MAX:
                self._by_id.clear()
            self._by_id[idk] = (tuple(attrs.values()), a)
        return a

    __call__ = _make_call(2)

    #: ``op.call(*args, **attrs)`` is ``op(*args, **attrs)`` through a method (a method call is
    #: cheaper than calling an instance)
    call = __call__

    #: ``op.call`` for the wrappers of :mod:`symshape.ops` (and other code of this package) only:
    #: the span is looked up from the wrapper's caller on, the wrapper's own frame is not read
    wrapper_call = _make_call(3)

    @staticmethod
    def get(name: str) -> Op:
        """The registered operator ``name``."""
        return OPS[name]

    def __repr__(self) -> str:
        return f"Op({self.name})"


set_operator_lookup(Op.get)  # the operators and methods of expressions build calls with it


class PreparedCall:
    """Calls of one operator with fixed attributes, checked once: ``p.build(*args)`` is
    ``op.wrapper_call(*args, **attrs)`` (the same callee, arguments, attributes and span) without
    the per-call work on the attributes. For a front-end that builds many calls of the same
    attributes (an ONNX model's ``Unsqueeze`` nodes); ``nargs`` is the number of arguments the
    attributes are checked for. A bad attribute raises here, as the call would; arguments that
    are not expressions, or another number of them, take the call's own path (and its errors).

    :meth:`of` prepares the call a wrapper of :mod:`symshape.ops` makes (its defaults included)."""

    __slots__ = ("op", "nargs", "attrs", "_plain")

    def __init__(self, op: Op, nargs: int, **attrs: Any) -> None:
        self._prepare(functools.partial(op.wrapper_call, **attrs), nargs)

    @classmethod
    def of(cls, wrapper: Callable[..., Call], nargs: int, **kwargs: Any) -> PreparedCall:
        """The calls ``wrapper(*args, **kwargs)`` makes, for ``nargs`` expressions that the
        wrapper passes on as the call's arguments, in order (else ``ValueError``)."""
        p: PreparedCall = object.__new__(cls)
        p._prepare(functools.partial(wrapper, **kwargs), nargs)
        return p

    def _prepare(self, plain: Callable[..., Call], nargs: int) -> None:
        probes = _probes(nargs)
        if _scope_get() is _UNSCOPED:
            with span_scope(None):  # (a probe call: its span is not looked up)
                probe = plain(*probes)
        else:  # (a scope's span is at hand: the probe call takes it, and is dropped)
            probe = plain(*probes)
        if not isinstance(probe, Call) or not isinstance(probe.callee, Op) or list(probe.args) != probes:
            raise ValueError(f"{plain} does not call an operator of its {nargs} arguments")
        self.op, self.nargs, self.attrs, self._plain = probe.callee, nargs, probe.attrs, plain

    def build(self, *args: Any) -> Call:
        if len(args) != self.nargs:
            return self._plain(*args)
        for x in args:
            if not isinstance(x, Expr):
                return self._plain(*args)
        c = _new_call(Call)
        c.callee = self.op
        c.args = args
        c.attrs = self.attrs
        c.pure_override = False
        span = _scope_get()
        c.span = user_span(2) if span is _UNSCOPED else span
        return c


def _probes(n: int) -> list[Var]:
    """``n`` variables that stand for the arguments of a probe call (see ``PreparedCall``): made
    once (the probe call is dropped; they are its only arguments)."""
    while len(_PROBE_VARS) < n:
        with span_scope(None):
            _PROBE_VARS.append(Var(f"probe{len(_PROBE_VARS)}"))
    return _PROBE_VARS[:n]


_PROBE_VARS: list[Var] = []


def register_op(
    name: str,
    relation: str | RelationFn,
    num_inputs: int,
    pure: bool = True,
    normalize: NormalizeFn | None = None,
    check_attrs: AttrCheckFn | None = None,
    doc: str = "",
    attr_types: Mapping[str, str] | None = None,
) -> Op:
    """Register an operator typed by ``relation`` (a registered relation name, or a Python
    relation function, which is then registered under the operator's name).

    ``num_inputs`` is the number of arguments (``-1``: any number). ``attr_types`` declares the
    attributes the operator takes (name -> a kind of :data:`ATTR_KINDS`); a call with another
    attribute, or a value of the wrong kind, raises ``bad-attribute``. Without it (None) any
    attribute is accepted.

    >>> import symshape as ss
    >>> op = register_op("doc.scale", "unary", 1, attr_types={"factor": "float"})
    >>> op(ss.var("x"), factor=2.0).attrs["factor"]
    2.0
    >>> try:
    ...     op(ss.var("x"), factr=2.0)
    ... except ss.SymshapeError as e:
    ...     print(e.code)
    bad-attribute
    >>> del OPS["doc.scale"]
    """
    if not isinstance(name, str) or not name:
        raise SymshapeError(INVALID_ARGUMENT, f"an operator name must be a string, got {name!r}")
    if callable(relation):
        register_relation(name, relation)
        rel_name = name
    elif isinstance(relation, str):
        get_relation(relation)
        rel_name = relation
    else:
        raise SymshapeError(INVALID_ARGUMENT, f"relation must be a name or a function, got {relation!r}")
    if not isinstance(num_inputs, int) or isinstance(num_inputs, bool) or num_inputs < -1:
        raise SymshapeError(INVALID_ARGUMENT, f"num_inputs must be an int >= -1, got {num_inputs!r}")
    op = Op(name, rel_name, num_inputs, bool(pure), normalize, check_attrs, doc, attr_types)
    OPS[name] = op
    return op


def _declaration(op: str, decl: Mapping[str, str] | None) -> Mapping[str, str] | None:
    """A validated copy of an attribute declaration."""
    if decl is None:
        return None
    if not isinstance(decl, Mapping):
        raise SymshapeError(INVALID_ARGUMENT, f"{op}: attr_types must be a mapping, got {decl!r}")
    out: dict[str, str] = {}
    for k, v in decl.items():
        if not isinstance(k, str) or not isinstance(v, str) or v not in ATTR_KINDS:
            raise SymshapeError(
                INVALID_ARGUMENT,
                f"{op}: attr_types maps names to one of {', '.join(ATTR_KINDS)}; got {k!r}: {v!r}",
            )
        out[k] = v
    return out
