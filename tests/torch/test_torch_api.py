"""The importer's API: inputs, results keyed by fx nodes, spans in the model's source, unsupported
calls collected for the whole model, tracing failures, laziness and determinism."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest
import torch
import torch.fx
import torch.nn as nn
import torch.nn.functional as F

import symshape as ss
import symshape.torch as sst
from symshape.torch.spans import frames, pythonic_path
from torch_zoo.oracle import fn_module, types_of

HERE = __file__


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3)
        self.fc2 = nn.Linear(8 * 13 * 13, 10)
        self.register_buffer("scale", torch.ones(10))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = torch.flatten(x, 1)
        return self.fc2(x) * self.scale


def _line(span: ss.Span | None) -> str:
    assert span is not None
    with open(span.file) as f:
        return f.read().split("\n")[span.line - 1]


def test_types_by_node_and_name() -> None:
    b = ss.dim("b")
    res = sst.infer(Net(), {"x": ss.Tensor((b, 1, 28, 28), "float32")})
    assert res.status == "ok"
    assert isinstance(res, ss.InferenceResult)
    node = next(n for n in res.fx_graph.nodes if n.name == "fc2")
    assert res.type_of(node) == ss.Tensor((b, 10), "float32")
    assert res.type_of("conv1") == ss.Tensor((b, 8, 26, 26), "float32")
    assert res.type_of("output") == ss.Tensor((b, 10), "float32")
    assert res.type_of(res.values["flatten"]) == ss.Tensor((b, 1352), "float32")  # an expression
    with pytest.raises(ss.SymshapeError):
        res.type_of("no_such_node")


def test_example_tensors_with_dynamic_names() -> None:
    res = sst.infer(Net(), (torch.randn(2, 1, 28, 28),), dynamic={"x": {0: "batch"}})
    assert str(res.type_of("fc2")) == "Tensor[(batch, 10), float32]"
    res = sst.infer(Net(), (torch.randn(2, 1, 28, 28),))
    assert str(res.type_of("fc2")) == "Tensor[(2, 10), float32]"
    n = ss.dim("n")
    res = sst.infer(Net(), (torch.randn(2, 1, 28, 28),), dynamic={"x": {0: n}})
    assert res.type_of("fc2") == ss.Tensor((n, 10), "float32")
    res = sst.infer(Net(), (torch.randn(2, 1, 28, 28),), dynamic={"x": {0: torch.export.Dim("b")}})
    assert str(res.type_of("fc2")) == "Tensor[(b, 10), float32]"


@pytest.mark.parametrize(
    "inputs, kwargs",
    [
        ({}, {}),
        ({"y": ss.Tensor((1, 1, 28, 28), "float32")}, {}),
        ({"x": (1, 28, 28)}, {}),
        ((torch.randn(1, 1, 28, 28), torch.randn(1)), {}),
        ((torch.randn(1, 1, 28, 28),), {"dynamic": {"x": {7: "b"}}}),
        ((torch.randn(1, 1, 28, 28),), {"dynamic": {"y": {0: "b"}}}),
        ({"x": ss.Tensor((1, 1, 28, 28), "float32")}, {"dynamic": {"x": {0: "b"}}}),
    ],
)
def test_bad_inputs_raise(inputs: object, kwargs: dict[str, object]) -> None:
    with pytest.raises(ss.SymshapeError) as e:
        sst.infer(Net(), inputs, **kwargs)  # type: ignore[arg-type]
    assert e.value.code == "invalid-argument"


def test_not_a_model() -> None:
    with pytest.raises(ss.SymshapeError) as e:
        sst.infer(object(), {})
    assert e.value.code == "invalid-argument"


def test_graph_module_input() -> None:
    gm = torch.fx.symbolic_trace(Net())
    b = ss.dim("b")
    res = sst.infer(gm, {"x": ss.Tensor((b, 1, 28, 28), "float32")})
    assert res.status == "ok"
    assert res.type_of("fc2") == ss.Tensor((b, 10), "float32")
    prog = sst.from_fx(gm, {"x": ss.Tensor((b, 1, 28, 28), "float32")})
    assert isinstance(prog, ss.Function)
    assert [p.name for p in prog.params] == [
        "x",
        "self.conv1.weight",
        "self.conv1.bias",
        "self.fc2.weight",
        "self.fc2.bias",
        "self.scale",
    ]


def test_error_report_is_in_the_model_source() -> None:
    """The primary span is the call in ``forward``; notes name the parameters at their
    ``__init__`` lines (``self.fc2.weight`` is annotated ``(10, 1352)``)."""
    b = ss.dim("b")
    res = sst.infer(Net(), {"x": ss.Tensor((b, 1, 32, 32), "float32")})
    assert res.status == "error"
    (err,) = res.errors
    assert err.code == "shape-mismatch"
    assert "self.fc2(x)" in _line(err.span)
    assert err.span is not None and err.span.column == _line(err.span).index("self.fc2") + 1
    notes = {n.message: n.span for n in err.notes}
    fc2 = next(m for m in notes if "`self.fc2.weight`" in m)
    assert "(10, 1352)" in fc2
    assert _line(notes[fc2]).strip() == "self.fc2 = nn.Linear(8 * 13 * 13, 10)"
    x_note = next(m for m in notes if "`x` is annotated" in m)
    assert "def forward(self, x" in _line(notes[x_note])
    report = res.report()
    assert report.startswith("status: error\n")
    assert "return self.fc2(x) * self.scale" in report


class TwoUnsupported(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.up = nn.Unfold(2)
        self.fc = nn.Linear(4, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.up(x)
        z = torch.fft.rfft(y)
        w = self.fc(z.abs())
        return w + x.mean()


def test_unsupported_calls_are_collected_for_the_whole_model() -> None:
    res = sst.infer(TwoUnsupported(), types_of({"x": (("b", 4, "h", "w"), "float32")}))
    assert res.status == "error"
    assert [d.code for d in res.errors] == ["unsupported-op", "unsupported-op"]
    first, second = res.errors
    assert "Unfold" in first.message and "self.up(x)" in _line(first.span)
    assert "torch.fft.rfft" in second.message or "fft_rfft" in second.message
    assert "torch.fft.rfft(y)" in _line(second.span)
    # the nodes after them are typed as far as they can be: unknown rank, no further report
    assert str(res.type_of("fc")) == "Tensor[?, ?]"
    assert res.unresolved == []


def test_data_dependent_control_flow_is_a_symshape_error_with_advice() -> None:
    class Branchy(nn.Module):
        def forward(self, x: torch.Tensor, flag: bool = True) -> torch.Tensor:
            if x.sum() > 0:
                return x
            return -x

    with pytest.raises(ss.SymshapeError) as e:
        sst.infer(Branchy(), types_of({"x": (("b",), "float32")}))
    assert e.value.code == "unsupported-op"
    assert "control flow" in e.value.message and "torch.export" in e.value.message
    assert "concrete_args" in e.value.message


def test_concrete_args() -> None:
    class Flagged(nn.Module):
        def forward(self, x: torch.Tensor, double: bool) -> torch.Tensor:
            if double:
                return torch.cat([x, x], 1)
            return x

    res = sst.infer(Flagged(), types_of({"x": (("b", 3), "float32")}), concrete_args={"double": True})
    assert str(res.type_of("output")) == "Tensor[(b, 6), float32]"


def test_strict_turns_guards_into_errors() -> None:
    f = fn_module(lambda x, y: x + y, 2)
    types = types_of({"x": (("b", 3), "float32"), "y": ((5, 3), "float32")})
    assert sst.infer(f, types).status == "guarded"
    res = sst.infer(f, types, strict=True)
    assert res.status == "error" and res.errors[0].code == "unproven-guard"


def test_value_of_python_nodes() -> None:
    def f(x: torch.Tensor) -> torch.Tensor:
        n = x.size(1) * 2
        return x.relu().view(-1, n)

    res = sst.infer(fn_module(f, 1), types_of({"x": (("b", "t"), "float32")}))
    t = ss.dim("t")
    assert res.value_of("mul") == 2 * t
    assert res.value_of("size") == t
    assert res.value_of("relu") is None
    with pytest.raises(ss.SymshapeError):
        res.type_of("mul")


def test_spans_helpers() -> None:
    assert pythonic_path("layer1.0.conv1.weight") == "self.layer1[0].conv1.weight"
    assert pythonic_path("blocks.attn-x.w") == "self.blocks['attn-x'].w"
    trace = 'File "/a/m.py", line 3, in forward\n    y = f(x)\n  File "/b/t.py", line 9, in g\n    z\n'
    assert frames(trace) == [("/a/m.py", 3, "forward"), ("/b/t.py", 9, "g")]


def test_parameter_spans_for_buffers_parameters_and_containers() -> None:
    class Owner(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.blocks = nn.Sequential(nn.Linear(4, 4), nn.Linear(4, 4))
            self.cls = nn.Parameter(torch.zeros(1, 4))
            self.register_buffer("table", torch.zeros(3, 4))

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return F.linear(self.blocks(x) + self.cls, self.table)

    prog = sst.from_fx(Owner(), types_of({"x": (("b", 4), "float32")}))
    lines = {p.name: _line(p.span).strip() for p in prog.params[1:]}
    assert lines["self.blocks[0].weight"].startswith("self.blocks = nn.Sequential")
    assert lines["self.cls"].startswith("self.cls = nn.Parameter")
    assert lines["self.table"].startswith('self.register_buffer("table"')


def test_import_symshape_does_not_import_torch() -> None:
    code = "import sys, symshape, symshape.torch; print('torch' in sys.modules)"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.strip() == "False"


def test_report_is_deterministic_across_hash_seeds() -> None:
    """The same report in this process and in one with another hash seed."""
    code = textwrap.dedent(
        f"""
        import sys
        sys.path.insert(0, {os.path.dirname(HERE)!r})
        import symshape as ss, symshape.torch as sst
        from test_torch_api import Net
        b = ss.dim("b")
        print(sst.infer(Net(), {{"x": ss.Tensor((b, 1, 32, 32), "float32")}}).report())
        """
    )
    here = sst.infer(Net(), {"x": ss.Tensor((ss.dim("b"), 1, 32, 32), "float32")}).report()
    seed = "1" if os.environ.get("PYTHONHASHSEED") != "1" else "2"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path), PYTHONHASHSEED=seed)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.rstrip("\n") == here
    assert "shape-mismatch" in here


def test_notebook_display_includes_the_importer_errors() -> None:
    res = sst.infer(TwoUnsupported(), types_of({"x": (("b", 4, "h", "w"), "float32")}))
    html = res._repr_html_()
    assert "unsupported-op" in html and "error" in html
    assert repr(res) == "TorchInferenceResult(status='error', errors=2, guards=0)"
    assert res.graph().number_of_nodes() > 0  # the constraint graph, as for any result


class BranchOnBuffer(nn.Module):
    """Python control flow on a buffer's contents: traced with buffers as constants."""

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("use_relu", torch.tensor(True))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.use_relu:
            return x.relu()[:, :2]
        return x


def test_a_model_branching_on_a_buffer_traces() -> None:
    res = sst.infer(BranchOnBuffer(), types_of({"x": (("b", 4), "float32")}))
    assert res.ok, res.report()
    assert res.type_of("getitem") == ss.Tensor((ss.dim("b"), 2), "float32")


class UnsupportedIntoAttention(nn.Module):
    """An unsupported call whose result feeds attention (reshapes with -1 downstream)."""

    def __init__(self) -> None:
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.layer(F.unfold(x, 1).transpose(1, 2))


def test_no_guards_on_the_sizes_of_an_unsupported_result() -> None:
    """The unknown tensor standing for an unsupported node has solver unknowns as sizes; the
    conditions downstream on them (``?d5 != 0``) are not guards on the user's sizes."""
    res = sst.infer(UnsupportedIntoAttention().eval(), types_of({"x": (("b", 8, "h", "w"), "float32")}))
    assert res.status == "error"
    assert [d.code for d in res.errors] == ["unsupported-op"]
    assert all("?" not in str(g) for g in res.guards), res.guards
    assert "?d" not in res.report()
