"""symshape.torch.convert.modules against torch: leaf modules typed from their parameters."""

from __future__ import annotations

from typing import Any

import pytest
import torch
import torch.nn as nn

import symshape as ss
import symshape.torch as sst
from torch_zoo.oracle import Wrap, check_fn, types_of

SEQ = {"x": (("b", "t", 8), "float32")}
SEQ_SIZES = [{"b": 2, "t": 5}, {"b": 1, "t": 1}]
IMG = {"x": (("b", 4, "h", "w"), "float32")}
IMG_SIZES = [{"b": 2, "h": 9, "w": 12}, {"b": 1, "h": 6, "w": 5}]

SEQ_MODULES = [
    lambda: nn.Linear(8, 3),
    lambda: nn.Linear(8, 3, bias=False),
    lambda: nn.LayerNorm(8),
    lambda: nn.LayerNorm(8, elementwise_affine=False),
    lambda: nn.RMSNorm(8),
    lambda: nn.Dropout(0.2),
    lambda: nn.Identity(),
    lambda: nn.GELU(),
    lambda: nn.GELU("tanh"),
    lambda: nn.ReLU(),
    lambda: nn.SiLU(),
    lambda: nn.Tanh(),
    lambda: nn.Sigmoid(),
    lambda: nn.LeakyReLU(0.2),
    lambda: nn.ELU(),
    lambda: nn.Hardtanh(-2, 2),
    lambda: nn.Hardswish(),
    lambda: nn.Mish(),
    lambda: nn.Softplus(),
    lambda: nn.Softmax(dim=-1),
    lambda: nn.LogSoftmax(1),
    lambda: nn.GLU(),
    lambda: nn.PReLU(),
    lambda: nn.Threshold(0.1, 0.0),
    lambda: nn.Flatten(),
    lambda: nn.Flatten(0, 1),
    lambda: nn.Unflatten(2, (2, 4)),
    lambda: nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4)),
    lambda: nn.Sequential(nn.Flatten(0, 1), nn.BatchNorm1d(8)),
    lambda: nn.Flatten(1),
    lambda: nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True),
    lambda: nn.TransformerEncoderLayer(
        8, 2, 16, dropout=0.0, batch_first=True, norm_first=True, activation="gelu"
    ),
    lambda: nn.TransformerEncoder(
        nn.TransformerEncoderLayer(8, 2, 16, 0.0, batch_first=True),
        2,
        norm=nn.LayerNorm(8),
        enable_nested_tensor=False,
    ),
]


@pytest.mark.parametrize("make", SEQ_MODULES, ids=[f"seq{i}" for i in range(len(SEQ_MODULES))])
def test_sequence_modules(make: Any) -> None:
    check_fn(Wrap(make()).eval(), SEQ, SEQ_SIZES)


IMG_MODULES = [
    lambda: nn.Conv2d(4, 6, 3),
    lambda: nn.Conv2d(4, 6, 3, stride=2, padding=1, bias=False),
    lambda: nn.Conv2d(4, 8, 3, padding="same", dilation=2, groups=2),
    lambda: nn.Conv2d(4, 6, (1, 3), padding=(0, 1)),
    lambda: nn.BatchNorm2d(4),
    lambda: nn.BatchNorm2d(4, affine=False),
    lambda: nn.GroupNorm(2, 4),
    lambda: nn.InstanceNorm2d(4, affine=True),
    lambda: nn.MaxPool2d(2),
    lambda: nn.MaxPool2d(3, 2, 1, ceil_mode=True),
    lambda: nn.AvgPool2d(2, 1),
    lambda: nn.AdaptiveAvgPool2d((1, 1)),
    lambda: nn.AdaptiveMaxPool2d(2),
    lambda: nn.Dropout2d(),
    lambda: nn.ReLU6(),
    lambda: nn.ZeroPad2d((1, 0, 2, 1)),
    lambda: nn.Hardsigmoid(),
    lambda: nn.Sequential(
        nn.Conv2d(4, 4, 3, padding=1),
        nn.BatchNorm2d(4),
        nn.ReLU(),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Linear(4, 3),
    ),
    lambda: nn.MaxPool2d(2, return_indices=True),
    lambda: nn.PReLU(4),
]


@pytest.mark.parametrize("make", IMG_MODULES, ids=[f"img{i}" for i in range(len(IMG_MODULES))])
def test_image_modules(make: Any) -> None:
    check_fn(Wrap(make()).eval(), IMG, IMG_SIZES)


