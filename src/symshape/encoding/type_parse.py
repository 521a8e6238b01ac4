"""Reading types: :func:`parse_type` reads the printed form that
:func:`~symshape.encoding.composite_types.type_str` writes.

A recursive-descent parser whose recursion is a stack of generators (a nested type asks for its
parts by yielding), so any depth parses without Python recursion."""

from __future__ import annotations

import ast
import re
from collections.abc import Generator, Mapping
from typing import cast

from symshape.encoding.arguments import check_parse_input
from symshape.encoding.attrs import Attrs
from symshape.encoding.composite_types import (
    _TYPE_CLASSES,
    FuncType,
    TupleType,
    Type,
    TypeCall,
    TypeRelation,
)
from symshape.encoding.dim_parse import parse_dim
from symshape.encoding.dims import Dim
from symshape.encoding.leaf_types import (
    DTYPES,
    DType,
    GlobalTypeVar,
    IncompleteType,
    ObjectType,
    Shape,
    ShapeType,
    TensorType,
    TypeVar,
)
from symshape.encoding.values import (
    Range,
    Value,
)
from symshape.errors import (
    BAD_DTYPE,
    PARSE_ERROR,
    SymshapeError,
)

__all__ = [
    "MAX_TYPE_TEXT",
    "parse_type",
]


_IDENT = re.compile(r"[A-Za-z_][A-Za-z_0-9]*")
_HOLE = re.compile(r"\?t(\d+)")
_WS = re.compile(r"\s+")

MAX_TYPE_TEXT = 10_000_000
"""The longest text :func:`parse_type` reads."""

_Sub = Generator[None, Type, Type]


