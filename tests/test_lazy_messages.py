"""Messages formatted only when read (:class:`symshape.relations.base.Lazy`) read exactly as the
eager f-strings did: the text of a refuted condition's diagnostic does not depend on when it was
formatted.

Three levels: :class:`Lazy` against f-string formatting of the same pieces over generated
arguments (dimensions, tensor types, ints, strings, nested messages); the ``reshape`` and
``broadcast`` diagnostics of generated refuted programs against their messages spelled out
eagerly; and a guarded program, whose messages are never read, against the same report."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

import symshape as ss
from symshape.relations.base import Lazy, message_text
from symshape.relations.common import shape_str
from symshape.relations.elementwise import _not_broadcastable

N, M = ss.dims("n m")

# -- Lazy against f-strings ---------------------------------------------------------------------

coeffs = st.integers(min_value=1, max_value=7)
polys = st.builds(lambda a, b, c: a * N + b * M * N + c, coeffs, st.integers(0, 3), st.integers(0, 5))
dims = polys | coeffs.map(lambda k: k * N)
tensors = st.lists(dims | st.integers(1, 9), max_size=3).map(lambda s: ss.Tensor(tuple(s), "float32"))
plain = dims | tensors | st.integers(-9, 99) | st.text(alphabet="ab(),* -_`", max_size=6)
literal = st.text(alphabet="xyz .:`()-", max_size=8)


def _eager(parts: list[str], args: list[Any]) -> str:
    """What an f-string with literal ``parts`` around the ``args`` prints (each argument is read
    before, as an f-string reads its fields)."""
    out = parts[0]
    for a, p in zip(args, parts[1:]):
        out += f"{a}{p}"
    return out


@given(st.lists(st.tuples(plain, literal), max_size=5), literal)
def test_lazy_formats_like_an_fstring(pairs: list[tuple[Any, str]], head: str) -> None:
    args = [a for a, _ in pairs]
    parts = [head, *(p for _, p in pairs)]
    fmt = "{}".join(p.replace("{", "{{").replace("}", "}}") for p in parts)
    lazy = Lazy(fmt, *args)
    assert lazy() == _eager(parts, args)
    assert str(lazy) == lazy()
    assert message_text(lazy) == lazy()


@given(st.lists(plain, min_size=1, max_size=3), st.lists(plain, max_size=3))
def test_nested_lazy_reads_inner_messages_first(inner: list[Any], outer: list[Any]) -> None:
    inner_msg = Lazy(" / ".join("{}" for _ in inner), *inner)
    got = Lazy("{}: " + ", ".join("{}" for _ in outer), inner_msg, *outer)()
    want = " / ".join(f"{a}" for a in inner) + ": " + ", ".join(f"{a}" for a in outer)
    assert got == want


@given(st.lists(dims | st.integers(-4, 9), max_size=4))
def test_lazy_function_message(spec: list[Any]) -> None:
    assert Lazy(shape_str, tuple(spec))() == shape_str(tuple(spec))
    assert message_text("plain text") == "plain text"


# -- refuted conditions: the diagnostics read as the eager messages ----------------------------

small = st.integers(1, 6)


@given(st.lists(small, min_size=1, max_size=3), st.lists(small, min_size=1, max_size=3), st.integers(1, 3))
def test_reshape_size_message(src: list[int], dst: list[int], k: int) -> None:
    """``reshape`` to a shape with another element count: ``… elements vs …``."""
    src_shape: tuple[ss.Dim | int, ...] = (k * N, *src)
    newshape: tuple[ss.Dim | int, ...] = (N, *dst)
    total_in = ss.parse_dim(f"{k}*n*{'*'.join(map(str, src))}", {"n": N})
    total_out = ss.parse_dim(f"n*{'*'.join(map(str, dst))}", {"n": N})
    x = ss.var("x", ss.Tensor(src_shape, "float32"))
    res = ss.infer(ss.Function([x], ss.ops.reshape(x, newshape)))
    if total_in == total_out:
        assert res.status == "ok"
        return
    assert [e.code for e in res.errors] == ["reshape-size"]
    t = ss.Tensor(src_shape, "float32")
    want = f"cannot reshape `{t}` to newshape {shape_str(newshape)}: {total_in} elements vs {total_out}"
    assert res.errors[0].message.split(" (needs `")[0] == want


@given(st.integers(2, 7))
def test_reshape_divide_message(a: int) -> None:
    """``reshape(x, (p, -1))`` where ``p`` divides no element count: ``… must divide …``."""
    x_t = ss.Tensor((a * N + 1,), "float32")  # odd and even counts alike: a*n + 1
    p = a * N
    x = ss.var("x", x_t)
    res = ss.infer(ss.Function([x], ss.ops.reshape(x, (p, -1))))
    assert [e.code for e in res.errors] == ["reshape-size"]
    want = f"cannot reshape `{x_t}` to newshape {shape_str((p, -1))}: {p} must divide {a * N + 1}"
    assert res.errors[0].message.split(" (needs `")[0] == want


@given(st.integers(1, 5), st.integers(1, 5), st.integers(0, 2))
def test_broadcast_message(a: int, b: int, extra: int) -> None:
    """``add`` of two dimensions that never broadcast (``2*a*n`` vs ``2*a*n + 1``)."""
    da = 2 * a * N
    db = 2 * a * N + 1
    ta = ss.Tensor((da, *([b] * extra)), "float32")
    tb = ss.Tensor((db, *([b] * extra)), "float32")
    x, y = ss.var("x", ta), ss.var("y", tb)
    res = ss.infer(ss.Function([x, y], ss.ops.add(x, y)))
    assert [e.code for e in res.errors] == ["not-broadcastable"]
    want = _not_broadcastable(ta, tb, extra + 1, da, db)
    assert res.errors[0].message.split(" (needs `")[0] == want
    assert res.errors[0].message.startswith(f"cannot broadcast `{ta}` and `{tb}`: dimension 0: {da} vs {db}")


def test_guarded_program_report_is_stable() -> None:
    """A program whose conditions are all guards (no message read) reports the same text on
    every run."""
    from benchmarks.workloads import z3_program

    texts = {ss.infer(z3_program(40)).report() for _ in range(2)}
    assert len(texts) == 1
    (text,) = texts
    assert "needs `n == m0 or n == 1 or m0 == 1`" in text
