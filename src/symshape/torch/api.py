"""``symshape.torch.infer`` and ``symshape.torch.from_fx``: models in, symshape programs and
results out. torch is imported when they are called, not before.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import symshape as ss
from symshape.errors import INVALID_ARGUMENT
from symshape.torch.values import UNSUPPORTED_OP

if TYPE_CHECKING:
    from symshape.torch.importer import Imported
    from symshape.torch.result import TorchInferenceResult

__all__ = ["infer", "from_fx", "import_model", "trace"]

_ADVICE = (
    "symbolic tracing cannot follow control flow or Python calls that depend on tensor values. "
    "Export the model instead (torch.export.export(model, example_args, dynamic_shapes=...)) and "
    "pass the ExportedProgram, or fix the values that decide it with concrete_args={...}"
)


def _torch() -> Any:
    try:
        import torch
        import torch.fx
    except ImportError:  # pragma: no cover - the extra is not installed
        raise ss.SymshapeError(
            INVALID_ARGUMENT, "symshape.torch needs PyTorch: pip install 'symshape[torch]'"
        ) from None
    return torch


def trace(model: Any, concrete_args: Mapping[str, Any] | None = None) -> Any:
    """``torch.fx`` symbolic tracing that records each node's call site in the model's source
    (:class:`symshape.torch.spans.SpanTracer`); a tracing failure is a
    :class:`symshape.SymshapeError` with torch's message and advice."""
    _torch()
    from symshape.torch.spans import span_tracer

    args = dict(concrete_args) if concrete_args else None
    try:
        return span_tracer().trace(model, concrete_args=args)
    except Exception as e:
        try:  # a model that branches on a buffer's contents traces with buffers as constants
            return span_tracer(proxy_buffers=False).trace(model, concrete_args=args)
        except Exception:
            pass
        first = str(e).strip().split("\n")[0]
        raise ss.SymshapeError(
            UNSUPPORTED_OP,
            f"torch.fx.symbolic_trace cannot trace {type(model).__name__}: "
            f"{type(e).__name__}: {first}. {_ADVICE}",
        ) from e


def _forward_names(fn: Any) -> list[str]:
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return []
    return [
        p.name
        for p in sig.parameters.values()
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and p.name != "self"
    ]


def import_model(
    model: Any,
    inputs: Any = None,
    *,
    dynamic: Mapping[str, Mapping[int, Any]] | None = None,
    concrete_args: Mapping[str, Any] | None = None,
) -> Imported:
    """Trace (or take) the model's graph and build its symshape program."""
    torch = _torch()
    from symshape.torch.importer import Importer
    from symshape.torch.inputs import input_types

    if isinstance(model, torch.export.ExportedProgram):
        return _import_exported(model, inputs, dynamic)
    if isinstance(model, torch.fx.GraphModule):
        names = [str(n.target) for n in model.graph.nodes if n.op == "placeholder"]
        types = input_types(names, inputs, dynamic)
        return Importer(model.graph, model, types, classes={}).run()
    if isinstance(model, torch.nn.Module):
        from symshape.torch.registry import lookup

        if lookup("call_module", type(model)) is not None:  # a leaf module: one call
            graph = _leaf_graph(model, inputs)
            names = [str(n.target) for n in graph.nodes if n.op == "placeholder"]
            return Importer(graph, model, input_types(names, inputs, dynamic)).run()
        graph = trace(model, concrete_args)
        placeholders = [n for n in graph.nodes if n.op == "placeholder"]
        fixed: dict[str, Any] = {}
        if concrete_args:  # fx renames the placeholder of a concrete argument (double -> double_1)
            for name, node in zip(_forward_names(model.forward), placeholders):
                if name in concrete_args:
                    fixed[str(node.target)] = concrete_args[name]
        names = [str(n.target) for n in placeholders if str(n.target) not in fixed]
        types = input_types(names, inputs, dynamic)
        return Importer(graph, model, types, forward=type(model).forward, constants=fixed).run()
    raise ss.SymshapeError(
        INVALID_ARGUMENT,
        "expected an nn.Module, a torch.fx.GraphModule or a torch.export.ExportedProgram, "
        f"got {type(model).__name__}",
    )