class _Parser:
    def __init__(self, text: str, env: Mapping[str, object]) -> None:
        self.s = text
        self.i = 0
        self.dim_env: dict[str, Dim] = {k: v for k, v in env.items() if isinstance(v, Dim)}
        self.type_env: dict[str, object] = {
            k: v for k, v in env.items() if not isinstance(v, Dim)
        }
        self.holes: dict[int, IncompleteType] = {}
        self.scopes: list[dict[str, TypeVar]] = []

    def err(self, why: str) -> SymshapeError:
        shown = self.s if len(self.s) <= 120 else self.s[:117] + "..."
        return SymshapeError(PARSE_ERROR, f"cannot parse type {shown!r} at {self.i}: {why}")

    def ws(self) -> None:
        m = _WS.match(self.s, self.i)
        if m is not None:
            self.i = m.end()

    def peek(self, tok: str) -> bool:
        self.ws()
        return self.s.startswith(tok, self.i)

    def eat(self, tok: str) -> bool:
        if self.peek(tok):
            self.i += len(tok)
            return True
        return False

    def expect(self, tok: str) -> None:
        if not self.eat(tok):
            raise self.err(f"expected {tok!r}")

    def ident(self) -> str | None:
        self.ws()
        m = _IDENT.match(self.s, self.i)
        if not m:
            return None
        self.i = m.end()
        return m.group(0)

    def peek_ident(self) -> str | None:
        self.ws()
        m = _IDENT.match(self.s, self.i)
        return m.group(0) if m else None

    def lookup_var(self, name: str) -> TypeVar | None:
        for sc in reversed(self.scopes):
            if name in sc:
                return sc[name]
        v = self.type_env.get(name)
        return v if isinstance(v, TypeVar) else None

    def balanced_until(self, stops: str) -> str:
        """Raw text up to the next top-level character in ``stops``."""
        self.ws()
        depth = 0
        start = self.i
        while self.i < len(self.s):
            ch = self.s[self.i]
            if ch in "([":
                depth += 1
            elif ch in ")]":
                if depth == 0:
                    break
                depth -= 1
            elif ch in stops and depth == 0:
                break
            self.i += 1
        return self.s[start : self.i].strip()

    def parse(self) -> Type:
        """Drive the generators: each ``yield`` asks for one nested type."""
        stack: list[_Sub] = [self.type()]
        sent: Type | None = None
        while True:
            top = stack[-1]
            try:
                if sent is None:
                    next(top)
                else:
                    top.send(sent)
            except StopIteration as stop:
                stack.pop()
                if not stack:
                    return stop.value  # type: ignore[no-any-return]
                sent = stop.value
                continue
            sent = None
            stack.append(self.type())

    def type_list(self, close: str) -> Generator[None, Type, list[Type]]:
        """Types separated by commas (one may trail) up to ``close``, which is eaten."""
        items: list[Type] = []
        while not self.peek(close):
            items.append((yield))
            if not self.eat(","):
                break
        self.expect(close)
        return items

    def type(self) -> _Sub:
        self.ws()
        m = _HOLE.match(self.s, self.i)
        if m:
            self.i = m.end()
            hid = int(m.group(1))
            return self.holes.setdefault(hid, IncompleteType("type", hid))
        if self.eat("("):
            items: list[Type] = []
            trailing = False
            while not self.peek(")"):
                items.append((yield))
                trailing = self.eat(",")
                if not trailing:
                    break
            self.expect(")")
            if len(items) == 1 and not trailing:
                return items[0]
            return TupleType(tuple(items))
        name = self.ident()
        if name is None:
            raise self.err("expected a type")
        if name == "Tensor":
            return self.tensor()
        if name == "fn":
            return (yield from self.func())
        if name == "Object":
            return ObjectType()
        if name == "Shape":
            self.expect("[")
            if self.eat("?"):
                nd = None
            else:
                txt = self.balanced_until("]")
                if not txt.isdigit() or len(txt) > 18:
                    raise self.err("expected a rank")
                nd = int(txt)
            self.expect("]")
            return ShapeType(nd)
        if self.eat("["):
            args = yield from self.type_list("]")
            tv = self.lookup_var(name)
            g = self.type_env.get(name)
            func: GlobalTypeVar | TypeVar = tv if tv is not None else (
                g if isinstance(g, GlobalTypeVar) else GlobalTypeVar(name)
            )
            return TypeCall(func, tuple(args))
        tv = self.lookup_var(name)
        if tv is not None:
            return tv
        g = self.type_env.get(name)
        if isinstance(g, _TYPE_CLASSES):
            return cast(Type, g)
        return TypeVar(name)

    def tensor(self) -> TensorType:
        self.expect("[")
        shape: Shape
        if self.eat("?"):
            shape = None
        elif self.eat("("):
            dims: list[Dim] = []
            while not self.peek(")"):
                txt = self.balanced_until(",")
                if not txt:
                    raise self.err("empty dimension")
                dims.append(parse_dim(txt, self.dim_env))
                if not self.eat(","):
                    break
            self.expect(")")
            shape = tuple(dims)
        else:
            name = self.ident()
            if name is None:
                raise self.err("expected a shape")
            tv = self.lookup_var(name)
            shape = tv if tv is not None else TypeVar(name, "shape")
        self.expect(",")
        dtype: DType
        if self.eat("?"):
            dtype = None
        else:
            name = self.ident()
            if name is None:
                raise self.err("expected a dtype")
            tv = self.lookup_var(name)
            if tv is not None:
                dtype = tv
            elif name in DTYPES:
                dtype = name
            else:
                raise SymshapeError(BAD_DTYPE, f"unknown dtype {name!r} in {self.s[:120]!r}")
        self.expect("]")
        value: Value | None = None
        rng: Range | None = None
        if self.eat("="):
            value = self.value()
        if self.eat_word("in"):
            rng = self.range()
        if value is None and rng is None:
            return TensorType(shape, dtype)
        try:
            return TensorType(shape, dtype, value, rng)
        except SymshapeError as e:
            raise self.err(e.message) from None

    def eat_word(self, word: str) -> bool:
        """Consume ``word`` when it comes next as a whole word."""
        self.ws()
        m = re.compile(rf"{word}\b").match(self.s, self.i)
        if m is None:
            return False
        self.i = m.end()
        return True

    def range(self) -> Range:
        """A range after ``in``: ``[lo, hi]``, ``?`` for an unknown side."""
        self.expect("[")
        bounds: list[Dim | None] = []
        for stop in (",", "]"):
            txt = self.balanced_until(stop)
            if not txt:
                raise self.err("empty range bound")
            bounds.append(None if txt == "?" else parse_dim(txt, self.dim_env))
            self.expect(stop)
        return (bounds[0], bounds[1])

    def value(self) -> Value:
        """A value after ``=``: ``(d, ?, ...)`` or one dimension (up to the next top-level ``,``,
        ``)``, ``]``, ``;`` or ``where``)."""
        if self.eat("("):
            entries: list[Dim | None] = []
            while not self.peek(")"):
                txt = self.balanced_until(",")
                if not txt:
                    raise self.err("empty value entry")
                entries.append(None if txt == "?" else parse_dim(txt, self.dim_env))
                if not self.eat(","):
                    break
            self.expect(")")
            return tuple(entries)
        self.ws()
        start = self.i
        txt = self.balanced_until(",;")
        cut = re.search(r"\s(where|in)\b", txt)
        if cut is not None:
            txt = txt[: cut.start()].rstrip()
            self.i = start + cut.start()
        if not txt:
            raise self.err("expected a value")
        return parse_dim(txt, self.dim_env)

    def func(self) -> _Sub:
        pure = True
        if self.eat("[impure]"):
            pure = False
        tps: list[TypeVar] = []
        scope: dict[str, TypeVar] = {}
        if self.eat("<"):
            while not self.peek(">"):
                name = self.ident()
                if name is None:
                    raise self.err("expected a type parameter")
                kind = "type"
                if self.eat(":"):
                    k = self.ident()
                    if k is None:
                        raise self.err("expected a kind")
                    kind = k
                tv = TypeVar(name, kind)
                tps.append(tv)
                scope[name] = tv
                if not self.eat(","):
                    break
            self.expect(">")
        if scope:  # only non-empty scopes: a lookup walks them
            self.scopes.append(scope)
        try:
            self.expect("(")
            params = yield from self.type_list(")")
            self.expect("->")
            ret = yield
            rels: list[TypeRelation] = []
            if self.peek_ident() == "where":
                self.ident()
                rels.append((yield from self.relation()))
                while True:
                    save = self.i
                    if not self.eat(","):
                        break
                    name = self.peek_ident()
                    j = self.i + len(name) if name else self.i
                    rest = self.s[j:j + 64].lstrip()
                    if name and name != "fn" and rest.startswith("("):
                        rels.append((yield from self.relation()))
                    else:
                        self.i = save
                        break
        finally:
            if scope:
                self.scopes.pop()
        return FuncType(tuple(params), ret, tuple(tps), tuple(rels), pure)

    def relation(self) -> Generator[None, Type, TypeRelation]:
        name = self.ident()
        if name is None:
            raise self.err("expected a relation name")
        self.expect("(")
        args: list[Type] = []
        attrs: dict[str, object] = {}
        while not self.peek(")") and not self.peek(";"):
            args.append((yield))
            if not self.eat(","):
                break
        if self.eat(";"):
            while not self.peek(")"):
                key = self.ident()
                if key is None:
                    raise self.err("expected an attribute name")
                self.expect("=")
                txt = self.balanced_until(",")
                try:
                    attrs[key] = _literal(txt)
                except (ValueError, SyntaxError, MemoryError, RecursionError):
                    try:
                        attrs[key] = parse_dim(txt, self.dim_env)
                    except SymshapeError:
                        raise self.err(f"bad attribute value {txt!r}") from None
                if not self.eat(","):
                    break
        self.expect(")")
        return TypeRelation(name, tuple(args), Attrs(attrs))


def _literal(txt: str) -> object:
    if len(txt) > 10_000:
        raise ValueError("attribute too long")
    return ast.literal_eval(txt)


def parse_type(text: str, env: Mapping[str, object] | None = None) -> Type:
    """Read a type in the printed syntax; ``env`` maps names to dimensions and types.

    Iterative: a type nested any number of levels deep reads back.

    >>> from symshape.encoding.dims import dim
    >>> from symshape.encoding.leaf_types import Tensor
    >>> n = dim("n")
    >>> parse_type("Tensor[(n, 3), float32]", {"n": n}) == Tensor((n, 3), "float32")
    True
    """
    check_parse_input(text, env, "parse_type", "type", MAX_TYPE_TEXT)
    p = _Parser(text, env or {})
    t = p.parse()
    p.ws()
    if p.i != len(p.s):
        raise p.err("trailing text")
    return t
