"""Plain-data descriptions of the benchmark workloads, shared by every builder.

symshape (:mod:`benchmarks.workloads`), TVM Relax (:mod:`benchmarks.peers_tvm`) and ONNX
(:mod:`benchmarks.peers_onnx`) each build the *same* program from these descriptions with their own
API, so the side-by-side numbers compare like with like.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "CHAIN_PATTERN",
    "HIDDEN",
    "Bottleneck",
    "ConvSpec",
    "chain_ops",
    "error_index",
    "resnet50",
    "resnet50_convs",
    "resnet50_op_count",
]

#: Feature size of the transformer-like chain: tensors are ``(n, s, HIDDEN)``.
HIDDEN = 64

#: One period of the transformer-like chain. ``reshape_flat`` is ``reshape(y, (n*s, 64))`` and
#: ``reshape_back`` is ``reshape(y, (n, s, 64))``; ``add`` adds the chain's input ``x`` (same shape),
#: ``matmul`` multiplies by a ``(64, 64)`` weight, ``layer_norm`` normalizes the last axis with
#: ``(64,)`` gamma and beta.
CHAIN_PATTERN: tuple[str, ...] = ("matmul", "add", "reshape_flat", "reshape_back", "softmax", "layer_norm")


def chain_ops(n_ops: int) -> list[str]:
    """The operator sequence of an ``n_ops``-operator chain (the pattern repeated, then cut)."""
    if n_ops < 1:
        raise ValueError("a chain needs at least one operator")
    k = len(CHAIN_PATTERN)
    return [CHAIN_PATTERN[i % k] for i in range(n_ops)]


def error_index(n_ops: int) -> int:
    """Where workload (c) injects its shape error: the last ``matmul`` of the chain.

    There the weight is ``(65, 64)`` instead of ``(64, 64)``: the reduction dimensions 64 and 65
    conflict. The operator sits within the last period of the chain, i.e. near its end.
    """
    ops = chain_ops(n_ops)
    return max(i for i, op in enumerate(ops) if op == "matmul")


@dataclass(frozen=True)
class ConvSpec:
    """A 2-d convolution without bias, NCHW / OIHW, followed by a batch norm."""

    name: str
    cin: int
    cout: int
    kernel: int
    stride: int
    pad: int


@dataclass(frozen=True)
class Bottleneck:
    """A ResNet-50 bottleneck block: 1x1 reduce, 3x3 (carries the stride), 1x1 expand, + shortcut.

    ``relu(bn(conv3(...)) + shortcut)``, where the shortcut is the block input or, for the first
    block of a stage, ``bn(downsample(input))`` (a strided 1x1 convolution).
    """

    name: str
    conv1: ConvSpec
    conv2: ConvSpec
    conv3: ConvSpec
    downsample: ConvSpec | None


#: The stem: 7x7/2 convolution with padding 3, then (after bn + relu) 3x3/2 max pooling, padding 1.
STEM = ConvSpec("conv1", 3, 64, 7, 2, 3)
POOL = {"pool_size": 3, "stride": 2, "pad": 1}
NUM_CLASSES = 1000
FEATURES = 2048


def resnet50() -> tuple[ConvSpec, list[Bottleneck]]:
    """The real ResNet-50 layer configuration (torchvision's v1.5: the stride sits on the 3x3)."""
    blocks: list[Bottleneck] = []
    cin = 64
    for stage, (width, count, stride) in enumerate(((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2))):
        for b in range(count):
            s = stride if b == 0 else 1
            name = f"layer{stage + 1}.{b}"
            cout = width * 4
            ds = ConvSpec(f"{name}.downsample", cin, cout, 1, s, 0) if b == 0 else None
            blocks.append(
                Bottleneck(
                    name,
                    ConvSpec(f"{name}.conv1", cin, width, 1, 1, 0),
                    ConvSpec(f"{name}.conv2", width, width, 3, s, 1),
                    ConvSpec(f"{name}.conv3", width, cout, 1, 1, 0),
                    ds,
                )
            )
            cin = cout
    return STEM, blocks


def resnet50_convs() -> list[ConvSpec]:
    """All 53 convolutions in program order."""
    stem, blocks = resnet50()
    out = [stem]
    for b in blocks:
        out += [b.conv1, b.conv2, b.conv3]
        if b.downsample is not None:
            out.append(b.downsample)
    return out


def resnet50_op_count() -> int:
    """Operators in the ResNet-50 program (conv, bn, relu, add, pools, flatten, dense)."""
    _, blocks = resnet50()
    convs = len(resnet50_convs())
    relus = 1 + 3 * len(blocks)
    adds = len(blocks)
    return convs + convs + relus + adds + 1 + 1 + 1 + 1  # maxpool, global pool, flatten, dense


assert len(resnet50_convs()) == 53