def _leaf_graph(model: Any, inputs: Any) -> Any:
    """The graph of a leaf module called on its forward arguments (the required ones and those
    given types)."""
    import torch

    given = set(inputs) if isinstance(inputs, Mapping) else set()
    graph = torch.fx.Graph()
    args = []
    try:
        params = list(inspect.signature(model.forward).parameters.values())
    except (TypeError, ValueError):
        params = []
    for i, p in enumerate(params):
        if p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            continue
        positional = isinstance(inputs, (tuple, list)) and i < len(inputs)
        if p.default is p.empty or p.name in given or positional:
            args.append(graph.placeholder(p.name))
        else:
            break
    graph.output(graph.call_module("", tuple(args)))
    return graph


def _import_exported(ep: Any, inputs: Any, dynamic: Mapping[str, Mapping[int, Any]] | None) -> Imported:
    import torch

    from symshape.torch.importer import ExportInfo, Importer
    from symshape.torch.inputs import input_types

    sig = ep.graph_signature
    targets: dict[str, str] = {}
    user: list[str] = []
    for spec in sig.input_specs:
        name = spec.arg.name
        if spec.kind.name == "USER_INPUT":
            user.append(name)
        elif spec.target is not None:
            targets[name] = spec.target
    tensors: dict[str, Any] = {}
    for path in targets.values():
        t = ep.state_dict.get(path)
        if t is None:
            t = ep.constants.get(path)
        if isinstance(t, torch.Tensor):
            tensors[path] = t
    outs = [i for i, spec in enumerate(sig.output_specs) if spec.kind.name == "USER_OUTPUT"]
    types = input_types(user, inputs, dynamic)
    if inputs is None:
        types = _types_from_meta(ep, user)
    info = ExportInfo(targets, tensors, tuple(user), tuple(outs))
    classes: dict[str, type] = {}
    return Importer(ep.graph_module.graph, None, types, classes=classes, export=info).run()


def _types_from_meta(ep: Any, user: list[str]) -> dict[str, ss.Type]:
    """Input types from an exported program's fake tensors (torch's symbols keep torch's names)."""
    from symshape.torch.context import dtype_name

    out: dict[str, ss.Type] = {}
    for node in ep.graph_module.graph.nodes:
        if node.op != "placeholder" or node.name not in user:
            continue
        val = node.meta.get("val")
        if val is None:
            continue
        dims = []
        for s in val.shape:
            dims.append(int(s) if isinstance(s, int) else ss.dim(str(s)))
        out[node.name] = ss.Tensor(tuple(dims), dtype_name(val.dtype))
    return out


def from_fx(
    graph_module: Any,
    inputs: Any = None,
    *,
    dynamic: Mapping[str, Mapping[int, Any]] | None = None,
) -> ss.Function:
    """The symshape program of a ``GraphModule`` (or ``nn.Module``/``ExportedProgram``).

    Its parameters are the model's inputs, then the model's parameters and buffers (named as the
    model's source spells them, ``self.fc2.weight``, annotated with their shapes). Unsupported
    nodes become parameters of unknown type; ``infer`` reports them.
    """
    return import_model(graph_module, inputs, dynamic=dynamic).program


def infer(
    model: Any,
    inputs: Any = None,
    strict: bool = False,
    timeout_ms: int = 2000,
    *,
    dynamic: Mapping[str, Mapping[int, Any]] | None = None,
    concrete_args: Mapping[str, Any] | None = None,
) -> TorchInferenceResult:
    """Infer the types of every node of a PyTorch model.

    ``model``: an ``nn.Module`` (traced with ``torch.fx`` symbolic tracing), a ``GraphModule`` or
    a ``torch.export.ExportedProgram``. ``inputs``: forward-argument names to symshape types, or a
    tuple of example tensors with ``dynamic={"x": {0: "batch"}}`` naming the symbolic dimensions.
    The result's ``type_of`` takes fx nodes and node names.
    """
    from symshape.torch.result import TorchInferenceResult

    imported = import_model(model, inputs, dynamic=dynamic, concrete_args=concrete_args)
    inner = ss.infer(imported.program, strict=strict, timeout_ms=timeout_ms)
    return TorchInferenceResult(inner, imported)
