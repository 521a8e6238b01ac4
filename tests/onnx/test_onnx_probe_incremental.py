"""Incremental type probes: each infers only the part of the program added since the last one.

A converter that asks the type of a value the model does not declare (``Resize``'s rank, a
``CumSum`` axis, a ``Resize`` target computed from ``Shape``) used to infer the whole program
converted so far: a chain of ``n`` such nodes cost ``O(n**2)`` (800 ``Resize`` nodes: 3.5 s). The
oracle is the old probe (:func:`~symshape.onnx.probe.bound_types`, ``Probes(incremental=False)``):
on random chains mixing probing and non-probing operators (symbolic and constant dimensions,
shape values, stand-ins of unknown rank, ``If`` and ``Scan`` subgraphs), every answer the full
inference gives, the incremental probe gives too, and the conversion follows the oracle's answers.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

import numpy as np
import onnx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper

import symshape as ss
import symshape.onnx as sso
from symshape import Expr, IncompleteType, Type
from symshape.encoding.composite_types import map_dims
from symshape.encoding.dim_atoms import AnyDim
from symshape.encoding.type_walks import iter_types
from symshape.onnx import probe
from symshape.onnx.importer import Importer
from symshape.onnx.probe import REINFER_LIMIT, Probes, settled


class DualProbes(Probes):
    """Answers as the full re-inference does (the oracle) and checks that the incremental probe
    gives the same type wherever the full one gives one."""

    def __init__(self) -> None:
        super().__init__(incremental=False)
        self.inc = Probes()
        self.answers: list[tuple[str, str]] = []  # (full, incremental), each asked type

    def type_of(
        self,
        e: Expr,
        params: Sequence[ss.Var],
        scopes: Sequence[Sequence[tuple[ss.Var, Expr]]],
        unbound: Sequence[tuple[str, Expr, object]],
        timeout_ms: int,
    ) -> Type | None:
        full = super().type_of(e, params, scopes, unbound, timeout_ms)
        inc = self.inc.type_of(e, params, scopes, unbound, timeout_ms)
        if full is not None and _typed(full):
            self.answers.append((_alpha(full), _alpha(inc)))
        return full


def _alpha(t: Type | None) -> str:
    """``t`` printed with its unknowns (``?d12``, ``?t3``) and its numbered ``?`` dimensions (the
    joins of ``If`` branches: fresh in each inference) renamed in the order they appear: equal for
    types equal up to renaming them."""
    if t is None:
        return "None"
    anys: dict[Any, ss.Dim] = {}

    def rename(d: ss.Dim) -> ss.Dim:
        for a in d.atoms():
            if isinstance(a, AnyDim) and a.id and a not in anys:
                anys[a] = ss.dim(f"any{len(anys)}")
        mapping: dict[Any, ss.Dim | int] = {a: anys[a] for a in d.atoms() if a in anys}
        return d.subs(mapping) if mapping else d

    names: dict[str, str] = {}
    text = str(map_dims(t, rename))
    return re.sub(r"\?([dt])\d+", lambda m: names.setdefault(m[0], f"?{m[1]}{len(names)}"), text)


def _typed(t: Type) -> bool:
    """Whether ``t`` is a type (no hole: where a program has an error, the full inference may
    leave what follows it a hole, which a probe's part, seeing the types before, does not)."""
    return not any(isinstance(x, IncompleteType) for x in iter_types(t))


def _branch(name: str, op: str, x: str) -> onnx.GraphProto:
    out = helper.make_tensor_value_info(f"{name}_o", TensorProto.FLOAT, None)
    inputs = [x, "", "sc"] if op == "Resize" else [x]
    attrs: dict[str, Any] = {"perm": [0, 1, 3, 2]} if op == "Transpose" else {}
    n = helper.make_node(op, inputs, [f"{name}_o"], name=f"{name}_n", **attrs)
    return helper.make_graph([n], name, [], [out])


def _scan_body(name: str) -> onnx.GraphProto:
    """A body with state ``s`` and scan input ``x`` (one step of the scanned value): ``s`` through
    a ``Resize`` (a probe inside the subgraph), ``x`` through a ``CumSum``."""
    s, x = f"{name}_s", f"{name}_x"
    nodes = [
        helper.make_node("Resize", [s, "", "sc"], [f"{name}_s2"], name=f"{name}_r"),
        helper.make_node("CumSum", [x, "ax0"], [f"{name}_y"], name=f"{name}_c"),
    ]
    ins = [helper.make_tensor_value_info(v, TensorProto.FLOAT, None) for v in (s, x)]
    outs = [helper.make_tensor_value_info(v, TensorProto.FLOAT, None) for v in (f"{name}_s2", f"{name}_y")]
    return helper.make_graph(nodes, name, ins, outs)


def _scan(a: str, b: str, k: str) -> list[onnx.NodeProto]:
    body = _scan_body(f"{k}_b")
    return [helper.make_node("Scan", [a, a], [b, f"{k}_ys"], name=k, body=body, num_scan_inputs=1)]


def _if(a: str, b: str, k: str, other: str = "Relu") -> list[onnx.NodeProto]:
    """``If`` over a run-time condition: ``Resize`` or ``other`` (``Transpose``: the join of the
    branches has fresh dimensions where the last two differ)."""
    then_g, else_g = _branch(f"{k}_t", "Resize", a), _branch(f"{k}_e", other, a)
    return [helper.make_node("If", ["cond"], [b], name=k, then_branch=then_g, else_branch=else_g)]


_make = helper.make_node

#: each operator of the chains: the nodes from value ``a`` to value ``b`` (``k``: a name prefix)
NODES: dict[str, Callable[[str, str, str], list[onnx.NodeProto]]] = {
    "Resize": lambda a, b, k: [_make("Resize", [a, "", "sc"], [b], name=k)],
    "CumSum": lambda a, b, k: [_make("CumSum", [a, "ax"], [b], name=k)],
    "Relu": lambda a, b, k: [_make("Relu", [a], [b], name=k)],
    "Unknown": lambda a, b, k: [_make("NoSuchOp", [a], [b], name=k)],  # (a stand-in: unknown rank)
    "Transpose": lambda a, b, k: [_make("Transpose", [a], [b], name=k, perm=[0, 1, 3, 2])],
    "Add": lambda a, b, k: [_make("Add", [a, "y"], [b], name=k)],
    # the sizes of the last two axes swapped: needs the shape value
    "SwapReshape": lambda a, b, k: [
        _make("Shape", [a], [f"{k}_s"], name=f"{k}_s"),
        _make("Gather", [f"{k}_s", "swap"], [f"{k}_g"], name=f"{k}_g"),
        _make("Reshape", [a, f"{k}_g"], [b], name=k),
    ],
    # a Resize to its input's own sizes, read from the value a probe gives
    "SizesResize": lambda a, b, k: [
        _make("Shape", [a], [f"{k}_s"], name=f"{k}_s"),
        _make("Concat", [f"{k}_s"], [f"{k}_c"], name=f"{k}_c", axis=0),
        _make("Resize", [a, "", "", f"{k}_c"], [b], name=k),
    ],
    "Slice": lambda a, b, k: [_make("Slice", [a, "st", "en", "axs"], [b], name=k)],
    "Concat": lambda a, b, k: [_make("Concat", [a, a], [b], name=k, axis=1)],
    "If": _if,
    "IfSwap": lambda a, b, k: _if(a, b, k, "Transpose"),
    "Scan": _scan,
}
OPS = tuple(NODES)

_INITS: dict[str, np.ndarray[Any, Any]] = {
    "sc": np.ones(4, np.float32),
    "ax": np.array(1, np.int64),
    "ax0": np.array(0, np.int64),
    "swap": np.array([0, 1, 3, 2], np.int64),
    "st": np.array([0], np.int64),
    "en": np.array([2], np.int64),
    "axs": np.array([2], np.int64),
}


def chain(ops: Sequence[str], dims: Sequence[int | str]) -> onnx.ModelProto:
    """``ops`` applied in turn to the input ``v0`` of shape ``dims`` (rank 4), no ``value_info``."""
    nodes = [n for i, op in enumerate(ops) for n in NODES[op](f"v{i}", f"v{i + 1}", f"n{i}")]
    inputs = [
        helper.make_tensor_value_info("v0", TensorProto.FLOAT, list(dims)),
        helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1, 1, dims[3]]),
        helper.make_tensor_value_info("cond", TensorProto.BOOL, []),
    ]
    out = [helper.make_tensor_value_info(f"v{len(ops)}", TensorProto.FLOAT, None)]
    inits = [numpy_helper.from_array(v, n) for n, v in _INITS.items()]
    g = helper.make_graph(nodes, "chain", inputs, out, inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])


