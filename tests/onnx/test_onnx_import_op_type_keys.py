"""The key of a node's attributes found by its operator type field (``fields_after_op_type(b,
op_type)``, what ``NodeContext.attribute_bytes`` gives ``Conv`` and pool plans) is the node
serialized without its inputs, outputs, name and operator type: for a table of nodes (names that
hold the field's bytes, long names, an operator type of 34 bytes whose length byte is the tag) and
for random ones; where the head's fields are short, it is what the loop over them gives."""

from __future__ import annotations

from typing import Any

import onnx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import helper
from test_onnx_import_shortcuts import _fields_oracle

from symshape.onnx.attrs import fields_after_op_type, op_type_field


def _check(n: onnx.NodeProto) -> None:
    b = n.SerializeToString()
    got = fields_after_op_type(b, n.op_type)
    loop = fields_after_op_type(b)
    if got is None:  # (the loop's answer: a long head field)
        assert loop is None
        return
    assert got == _fields_oracle(n)
    if loop is not None:
        assert got == loop


_FIELD = op_type_field("Conv").decode("latin-1")
NODES = [
    helper.make_node("Relu", ["x"], ["y"]),
    helper.make_node("Conv", ["x", "w", ""], ["y"], name="c", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
    helper.make_node("Conv", ["x", "w"], ["y"], pads=[1, 1, 1, 1], kernel_shape=[3, 3], doc_string="d"),
    helper.make_node("Conv", [_FIELD, "w"], ["y"], kernel_shape=[3, 3]),  # the field's bytes in a name
    helper.make_node("Conv", ["x"], ["y"], name=_FIELD + "z", kernel_shape=[1]),
    helper.make_node("Custom", ["ä", "ß"], ["名前"], name="节点", domain="com.example", axis=1),
    helper.make_node("MaxPool", ["x" * 128], ["y"], kernel_shape=[2, 2]),
    helper.make_node("Gemm", ["a", "b"], ["c"], name="g" * 200, alpha=0.5, transB=1),
    helper.make_node("O" * 34, ["a"], ["b"], axis=2),  # (its length byte is the field's tag)
    helper.make_node("O" * 200, ["a"], ["b"], axis=2),
    helper.make_node('Q"', ['"'], ["b"], axis=2),
]


@pytest.mark.parametrize("node", NODES, ids=lambda n: f"{n.op_type[:8]}-{len(n.SerializeToString())}")
def test_the_fields_after_the_op_type_field_are_the_node_without_its_head(node: onnx.NodeProto) -> None:
    _check(node)


def test_an_op_type_field_whose_bytes_repeat_the_tag_is_not_used() -> None:
    assert op_type_field("O" * 34) == b""  # (length 34: the tag's byte)
    assert op_type_field('Q"') == b""
    assert op_type_field("O" * 128) == b""
    assert op_type_field("Conv") == b'"\x04Conv'


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.text(max_size=140) | st.sampled_from([_FIELD, _FIELD + "a", '"']), max_size=3),
    st.lists(st.text(max_size=20), min_size=1, max_size=2),
    st.text(max_size=140) | st.just(_FIELD),
    st.dictionaries(st.sampled_from(["axis", "perm", "mode", "alpha"]), st.integers(-3, 300), max_size=3),
    st.sampled_from(["", "com.microsoft"]),
    st.sampled_from(["Conv", "Op", "MaxPool"]),
)
def test_the_fields_after_the_op_type_field_for_random_nodes(
    inputs: list[str], outputs: list[str], name: str, attrs: dict[str, Any], domain: str, op: str
) -> None:
    node = helper.make_node(op, inputs, outputs, name=name or None, domain=domain or None, **attrs)
    _check(node)
    # equal attributes (and domain) give equal keys, whatever the names
    other = helper.make_node(op, ["q"], ["r"], name="s", domain=domain or None, **attrs)
    b = node.SerializeToString()
    if fields_after_op_type(b, op) is not None:
        assert fields_after_op_type(b, op) == fields_after_op_type(other.SerializeToString(), op)
