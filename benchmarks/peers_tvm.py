"""The TVM Relax peer: the same workloads built with ``relax.BlockBuilder`` (``apache-tvm``).

``BlockBuilder.emit`` normalizes each call, which runs the operator's struct-info inference (Relax's
type/shape inference) with symbolic ``tir`` variables as dimensions; that is what is timed, together
with building the calls, exactly as a frontend would do it.

Works with ``apache-tvm`` 0.27 (``tvm.tirx``, ``relax.TensorType``) and with older releases
(``tvm.tir``, ``relax.TensorStructInfo``).
"""

from __future__ import annotations

import contextlib
import gc
import os
from collections.abc import Iterator
from typing import Any

from benchmarks.specs import FEATURES, NUM_CLASSES, POOL, ConvSpec, chain_ops, error_index, resnet50

__all__ = ["NAME", "version", "transformer_chain", "resnet50_net"]

NAME = "tvm-relax"


def version() -> str | None:
    """The installed ``apache-tvm`` version, or None when it is missing or does not import."""
    try:
        import tvm
        from tvm import relax  # noqa: F401
    except Exception:
        return None
    from importlib import metadata

    try:
        return metadata.version("apache-tvm")
    except metadata.PackageNotFoundError:
        return str(tvm.__version__)


def _api() -> tuple[Any, Any, Any]:
    import tvm
    from tvm import relax

    tir = getattr(tvm, "tirx", None) or tvm.tir
    tensor = getattr(relax, "TensorStructInfo", None) or relax.TensorType
    return relax, tir, tensor


@contextlib.contextmanager
def _quiet_stderr() -> Iterator[None]:
    """Silence TVM's C++ log line ("BlockBuilder destroyed with remaining blocks") after an error."""
    try:
        fd = os.dup(2)
    except OSError:
        yield
        return
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 2)
            yield
    finally:
        os.dup2(fd, 2)
        os.close(fd)


def transformer_chain(n_ops: int, inject_error: bool = False) -> dict[str, Any]:
    """Workload (a) (and (c) with ``inject_error``): the chain over ``(n, s, 64)``."""
    relax, tir, tt = _api()
    n, s = tir.Var("n", "int64"), tir.Var("s", "int64")
    x = relax.Var("x", tt([n, s, 64], "float32"))
    w = relax.Var("w", tt([64, 64], "float32"))
    w_bad = relax.Var("w_bad", tt([65, 64], "float32"))
    g = relax.Var("gamma", tt([64], "float32"))
    b = relax.Var("beta", tt([64], "float32"))
    bad = error_index(n_ops) if inject_error else -1
    bb = relax.BlockBuilder()
    op = relax.op
    params = [x, w, g, b] + ([w_bad] if inject_error else [])
    try:
        with bb.function("main", params):
            with bb.dataflow():
                y = x
                for i, name in enumerate(chain_ops(n_ops)):
                    if name == "matmul":
                        y = bb.emit(op.matmul(y, w_bad if i == bad else w))
                    elif name == "add":
                        y = bb.emit(op.add(y, x))
                    elif name == "reshape_flat":
                        y = bb.emit(op.reshape(y, [n * s, 64]))
                    elif name == "reshape_back":
                        y = bb.emit(op.reshape(y, [n, s, 64]))
                    elif name == "softmax":
                        y = bb.emit(op.nn.softmax(y, axis=-1))
                    elif name == "layer_norm":
                        y = bb.emit(op.nn.layer_norm(y, g, b, axes=[-1]))
                    else:  # pragma: no cover
                        raise AssertionError(name)
                out = bb.emit_output(y)
            bb.emit_func_output(out)
        mod = bb.get()
    except Exception as e:  # TVM reports the first error it finds as an exception
        if not inject_error:
            raise
        text = str(e).strip()
        msg = text.splitlines()[0] if text else type(e).__name__
    else:
        return {"status": "ok", "type": _type_str(mod["main"])}
    with _quiet_stderr():
        del bb
        gc.collect()
    return {"status": "error", "type": None, "message": msg}


def _type_str(func: Any) -> str:
    """The inferred result type of a Relax function (``ret_ty`` in 0.27, ``ret_struct_info`` before)."""
    for attr in ("ret_ty", "ret_struct_info"):
        if hasattr(func, attr):
            return str(getattr(func, attr))
    return "?"


def _conv(bb: Any, relax: Any, tt: Any, y: Any, c: ConvSpec, params: list[Any]) -> Any:
    op = relax.op
    w = relax.Var(f"{c.name}.weight", tt([c.cout, c.cin, c.kernel, c.kernel], "float32"))
    bn = [relax.Var(f"{c.name}.bn.{p}", tt([c.cout], "float32")) for p in ("gamma", "beta", "mean", "var")]
    params += [w, *bn]
    y = bb.emit(op.nn.conv2d(y, w, strides=c.stride, padding=c.pad))
    t = bb.emit(op.nn.batch_norm(y, *bn, axis=1))
    return bb.emit(relax.TupleGetItem(t, 0))


def resnet50_net() -> dict[str, Any]:
    """Workload (b): ResNet-50 over ``(b, 3, h, w)`` with symbolic batch, height and width."""
    relax, tir, tt = _api()
    op = relax.op
    bsym, h, wd = tir.Var("b", "int64"), tir.Var("h", "int64"), tir.Var("w", "int64")
    x = relax.Var("x", tt([bsym, 3, h, wd], "float32"))
    fc = relax.Var("fc.weight", tt([NUM_CLASSES, FEATURES], "float32"))
    stem, blocks = resnet50()
    bb = relax.BlockBuilder()
    # parameters are created while building; the function signature lists them afterwards, so
    # build inside a dataflow block of a function whose params are filled in at the end
    params: list[Any] = [x, fc]
    with bb.function("main"):
        with bb.dataflow():
            y = _conv(bb, relax, tt, x, stem, params)
            y = bb.emit(op.nn.relu(y))
            y = bb.emit(
                op.nn.max_pool2d(y, pool_size=POOL["pool_size"], strides=POOL["stride"], padding=POOL["pad"])
            )
            for blk in blocks:
                inp = y
                y = bb.emit(op.nn.relu(_conv(bb, relax, tt, y, blk.conv1, params)))
                y = bb.emit(op.nn.relu(_conv(bb, relax, tt, y, blk.conv2, params)))
                y = _conv(bb, relax, tt, y, blk.conv3, params)
                sc = inp if blk.downsample is None else _conv(bb, relax, tt, inp, blk.downsample, params)
                y = bb.emit(op.add(y, sc))
                y = bb.emit(op.nn.relu(y))
            y = bb.emit(op.nn.adaptive_avg_pool2d(y, output_size=1))
            y = bb.emit(op.reshape(y, [bsym, FEATURES]))
            y = bb.emit(op.linear(y, fc))
            out = bb.emit_output(y)
        bb.emit_func_output(out, params=params)
    return {"status": "ok", "type": _type_str(bb.get()["main"])}
