"""Malformed ONNX models never crash or hang the importer (a fuzz test).

A mutator takes a real model (onnx's 9 light models, some of onnx's node test cases, a model with
If/Loop subgraphs) and corrupts one thing: a dimension, an attribute, a node's inputs or outputs, an
initializer, the opset imports, the graph, a subgraph. Then ``symshape.onnx.infer``, ``from_onnx``,
``infer_shapes`` and ``symshape check model.onnx`` run on it: each must give a result (of any
status) or raise ``SymshapeError`` with a code, within :data:`DEADLINE_S`; any other exception
(``RecursionError`` included) or a longer run is a failure.

CI runs :data:`CI_EXAMPLES` derandomized examples (< 60 s); ``SYMSHAPE_FUZZ_EXAMPLES=5000`` runs
more (a seed of its own with ``SYMSHAPE_FUZZ_SEED``). Every crash found has a case in
:data:`FOUND` (the mutation that reproduced it).
"""

from __future__ import annotations

import contextlib
import copy
import io
import os
import signal
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import onnx
import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st
from onnx import AttributeProto, GraphProto, ModelProto, TensorProto, helper, numpy_helper
from onnx_helpers import LIGHT, LIGHT_NAMES, In, make_model, node

import symshape.onnx as sso
from symshape import SymshapeError
from symshape.cli import main as cli_main

NODE_CASES = (
    "test_if",
    "test_loop11",
    "test_scan9_sum",
    "test_reshape_negative_dim",
    "test_slice",
    "test_conv_with_strides_padding",
    "test_gather_0",
    "test_split_equal_parts_1d_opset18",
    "test_concat_2d_axis_0",
    "test_resize_upsample_scales_nearest",
    "test_expand_dim_changed",
    "test_tile",
    "test_constant_pad",
    "test_einsum_batch_matmul",
    "test_range_float_type_positive_delta",
    "test_constantofshape_int_zeros",
    "test_nonzero_example",
    "test_squeeze",
    "test_unsqueeze_axis_0",
    "test_transpose_default",
    "test_flatten_axis0",
    "test_layer_normalization_2d_axis0",
    "test_gemm_all_attributes",
    "test_maxpool_2d_pads",
    "test_reduce_sum_keepdims_example",
    "test_softmax_axis_1",
    "test_onehot_with_axis",
    "test_depthtospace_example",
    "test_batchnorm_example",
    "test_convtranspose_pads",
    "test_gathernd_example_int32",
    "test_sequence_insert_at_back",
    "test_lstm_defaults",
)
DEADLINE_S = 20.0
CI_EXAMPLES = 300


def _control_model() -> ModelProto:
    """If whose branches reshape and add, inside a Loop body's neighbourhood (Loop at top level)."""
    f = "float32"
    then_g = helper.make_graph(
        [node("Relu", ["x"], ["t_out"], name="relu_then")],
        "then",
        [],
        [helper.make_tensor_value_info("t_out", TensorProto.FLOAT, None)],
    )
    shape = helper.make_tensor("sh", TensorProto.INT64, [1], [-1])
    else_g = helper.make_graph(
        [
            node("Constant", [], ["sh"], name="c_else", value=shape),
            node("Reshape", ["x", "sh"], ["e_out"], name="flat"),
        ],
        "else",
        [],
        [helper.make_tensor_value_info("e_out", TensorProto.FLOAT, None)],
    )
    body = helper.make_graph(
        [
            node("Identity", ["cond_in"], ["cond_out"], name="keep"),
            node("Add", ["acc_in", "one"], ["acc_out"], name="inc"),
        ],
        "body",
        [
            helper.make_tensor_value_info("i", TensorProto.INT64, []),
            helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
            helper.make_tensor_value_info("acc_in", TensorProto.FLOAT, ["n", 4]),
        ],
        [
            helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
            helper.make_tensor_value_info("acc_out", TensorProto.FLOAT, ["n", 4]),
        ],
    )
    nodes = [
        node("If", ["c"], ["y"], name="if0", then_branch=then_g, else_branch=else_g),
        node("Loop", ["trip", "c", "x"], ["z"], name="loop0", body=body),
    ]
    inits = {"trip": np.array(3, dtype=np.int64), "one": np.array(1.0, dtype=np.float32)}
    return make_model(nodes, [In("x", f, ("n", 4)), In("c", "bool", ())], ["y", "z"], inits=inits)


