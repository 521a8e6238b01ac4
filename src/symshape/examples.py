"""Bundled example programs, used by ``symshape demo``, the tests and the notebooks.

Each example is a short Python program, written as a user would write a file for
``symshape check``: it builds a program with ``ss.*`` and binds it to ``model``. The functions below
run that source and return an :class:`Example` with the program, the named sub-expressions worth
showing, and the outcome the example is meant to demonstrate.

The source runs under a pseudo file name (``<demo:NAME>``) registered with :mod:`linecache`, so
the spans of the program point into the example's own source and error reports can quote it.

>>> import symshape as ss
>>> ex = broadcast_guard()
>>> res = ss.infer(ex.program)
>>> res.status, [str(g) for g in res.guards]
('guarded', ['n == 1 or n == 5'])
"""

from __future__ import annotations

import linecache
from dataclasses import dataclass
from typing import Any

__all__ = ["Example", "attention_block", "broadcast_guard", "broken_model", "all_examples"]


@dataclass(frozen=True)
class Example:
    """A bundled program and what inferring it is expected to give.

    ``source`` is the Python source that builds the program (it binds ``model``) and ``filename``
    the pseudo file name its spans carry. ``program`` is ``model``. ``bindings`` lists the
    sub-expressions whose inferred types the demo prints, by name, in program order.
    ``expect_status`` is the status :func:`symshape.infer` should end in and ``expect_codes`` the
    codes of the diagnostics it should report, in report order.
    """

    name: str
    description: str
    source: str
    filename: str
    program: Any
    bindings: tuple[tuple[str, Any], ...]
    expect_status: str
    expect_codes: tuple[str, ...] = ()


def _build(
    name: str,
    description: str,
    source: str,
    show: tuple[str, ...],
    expect_status: str,
    expect_codes: tuple[str, ...] = (),
) -> Example:
    filename = f"<demo:{name}>"
    # Register the source so that tracebacks and Diagnostic.render() can quote its lines.
    linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
    namespace: dict[str, Any] = {"__name__": f"symshape.examples.{name}"}
    exec(compile(source, filename, "exec"), namespace)
    return Example(
        name=name,
        description=description,
        source=source,
        filename=filename,
        program=namespace["model"],
        bindings=tuple((k, namespace[k]) for k in show),
        expect_status=expect_status,
        expect_codes=expect_codes,
    )


ATTENTION_BLOCK = """\
import symshape as ss

n, s = ss.dims("n s")                      # batch and sequence length: any values >= 1
x = ss.var("x", ss.Tensor((n, s, 64), "float32"))
wq, wk, wv = (ss.var(w, ss.Tensor((64, 64), "float32")) for w in ("wq", "wk", "wv"))
w1 = ss.var("w1", ss.Tensor((64, 256), "float32"))
b1 = ss.var("b1", ss.Tensor((256,), "float32"))
w2 = ss.var("w2", ss.Tensor((256, 64), "float32"))

q, k, v = ss.ops.matmul(x, wq), ss.ops.matmul(x, wk), ss.ops.matmul(x, wv)
scores = ss.ops.softmax(ss.ops.matmul(q, ss.ops.transpose(k, (0, 2, 1))), axis=-1)
attn = ss.ops.add(x, ss.ops.matmul(scores, v))
hidden = ss.ops.relu(ss.ops.add(ss.ops.matmul(attn, w1), b1))
out = ss.ops.add(attn, ss.ops.matmul(hidden, w2))
flat = ss.ops.flatten(out)
model = ss.Function([x, wq, wk, wv, w1, b1, w2], flat)
"""

BROADCAST_GUARD = """\
import symshape as ss

n = ss.dim("n")
x = ss.var("x", ss.Tensor((n, 3, 4), "float32"))
y = ss.var("y", ss.Tensor((5, 3, 4), "float32"))
z = ss.ops.add(x, y)                       # broadcasting n against 5
out = ss.ops.flatten(z)
model = ss.Function([x, y], out)
"""

BROKEN_MODEL = """\
import symshape as ss

n = ss.dim("n")
x = ss.var("x", ss.Tensor((n, 3, 4), "float32"))
y = ss.var("y", ss.Tensor((n, 5), "float32"))
fx = ss.ops.flatten(x)                     # (n, 12)
out = ss.ops.add(fx, y)                    # (n, 12) + (n, 5): 12 vs 5
model = ss.Function([x, y], out)
"""


def attention_block() -> Example:
    """Self-attention and an MLP over ``(n, s, 64)``: well typed for all ``n`` and ``s``."""
    return _build(
        "attention_block",
        "self-attention + MLP over x: (n, s, 64), for every n and s",
        ATTENTION_BLOCK,
        ("x", "q", "scores", "attn", "hidden", "out", "flat", "model"),
        expect_status="ok",
    )


def broadcast_guard() -> Example:
    """Broadcasting a symbolic batch ``n`` against ``5``: well typed only if n is 1 or 5."""
    return _build(
        "broadcast_guard",
        "x: (n, 3, 4) + y: (5, 3, 4) is well typed only under a guard on n",
        BROADCAST_GUARD,
        ("z", "out", "model"),
        expect_status="guarded",
    )


def broken_model() -> Example:
    """``flatten`` turns ``(n, 3, 4)`` into ``(n, 12)``, which cannot be added to ``(n, 5)``."""
    return _build(
        "broken_model",
        "flatten(x: (n, 3, 4)) + y: (n, 5) is a type error for every n (intended)",
        BROKEN_MODEL,
        ("fx",),
        expect_status="error",
        expect_codes=("not-broadcastable",),
    )


def all_examples() -> list[Example]:
    """The demo's examples, in the order ``symshape demo`` shows them."""
    return [attention_block(), broadcast_guard(), broken_model()]
