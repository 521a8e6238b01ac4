"""ONNX models in symshape: symbolic shape inference with guards and explained errors.

Needs the ``onnx`` extra (``pip install symshape[onnx]``); ``import symshape`` never imports onnx,
``import symshape.onnx`` does.

>>> import symshape as ss, symshape.onnx as sso
>>> from onnx import TensorProto, helper
>>> g = helper.make_graph(
...     [helper.make_node("MatMul", ["x", "w"], ["h"], name="mm"), helper.make_node("Relu", ["h"], ["y"])],
...     "g",
...     [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 64]),
...      helper.make_tensor_value_info("w", TensorProto.FLOAT, [64, 10])],
...     [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
>>> m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
>>> res = sso.infer(m)
>>> res.status, str(res.type_of("y"))
('ok', 'Tensor[(N, 10), float32]')
>>> str(sso.from_onnx(m, dims={"N": ss.dim("batch")}).params[0].type_annotation)
'Tensor[(batch, 64), float32]'

``infer_shapes(model)`` returns a copy with every value's type written in (``dim_param`` strings in
symshape's syntax). Operators are converted by the converters of :mod:`symshape.onnx.ops`, chosen by
the model's opset (:mod:`symshape.onnx.registry`); ``supported_ops()`` lists them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from symshape.solver.gc_pause import gc_paused

# The imports below (numpy, onnx, the converters) allocate ~150 000 objects: with the collector
# paused they are promoted once, not traversed by the collections they would trigger (the first
# import of symshape.onnx: ~3 % less CPU).
with gc_paused():
    from symshape import Function, SymshapeError
    from symshape import infer as _ss_infer
    from symshape.encoding.conds import cond_dims
    from symshape.errors import INVALID_ARGUMENT
    from symshape.onnx import ops as _ops  # noqa: F401  (registers the converters)
    from symshape.onnx.context import CAUSES, Cause, ConversionError, NodeContext, Unsupported
    from symshape.onnx.export_model import annotated_copy, ground_copy
    from symshape.onnx.ground import ground_types
    from symshape.onnx.importer import Importer
    from symshape.onnx.loading import load_model
    from symshape.onnx.registry import REGISTRY, register
    from symshape.onnx.result import OnnxInferenceResult
    from symshape.onnx.spans import OnnxSpan
    from symshape.onnx.type_constraints import check_type_constraints
    from symshape.solver.diagnostics import Diagnostic, Guard, raw_ids, renumber_ids
    from symshape.solver.solve import check_timeout

__all__ = [
    "from_onnx",
    "infer",
    "infer_shapes",
    "supported_ops",
    "OnnxInferenceResult",
    "OnnxSpan",
    "NodeContext",
    "Unsupported",
    "ConversionError",
    "Cause",
    "CAUSES",
    "REGISTRY",
    "register",
]


def from_onnx(model_or_path: Any, dims: Mapping[str, Any] | None = None) -> Function:
    """The model as a symshape ``Function`` (graph inputs are its parameters).

    ``dims`` maps ``dim_param`` names to symshape dimensions (the caller's symbols, or ints).
    A node that cannot be converted raises ``SymshapeError`` (``unsupported-op``, or the model's
    own error) naming every such node; :func:`infer` reports them as diagnostics instead.
    """
    model, label, base_dir = load_model(model_or_path)
    imp = Importer(model, label, dims, base_dir=base_dir)
    fn = imp.run()
    if imp.issues:
        first = imp.issues[0].diagnostic
        text = _rendered([i.diagnostic for i in imp.issues])
        raise SymshapeError(first.code, f"cannot convert the model:\n{text}")
    return fn


def infer(
    model_or_path: Any,
    dims: Mapping[str, Any] | None = None,
    strict: bool = False,
    timeout_ms: int = 2000,
    *,
    label: str | None = None,
) -> OnnxInferenceResult:
    """Infer every value's type; ``res.type_of("value_name")``, ``res.status``, ``res.report()``.

    Nodes that cannot be converted are ``unsupported-op`` errors in the result (all of them,
    together), never exceptions; the rest of the model is still inferred. ``label`` is how reports
    name the model (default: the path as given, or the graph's name for a ``ModelProto``).
    """
    model, own_label, base_dir = load_model(model_or_path)
    return _infer_loaded(model, own_label if label is None else label, base_dir, dims, strict, timeout_ms)


def _infer_loaded(
    model: Any,
    label: str,
    base_dir: str | None,
    dims: Mapping[str, Any] | None = None,
    strict: bool = False,
    timeout_ms: int = 2000,
) -> OnnxInferenceResult:
    """:func:`infer` of a model already loaded (a ``ModelProto``, reported as ``label``) whose
    external data is read from ``base_dir`` (None: as the caller loaded it); the CLI's entry, which
    edits the model it loaded before inferring it. A model the ground walk answers
    (:mod:`symshape.onnx.ground`) gets a result made from its answer, which runs the rest of
    inference when first asked for more than types."""
    ground = ground_types(model, dims)
    if ground is not None:
        check_timeout(timeout_ms)  # (as the full path's solver would: a ground answer runs none)
        return OnnxInferenceResult.grounded(
            ground, lambda: _infer_full(model, label, base_dir, dims, strict, timeout_ms)
        )
    return _infer_full(model, label, base_dir, dims, strict, timeout_ms)


def _infer_full(
    model: Any,
    label: str,
    base_dir: str | None,
    dims: Mapping[str, Any] | None,
    strict: bool,
    timeout_ms: int,
) -> OnnxInferenceResult:
    """:func:`_infer_loaded` by the importer and symshape's inference."""
    unknown: frozenset[str] = frozenset()
    while True:
        imp = Importer(model, label, dims, timeout_ms, base_dir)
        imp.unknown_iterations = unknown
        res = _infer_imported(imp, imp.run(), strict, timeout_ms)
        # a guard over a Loop's iteration number must hold at every iteration, and would be read
        # as one value: that Loop's iteration number is then left unknown (each run, one more)
        over = _over(res.guards, imp.iteration_symbols)
        if not over:
            return res
        unknown |= over


def _over(guards: list[Guard], loops: Mapping[str, str]) -> frozenset[str]:
    """The Loops (``loops``: by iteration symbol) whose iteration symbol a guard mentions."""
    found = (str(x) for g in guards for d in cond_dims(g.cond) for x in d.symbols)
    return frozenset(loops[n] for n in found if n in loops)


def _infer_imported(
    imp: Importer, fn: Function, strict: bool = False, timeout_ms: int = 2000
) -> OnnxInferenceResult:
    """The rest of :func:`infer` once ``imp`` has converted the model to ``fn``: symshape's
    inference, then the ONNX type constraints of the converted nodes (the benchmark times the
    conversion and this apart)."""
    core = _ss_infer(fn, strict=strict, timeout_ms=timeout_ms)
    reported = [i.diagnostic for i in imp.issues] + list(core.errors)
    with gc_paused():  # (small acyclic objects, freed at the end: a collection would only cost)
        imp.issues.extend(check_type_constraints(imp.converted, imp.named, imp.opsets, core, reported))
    return OnnxInferenceResult(core, imp)


def infer_shapes(model_or_path: Any, dims: Mapping[str, Any] | None = None) -> Any:
    """A copy of the model (``onnx.ModelProto``) with ``value_info`` and the outputs' types filled.

    Raises ``SymshapeError`` when inference finds an error (or a node cannot be converted); the
    guards a model needs are in :func:`infer`'s result. A dimension is written simplified under
    them (``seq`` for ``min(16, seq)`` where ``seq <= 16``: :mod:`symshape.onnx.export_simplify`),
    and a symbol a guard pins (``N == 1``) at that value: the model runs only then (see
    :mod:`symshape.onnx.export`). The values of the subgraphs (``If`` branches, ``Scan`` bodies)
    are written in their graphs' ``value_info``; a ``dim_param`` that ``dims`` names is written as
    the caller's dimension everywhere, graph inputs included (:mod:`symshape.onnx.export_model`).
    """
    res = infer(model_or_path, dims)
    if res.errors:
        first = res.errors[0]
        text = _rendered(res.errors)
        raise SymshapeError(first.code, f"shape inference failed:\n{text}")
    if res._ground is not None:  # (no external data: the walk leaves such models to the full path)
        return ground_copy(res)
    imp = res._importer
    out = annotated_copy(res)
    if imp.base_dir is not None:  # (loaded from a file: the copy holds its external data, as onnx.load's)
        from onnx.external_data_helper import load_external_data_for_model

        try:
            load_external_data_for_model(out, imp.base_dir)
        except Exception as e:  # a weight's file missing, a location outside the folder
            msg = " ".join(str(e).split()) or type(e).__name__
            raise SymshapeError(
                INVALID_ARGUMENT, f"the model's external data cannot be read: {msg}"
            ) from None
    return out


def _rendered(diags: list[Diagnostic]) -> str:
    """The diagnostics' texts, one unknown type named alike throughout."""
    with raw_ids():
        text = "\n".join(d.render(source=False) for d in diags)
    return renumber_ids(text)


def supported_ops(domain: str = "") -> list[str]:
    """The operator types of ``domain`` that have a converter."""
    return REGISTRY.op_types(domain)