_SEEDS: dict[str, bytes] = {}


def _seed_names() -> list[str]:
    return [f"light:{n}" for n in LIGHT_NAMES] + [f"node:{n}" for n in NODE_CASES] + ["control"]


def seed_model(name: str) -> ModelProto:
    """A fresh copy of seed model ``name`` (``light:…``, ``node:…`` or ``control``)."""
    if name not in _SEEDS:
        kind, _, rest = name.partition(":")
        if kind == "light":
            m = onnx.load(os.path.join(LIGHT, f"light_{rest}.onnx"), load_external_data=False)
        elif kind == "node":
            from node_oracle import collect_cases

            (m,) = [c.model for c in collect_cases() if c.name == rest]
        else:
            m = _control_model()
        _SEEDS[name] = m.SerializeToString()
    out = ModelProto()
    out.ParseFromString(_SEEDS[name])
    return out


# --- the mutations -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Mutation:
    """One corruption: ``kind`` (a key of :data:`MUTATORS`), ``picks`` choosing what is corrupted
    (indices taken modulo the candidates' count) and ``how`` (which corruption)."""

    kind: str
    picks: tuple[int, ...]
    how: Any


def _graphs(g: GraphProto) -> Iterator[GraphProto]:
    yield g
    for n in g.node:
        for a in n.attribute:
            if a.type == AttributeProto.GRAPH:
                yield from _graphs(a.g)
            for sub in a.graphs:
                yield from _graphs(sub)


def _pick(items: list[Any], k: int) -> Any:
    return items[k % len(items)] if items else None


def _nodes(m: ModelProto) -> list[Any]:
    return [n for g in _graphs(m.graph) for n in g.node]


DIM_VALUES: tuple[Any, ...] = (
    -1, 0, -(2**62), 2**62, 2**63 - 1, 1, "", " ", "N+1", "2N", "-", "a b", "N", "\u00f1", "0", "-3",
    "x" * 300, "__ss_0", "?", "N*N", None,
)  # fmt: skip


def _mut_dim(m: ModelProto, picks: tuple[int, ...], how: Any) -> None:
    vis = [
        vi
        for g in _graphs(m.graph)
        for vi in [*g.input, *g.output, *g.value_info]
        if vi.type.HasField("tensor_type") and vi.type.tensor_type.HasField("shape")
    ]
    vi = _pick(vis, picks[0])
    if vi is None:
        return
    dims = vi.type.tensor_type.shape.dim
    if not dims:
        dims.add().dim_value = 3
        return
    d = _pick(list(dims), picks[1])
    d.Clear()
    if isinstance(how, int):
        d.dim_value = how
    elif isinstance(how, str):
        d.dim_param = how


def _mut_elem(m: ModelProto, picks: tuple[int, ...], how: Any) -> None:
    vis = [vi for g in _graphs(m.graph) for vi in [*g.input, *g.output, *g.value_info]]
    vi = _pick(vis, picks[0])
    if vi is None:
        return
    match how:
        case "no_shape":
            vi.type.tensor_type.ClearField("shape")
        case "rank0":
            vi.type.tensor_type.shape.ClearField("dim")
        case "no_type":
            vi.ClearField("type")
        case "sequence":
            vi.type.sequence_type.elem_type.tensor_type.elem_type = 1
        case int():
            vi.type.tensor_type.elem_type = how


ATTR_HOWS = (
    "ints_to_floats", "floats_to_ints", "empty", "huge", "neg", "neg_huge", "string", "type0",
    "type_tensor", "drop", "dup", "i_to_ints", "graph_to_int", "int_to_graph", "tensor_empty",
    "tensor_string", "ref_attr", "big_list",
)  # fmt: skip


