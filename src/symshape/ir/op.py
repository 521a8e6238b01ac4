"""The operator registry.

An :class:`Op` names a relation (its typing rule), the number of inputs, its purity, an optional
attribute checker (run when a call is built, so a bad literal attribute raises a
:class:`~symshape.errors.SymshapeError` at the call site) and an optional ``normalize`` hook
(seed 003) applied by :func:`symshape.normalize` after inference.

>>> import symshape as ss
>>> ss.Op.get("add").relation
'broadcast'
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from symshape.encoding.types import Attrs, Type
from symshape.errors import INVALID_ARGUMENT, UNKNOWN_RELATION, SymshapeError
from symshape.relations.base import RelationFn, get_relation, register_relation

if TYPE_CHECKING:
    from symshape.ir.expr import Call, Expr

__all__ = ["Op", "OPS", "register_op", "NormalizeFn", "AttrCheckFn"]

NormalizeFn = Callable[["Call", Sequence[Type]], "Expr | None"]
AttrCheckFn = Callable[[Attrs, int], Mapping[str, Any] | None]

OPS: dict[str, Op] = {}


class Op:
    """An operator: ``op(*args, **attrs)`` builds a :class:`~symshape.ir.expr.Call`."""

    __slots__ = ("name", "relation", "num_inputs", "pure", "normalize", "check_attrs", "doc")

    def __init__(
        self,
        name: str,
        relation: str,
        num_inputs: int,
        pure: bool = True,
        normalize: NormalizeFn | None = None,
        check_attrs: AttrCheckFn | None = None,
        doc: str = "",
    ) -> None:
        self.name = name
        self.relation = relation
        self.num_inputs = num_inputs
        self.pure = pure
        self.normalize = normalize
        self.check_attrs = check_attrs
        self.doc = doc

    def __call__(self, *args: Any, **attrs: Any) -> Call:
        from symshape.ir.expr import Call, Expr, Tuple, _user_span

        conv: list[Expr] = []
        for a in args:
            if isinstance(a, (list, tuple)) and all(isinstance(x, Expr) for x in a):
                conv.append(Tuple(list(a)))
            else:
                conv.append(a)
        if self.num_inputs >= 0 and len(conv) != self.num_inputs:
            raise SymshapeError(
                INVALID_ARGUMENT, f"{self.name} takes {self.num_inputs} inputs, got {len(conv)}"
            )
        a = Attrs(attrs)
        if self.check_attrs is not None:
            fixed = self.check_attrs(a, len(conv))
            if fixed is not None:
                a = Attrs(fixed)
        call = Call(self, conv, a)
        call.span = _user_span()
        return call

    @staticmethod
    def get(name: str) -> Op:
        """The registered operator ``name``."""
        try:
            return OPS[name]
        except KeyError:
            raise SymshapeError(UNKNOWN_RELATION, f"no operator named {name!r}") from None

    def __repr__(self) -> str:
        return f"Op({self.name})"


def register_op(
    name: str,
    relation: str | RelationFn,
    num_inputs: int,
    pure: bool = True,
    normalize: NormalizeFn | None = None,
    check_attrs: AttrCheckFn | None = None,
    doc: str = "",
) -> Op:
    """Register an operator typed by ``relation`` (a registered relation name, or a Python
    relation function, which is then registered under the operator's name).

    ``num_inputs`` is the number of arguments (``-1``: any number).
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
    op = Op(name, rel_name, num_inputs, bool(pure), normalize, check_attrs, doc)
    OPS[name] = op
    return op