def _dual(model: onnx.ModelProto) -> tuple[DualProbes, Type]:
    """The dual probes of importing ``model`` and the type of its output."""
    imp = Importer(model, "chain")
    probes = imp._probes = DualProbes()
    fn = imp.run()
    return probes, ss.infer(fn).type_of(fn.body)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.sampled_from(OPS), min_size=1, max_size=10),
    st.tuples(*(st.sampled_from([2, 3, 5, s]) for s in ("N", "C", "H", "W"))),
)
def test_incremental_probes_answer_as_the_full_inference(ops: list[str], dims: tuple[int | str, ...]) -> None:
    probes, _ = _dual(chain(ops, dims))
    for full, inc in probes.answers:
        assert inc == full


@pytest.mark.parametrize(
    "ops",
    [
        ["SwapReshape", "Resize", "SizesResize", "Resize"],
        ["If", "Resize", "Scan", "CumSum", "SizesResize"],
        ["IfSwap", "Resize", "SwapReshape", "IfSwap", "SizesResize", "CumSum"],
        ["Unknown", "Resize", "CumSum", "Relu"],
        ["Slice", "Concat", "Resize", "Transpose", "SizesResize", "Add", "CumSum"],
    ],
)
@pytest.mark.parametrize("dims", [(2, 3, 4, 5), ("N", 3, "H", "W")])
def test_table_of_chains(ops: list[str], dims: tuple[int | str, ...]) -> None:
    """Fixed chains (shape values through parts, subgraphs, stand-ins): the same answers, and
    the final result as sso.infer gives it."""
    probes, out = _dual(chain(ops, dims))
    assert probes.answers and all(inc == full for full, inc in probes.answers)
    assert probes.inc.count == probes.count
    direct = sso.infer(chain(ops, dims))
    assert _alpha(direct.type_of(f"v{len(ops)}")) == _alpha(out)