def _mut_attr(m: ModelProto, picks: tuple[int, ...], how: str) -> None:
    nodes = [n for n in _nodes(m) if n.attribute]
    n = _pick(nodes, picks[0])
    if n is None:
        return
    a = _pick(list(n.attribute), picks[1])
    match how:
        case "ints_to_floats":
            if a.ints:
                vals = list(a.ints)
                a.ClearField("ints")
                a.floats.extend(float(v) + 0.5 for v in vals)
                a.type = AttributeProto.FLOATS
            else:
                a.f = float(a.i) + 0.5
                a.type = AttributeProto.FLOAT
        case "floats_to_ints":
            a.ints.extend(int(v) for v in a.floats)
            a.i = int(a.f)
            a.type = AttributeProto.INTS if a.floats else AttributeProto.INT
        case "empty":
            for f in ("ints", "floats", "strings", "tensors", "graphs"):
                a.ClearField(f)
            a.ClearField("t")
            a.ClearField("s")
        case "huge":
            a.i = 2**62
            for k in range(len(a.ints)):
                a.ints[k] = 2**62
        case "neg":
            a.i = -7
            for k in range(len(a.ints)):
                a.ints[k] = -7 - k
        case "neg_huge":
            a.i = -(2**63)
            a.ints.append(-(2**63))
        case "string":
            a.Clear()
            a.name = n.attribute[picks[1] % len(n.attribute)].name or "x"
            a.s = b"\xff\x00not an int"
            a.type = AttributeProto.STRING
        case "type0":
            a.type = AttributeProto.UNDEFINED
        case "type_tensor":
            a.type = AttributeProto.TENSOR
        case "drop":
            n.attribute.remove(a)
        case "dup":
            n.attribute.append(copy.deepcopy(a))
        case "i_to_ints":
            a.ints.extend([a.i, a.i])
            a.type = AttributeProto.INTS
        case "graph_to_int":
            a.ClearField("g")
            a.i = 1
            a.type = AttributeProto.INT
        case "int_to_graph":
            a.g.name = "stray"
            a.type = AttributeProto.GRAPH
        case "tensor_empty":
            a.t.Clear()
            a.type = AttributeProto.TENSOR
        case "tensor_string":
            a.t.CopyFrom(helper.make_tensor("t", TensorProto.STRING, [2], [b"a", b"b"]))
            a.type = AttributeProto.TENSOR
        case "ref_attr":
            a.ref_attr_name = "outer"
        case "big_list":
            a.ints.extend([3] * 5000)
            a.type = AttributeProto.INTS


ADD_ATTR_NAMES = (
    "axis", "axes", "perm", "kernel_shape", "strides", "pads", "dilations", "group", "keepdims",
    "shape", "to", "mode", "batch_dims", "split", "num_outputs", "allowzero", "auto_pad", "value",
    "transA", "blocksize", "output_padding", "output_shape", "then_branch", "body", "equation",
)  # fmt: skip
ADD_ATTR_VALUES: tuple[Any, ...] = (-999, 2**62, [], [-5, 2**62], "x", 1.5, [1.5, -2.0], 0, [0, 0])


def _mut_add_attr(m: ModelProto, picks: tuple[int, ...], how: Any) -> None:
    n = _pick(_nodes(m), picks[0])
    if n is None:
        return
    name = ADD_ATTR_NAMES[picks[1] % len(ADD_ATTR_NAMES)]
    for a in list(n.attribute):
        if a.name == name:
            n.attribute.remove(a)
    if how == []:
        n.attribute.append(AttributeProto(name=name, type=AttributeProto.INTS))
    else:
        n.attribute.append(helper.make_attribute(name, how))


def _all_outputs(m: ModelProto) -> list[str]:
    return [o for n in _nodes(m) for o in n.output if o]


