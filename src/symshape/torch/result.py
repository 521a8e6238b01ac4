"""The inference result of a PyTorch model: an :class:`symshape.InferenceResult` whose ``type_of``
and ``range_of`` also take an fx node or a node name, and whose errors include the importer's own
(``unsupported-op``).

>>> from symshape.torch.result import TorchInferenceResult
>>> "type_of" in TorchInferenceResult.__dict__
True
"""

from __future__ import annotations

from typing import Any

import symshape as ss
from symshape.errors import INVALID_ARGUMENT
from symshape.torch.values import DtypeOf, Opaque

__all__ = ["TorchInferenceResult"]


class TorchInferenceResult(ss.InferenceResult):
    """``ss.infer``'s result for the imported program, plus the model's nodes.

    ``errors`` lists the importer's diagnostics (unsupported calls, in graph order) before the
    type errors; ``status`` is ``error`` when there are any. ``values`` maps node names to what
    they stand for; ``program`` is the imported :class:`symshape.Function`.
    """

    def __init__(self, inner: ss.InferenceResult, imported: Any) -> None:
        # share the inner result's state (types, solution, display) instead of re-inferring
        self.__dict__.update(inner.__dict__)
        self.inner = inner
        self.imported = imported
        self.values: dict[str, Any] = imported.values
        self.import_errors: list[ss.Diagnostic] = list(imported.diagnostics)
        self.errors = [*self.import_errors, *inner.errors]
        if self.import_errors:
            # a node that could not be imported stands for a tensor of unknown rank whose sizes
            # are solver unknowns; conditions on them (`?d5 != 0` from a reshape downstream) are
            # consequences of the error already reported, never a guard on the user's sizes
            self.guards = [g for g in inner.guards if not _mentions_anonymous(g)]
        self.status = "error" if self.errors else inner.status

    @property
    def fx_graph(self) -> Any:
        """The fx graph that was imported."""
        return self.imported.graph

    @property
    def params(self) -> dict[str, ss.Var]:
        """The model's parameters and buffers used by the program, by path (``fc2.weight``)."""
        return dict(self.imported.params)

    def _node_value(self, e: Any) -> tuple[str, Any] | None:
        name = getattr(e, "name", None) if type(e).__name__ == "Node" else e if isinstance(e, str) else None
        if name is None or name not in self.values:
            return None
        return name, self.values[name]

    def type_of(self, e: Any) -> ss.Type:
        """The type of an fx node (or node name), or of an expression of the program."""
        hit = self._node_value(e)
        if hit is None:
            return super().type_of(e)
        name, value = hit
        return self._type_of_value(name, value)

    def range_of(self, e: Any) -> tuple[ss.Dim | None, ss.Dim | None] | None:
        """The range of an fx node's (or node name's) integer entries, or of an expression's."""
        hit = self._node_value(e)
        if hit is None:
            return super().range_of(e)
        return super().range_of(hit[1]) if isinstance(hit[1], ss.Expr) else None

    def _type_of_value(self, name: str, value: Any) -> ss.Type:
        if isinstance(value, ss.Expr):
            return super().type_of(value)
        if (
            isinstance(value, (tuple, list))
            and value
            and all(isinstance(v, (ss.Expr, tuple, list)) for v in value)
        ):
            return ss.TupleType(tuple(self._type_of_value(name, v) for v in value))
        if isinstance(value, Opaque) and value.cascade:
            raise ss.SymshapeError(INVALID_ARGUMENT, f"node `{name}` could not be imported (see the errors)")
        raise ss.SymshapeError(
            INVALID_ARGUMENT, f"node `{name}` is a Python value ({_show(value)}), not a tensor; see value_of"
        )

    def value_of(self, e: Any) -> Any:
        """The Python value of a node that is not a tensor (``x.size(0)`` of an input annotated
        ``(b, 3)`` is the dimension ``b``; of an intermediate ``x``, the dimension inference found
        for it); None where it is not known."""
        hit = self._node_value(e)
        if hit is None:
            raise ss.SymshapeError(INVALID_ARGUMENT, f"no fx node {e!r} in the model")
        value = hit[1]
        if isinstance(value, (tuple, list)):
            return tuple(self._python_value(v) for v in value)
        return self._python_value(value)

    def _python_value(self, v: Any) -> Any:
        """A static value as it is; a run-time size by the value inference found for it (a
        dimension, or a tuple for sizes; None where unknown)."""
        if isinstance(v, Opaque):
            if v.value is None or v.cascade:
                return None
            return self.inner.value_of(v.value)
        if isinstance(v, (ss.Expr, DtypeOf)):
            return None
        return v

    def report(self, program: bool = False) -> str:
        """Status, the importer's diagnostics, type errors, guards (``InferenceResult.report`` of
        this result's own errors and guards)."""
        return super().report(program)

    def __repr__(self) -> str:
        return (
            f"TorchInferenceResult(status={self.status!r}, errors={len(self.errors)}, "
            f"guards={len(self.guards)})"
        )


def _mentions_anonymous(g: Any) -> bool:
    """The guard's condition mentions a solver unknown (``?d5``) or an anonymous ``?``."""
    from symshape.encoding.conds import cond_dims

    for d in cond_dims(g.cond):
        if d.has_unknowns or any(not x.is_symbol for x in d.symbols):
            return True
    return False


def _show(v: Any) -> str:
    if isinstance(v, Opaque):
        return v.describe()
    if isinstance(v, tuple):
        return "(" + ", ".join(_show(x) for x in v) + ("," if len(v) == 1 else "") + ")"
    return str(v)
