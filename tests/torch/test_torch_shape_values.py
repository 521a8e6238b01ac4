"""Sizes as values (symshape.torch.shape_values) against torch: ``x.size()``, ``x.size(i)``,
``x.shape[i]`` of computed tensors, arithmetic on them, and their uses as shapes (``view``,
``reshape``, ``expand``, factories), ``arange`` bounds, slice bounds, and ``split`` by size of an
axis only inference knows. Every node's shape (and every size's value) is compared with torch at
concrete sizes."""

from __future__ import annotations

import math
from typing import Any

import pytest
import torch

import symshape as ss
import symshape.torch as sst
from torch_zoo.oracle import check_fn, example_of, fn_module, mismatches, record, types_of

X = {"x": (("b", 6, "n"), "float32")}
SIZES = [{"b": 2, "n": 4}, {"b": 3, "n": 1}, {"b": 1, "n": 7}]


def _heads(x: torch.Tensor) -> torch.Tensor:
    y = x.relu()
    b, c, n = y.size()
    return y.view(b, c // 2, 2 * n).transpose(1, 2)


def _unpack(x: torch.Tensor) -> torch.Tensor:
    q, k, v = x.relu().split(2, dim=1)
    return q + k * v


def _unpack_uneven(x: torch.Tensor) -> torch.Tensor:
    a, b = x.relu().split(4, dim=1)
    return a.sum(1) + b.sum(1)


VALUED = [
    lambda x: x.relu().view(x.relu().shape[0], -1),
    lambda x: x.relu().view(x.shape[0], x.relu().size(1) // 2, -1),
    lambda x: x.relu().view(-1, x.relu().size(-1)),
    lambda x: x.relu().reshape(x.relu().shape[:-1] + (1, -1)),
    lambda x: x.relu().reshape(x.relu().size()),
    lambda x: (x.relu() * 2).view(x.relu().size(0) * x.relu().size(1), x.relu().size(2)),
    _heads,
    lambda x: torch.arange(x.relu().size(2)),
    lambda x: torch.arange(0, x.relu().size(2), 2),
    lambda x: torch.arange(1, x.relu().shape[-1] + 1, dtype=torch.float32),
    lambda x: x[:, : x.shape[2]],
    lambda x: x.relu()[:, : x.relu().size(2)],
    lambda x: x.relu()[:, x.relu().size(2) :],
    lambda x: x.relu()[..., 1 : x.relu().size(1) - 3],
    lambda x: x.relu()[:, :1].expand(-1, x.relu().size(1), -1),
    lambda x: x.new_zeros(x.relu().size(0), 3),
    lambda x: torch.ones(x.relu().shape[1:]),
    lambda x: x.relu().new_zeros(x.relu().shape),
    lambda x: x.new_full((x.relu().size(2),), 1.0),
    lambda x: torch.full((x.relu().size(0), 2), 7),
    _unpack,
    _unpack_uneven,
    # axes counted from the end of a computed tensor: reshapes read from its shape value
    lambda x: x.relu().flatten(-2),
    lambda x: x.relu().flatten(0, -2),
    lambda x: x.relu().unflatten(-2, (3, -1)),
    lambda x: x.relu().unflatten(-1, (x.shape[2], 1)),
    lambda x: x.relu().repeat(1, 2, 1),
    lambda x: x.relu().repeat(2, 1, 1, 3),
]


@pytest.mark.parametrize("fn", VALUED, ids=[f"v{i}" for i in range(len(VALUED))])
def test_sizes_of_computed_tensors(fn: Any) -> None:
    check_fn(fn_module(fn, 1), X, SIZES)


def _chunk_uneven(x: torch.Tensor) -> torch.Tensor:
    a, b = x.relu().chunk(2, 1)  # 6 // 2 on a computed axis
    c, d = torch.cat([a, b[:, :1]], 1).chunk(2, 1)  # 4 and 3 of 7
    return c[:, :3] + d


def _chunk_batch(x: torch.Tensor) -> torch.Tensor:
    a, b = x.chunk(2, 0)  # b is symbolic: ceil(b / 2) and the rest
    return a.sum(0) + b.sum(0)


def _chunk_computed_symbolic(x: torch.Tensor) -> torch.Tensor:
    a, b, c = x.relu().reshape(x.shape[0], -1).chunk(3, 1)  # 6n in pieces of ceil(6n / 3)
    return torch.cat([a, b, c], 1)


CHUNKS = [_chunk_uneven, _chunk_batch, _chunk_computed_symbolic, lambda x: torch.cat(x.chunk(4, 1), 1)]


@pytest.mark.parametrize("fn", CHUNKS, ids=[f"c{i}" for i in range(len(CHUNKS))])
def test_chunk_follows_torchs_rule(fn: Any) -> None:
    """``chunk(n)``: pieces of ``ceil(d / n)``, the last shorter (7 in 2 is 4 and 3)."""
    check_fn(fn_module(fn, 1), X, [{"b": 2, "n": 4}, {"b": 3, "n": 3}, {"b": 5, "n": 2}])


def test_values_are_the_sizes() -> None:
    """``value_of`` a size node is the dimension inference found for it."""
    res = check_fn(fn_module(_heads, 1), X, SIZES)
    b, n = ss.dims("b n")
    values = {str(node.target): res.value_of(node) for node in res.fx_graph.nodes if node.op != "output"}
    sizes = [res.value_of(node) for node in res.fx_graph.nodes if node.target == "size"]
    assert sizes == [(b, 6, n)], values
    out = res.type_of("transpose")
    assert out == ss.Tensor((b, 2 * n, 3), "float32")


def test_split_by_size_of_a_computed_axis() -> None:
    res = check_fn(fn_module(_unpack, 1), X, SIZES)
    b, n = ss.dims("b n")
    assert res.type_of("add") == ss.Tensor((b, 2, n), "float32")


def test_split_by_size_used_in_part() -> None:
    """``x.split(2, 1)[0]``: the pieces used are typed (how many there are in all, the graph does
    not say; the split node itself is a tuple of the pieces used)."""
    model = fn_module(lambda x: x.relu().split(2, 1)[0] * 2, 1)
    res = sst.infer(model, types_of(X))
    assert res.ok, res.report()
    for sizes in SIZES:
        seen = record(model, res.fx_graph, example_of(X, sizes))
        seen.pop("split")
        assert mismatches(res, seen, sizes) == [], sizes


def test_a_size_without_a_value_names_where_it_came_from() -> None:
    def f(x: torch.Tensor) -> torch.Tensor:
        y = x.relu()
        half = math.floor(y.shape[2] / 2)
        return (y * 2).view(half, -1)

    res = sst.infer(fn_module(f, 1), types_of(X))
    (err,) = res.errors
    assert err.code == "unsupported-op"
    assert "integer arithmetic" in err.message, err.message
    assert err.notes and err.notes[0].span is not None
    assert err.notes[0].span.line == err.span.line - 1  # type: ignore[union-attr]


class PositionIds(torch.nn.Module):
    """HF style: a buffer sliced by a traced size (needs buffers traced as graph nodes)."""

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("position_ids", torch.arange(10).expand((1, -1)), persistent=False)
        self.emb = torch.nn.Embedding(10, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        t = x.size(1)
        return x.unsqueeze(-1) + self.emb(self.position_ids[:, :t])


def test_a_buffer_sliced_by_a_traced_size() -> None:
    res = check_fn(PositionIds(), {"x": (("b", "t"), "float32")}, [{"b": 2, "t": 3}, {"b": 1, "t": 10}])
    b, t = ss.dims("b t")
    out = res.type_of("add")
    assert isinstance(out, ss.TensorType) and out.dims[0] == b and out.dims[2] == 4
    # the slice shortens silently past the 10 positions; the broadcast then needs t <= 10
    assert all(g.holds({b: 2, t: 10}) for g in res.guards)
    assert not all(g.holds({b: 2, t: 11}) for g in res.guards)


class CausalAttention(torch.nn.Module):
    """nanoGPT's attention without flash (the mask buffer sliced ``[:, :, :T, :T]`` by the
    input's size) with HF GPT-2's ``_split_heads`` (``t.size()[:-1] + (heads, d)``)."""

    def __init__(self, n_embd: int = 32, n_head: int = 4, block_size: int = 16) -> None:
        super().__init__()
        self.c_attn = torch.nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = torch.nn.Linear(n_embd, n_embd)
        self.n_head, self.n_embd = n_head, n_embd
        mask = torch.tril(torch.ones(block_size, block_size)).view(1, 1, block_size, block_size)
        self.register_buffer("bias", mask)

    def _split_heads(self, t: torch.Tensor) -> torch.Tensor:
        new_shape = t.size()[:-1] + (self.n_head, t.size(-1) // self.n_head)
        return t.view(new_shape).permute(0, 2, 1, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x * 1.0
        B, T, C = x.size()  # noqa: N806 (nanoGPT's names)
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        k = self._split_heads(k)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
        y = torch.softmax(att, dim=-1) @ v
        return self.c_proj(y.transpose(1, 2).contiguous().view(B, T, C))


def test_causal_attention_with_a_sliced_mask() -> None:
    sizes = [{"b": 2, "t": 5}, {"b": 1, "t": 16}]
    res = check_fn(CausalAttention(), {"x": (("b", "t", 32), "float32")}, sizes)
    b, t = ss.dims("b t")
    assert res.type_of("c_proj") == ss.Tensor((b, t, 32), "float32")
    assert all(g.holds({b: 1, t: 16}) for g in res.guards)
    assert not all(g.holds({b: 1, t: 17}) for g in res.guards)  # the mask has 16 positions


class ExportedSizes(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("pos", torch.zeros(1, 20, 4))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = x.relu()
        b, t, c = y.shape
        z = y.view(b * t, c) * torch.tensor(t).float()
        return z.view(b, t, c) + self.pos[:, :t] + torch.arange(t)[None, :, None].float()


def test_sizes_in_exported_programs() -> None:
    """``aten.sym_size`` products as view sizes, ``aten.scalar_tensor`` of a size (then
    ``detach_``), ``arange`` of a size, a buffer sliced by one: torch's own symbolic shapes."""
    from torch.export import Dim, export

    from torch_zoo.oracle import export_mismatches

    ep = export(
        ExportedSizes(), (torch.randn(2, 5, 4),), dynamic_shapes={"x": {0: Dim.DYNAMIC, 1: Dim.DYNAMIC}}
    )
    types = types_of({"x": (("b", "t", 4), "float32")})
    b, t = ss.dims("b t")
    for prog in (ep, ep.run_decompositions()):
        res = sst.infer(prog, types)
        assert res.status == "guarded", res.report()
        assert export_mismatches(res, prog, types) == []
        assert all(g.holds({b: 2, t: 20}) for g in res.guards)
        assert not all(g.holds({b: 2, t: 21}) for g in res.guards)


class SymMinMax(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        t = x.shape[1]
        y = x.relu()
        return x.new_zeros(torch.sym_max(t, 4), torch.sym_min(t, 3), torch.sym_max(y.shape[0], 1))


def test_sym_max_and_sym_min_of_sizes() -> None:
    """``torch.sym_max``/``sym_min`` of sizes in an exported program: ``max``/``min`` dimensions."""
    from torch.export import Dim, export

    from torch_zoo.oracle import export_mismatches

    ep = export(SymMinMax(), (torch.randn(2, 5),), dynamic_shapes={"x": {0: Dim.DYNAMIC, 1: Dim.DYNAMIC}})
    types = types_of({"x": (("b", "t"), "float32")})
    res = sst.infer(ep, types)
    assert res.ok, res.report()
    assert export_mismatches(res, ep, types) == []
    out = res.type_of("new_zeros")
    assert isinstance(out, ss.TensorType)
    assert [d.subs({ss.dim("t"): 2, ss.dim("b"): 3}) for d in out.dims] == [4, 2, 3]


def _timm_qkv(x: torch.Tensor) -> torch.Tensor:
    """timm's attention: ``qkv.reshape(B, N, 3, heads, d).permute(2, 0, 3, 1, 4).unbind(0)``."""
    y = x.relu().transpose(1, 2)
    b, n, c = y.shape
    qkv = torch.cat([y, y, y], dim=-1).reshape(b, n, 3, 2, c // 2).permute(2, 0, 3, 1, 4)
    q, k, v = qkv.unbind(0)
    return (q @ k.transpose(-2, -1)).softmax(-1) @ v


def test_unbind_of_a_computed_axis() -> None:
    res = check_fn(fn_module(_timm_qkv, 1), X, SIZES)
    b, n = ss.dims("b n")
    assert res.type_of("matmul_1") == ss.Tensor((b, 2, n, 3), "float32")


FROM_END = [
    # `-t` of a size as a slice bound counts from the end, as Python does (clamped at the start;
    # `-0` is 0, so `x[:, -0:]` is all of it and `x[:, :-0]` none of it)
    lambda x: x.relu()[:, -x.relu()[:, :3].size(1) :],
    lambda x: x.relu()[:, : -x.relu()[:, :3].size(1)],
    lambda x: x[:, -x.relu().size(2) :],  # n > 6 clamps to all of the axis
    lambda x: x.relu()[..., -x.shape[0] :],  # a dimension of the annotation; b > n clamps
    lambda x: x.relu()[..., : -x.shape[0]],
    lambda x: x[:, -x.relu()[:, :0].size(1) :],  # -0
    lambda x: x[:, : -x.relu()[:, :0].size(1)],
    lambda x: x.relu()[:, -x.relu().size(2) : -1],
]


@pytest.mark.parametrize("fn", FROM_END, ids=[f"e{i}" for i in range(len(FROM_END))])
def test_negated_sizes_slice_from_the_end(fn: Any) -> None:
    check_fn(fn_module(fn, 1), X, SIZES)


RANK_FREE = [
    # calls by literal axes or amounts on a computed tensor, whose rank only inference knows
    lambda x: x.relu().movedim(0, -1),
    lambda x: x.relu().movedim(-1, 0),
    lambda x: x.relu().movedim((0, 2), (2, 0)),
    lambda x: torch.movedim(x.relu(), (1, 0), (-1, -2)),
    lambda x: x.relu().moveaxis(1, 2) * 2,
    lambda x: x.movedim(2, 0),  # the rank of an input is known: a transpose
    lambda x: torch.nn.functional.pad(x.relu(), (1, 2)),
    lambda x: torch.nn.functional.pad(x.relu(), (0, 1, 2, 0)),
    lambda x: torch.nn.functional.pad(x.relu(), (-1, 1, 0, 0, 1, 1)),
    lambda x: torch.nn.functional.pad(x.relu(), [1, 1], mode="constant", value=0.5),
]


@pytest.mark.parametrize("fn", RANK_FREE, ids=[f"r{i}" for i in range(len(RANK_FREE))])
def test_literal_axes_of_a_computed_tensor(fn: Any) -> None:
    check_fn(fn_module(fn, 1), X, SIZES)


def test_movedim_out_of_range_of_a_computed_tensor() -> None:
    """torch raises for an axis out of range once the rank is known; so does inference."""
    model = fn_module(lambda x: x.sum(0, keepdim=True).movedim(0, 3), 1)
    with pytest.raises(IndexError):
        model(torch.zeros(2, 6, 4))
    res = sst.infer(model, types_of(X))
    assert res.status == "error"
    assert res.errors[0].code == "axis-out-of-range", res.report()


@pytest.mark.parametrize(
    "positions",
    [
        lambda ids: torch.arange(ids.size(1)).unsqueeze(0).expand(ids.size(0), -1),
        lambda ids: torch.arange(ids.relu().size(1)).unsqueeze(0).expand(ids.size(0), -1),
        lambda ids: torch.arange(ids.size(1))[None].expand(-1, -1),
    ],
)
def test_expand_keeps_an_index_range(positions: Any) -> None:
    """``expand`` with ``-1`` of a computed tensor keeps its entries' range: positions
    ``arange(t)`` index an embedding of 10 rows only while ``t <= 10`` (torch raises past it)."""

    class Positions(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.emb = torch.nn.Embedding(10, 4)

        def forward(self, ids: torch.Tensor) -> torch.Tensor:
            return self.emb(positions(ids))  # type: ignore[no-any-return]

    model = Positions()
    res = sst.infer(model, types_of({"ids": (("b", "t"), "int64")}))
    assert res.status == "guarded", res.report()
    for t in (3, 10, 11, 14):
        ok = res.valid_at({"b": 2, "t": t})
        try:
            model(torch.zeros(2, t, dtype=torch.int64))
            ran = True
        except IndexError:
            ran = False
        assert ok == ran, (t, res.report())