def _mut_input(m: ModelProto, picks: tuple[int, ...], how: str) -> None:
    nodes = _nodes(m)
    k = picks[0] % len(nodes) if nodes else 0
    n = _pick(nodes, picks[0])
    if n is None:
        return
    slots = list(range(len(n.input)))
    if not slots and how not in ("self", "later", "extra"):
        return
    s = _pick(slots, picks[1]) if slots else None
    match how:
        case "drop":
            del n.input[s]
        case "dup":
            n.input.insert(s, n.input[s])
        case "empty":
            n.input[s] = ""
        case "undefined":
            n.input[s] = "no_such_value"
        case "self":
            target = n.output[0] if n.output else "x"
            if s is None:
                n.input.append(target)
            else:
                n.input[s] = target
        case "later":
            later = [o for nn in nodes[k + 1 :] for o in nn.output if o] or list(n.output)
            t = _pick(later, picks[1])
            if t is not None:
                if s is None:
                    n.input.append(t)
                else:
                    n.input[s] = t
        case "extra":
            n.input.extend(_pick(_all_outputs(m), picks[1]) or "x" for _ in range(3))
        case "graph_output":
            outs = [o.name for o in m.graph.output]
            if outs:
                n.input[s] = _pick(outs, picks[1])


def _mut_output(m: ModelProto, picks: tuple[int, ...], how: str) -> None:
    nodes = _nodes(m)
    n = _pick(nodes, picks[0])
    if n is None or not n.output:
        return
    s = picks[1] % len(n.output)
    match how:
        case "drop":
            del n.output[s]
        case "dup":
            n.output.append(n.output[s])
        case "empty":
            n.output[s] = ""
        case "rename":
            n.output[s] = n.output[s] + "_renamed"
        case "collide":
            other = _pick(_all_outputs(m), picks[1] // 7)
            if other is not None:
                n.output[s] = other
        case "graph_input":
            ins = [i.name for i in m.graph.input]
            if ins:
                n.output[s] = _pick(ins, picks[1])
        case "extra":
            n.output.extend(["extra_a", "extra_b", "extra_c"])


INIT_HOWS = (
    "raw_short", "raw_long", "raw_odd", "dims_neg", "dims_huge", "dims_zero", "dtype0", "dtype99",
    "dtype_string", "typed_extra", "typed_none", "external", "dup_name", "name_empty",
    "values_neg", "values_huge", "values_zero", "scalar", "segment",
)  # fmt: skip


def _mut_init(m: ModelProto, picks: tuple[int, ...], how: str) -> None:
    inits = [t for g in _graphs(m.graph) for t in g.initializer]
    inits += [
        a.t for n in _nodes(m) for a in n.attribute if a.type == AttributeProto.TENSOR and a.HasField("t")
    ]
    t = _pick(inits, picks[0])
    if t is None:
        return
    match how:
        case "raw_short":
            try:  # (a tensor shortened before has no array: numpy refuses its odd byte count)
                arr = onnx.numpy_helper.to_array(t) if t.data_type != TensorProto.STRING else None
            except ValueError:
                arr = None
            if arr is not None:
                t.raw_data = arr.tobytes()[: max(0, arr.nbytes - 3)]
                _clear_typed(t)
        case "raw_long":
            t.raw_data = bytes(t.raw_data) + b"\x01" * 13
        case "raw_odd":
            _clear_typed(t)
            t.raw_data = b"\x07"
        case "dims_neg":
            t.dims.append(-2)
        case "dims_huge":
            t.dims.extend([2**40, 2**40])
        case "dims_zero":
            t.dims.append(0)
        case "dtype0":
            t.data_type = 0
        case "dtype99":
            t.data_type = 99
        case "dtype_string":
            t.data_type = TensorProto.STRING
        case "typed_extra":
            t.int64_data.extend([1, 2, 3])
            t.float_data.extend([1.0])
        case "typed_none":
            _clear_typed(t)
            t.ClearField("raw_data")
        case "external":
            t.data_location = TensorProto.EXTERNAL
            e = t.external_data.add()
            e.key, e.value = "location", "../../etc/nowhere.bin"
        case "dup_name":
            other = _pick(inits, picks[1])
            t.name = other.name if other is not None else t.name
        case "name_empty":
            t.name = ""
        case "values_neg" | "values_huge" | "values_zero":
            v = {"values_neg": -5, "values_huge": 2**62, "values_zero": 0}[how]
            n = int(np.prod(t.dims)) if len(t.dims) else 1
            if 0 <= n <= 1000:
                _clear_typed(t)
                t.data_type = TensorProto.INT64
                t.raw_data = np.full(n, v, dtype=np.int64).tobytes()
        case "scalar":
            t.ClearField("dims")
        case "segment":
            t.segment.begin, t.segment.end = 5, 2


def _clear_typed(t: TensorProto) -> None:
    for f in ("float_data", "int32_data", "int64_data", "double_data", "uint64_data", "string_data"):
        t.ClearField(f)  # type: ignore[arg-type]


OPSET_HOWS: tuple[Any, ...] = (
    ("", 0), ("", 1), ("", 999), ("", -3), ("unknown.domain", 1), ("ai.onnx.ml", 999),
    ("com.microsoft", 0), "clear", "dup_default", "ir0", "ir99",
)  # fmt: skip


def _mut_opset(m: ModelProto, picks: tuple[int, ...], how: Any) -> None:
    match how:
        case "clear":
            m.ClearField("opset_import")
        case "dup_default":
            m.opset_import.add(domain="", version=7)
        case "ir0":
            m.ir_version = 0
        case "ir99":
            m.ir_version = 99
        case (domain, version):
            for o in m.opset_import:
                if o.domain in ("", "ai.onnx") and domain == "":
                    o.version = version
                    return
            m.opset_import.add(domain=domain, version=version)
            if domain not in ("", "ai.onnx"):
                n = _pick(_nodes(m), picks[0])
                if n is not None:
                    n.domain = domain


GRAPH_HOWS = (
    "no_nodes", "no_outputs", "no_inputs", "no_inits", "dup_input", "output_undefined",
    "reverse_nodes", "dup_output", "input_is_init_twice", "init_shadows_output",
)  # fmt: skip


def _mut_graph(m: ModelProto, picks: tuple[int, ...], how: str) -> None:
    g = _pick(list(_graphs(m.graph)), picks[0])
    match how:
        case "no_nodes":
            g.ClearField("node")
        case "no_outputs":
            g.ClearField("output")
        case "no_inputs":
            g.ClearField("input")
        case "no_inits":
            g.ClearField("initializer")
        case "dup_input":
            if g.input:
                g.input.append(copy.deepcopy(_pick(list(g.input), picks[1])))
        case "output_undefined":
            g.output.append(helper.make_tensor_value_info("never_made", TensorProto.FLOAT, [2]))
        case "reverse_nodes":
            nodes = list(g.node)[::-1]
            g.ClearField("node")
            g.node.extend(nodes)
        case "dup_output":
            if g.output:
                g.output.append(copy.deepcopy(_pick(list(g.output), picks[1])))
        case "input_is_init_twice":
            if g.initializer:
                g.initializer.append(copy.deepcopy(_pick(list(g.initializer), picks[1])))
        case "init_shadows_output":
            outs = [o for n in g.node for o in n.output if o]
            if outs:
                name = _pick(outs, picks[1])
                g.initializer.append(helper.make_tensor(name, TensorProto.FLOAT, [1], [1.0]))


NODE_HOWS = (
    "op_unknown", "domain_unknown", "op_empty", "dup_node", "swap", "op_Conv", "op_Reshape",
    "op_If", "op_Loop", "op_Scan", "op_Concat", "op_Split", "op_Slice", "op_Gather", "op_Einsum",
    "op_Resize", "op_Constant", "op_Identity", "no_name_dup",
)  # fmt: skip


def _mut_node(m: ModelProto, picks: tuple[int, ...], how: str) -> None:
    nodes = _nodes(m)
    n = _pick(nodes, picks[0])
    if n is None:
        return
    match how:
        case "op_unknown":
            n.op_type = "NoSuchOp"
        case "domain_unknown":
            n.domain = "no.such.domain"
        case "op_empty":
            n.op_type = ""
        case "dup_node":
            g = next(g for g in _graphs(m.graph) if n in g.node)
            g.node.append(copy.deepcopy(n))
        case "swap":
            g = next(g for g in _graphs(m.graph) if n in g.node)
            if len(g.node) > 1:
                i = list(g.node).index(n)
                j = picks[1] % len(g.node)
                a, b = copy.deepcopy(g.node[i]), copy.deepcopy(g.node[j])
                g.node[i].CopyFrom(b)
                g.node[j].CopyFrom(a)
        case "no_name_dup":
            for nn in nodes:
                nn.name = "same"
        case _:
            n.op_type = how[3:]


SUB_HOWS = ("graph_to_int", "graph_to_graphs", "empty_graph", "drop_output", "add_to_plain", "drop_attr")


def _mut_sub(m: ModelProto, picks: tuple[int, ...], how: str) -> None:
    nodes = _nodes(m)
    owners = [n for n in nodes if any(a.type == AttributeProto.GRAPH for a in n.attribute)]
    if how == "add_to_plain" or not owners:
        n = _pick(nodes, picks[0])
        if n is not None:
            g = helper.make_graph([], "stray", [], [])
            n.attribute.append(helper.make_attribute(_pick(["body", "then_branch", "x"], picks[1]), g))
        return
    n = _pick(owners, picks[0])
    a = _pick([a for a in n.attribute if a.type == AttributeProto.GRAPH], picks[1])
    match how:
        case "graph_to_int":
            a.ClearField("g")
            a.i = 3
            a.type = AttributeProto.INT
        case "graph_to_graphs":
            a.graphs.append(copy.deepcopy(a.g))
            a.ClearField("g")
            a.type = AttributeProto.GRAPHS
        case "empty_graph":
            a.g.Clear()
        case "drop_output":
            if a.g.output:
                del a.g.output[-1]
            else:
                a.g.output.append(copy.deepcopy(a.g.input[0]) if a.g.input else a.g.output.add())
        case "drop_attr":
            n.attribute.remove(a)


def _mut_declare(m: ModelProto, picks: tuple[int, ...], how: Any) -> None:
    """A ``value_info`` declaring a node output's type: rank ``picks[1] % 4``, every dimension
    ``how``, an element type chosen by ``picks[1]``."""
    name = _pick(_all_outputs(m), picks[0])
    if name is None:
        return
    g = next(g for g in _graphs(m.graph) if any(name in n.output for n in g.node))
    elem = (1, 7, 9, 0, 8, 11)[picks[1] // 4 % 6]
    shape: list[Any] = [how if how is not None else None] * (picks[1] % 4)
    vi = helper.make_tensor_value_info(name, elem, shape)
    if picks[1] % 9 == 0:
        vi.type.tensor_type.ClearField("shape")
    g.value_info.append(vi)


def _mut_sparse(m: ModelProto, picks: tuple[int, ...], how: str) -> None:
    """A sparse initializer standing for an input (or a new name): indices out of range, values
    and indices disagreeing, an undefined data type."""
    ins = [i.name for i in m.graph.input] + ["sparse_extra"]
    name = _pick(ins, picks[0])
    values = helper.make_tensor(name, TensorProto.FLOAT, [2], [1.0, 2.0])
    indices = helper.make_tensor("", TensorProto.INT64, [2], [0, 5])
    dims = [3, 2]
    match how:
        case "out_of_range":
            indices = helper.make_tensor("", TensorProto.INT64, [2], [0, 2**40])
        case "negative":
            indices = helper.make_tensor("", TensorProto.INT64, [2], [-1, 0])
        case "count":
            indices = helper.make_tensor("", TensorProto.INT64, [3], [0, 1, 2])
        case "dtype":
            values.data_type = 99
        case "dims":
            dims = [-1, 2]
        case "huge":
            dims = [2**31, 2**31]
        case "rank":
            indices = helper.make_tensor("", TensorProto.INT64, [2, 3], [0, 1, 0, 1, 0, 1])
    m.graph.sparse_initializer.append(helper.make_sparse_tensor(values, indices, dims))


MUTATORS: dict[str, tuple[Callable[[ModelProto, tuple[int, ...], Any], None], tuple[Any, ...]]] = {
    "dim": (_mut_dim, DIM_VALUES),
    "elem": (_mut_elem, ("no_shape", "rank0", "no_type", "sequence", 0, 99, 8, 16, 13, 9)),
    "attr": (_mut_attr, ATTR_HOWS),
    "add_attr": (_mut_add_attr, ADD_ATTR_VALUES),
    "input": (_mut_input, ("drop", "dup", "empty", "undefined", "self", "later", "extra", "graph_output")),
    "output": (_mut_output, ("drop", "dup", "empty", "rename", "collide", "graph_input", "extra")),
    "init": (_mut_init, INIT_HOWS),
    "opset": (_mut_opset, OPSET_HOWS),
    "graph": (_mut_graph, GRAPH_HOWS),
    "node": (_mut_node, NODE_HOWS),
    "sub": (_mut_sub, SUB_HOWS),
    "declare": (_mut_declare, DIM_VALUES),
    "sparse": (_mut_sparse, ("ok", "out_of_range", "negative", "count", "dtype", "dims", "rank", "huge")),
}


def mutate(m: ModelProto, mutations: list[Mutation]) -> ModelProto:
    for mu in mutations:
        fn, _ = MUTATORS[mu.kind]
        fn(m, mu.picks, mu.how)
    return m


@st.composite
def mutations(draw: st.DrawFn) -> Mutation:
    kind = draw(st.sampled_from(sorted(MUTATORS)))
    picks = (draw(st.integers(0, 10**6)), draw(st.integers(0, 10**6)))
    how = draw(st.sampled_from(MUTATORS[kind][1]))
    return Mutation(kind, picks, how)


# --- running a model ---------------------------------------------------------------------------


class _Hang(BaseException):
    """Raised by the alarm when a call runs past :data:`DEADLINE_S` (a BaseException: no
    ``except Exception`` of the library turns it into a result)."""


@contextlib.contextmanager
def _deadline(what: str) -> Iterator[None]:
    def on_alarm(signum: int, frame: Any) -> None:
        raise _Hang(f"{what} ran past {DEADLINE_S} s")

    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, DEADLINE_S + 5.0)
    start = time.monotonic()
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    took = time.monotonic() - start
    assert took < DEADLINE_S, f"{what} took {took:.1f} s"


def _cli(model: ModelProto) -> object:
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "m.onnx")
        with open(path, "wb") as f:
            f.write(model.SerializeToString())
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = cli_main(["check", path, "--json"])
        assert code in (0, 1, 2), (code, out.getvalue(), err.getvalue())
        return code