def test_conv1d_conv3d_pool1d_modules() -> None:
    check_fn(
        Wrap(nn.Sequential(nn.Conv1d(3, 5, 3, stride=2), nn.MaxPool1d(2))),
        {"x": (("b", 3, "t"), "float32")},
        [{"b": 2, "t": 11}],
    )
    check_fn(
        Wrap(nn.Sequential(nn.Conv3d(2, 3, 3, padding=1), nn.AvgPool3d(2))),
        {"x": (("b", 2, 4, 6, "d"), "float32")},
        [{"b": 1, "d": 6}],
    )


def test_embedding() -> None:
    check_fn(Wrap(nn.Embedding(20, 6)), {"x": (("b", "t"), "int64")}, [{"b": 2, "t": 3}])


class Attention(nn.Module):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__()
        self.attn = nn.MultiheadAttention(8, 2, **kwargs)

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.attn(x, y, y)


class MaskedAttention(Attention):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:  # type: ignore[override]
        mask = x.new_zeros(x.shape[1], y.shape[1], dtype=torch.bool)
        out, w = self.attn(
            x, y, y, key_padding_mask=y[:, :, 0] > 5, attn_mask=mask, average_attn_weights=False
        )
        return out, w


@pytest.mark.parametrize(
    "module, specs",
    [
        (Attention(batch_first=True), {"x": (("b", "l", 8), "float32"), "y": (("b", "s", 8), "float32")}),
        (Attention(), {"x": (("l", "b", 8), "float32"), "y": (("s", "b", 8), "float32")}),
        (
            Attention(batch_first=True, kdim=5, vdim=5),
            {"x": (("b", "l", 8), "float32"), "y": (("b", "s", 5), "float32")},
        ),
        (
            Attention(batch_first=True, bias=False),
            {"x": (("b", "l", 8), "float32"), "y": (("b", "s", 8), "float32")},
        ),
        (
            MaskedAttention(batch_first=True),
            {"x": (("b", "l", 8), "float32"), "y": (("b", "s", 8), "float32")},
        ),
    ],
)
def test_multihead_attention(module: nn.Module, specs: dict[str, Any]) -> None:
    check_fn(module.eval(), specs, [{"b": 2, "l": 3, "s": 4}, {"b": 1, "l": 1, "s": 1}])


class Recurrent(nn.Module):
    def __init__(self, rnn: nn.Module, with_state: bool = False) -> None:
        super().__init__()
        self.rnn = rnn
        self.with_state = with_state

    def forward(self, x: torch.Tensor) -> Any:
        if not self.with_state:
            return self.rnn(x)
        n = 2 * self.rnn.num_layers if self.rnn.bidirectional else self.rnn.num_layers
        h0 = torch.zeros(n, x.shape[0], self.rnn.hidden_size)
        return self.rnn(x, (h0, h0) if isinstance(self.rnn, nn.LSTM) else h0)


@pytest.mark.parametrize(
    "rnn",
    [
        lambda: nn.LSTM(8, 6, batch_first=True),
        lambda: nn.LSTM(8, 6, num_layers=2, bidirectional=True),
        lambda: nn.GRU(8, 5, batch_first=True, bidirectional=True),
        lambda: nn.RNN(8, 4, num_layers=3),
        lambda: nn.LSTM(8, 6, batch_first=True, proj_size=3),
        lambda: nn.LSTM(8, 6, bias=False, num_layers=2),
    ],
)
def test_recurrent(rnn: Any) -> None:
    check_fn(Recurrent(rnn()).eval(), SEQ, SEQ_SIZES)


def test_a_leaf_module_itself() -> None:
    """A model that is one leaf module is imported as one call (its forward's argument names)."""
    res = sst.infer(nn.Linear(8, 3), {"input": types_of(SEQ)["x"]})
    assert res.status == "ok"
    b, t = ss.dims("b t")
    assert res.type_of("output") == ss.Tensor((b, t, 3), "float32")
    res = sst.infer(nn.BatchNorm2d(4).eval(), {"input": types_of(IMG)["x"]})
    assert res.status == "ok"
    # training (a fresh module): more than one value per channel, as torch checks
    res = sst.infer(nn.BatchNorm2d(4), {"input": types_of(IMG)["x"]})
    assert res.status == "guarded"
    b, h, w = ss.dims("b h w")
    assert not res.valid_at({b: 1, h: 1, w: 1}) and res.valid_at({b: 1, h: 1, w: 2})
    res = sst.infer(
        nn.MultiheadAttention(8, 2, batch_first=True),
        {k: types_of(SEQ)["x"] for k in ("query", "key", "value")},
    )
    assert res.status == "ok"
    assert str(res.type_of("output")) == "(Tensor[(b, t, 8), float32], Tensor[(b, t, t), float32])"


