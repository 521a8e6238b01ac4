"""Modules: global functions and ADT definitions (:class:`TypeData`).

>>> import symshape as ss
>>> mod = ss.Module()
>>> x = ss.var("x", ss.Tensor((2,), "float32"))
>>> mod["f"] = ss.Function([x], x)
>>> [g.name for g in mod.functions]
['f']
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from symshape.encoding.types import GlobalTypeVar, TypeVar, type_str
from symshape.errors import INVALID_ARGUMENT, UNDEFINED_VAR, SymshapeError
from symshape.ir.nodes import Constructor, Expr, Function, GlobalVar
from symshape.ir.printer import expr_str

__all__ = ["Module", "TypeData", "program_roots"]


@dataclass(frozen=True)
class TypeData:
    """An ADT definition: header, type parameters and constructors."""

    header: GlobalTypeVar
    type_params: tuple[TypeVar, ...]
    constructors: tuple[Constructor, ...]

    def __post_init__(self) -> None:
        if not isinstance(self.header, GlobalTypeVar):
            raise SymshapeError(INVALID_ARGUMENT, f"an ADT's header is a GlobalTypeVar, got {self.header!r}")
        for name, cls in (("type_params", TypeVar), ("constructors", Constructor)):
            items = getattr(self, name)
            if isinstance(items, (str, bytes)) or not isinstance(items, Iterable):
                raise SymshapeError(INVALID_ARGUMENT, f"an ADT's {name} must be a list, got {items!r}")
            items = tuple(items)
            for x in items:
                if not isinstance(x, cls):
                    raise SymshapeError(
                        INVALID_ARGUMENT, f"an ADT's {name} must be {cls.__name__}s, got {x!r}"
                    )
            object.__setattr__(self, name, items)

    def __str__(self) -> str:
        params = f"[{', '.join(map(str, self.type_params))}]" if self.type_params else ""
        cons = " | ".join(
            f"{c.name}({', '.join(type_str(t) for t in c.inputs)})" for c in self.constructors
        )
        return f"type {self.header}{params} = {cons}"


class Module:
    """Global functions (by :class:`GlobalVar`) and ADT definitions, in insertion order."""

    def __init__(self) -> None:
        self._funcs: dict[str, tuple[GlobalVar, Function]] = {}
        self.types: dict[str, TypeData] = {}

    def _key(self, g: GlobalVar | str) -> str:
        if isinstance(g, GlobalVar):
            return g.name
        if isinstance(g, str):
            return g
        raise SymshapeError(INVALID_ARGUMENT, f"module keys are GlobalVars or names, got {g!r}")

    def __setitem__(self, g: GlobalVar | str, f: Function) -> None:
        if not isinstance(f, Function):
            raise SymshapeError(INVALID_ARGUMENT, f"module values are Functions, got {type(f).__name__}")
        key = self._key(g)
        gv = g if isinstance(g, GlobalVar) else self._funcs.get(key, (GlobalVar(key), f))[0]
        self._funcs[key] = (gv, f)

    def __getitem__(self, g: GlobalVar | str) -> Function:
        key = self._key(g)
        try:
            return self._funcs[key][1]
        except KeyError:
            raise SymshapeError(UNDEFINED_VAR, f"no global function {key!r}") from None

    def __contains__(self, g: object) -> bool:
        return isinstance(g, (GlobalVar, str)) and self._key(g) in self._funcs

    def __iter__(self) -> Iterator[GlobalVar]:
        return (gv for gv, _ in self._funcs.values())

    def __len__(self) -> int:
        return len(self._funcs)

    def get_global_var(self, name: str) -> GlobalVar:
        try:
            return self._funcs[name][0]
        except KeyError:
            raise SymshapeError(UNDEFINED_VAR, f"no global function {name!r}") from None

    @property
    def functions(self) -> list[GlobalVar]:
        return [gv for gv, _ in self._funcs.values()]

    def items(self) -> list[tuple[GlobalVar, Function]]:
        return list(self._funcs.values())

    def add_type(self, data: TypeData) -> None:
        """Add an ADT definition."""
        if not isinstance(data, TypeData):
            raise SymshapeError(INVALID_ARGUMENT, "add_type takes a TypeData")
        self.types[data.header.name] = data

    def type_data(self, g: GlobalTypeVar) -> TypeData | None:
        return self.types.get(g.name)

    def constructor_data(self, c: Constructor) -> TypeData | None:
        return self.types.get(c.belong_to.name)

    def __repr__(self) -> str:
        parts = [str(td) for td in self.types.values()]
        parts += [f"def @{g.name} = {expr_str(f)}" for g, f in self._funcs.values()]
        return "\n".join(parts)


def program_roots(program: Expr | Module) -> list[Expr]:
    """The expressions a program consists of: a module's functions, or the expression itself."""
    return [f for _, f in program.items()] if isinstance(program, Module) else [program]
