"""``symshape check model.onnx [--dim NAME[=VALUE]]... [--strict] [--json]``.

The ``check`` subcommand of :mod:`symshape.cli` hands a path ending in ``.onnx`` to
:func:`check_onnx`. It infers the model (:func:`symshape.onnx.infer`) and prints the graph inputs'
and outputs' types, then the report (status, guards, errors); ``--json`` prints one JSON document
instead. Exit codes are those of ``symshape check`` for Python files: ``0`` well typed (``ok`` or
``guarded``; with ``--strict`` only ``ok``), ``1`` type errors (``error``, ``unresolved``,
``inconclusive``; a node that cannot be converted is an ``unsupported-op`` error), ``2`` bad usage
(no such file, not an ONNX model, a malformed ``--dim``, the ``onnx`` extra missing).

The model is read as ``symshape.onnx.infer(path)`` reads it (:mod:`symshape.onnx.loading`): without
``onnx.load``'s walk over every tensor for external data; an external tensor's bytes are read, from
the model's folder, only for the values the importer keeps (a file of them that cannot be read is a
usage error naming it; the weights are never read).

``--dim`` (repeatable) says what a dimension is:

* ``--dim N=8`` — the ``dim_param`` ``N`` is the size 8 everywhere it occurs; where the model
  does not run at that size (a guard of the model inferred with ``N`` symbolic is false there),
  the explanation (:meth:`~symshape.InferenceResult.why_invalid`) is printed and the exit code
  is 1;
* ``--dim N`` — ``N`` is a symbol (what a ``dim_param`` is anyway, so for a ``dim_param`` of the
  model this changes nothing).

A NAME that is **not** a ``dim_param`` of any graph input names the *batch*: dimension 0 of every
graph input that is not an initializer, has a shape of rank at least 1, and whose dimension 0 is not
a ``dim_param`` becomes that name (``--dim N`` on a model shipped with batch 1 makes its batch the
symbol ``N``; ``--dim N=4`` runs it at batch 4). The output says which inputs it changed
(``--dim N: not a dim_param of the model; dimension 0 of input 'data_0'``). A name that is not a
``dim_param`` and finds no such input is a usage error. Only one name may stand for the batch.

>>> parse_dim_option("N=8"), parse_dim_option("N")
(('N', 8), ('N', None))
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import onnx

    from symshape.onnx.result import OnnxInferenceResult

__all__ = [
    "check_onnx",
    "parse_dim_option",
    "DimBinding",
    "bind_dims",
    "UsageError",
    "EXIT_OK",
    "EXIT_TYPE_ERROR",
]

_NAME = re.compile(r"[A-Za-z_][A-Za-z_0-9]*")


# the exit codes of symshape.cli (tests/onnx/test_onnx_cli.py checks they agree); this module
# sits below the CLI in the layers, so the CLI turns a UsageError into its own usage report
EXIT_OK = 0
EXIT_TYPE_ERROR = 1


class UsageError(Exception):
    """Bad usage of ``symshape check model.onnx``: the CLI reports it (exit code 2)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def _usage(message: str) -> Exception:
    return UsageError(message)


def parse_dim_option(text: str) -> tuple[str, int | None]:
    """``NAME`` or ``NAME=VALUE`` (VALUE a non-negative int) as ``(name, value or None)``; anything
    else is a usage error."""
    name, eq, value = text.partition("=")
    name = name.strip()
    if not _NAME.fullmatch(name):
        raise _usage(f"--dim {text!r}: NAME must be an identifier (NAME or NAME=VALUE)")
    if not eq:
        return name, None
    value = value.strip()
    if not value.isdigit():
        raise _usage(f"--dim {text!r}: VALUE must be a non-negative integer")
    return name, int(value)


@dataclass(frozen=True)
class DimBinding:
    """What one ``--dim`` did: the name, its value (None: a symbol) and, for a name that is not a
    ``dim_param`` of the model, the graph inputs whose dimension 0 it became."""

    name: str
    value: int | None
    batch_of: tuple[str, ...] = ()

    def describe(self) -> str:
        what = self.name if self.value is None else f"{self.name}={self.value}"
        if not self.batch_of:
            return f"--dim {what}: the dim_param {self.name}"
        inputs = ", ".join(f"'{x}'" for x in self.batch_of)
        return f"--dim {what}: not a dim_param of the model; dimension 0 of input {inputs}"

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "value": self.value, "batch_of": list(self.batch_of)}


def _dim_params(model: onnx.ModelProto) -> set[str]:
    out: set[str] = set()
    for vi in model.graph.input:
        tt = vi.type.tensor_type if vi.type.HasField("tensor_type") else None
        if tt is None or not tt.HasField("shape"):
            continue
        out.update(d.dim_param for d in tt.shape.dim if d.HasField("dim_param") and d.dim_param)
    return out


def bind_dims(model: onnx.ModelProto, options: Sequence[str]) -> tuple[dict[str, Any], list[DimBinding]]:
    """The ``dims`` for :func:`symshape.onnx.infer` from the ``--dim`` options, and what each did.

    Edits ``model`` in place for a name that is not a ``dim_param`` (see the module docstring).
    """
    parsed: dict[str, int | None] = {}
    for text in options:
        name, value = parse_dim_option(text)
        if name in parsed and parsed[name] != value:
            raise _usage(f"--dim {name} is given twice with different values")
        parsed[name] = value
    params = _dim_params(model)
    batch_names = [n for n in parsed if n not in params]
    if len(batch_names) > 1:
        names = ", ".join(batch_names)
        raise _usage(
            f"--dim {names}: not dim_params of the model; only one name may stand for the batch "
            f"(dim_params: {', '.join(sorted(params)) or 'none'})"
        )
    bindings: list[DimBinding] = []
    dims: dict[str, Any] = {}
    inits = {t.name for t in model.graph.initializer}
    for name, value in parsed.items():
        batch_of: tuple[str, ...] = ()
        if name not in params:
            batch_of = _make_batch(model, name, inits)
            if not batch_of:
                raise _usage(
                    f"--dim {name}: not a dim_param of the model, and no graph input has a fixed "
                    f"dimension 0 to make it (dim_params: {', '.join(sorted(params)) or 'none'})"
                )
        if value is not None:
            dims[name] = value
        bindings.append(DimBinding(name, value, batch_of))
    return dims, bindings