ENTRIES: dict[str, Callable[[ModelProto], object]] = {
    "infer": sso.infer,
    "from_onnx": sso.from_onnx,
    "infer_shapes": sso.infer_shapes,
    "cli": _cli,
}


def run_all(m: ModelProto) -> None:
    """Every entry point on a copy of ``m``: a result or a ``SymshapeError`` with a code."""
    data = m.SerializeToString()
    for what, fn in ENTRIES.items():
        copy_ = ModelProto()
        copy_.ParseFromString(data)
        with _deadline(what):
            try:
                out = fn(copy_)
            except SymshapeError as e:
                assert isinstance(e.code, str) and e.code, f"{what}: {e!r} has no code"
                continue
        if what == "infer":
            assert out.status in ("ok", "guarded", "error", "unknown"), out.status  # type: ignore[attr-defined]


# --- the tests ---------------------------------------------------------------------------------

_FUZZ_N = int(os.environ.get("SYMSHAPE_FUZZ_EXAMPLES", "0"))


@settings(
    max_examples=_FUZZ_N or CI_EXAMPLES,
    deadline=None,
    derandomize=not _FUZZ_N,
    database=None,
    suppress_health_check=list(HealthCheck),
)
@seed(int(os.environ.get("SYMSHAPE_FUZZ_SEED", "0")))
@given(
    name=st.sampled_from(_seed_names()),
    muts=st.lists(mutations(), min_size=1, max_size=3),
)
def test_a_mutated_model_gives_a_result_or_a_symshape_error(name: str, muts: list[Mutation]) -> None:
    run_all(mutate(seed_model(name), muts))


