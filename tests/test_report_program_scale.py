"""``report(program=True)`` and ``str(program)`` of a DAG print each shared sub-expression once.

A program is a DAG (an ONNX graph's values feed several nodes, residual and inception blocks
branch and join). The printer once printed it as a tree, repeating a shared part once per path to
it: exponential text (``light_inception_v1.onnx`` took minutes, an ONNX BERT encoder never ended).
Now a sub-expression used twice is defined once (``%0 = ...;`` before the statement that first uses
it) and named after. Nothing here is timed: the printer's work is counted (the generators it makes,
one per expression printed) and must grow linearly, with a budget that stops an exponential printer
at once instead of hanging; the text is checked against the tree printing it stands for.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from benchmarks.workloads import transformer_chain

import symshape as ss
from symshape.ir import printer
from symshape.ir.visit import walk

F = "float32"
_DEF = re.compile(r"^\s*(%\d+) = (.*?);(  /\* .* \*/)?$")
_USE = re.compile(r"%(\d+)(?![\w/])")


class _OverBudget(Exception):
    pass


@contextmanager
def counting(budget: int = 10**9) -> Iterator[list[int]]:
    """Count the expressions the printer prints (each is one ``_Printer._expr`` generator);
    raise once the count passes ``budget``."""
    count = [0]
    orig = printer._Printer._expr

    def counted(self: Any, e: Any, ind: int) -> Any:
        count[0] += 1
        if count[0] > budget:
            raise _OverBudget(f"printed more than {budget} expressions")
        return orig(self, e, ind)

    printer._Printer._expr = counted  # type: ignore[method-assign]
    try:
        yield count
    finally:
        printer._Printer._expr = orig  # type: ignore[method-assign]


def printed_count(prog: ss.Expr) -> int:
    with counting(budget=10**6) as n:
        ss.infer(prog).report(program=True)
    return n[0]


def as_tree(e: ss.Expr) -> str:
    """The program printed as a tree (every shared part repeated: the old printing)."""
    return printer._Printer(None, set()).expr(e, 0)


def expand(text: str) -> str:
    """``text`` with each definition ``%N = ...;`` inlined where it is used, after checking that
    each is made once, before its first use."""
    defs: dict[str, str] = {}
    out = []
    for line in text.split("\n"):
        for u in _USE.findall(line):
            assert f"%{u}" in defs or _DEF.match(line), f"%{u} used before its definition"
        m = _DEF.match(line)
        if m:
            assert m.group(1) not in defs, f"{m.group(1)} defined twice"
            defs[m.group(1)] = _USE.sub(lambda u: defs.get("%" + u.group(1), u.group(0)), m.group(2))
            continue
        out.append(_USE.sub(lambda u: defs.get("%" + u.group(1), u.group(0)), line))
    return "\n".join(out)


def diamonds(depth: int) -> ss.Function:
    """``y = relu(y) + negative(y)``, ``depth`` times: a tree of 2**depth paths."""
    x = ss.var("x", ss.Tensor((2,), F))
    y: ss.Expr = x
    for _ in range(depth):
        y = ss.ops.add(ss.ops.relu(y), ss.ops.negative(y))
    return ss.Function([x], y)


def inception(blocks: int) -> ss.Function:
    """Inception-like blocks: four branches of one input, concatenated, inside a dataflow."""
    x = ss.var("x", ss.Tensor((1, 8, 4, 4), F))
    w = ss.var("w", ss.Tensor((8, 32, 1, 1), F))
    y: ss.Expr = x
    for _ in range(blocks):
        branches = [ss.ops.relu(y), ss.ops.sigmoid(y), ss.ops.tanh(y), ss.ops.exp(y)]
        y = ss.ops.conv2d(ss.ops.concatenate(branches, axis=1), w)
    out = ss.var("out")
    return ss.Function([x, w], ss.Dataflow([(out, y)], out))


# -- linear work -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "make, small",
    [(diamonds, 12), (inception, 10), (transformer_chain, 1000)],
    ids=["diamonds", "inception", "chain"],
)
def test_printed_expressions_grow_linearly(make: Callable[[int], ss.Expr], small: int) -> None:
    a, b = printed_count(make(small)), printed_count(make(2 * small))
    assert b <= 2.2 * a, (a, b)


@pytest.mark.parametrize("make, size", [(diamonds, 60), (inception, 30), (transformer_chain, 2000)])
def test_each_expression_is_printed_once(make: Callable[[int], ss.Expr], size: int) -> None:
    prog = make(size)
    nodes = sum(1 for _ in walk(prog))
    res = ss.infer(prog)
    with counting(budget=nodes) as n:  # an exponential printer stops here, it does not hang
        text = res.report(program=True)
    assert n[0] <= nodes
    assert text.startswith("status: ok\nfn (")


# -- the text ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("make, size", [(diamonds, 8), (inception, 3)], ids=["diamonds", "inception"])
def test_dag_text_stands_for_the_tree(make: Callable[[int], ss.Expr], size: int) -> None:
    prog = make(size)
    text = str(prog)
    assert len(re.findall(r"(?m)^\s*%\d+ = ", text)) == len(printer.shared_nodes(prog)) > 0
    assert expand(text) == as_tree(prog)
    typed = ss.infer(prog).report(program=True)
    assert re.sub(r"  /\* [^\n]* \*/", "", typed) == "status: ok\n" + text


def test_tree_program_prints_every_binding_once_in_order() -> None:
    prog = transformer_chain(300)
    assert not printer.shared_nodes(prog)
    text = ss.infer(prog).report(program=True)
    assert text.split("\n", 1)[1] == printer.expr_str(prog, ss.infer(prog)._safe_type)
    names = re.findall(r"(?m)^    (%\S+) = ", text)
    assert names == [f"%{v.name}" for v, _ in prog.body.bindings]
    assert len(set(names)) == len(names) == 300


def test_a_deep_let_chain_prints() -> None:
    x = ss.var("x", ss.Tensor((2,), F))
    vs = [ss.var(f"v{i}") for i in range(20_000)]
    body: ss.Expr = vs[-1]
    for i in reversed(range(len(vs))):
        body = ss.Let(vs[i], ss.ops.relu(vs[i - 1] if i else x), body)
    text = str(ss.Function([x], body))
    assert text.count("\n  let %v") == 20_000 and text.endswith("\n  %v19999\n}")


X_ = ss.var("x", ss.Tensor((2,), F))
C_ = ss.var("c", ss.Tensor((), "bool"))
V_ = ss.var("v")
R_ = ss.ops.relu(X_)
_Y = ss.var("y")
_F = ss.Function([_Y], ss.ops.relu(_Y))
_LIST = ss.GlobalTypeVar("List")
_A = ss.TypeVar("a")
_NIL = ss.Constructor("Nil", [], _LIST)
_CONS = ss.Constructor("Cons", [_A, ss.TypeCall(_LIST, [_A])], _LIST)
_XS, _H = ss.var("xs"), ss.var("h")
SCOPES = {
    # a name is used only inside the block that defines it: each branch defines its own
    "two branches": (
        ss.Function([X_, C_], ss.If(C_, ss.ops.add(R_, R_), ss.ops.multiply(R_, R_))),
        "fn (%x: Tensor[(2,), float32], %c: Tensor[(), bool]) {\n  if (%c) {\n    %0 = nn.relu(%x);\n"
        "    add(%0, %0)\n  } else {\n    %1 = nn.relu(%x);\n    multiply(%1, %1)\n  }\n}",
    ),
    "branch, then outside": (
        ss.Function([X_, C_], ss.Tuple([ss.If(C_, ss.ops.add(R_, R_), X_), R_])),
        "fn (%x: Tensor[(2,), float32], %c: Tensor[(), bool]) {\n  %1 = nn.relu(%x);\n  (if (%c) {\n"
        "    %0 = nn.relu(%x);\n    add(%0, %0)\n  } else {\n    %x\n  }, %1)\n}",
    ),
    "let": (
        ss.Function([X_], ss.Let(V_, ss.ops.add(R_, R_), ss.ops.multiply(V_, R_))),
        "fn (%x: Tensor[(2,), float32]) {\n  %0 = nn.relu(%x);\n  let %v = add(%0, %0);\n"
        "  multiply(%v, %0)\n}",
    ),
    "top level": (ss.Tuple([R_, R_]), "%0 = nn.relu(%x);\n(%0, %0)"),
    # a shared function used as a callee: its body one level in from its definition
    "shared callee": (
        ss.Function([X_], ss.Tuple([ss.Call(_F, [X_]), ss.Call(_F, [X_])])),
        "fn (%x: Tensor[(2,), float32]) {\n  %0 = fn (%y) {\n    nn.relu(%y)\n  };\n  (%0(%x), %0(%x))\n}",
    ),
    # a match clause whose body has definitions or lets starts it on its own line
    "match clauses": (
        ss.Function(
            [_XS, X_],
            ss.Match(
                _XS,
                [
                    ss.Clause(
                        ss.PatternConstructor(_CONS, [ss.PatternVar(_H), ss.PatternWildcard()]),
                        ss.ops.add(ss.ops.add(_H, R_), R_),
                    ),
                    ss.Clause(ss.PatternConstructor(_NIL, []), ss.Let(V_, ss.ops.multiply(X_, X_), V_)),
                    ss.Clause(ss.PatternWildcard(), X_),
                ],
            ),
        ),
        "fn (%xs, %x: Tensor[(2,), float32]) {\n  match (%xs) {\n    | Cons(%h, _) =>\n"
        "      %0 = nn.relu(%x);\n      add(add(%h, %0), %0)\n    | Nil =>\n"
        "      let %v = multiply(%x, %x);\n      %v\n    | _ => %x\n  }\n}",
    ),
    "a variable named 0": (
        ss.Function([X_], ss.Let(ss.var("0"), ss.ops.add(R_, R_), ss.ops.relu(R_))),
        "fn (%x: Tensor[(2,), float32]) {\n  %1 = nn.relu(%x);\n  let %0 = add(%1, %1);\n  nn.relu(%1)\n}",
    ),
}


@pytest.mark.parametrize("prog, want", SCOPES.values(), ids=SCOPES.keys())
def test_shared_names_stay_in_their_block(prog: ss.Expr, want: str) -> None:
    assert str(prog) == want
    assert str(prog) == want  # deterministic


# -- ONNX models ---------------------------------------------------------------------------------------
def _light_models() -> list[str]:
    try:
        import onnx
    except ImportError:
        return []
    d = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light")
    if not os.path.isdir(d):
        return []
    return sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith(".onnx"))


@pytest.mark.parametrize("path", _light_models(), ids=lambda p: os.path.basename(p)[:-5])
def test_light_onnx_model_report_prints_each_node_once(path: str) -> None:
    import symshape.onnx as sso

    res = sso.infer(path)
    nodes = sum(1 for _ in walk(res.program))
    with counting(budget=nodes) as n:
        text = res.report(program=True)
    assert n[0] <= nodes
    expand(text)  # each definition once, before its uses
