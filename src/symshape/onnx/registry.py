"""The opset-versioned registry of ONNX converters.

A converter turns one ONNX node into symshape expressions. It is registered for a
``(domain, op_type, since_version)``; a model whose opset for that domain is ``v`` uses the converter
with the newest ``since_version <= v`` (the rule ONNX itself uses to pick an operator's schema), so a
converter is registered only at the versions where the operator's *shape* semantics change::

    @register("Reshape", since=5, value_inputs=(1,))
    def reshape_v5(ctx: NodeContext) -> Outputs:
        ...

``value_inputs`` lists the input slots whose *values* (not only types) the converter reads: the
target of ``Reshape``, the bounds of ``Slice``, the pads of ``Pad``. They must be constants
(initializers, ``Constant`` nodes or constant-foldable) until symshape has shape values.

>>> REGISTRY.lookup("", "Reshape", 13).since_version
5
>>> REGISTRY.lookup("", "Reshape", 4).since_version
1
>>> REGISTRY.lookup("", "NoSuchOp", 13) is None
True
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Union

from symshape import Expr

if TYPE_CHECKING:
    from symshape.onnx.context import NodeContext

__all__ = [
    "Outputs",
    "Converter",
    "ConverterDef",
    "ConverterTable",
    "Registry",
    "REGISTRY",
    "register",
    "canonical_domain",
    "markdown",
    "BUILTIN_DOMAINS",
]

#: What a converter returns: the expression of its single output, or one per output (None for an
#: output the converter does not produce).
Outputs = Union[Expr, Sequence[Union[Expr, None]]]
Converter = Callable[["NodeContext"], Outputs]


def canonical_domain(domain: str) -> str:
    """``ai.onnx`` is the default domain ``""``."""
    return "" if domain == "ai.onnx" else domain


@dataclass(frozen=True)
class ConverterDef:
    """One registered converter."""

    domain: str
    op_type: str
    since_version: int
    fn: Converter = field(compare=False)
    value_inputs: tuple[int, ...] = ()

    @property
    def key(self) -> str:
        op = f"{self.domain}.{self.op_type}" if self.domain else self.op_type
        return f"{op}-{self.since_version}"


class Registry:
    """Converters by ``(domain, op_type)``, each list sorted by ``since_version``."""

    def __init__(self) -> None:
        self._defs: dict[tuple[str, str], list[ConverterDef]] = {}

    def add(self, d: ConverterDef) -> None:
        """Register ``d``, replacing a converter registered for the same version."""
        versions = self._defs.setdefault((d.domain, d.op_type), [])
        keys = [x.since_version for x in versions]
        i = bisect.bisect_left(keys, d.since_version)
        if i < len(versions) and versions[i].since_version == d.since_version:
            versions[i] = d
        else:
            versions.insert(i, d)

    def register(
        self,
        op_type: str | Sequence[str],
        since: int | Sequence[int] = 1,
        *,
        domain: str = "",
        value_inputs: Sequence[int] = (),
    ) -> Callable[[Converter], Converter]:
        """Decorator: register the function for each op type and each version given."""
        ops = (op_type,) if isinstance(op_type, str) else tuple(op_type)
        vers = (since,) if isinstance(since, int) else tuple(since)
        dom = canonical_domain(domain)

        def deco(fn: Converter) -> Converter:
            for op in ops:
                for v in vers:
                    self.add(ConverterDef(dom, op, v, fn, tuple(value_inputs)))
            return fn

        return deco

    def lookup(self, domain: str, op_type: str, opset: int) -> ConverterDef | None:
        """The converter for a model whose opset of ``domain`` is ``opset``; None when there is
        none (an unknown operator, or an opset older than the oldest supported version)."""
        versions = self._defs.get((canonical_domain(domain), op_type))
        if not versions:
            return None
        keys = [x.since_version for x in versions]
        i = bisect.bisect_right(keys, opset)
        return versions[i - 1] if i > 0 else None

    def knows(self, domain: str, op_type: str) -> bool:
        """Whether any version of the operator has a converter."""
        return (canonical_domain(domain), op_type) in self._defs

    def __iter__(self) -> Iterator[ConverterDef]:
        for key in sorted(self._defs):
            yield from self._defs[key]

    def op_types(self, domain: str = "") -> list[str]:
        """The operator types of ``domain`` that have a converter, sorted."""
        dom = canonical_domain(domain)
        return sorted(op for d, op in self._defs if d == dom)

    def table(self) -> list[tuple[str, str, tuple[int, ...]]]:
        """``(domain, op_type, since_versions)`` per operator, sorted (the README's list)."""
        return [(d, op, tuple(x.since_version for x in vs)) for (d, op), vs in sorted(self._defs.items())]


REGISTRY = Registry()
register = REGISTRY.register


class ConverterTable:
    """The converter of each ``(domain, op_type)`` at a model's opsets (``opsets``: version per
    canonical domain), looked up in :data:`REGISTRY` once; None for an operator without one (or a
    domain the model does not import). Called as ``table(domain, op_type)``."""

    __slots__ = ("opsets", "_cdefs")

    def __init__(self, opsets: Mapping[str, int]) -> None:
        self.opsets = opsets
        self._cdefs: dict[tuple[str, str], ConverterDef | None] = {}

    def __call__(self, dom: str, op_type: str) -> ConverterDef | None:
        key = (dom, op_type)
        try:
            return self._cdefs[key]
        except KeyError:
            pass
        opset = self.opsets.get(dom)
        cdef = None if opset is None else REGISTRY.lookup(dom, op_type, opset)
        self._cdefs[key] = cdef
        return cdef


#: the domains symshape's own converters cover (the README lists them)
BUILTIN_DOMAINS: tuple[str, ...] = ("", "com.microsoft")

_DOMAIN_TITLES = {
    "": "ai.onnx (the default domain)",
    "com.microsoft": "com.microsoft (onnxruntime's contrib operators)",
}


def markdown(registry: Registry | None = None, domains: Sequence[str] = BUILTIN_DOMAINS) -> str:
    """The README's list of supported operators: per domain, every operator type with the opset
    versions its converters start at (``Reshape (1, 5)``: one converter for opsets 1-4, one from 5).

    >>> r = Registry()
    >>> _ = r.register("Twice", since=[1, 13], domain="x.y")(lambda ctx: ctx.input(0))
    >>> print(markdown(r, ["x.y"]))
    - **x.y** (1 operator): `Twice` (1, 13)
    """
    reg = REGISTRY if registry is None else registry
    rows = reg.table()
    lines: list[str] = []
    for dom in domains:
        ops = [(op, vs) for d, op, vs in rows if d == dom]
        title = _DOMAIN_TITLES.get(dom, dom)
        noun = "operator" if len(ops) == 1 else "operators"
        items = ", ".join(f"`{op}` ({', '.join(str(v) for v in vs)})" for op, vs in ops)
        lines.append(f"- **{title}** ({len(ops)} {noun}): {items}")
    return "\n".join(lines)