#: the mutations that crashed or hung the importer once (each fixed by its own commit)
FOUND: list[Any] = [
    pytest.param(  # a dimension past int64 (2**62 * 40) written into infer_shapes' copy
        "node:test_flatten_axis0",
        [Mutation("elem", (660473, 839987), 99), Mutation("dim", (320818, 566785), 2**62)],
        id="infer_shapes-dim-past-int64",
    ),
    pytest.param(  # a sparse initializer's index past its dims (IndexError in numpy)
        "node:test_split_equal_parts_1d_opset18",
        [Mutation("sparse", (902847, 157932), "out_of_range")],
        id="sparse-index-out-of-range",
    ),
    pytest.param(  # a sparse initializer's values of an undefined data type (KeyError in onnx)
        "node:test_softmax_axis_1",
        [Mutation("sparse", (895105, 612970), "dtype")],
        id="sparse-undefined-dtype",
    ),
    pytest.param(  # 3 indices for 2 values (ValueError in numpy)
        "node:test_if", [Mutation("sparse", (186553, 723533), "count")], id="sparse-index-count"
    ),
    pytest.param(  # (the mutator itself raised: numpy's to_array of the shortened raw data)
        "light:bvlc_alexnet",
        [Mutation("init", (0, 0), "raw_short"), Mutation("init", (0, 0), "raw_short")],
        id="mutator-raw-short-twice",
    ),
    pytest.param(  # dims of 2**62 elements (a new name: the last pick) made dense: MemoryError
        "control", [Mutation("sparse", (-1, 0), "huge")], id="sparse-too-large-to-make-dense"
    ),
]


