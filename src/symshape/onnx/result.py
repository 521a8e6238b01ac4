"""The result of inferring an ONNX model: symshape's result, plus ONNX value names and the
importer's own diagnostics.

:class:`OnnxInferenceResult` is an :class:`~symshape.InferenceResult` (everything it offers works
the same) whose ``type_of`` also takes the name of an ONNX value (a graph input, an initializer, a
node output), and whose ``errors`` start with the importer's: the ``unsupported-op`` errors of nodes
it could not convert and the errors it found in the model itself, in model order, before the errors
inference found. The status is judged over all of them (``error`` over ``inconclusive`` over
``unresolved`` over ``guarded`` over ``ok``).

A model the ground walk answers (:mod:`symshape.onnx.ground`: every size a constant, the status
``ok``) gets a result made from that answer (:meth:`OnnxInferenceResult.grounded`): its status,
errors, guards and the types of its ONNX values come from the walk; whatever else is asked of it
(the program, the report, ``valid_at``, the type of an expression) runs the full path once, on
first use, and is answered from there. That run reads the model as it is then: a model changed
after ``infer`` returned gives the rest of the answers for the changed model (copy it first).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Final

from symshape import Diagnostic, Guard, InferenceResult, SymshapeError, TensorType, Type
from symshape.encoding.dim_expr import as_dim
from symshape.errors import UNDEFINED_VAR
from symshape.onnx.body_types import any_iteration_type, changing_values
from symshape.onnx.context import Cause
from symshape.onnx.dtypes import ONNX_TO_DTYPE
from symshape.onnx.ground import GroundTypes
from symshape.onnx.importer import Importer, Issue
from symshape.onnx.lazy_constant import initializer_type
from symshape.onnx.value import Value
from symshape.solver.outcome import judge

__all__ = ["OnnxInferenceResult"]

#: held while a ground result runs its full path (see ``OnnxInferenceResult.__getattr__``)
_LAZY: Final = threading.RLock()


class OnnxInferenceResult(InferenceResult):
    """See the module docstring. Attributes not set here come from symshape's own result."""

    def __init__(self, core: InferenceResult, importer: Importer) -> None:
        # not InferenceResult.__init__: the inference is done, this result wraps it
        self._core = core
        self._importer = importer
        self.program = core.program
        self.issues: list[Issue] = list(importer.issues)
        self.errors: list[Diagnostic] = [i.diagnostic for i in self.issues] + list(core.errors)
        self.guards: list[Guard] = list(core.guards)
        self.inconclusive: list[Diagnostic] = list(core.inconclusive)
        self.unresolved: list[Diagnostic] = list(core.unresolved)
        self.status = judge(self.errors, self.inconclusive, self.unresolved, self.guards)
        self._changing: set[int] | None = None
        self._ground: GroundTypes | None = None
        self._full: Callable[[], OnnxInferenceResult] | None = None
        self._types: dict[str, Type] = {}  # (a ground result's, made when asked)

    @classmethod
    def grounded(cls, ground: GroundTypes, full: Callable[[], OnnxInferenceResult]) -> OnnxInferenceResult:
        """The result of a model the ground walk answered (``ground``); ``full`` runs the full
        path, when something else is first asked (see the module docstring)."""
        self = cls.__new__(cls)
        self._ground, self._full, self._changing = ground, full, None
        self.issues, self.errors, self.guards = [], [], []
        self.inconclusive, self.unresolved = [], []
        self.status = "ok"
        self._types = {}
        return self

    def __getattr__(self, name: str) -> Any:
        d = self.__dict__
        if d.get("_full") is not None and not name.startswith("__"):
            with _LAZY:  # (one thread runs the full path; another asking meanwhile waits for it)
                full = d.get("_full")
                if full is not None:  # (once; if it raises, the next ask runs it again, and fails alike)
                    res = full()
                    d["_core"], d["_importer"], d["program"] = res._core, res._importer, res.program
                    d["_full"] = None
            return getattr(self, name)
        if name in ("_core", "_importer", "_changing", "_full", "_ground") or name.startswith("__"):
            raise AttributeError(name)
        return getattr(self._core, name)

    @property
    def core(self) -> InferenceResult:
        """symshape's own result for the converted program."""
        return self._core

    @property
    def unsupported(self) -> list[tuple[Cause, str, tuple[str, ...]]]:
        """``(cause, op_type, node names)`` of every node the importer could not convert."""
        return [(i.cause, i.op_type, i.nodes) for i in self.issues if i.cause is not None]

    def value_names(self) -> list[str]:
        """Every ONNX value name the result knows: inputs, initializers, node outputs."""
        if self._ground is not None:
            return list(self._ground.names)
        return list(self._importer.named)

    def _ground_type(self, name: str) -> Type:
        """The type of the value ``name`` of a ground answer (made once)."""
        t = self._types.get(name)
        if t is None:
            g = self._ground
            assert g is not None
            e = g.entries.get(name)
            if e is None:
                raise SymshapeError(UNDEFINED_VAR, f"the model has no value named {name!r}")
            init = g.int_inits.get(name)
            shape = tuple(map(as_dim, e[1]))
            if init is not None:  # (an initializer's shape is of ints)
                t = initializer_type(init, tuple(map(int, shape)), e[0])
            else:
                t = TensorType(shape, ONNX_TO_DTYPE[e[0]])
            self._types[name] = t
        return t

    def type_of(self, e: Any) -> Type:
        """The inferred type of an ONNX value (by name) or of an expression of the program.

        A value of a subgraph gets a type that holds at every run of it: in a ``Loop`` body whose
        loop-carried types change from one iteration to the next, what is computed from them is a
        tensor of its dtype and a rank not known (the body was converted on the first iteration's
        types): what ``infer_shapes`` leaves unwritten (:mod:`symshape.onnx.body_types`)."""
        if isinstance(e, str):
            if self._ground is not None:
                return self._ground_type(e)
            v = self._importer.named.get(e)
            if v is None:
                raise SymshapeError(UNDEFINED_VAR, f"the model has no value named {e!r}")
            t = self.value_type(v)
            if self._changing is None:
                imp = self._importer
                self._changing = changing_values(imp.graph, imp.values, imp.scopes, self.value_type)
            return any_iteration_type(t) if id(v) in self._changing else t
        return self._core.type_of(e)

    def value_type(self, v: Value) -> Type:
        """The inferred type of one of the importer's values (a subgraph's among them)."""
        if not v.materialized and v.type is not None:  # an initializer read as a value only
            return v.type
        try:
            return self._core.type_of(v.expr)
        except SymshapeError:
            if v.type is not None:  # an initializer no node reads
                return v.type
            raise

    def types(self) -> dict[str, Type]:
        """The type of every ONNX value, in model order."""
        out: dict[str, Type] = {}
        for name in self.value_names():
            try:
                out[name] = self.type_of(name)
            except SymshapeError:
                continue
        return out

    def __repr__(self) -> str:
        return (
            f"OnnxInferenceResult(status={self.status!r}, errors={len(self.errors)}, "
            f"guards={len(self.guards)}, unsupported={len(self.unsupported)})"
        )
