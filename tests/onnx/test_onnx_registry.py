"""The opset-versioned registry (symshape.onnx.registry) and the conversion context's contract."""

from __future__ import annotations

import pytest
from onnx_helpers import In, infer_node, make_model, node

import symshape as ss
import symshape.onnx as sso
from symshape.onnx.context import NodeContext
from symshape.onnx.registry import REGISTRY, Registry

F = "float32"


def _conv(tag: str):  # a converter that records which version ran
    def fn(ctx: NodeContext) -> ss.Expr:
        return ss.ops.cast(ctx.input(0), tag)

    return fn


def test_dispatch_picks_the_newest_version_not_after_the_opset() -> None:
    r = Registry()
    r.register("Op", since=[1, 5, 13])(_conv("int32"))
    assert [r.lookup("", "Op", v).since_version for v in (1, 4, 5, 12, 13, 21)] == [1, 1, 5, 5, 13, 13]
    r2 = Registry()
    r2.register("Op", since=7)(_conv("int32"))
    assert r2.lookup("", "Op", 6) is None
    assert r2.lookup("ai.onnx", "Op", 7) is not None  # ai.onnx is the default domain
    assert r2.knows("", "Op") and not r2.knows("", "Other")


def test_reregistering_a_version_replaces_it() -> None:
    r = Registry()
    r.register("Op", since=5)(_conv("int32"))
    r.register("Op", since=5, value_inputs=(1,))(_conv("int64"))
    (d,) = list(r)
    assert d.value_inputs == (1,)


def test_global_registry_versions_follow_onnx_semantics() -> None:
    assert REGISTRY.lookup("", "Reshape", 4).since_version == 1  # shape attribute
    assert REGISTRY.lookup("", "Reshape", 21).since_version == 5  # shape input
    assert REGISTRY.lookup("", "Softmax", 12).since_version == 1  # 2-d coercion
    assert REGISTRY.lookup("", "Softmax", 13).since_version == 13
    assert REGISTRY.lookup("", "Squeeze", 13).value_inputs == (1,)
    table = dict(((d, op), v) for d, op, v in REGISTRY.table())
    assert table[("", "Split")] == (1, 2, 13)


def test_user_converters_for_a_custom_domain() -> None:
    @sso.register("Twice", since=1, domain="test.custom")
    def twice(ctx: NodeContext) -> ss.Expr:
        x = ctx.input(0)
        return ss.ops.concatenate([x, x], axis=ctx.attr_int("axis", 0))

    m = make_model(
        [node("Twice", ["x"], ["y"], domain="test.custom", axis=1)],
        [In("x", F, ("n", 3))],
        ["y"],
        extra_opsets={"test.custom": 1},
    )
    assert str(sso.infer(m).type_of("y")) == "Tensor[(n, 6), float32]"
    assert sso.supported_ops("test.custom") == ["Twice"]


def test_a_converter_error_is_a_diagnostic_not_an_exception() -> None:
    @sso.register("Broken", since=1, domain="test.custom")
    def broken(ctx: NodeContext) -> ss.Expr:
        return ss.ops.flatten(ctx.input(0), axis=ctx.attr_int("axis"))  # attribute missing

    m = make_model(
        [node("Broken", ["x"], ["y"], name="b", domain="test.custom")],
        [In("x", F, ("n", 3))],
        ["y"],
        extra_opsets={"test.custom": 1},
    )
    res = sso.infer(m)
    assert res.status == "error"
    d = res.errors[0]
    assert d.code == "bad-attribute" and "attribute 'axis' is required" in d.message


@pytest.mark.parametrize("attr", ["axis", "perm"])
def test_attribute_types_are_checked(attr: str) -> None:
    kw = {attr: "not a number"}
    op = "Flatten" if attr == "axis" else "Transpose"
    res = infer_node(node(op, ["x"], ["y"], **kw), [In("x", F, ("n", 3))])
    assert res.status == "error" and res.errors[0].code == "bad-attribute"


def test_fresh_symbols_for_data_dependent_sizes() -> None:
    @sso.register("CountTrue", since=1, domain="test.custom")
    def count_true(ctx: NodeContext) -> ss.Expr:
        return ss.ops.zeros((ctx.fresh_dim("nnz"),), "int64")

    nodes = [
        node("CountTrue", ["x"], ["a"], name="c1", domain="test.custom"),
        node("CountTrue", ["x"], ["b"], name="c2", domain="test.custom"),
    ]
    m = make_model(nodes, [In("x", "bool", ("n",))], ["a", "b"], extra_opsets={"test.custom": 1})
    res = sso.infer(m)
    assert res.status == "ok"
    assert (str(res.type_of("a")), str(res.type_of("b"))) == (
        "Tensor[(nnz_1,), int64]",
        "Tensor[(nnz_2,), int64]",
    )


def test_readme_lists_the_supported_operators() -> None:
    """The README's operator list is ``markdown()`` of the registry (SYMSHAPE_UPDATE_GOLDEN=1
    rewrites it)."""
    import os
    from pathlib import Path

    from symshape.onnx.registry import markdown

    readme = Path(__file__).resolve().parents[2] / "README.md"
    text = readme.read_text()
    begin, end = "<!-- onnx-ops:begin -->\n", "\n<!-- onnx-ops:end -->"
    i, j = text.index(begin) + len(begin), text.index(end)
    want = markdown()
    if os.environ.get("SYMSHAPE_UPDATE_GOLDEN") and text[i:j] != want:
        readme.write_text(text[:i] + want + text[j:])
        return
    assert text[i:j] == want, "the README's ONNX operator list is stale: SYMSHAPE_UPDATE_GOLDEN=1"
    assert "`Reshape` (1, 5)" in want and "`SkipLayerNormalization` (1)" in want