@pytest.mark.parametrize(("name", "muts"), FOUND)
def test_a_mutation_that_once_crashed(name: str, muts: list[Mutation]) -> None:
    run_all(mutate(seed_model(name), muts))


@pytest.mark.parametrize("name", _seed_names())
def test_every_seed_model_runs(name: str) -> None:
    """The unmutated seeds give results (the mutations start from working models)."""
    run_all(seed_model(name))


@pytest.mark.parametrize(
    ("how", "status", "type_text"),
    [
        ("ok", "ok", "Tensor[(3, 2), float32]"),
        ("huge", "ok", "Tensor[(2147483648, 2147483648), float32]"),  # its type, not made dense
        ("count", "error", "Tensor[?, ?]"),
        ("negative", "error", "Tensor[?, ?]"),
    ],
)
def test_a_sparse_initializer_is_a_constant_its_type_or_an_error(
    how: str, status: str, type_text: str
) -> None:
    m = mutate(seed_model("node:test_softmax_axis_1"), [Mutation("sparse", (-1, 0), how)])  # (sparse_extra)
    res = sso.infer(m)
    assert (res.status, str(res.type_of("sparse_extra"))) == (status, type_text)
    assert [d.code for d in res.errors] == ["invalid-argument"] * (status == "error")
    assert all(d.message.startswith("sparse initializer 'sparse_extra'") for d in res.errors)