def _make_batch(model: onnx.ModelProto, name: str, inits: set[str]) -> tuple[str, ...]:
    changed: list[str] = []
    for vi in model.graph.input:
        if vi.name in inits or not vi.type.HasField("tensor_type"):
            continue
        tt = vi.type.tensor_type
        if not tt.HasField("shape") or len(tt.shape.dim) == 0:
            continue
        d = tt.shape.dim[0]
        if d.HasField("dim_param") and d.dim_param:
            continue
        d.Clear()
        d.dim_param = name
        changed.append(vi.name)
    return tuple(changed)


def _type_text(res: OnnxInferenceResult, name: str) -> str:
    from symshape import SymshapeError

    try:
        return str(res.type_of(name))
    except SymshapeError as exc:
        return f"<unknown: {exc.message}>"


def _invalid_at(
    model: onnx.ModelProto, base_dir: str, dims: dict[str, Any], timeout_ms: int, path: str
) -> str | None:
    """Where ``--dim NAME=VALUE`` gives sizes: the model inferred with those names as symbols,
    and ``why_invalid`` at the values when it does not run there (None when it does, when no
    value is given, or when the symbolic model has errors of its own)."""
    import symshape as ss
    import symshape.onnx as sso

    values = {k: v for k, v in dims.items() if isinstance(v, int)}
    if not values:
        return None
    symbolic = {k: (ss.dim(k) if k in values else v) for k, v in dims.items()}
    res = sso._infer_loaded(model, path, base_dir, symbolic, timeout_ms=timeout_ms)
    if res.status == "error":
        return None  # the concrete run reports the errors
    try:
        if res.valid_at(values):
            return None
    except ss.SymshapeError:
        return None  # the values do not decide it: the concrete run says what it finds
    return res.why_invalid(values)


def _output_text(
    model: onnx.ModelProto,
    path: str,
    res: OnnxInferenceResult,
    bindings: list[DimBinding],
    why: str | None,
    as_json: bool,
) -> str:
    """What ``symshape check`` prints (see the module docstring), holes named by their ids."""
    from symshape import __version__

    inits = {t.name for t in model.graph.initializer}
    inputs = {vi.name: _type_text(res, vi.name) for vi in model.graph.input if vi.name not in inits}
    outputs = {vi.name: _type_text(res, vi.name) for vi in model.graph.output}
    if as_json:
        doc = {
            "version": __version__,
            "file": path,
            "status": res.status,
            "dims": [b.to_json() for b in bindings],
            "inputs": inputs,
            "outputs": outputs,
            "guards": [str(g) for g in res.guards],
            "warnings": [d.to_json() for d in res.warnings],
            "errors": [d.to_json() for d in res.diagnostics],
        }
        if why is not None:
            doc["why_invalid"] = why
        return json.dumps(doc, indent=2)
    lines = [b.describe() for b in bindings]
    width = max((len(k) for k in [*inputs, *outputs]), default=0)
    lines.append("inputs:")
    lines.extend(f"  {k.ljust(width)} : {t}" for k, t in inputs.items())
    lines.append("outputs:")
    lines.extend(f"  {k.ljust(width)} : {t}" for k, t in outputs.items())
    if why is not None:
        lines.append(why)
    lines.append(res.report())
    return "\n".join(lines)


def check_onnx(path: str, dim_options: Sequence[str], strict: bool, timeout_ms: int, as_json: bool) -> int:
    """Run ``symshape check`` on an ONNX model; the exit code (see the module docstring)."""
    import os

    if timeout_ms <= 0:
        raise _usage(f"--timeout-ms must be positive, got {timeout_ms}")
    if not os.path.exists(path):
        raise _usage(f"no such file: {path}")
    if not os.path.isfile(path):
        raise _usage(f"not a file: {path}")
    import symshape.onnx as sso
    from symshape import SymshapeError
    from symshape.onnx.loading import read_model_file
    from symshape.solver.diagnostics import raw_ids, renumber_ids

    try:
        model = read_model_file(path)
    except Exception as e:
        msg = " ".join(str(e).split()) or type(e).__name__
        raise _usage(f"{path} is not an ONNX model: {msg}") from None
    base_dir = os.path.dirname(os.path.abspath(path))
    dims, bindings = bind_dims(model, dim_options)
    with raw_ids():  # (the whole output numbers its unknown types once, below)
        try:
            why = _invalid_at(model, base_dir, dims, timeout_ms, path)
            res = sso._infer_loaded(model, path, base_dir, dims, strict, timeout_ms)
        except SymshapeError as e:
            raise _usage(f"{path}: {e}") from None
        text = _output_text(model, path, res, bindings, why, as_json)
    print(renumber_ids(text))
    well_typed = why is None and (res.status == "ok" or (res.status == "guarded" and not strict))
    return EXIT_OK if well_typed else EXIT_TYPE_ERROR