def test_recurrent_initial_state_is_checked() -> None:
    ok = Recurrent(nn.LSTM(8, 6, batch_first=True, num_layers=2), with_state=True).eval()
    check_fn(ok, SEQ, SEQ_SIZES)
    bad = Recurrent(nn.LSTM(8, 6, batch_first=True), with_state=True).eval()
    bad.rnn.num_layers = 1
    bad.rnn.bidirectional = True  # the initial state then has 2 layers, the module 1
    res = sst.infer(bad, types_of(SEQ))
    assert res.status == "error"


@pytest.mark.parametrize(
    "module, specs, code",
    [
        (nn.Sequential(nn.Linear(8, 16), nn.Linear(12, 4)), SEQ, "shape-mismatch"),
        (nn.Sequential(nn.Conv2d(4, 6, 3), nn.Conv2d(4, 6, 3)), IMG, "shape-mismatch"),
        (nn.Sequential(nn.Conv2d(4, 6, 3), nn.BatchNorm2d(4)), IMG, "shape-mismatch"),
        (nn.LayerNorm(6), SEQ, "shape-mismatch"),
        (nn.LSTM(6, 4), SEQ, "shape-mismatch"),
        (nn.Embedding(10, 4), SEQ, "dtype-mismatch"),
    ],
)
def test_errors_name_the_parameter(module: nn.Module, specs: dict[str, Any], code: str) -> None:
    res = sst.infer(Wrap(module).eval(), types_of(specs))
    assert res.status == "error", res.report()
    err = res.errors[0]
    assert err.code == code, res.report()


def test_wrong_in_features_report() -> None:
    res = sst.infer(Wrap(nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(12, 4))), types_of(SEQ))
    (err,) = res.errors
    notes = [n.message for n in err.notes]
    assert any("self.m[2].weight" in m and "(4, 12)" in m for m in notes), notes


@pytest.mark.parametrize(
    "module", [nn.Unfold(2), nn.Fold((4, 4), 2)]
)
def test_modules_without_an_operator(module: nn.Module) -> None:
    res = sst.infer(Wrap(nn.Sequential(module, nn.ReLU())), types_of(IMG))
    assert [d.code for d in res.errors] == ["unsupported-op"]
    assert type(module).__name__ in res.errors[0].message


def test_parameters_are_program_parameters() -> None:
    prog = sst.from_fx(nn.Sequential(nn.Linear(8, 3)), {"input": types_of(SEQ)["x"]})
    names = [p.name for p in prog.params]
    assert names == ["input", "self[0].weight", "self[0].bias"]
    assert prog.params[1].type_annotation == ss.Tensor((3, 8), "float32")


def _tampered_bn() -> nn.Module:
    bn = nn.BatchNorm2d(4)
    bn.running_mean = torch.zeros(5)  # a statistic of another size: torch raises at run time
    return bn


def _tampered_ln() -> nn.Module:
    ln = nn.LayerNorm(8)
    ln.bias = nn.Parameter(torch.zeros(7))
    return ln


@pytest.mark.parametrize(
    "module, specs",
    [(_tampered_bn(), IMG), (_tampered_ln(), SEQ)],
)
def test_norm_vectors_of_different_sizes_are_each_checked(module: nn.Module, specs: dict[str, Any]) -> None:
    """Norm modules whose vectors share one type pass one of them; any other is checked in full
    (and torch eager agrees that the module fails)."""
    dims = {"b": 2, "t": 3, "h": 5, "w": 5}
    shape = tuple(dims[d] if isinstance(d, str) else d for d in specs["x"][0])
    with pytest.raises(RuntimeError):
        module.eval()(torch.zeros(shape))
    res = sst.infer(Wrap(module).eval(), types_of(specs))
    assert res.status == "error", res.report()
    assert res.errors[0].code == "shape-mismatch"


def test_norm_vectors_of_one_type_are_one_parameter() -> None:
    """A batch norm's weight, bias and running statistics have one type: the program binds the
    weight for all of them, and a channel mismatch names it."""
    model = nn.Sequential(nn.Conv2d(4, 6, 3), nn.BatchNorm2d(8))
    prog = sst.from_fx(model, {"input": types_of(IMG)["x"]})
    assert [p.name for p in prog.params] == ["input", "self[0].weight", "self[0].bias", "self[1].weight"]
    res = sst.infer(model, {"input": types_of(IMG)["x"]})
    notes = [n.message for n in res.errors[0].notes]
    assert any("self[1].weight" in m and "(8,)" in m for m in notes), notes