@pytest.mark.parametrize("dims", ["N", ["N"], 5, ("N", 3)], ids=repr)
def test_dims_that_are_not_a_mapping_are_a_symshape_error(dims: Any) -> None:
    """(An AttributeError from ``dims.items()`` before.)"""
    m = seed_model("node:test_softmax_axis_1")
    for fn in (sso.infer, sso.from_onnx, sso.infer_shapes):
        with pytest.raises(SymshapeError, match="dims must be a mapping") as e:
            fn(m, dims)
        assert e.value.code == "invalid-argument"


def test_a_huge_sparse_constant_is_refused_before_it_is_made_dense() -> None:
    """A ``Constant`` whose ``sparse_value`` has 2**44 entries: the size check comes before numpy
    is asked for the dense array (which said "Unable to allocate 64.0 TiB")."""
    vals = numpy_helper.from_array(np.array([1.0], np.float32), "v")
    idx = numpy_helper.from_array(np.array([0], np.int64), "i")
    sp = helper.make_sparse_tensor(vals, idx, [2**22, 2**22])
    g = helper.make_graph(
        [helper.make_node("Constant", [], ["c"], sparse_value=sp)],
        "g",
        [],
        [helper.make_empty_tensor_value_info("c")],
    )
    res = sso.infer(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]))
    assert res.status == "error"
    assert "too large to make dense" in res.report() and "allocate" not in res.report()