def test_a_shape_value_crosses_parts() -> None:
    """``SizesResize`` over constant dimensions reads its target from the value a probe gives
    ``Shape`` of a value made in an earlier part: the value survives the cut."""
    imp = Importer(chain(["Transpose", "Resize", "SizesResize", "SizesResize"], (2, 3, 4, 5)), "chain")
    imp.run()
    res = sso.infer(chain(["Transpose", "Resize", "SizesResize", "SizesResize"], (2, 3, 4, 5)))
    assert res.status == "ok" and str(res.type_of("v4")) == "Tensor[(2, 3, 5, 4), float32]"
    assert imp._probes.count >= 3


@pytest.mark.parametrize("op", ["Resize", "CumSum"])
def test_a_chain_of_probing_nodes_infers_each_node_a_bounded_number_of_times(op: str) -> None:
    """Linear: the probes of a 400-node chain infer each binding and call once (the full
    re-inference inferred 400 * 399 / 2 of them)."""
    imp = Importer(chain([op] * 400, ("N", 3, "H", "W")), "chain")
    imp.run()
    assert imp._probes.count == 399
    assert imp._probes.inferred <= 2 * 400


def test_settled() -> None:
    n = ss.dim("n")
    assert settled(ss.Tensor((n, 3), "float32"))
    assert settled(ss.Tensor(None, None))
    assert settled(ss.TupleType((ss.Tensor((2,), "int64", value=(n, 4)),)))
    assert not settled(ss.IncompleteType("type"))
    assert not settled(ss.TupleType((ss.Tensor((n,), "float32"), ss.IncompleteType("type"))))


def test_types_not_settled_are_inferred_again_a_bounded_number_of_times() -> None:
    """After a stand-in of unknown rank, ``Transpose`` gives four unknown dimensions: each probe
    infers at most REINFER_LIMIT earlier values again (the full re-inference of 400 ``CumSum``
    nodes after it took 70 s), and answers as the full one on a short chain."""
    ops = ["Unknown", "Transpose"] + ["CumSum"] * 200
    imp = Importer(chain(ops, ("N", 3, "H", "W")), "chain")
    imp.run()
    assert imp._probes.count == 200
    assert imp._probes.inferred <= (REINFER_LIMIT + 2) * 200
    probes, out = _dual(chain(ops[:12], ("N", 3, "H", "W")))
    assert len(probes.answers) == 10 and all(inc == full for full, inc in probes.answers)
    assert "?d" in probes.answers[-1][0] and isinstance(out, ss.TensorType) and out.ndim == 4


def test_a_part_that_cannot_be_cut_out_is_inferred_with_the_whole_program(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def refuse(*args: object) -> NoReturn:
        raise ss.SymshapeError("invalid-argument", "no part")

    monkeypatch.setattr(probe, "_part_types", refuse)
    probes, _ = _dual(chain(["Resize", "SwapReshape", "CumSum", "SizesResize"], ("N", 3, 4, "W")))
    assert len(probes.answers) >= 4 and all(inc == full for full, inc in probes.answers)
    assert probes.inc.inferred == probes.inferred  # (each probe inferred the whole program)


@pytest.mark.parametrize("dims", [(2, 3, 4, 6), ("N", 3, "H", "W")])
def test_sequence_values_cross_parts(dims: tuple[int | str, ...]) -> None:
    """A sequence (a tuple type) made in one part and read in later ones."""
    mk = helper.make_node
    nodes = [
        mk("Relu", ["x"], ["r"], name="a"),
        mk("SplitToSequence", ["r", "one"], ["s"], name="b", axis=1),
        mk("SequenceAt", ["s", "zero"], ["e0"], name="c"),
        mk("Resize", ["e0", "", "sc"], ["e1"], name="d"),
        mk("SequenceInsert", ["s", "e1"], ["s2"], name="e"),
        mk("SequenceAt", ["s2", "last"], ["e2"], name="f"),
        mk("CumSum", ["e2", "ax"], ["e3"], name="g"),
        mk("Resize", ["e3", "", "sc"], ["y"], name="h"),
    ]
    consts = {"one": 1, "zero": 0, "last": -1, "ax": 1}
    inits = [numpy_helper.from_array(np.array(v, np.int64), k) for k, v in consts.items()]
    inits.append(numpy_helper.from_array(np.ones(4, np.float32), "sc"))
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, list(dims))
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    g = helper.make_graph(nodes, "seq", [x], [y], inits)
    probes, out = _dual(helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)]))
    assert any(full.startswith("(Tensor") for full, _ in probes.answers)
    assert len(probes.answers) >= 6 and all(inc == full for full, inc in probes.answers)
    assert str(out) == f"Tensor[({dims[0]}, 1, {dims[2]}, {dims[3]}), float32]"
