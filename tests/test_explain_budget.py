"""The explanation of one inference has an overall time budget (issue 14's "nothing a user passes
in can make the library hang"): every Z3 check of it counts, naming the parts of each core member
included, and a report that hits the budget says so in a note — never silently different."""

from __future__ import annotations

import os
import sys

import pytest

import symshape as ss
import symshape.solver.explain as explain

T = ss.Tensor
_CUT = "the explanation was cut short"


def _program() -> ss.Function:
    """A dense whose weight disagrees with the input, two calls away (a core of several calls,
    each with parts to name)."""
    (b,) = ss.dims("b")
    x = ss.var("x", T((b, 64), "float32"))
    w1 = ss.var("w1", T((32, 64), "float32"))
    w2 = ss.var("w2", T((16, 33), "float32"))
    h = ss.ops.relu(ss.ops.dense(x, w1))
    return ss.Function([x, w1, w2], ss.ops.dense(h, w2))


def _notes(res: ss.InferenceResult) -> list[str]:
    [d] = res.errors
    return [n.message for n in d.notes]


def test_an_error_within_the_budget_is_reported_the_same_every_time() -> None:
    a, b = ss.infer(_program()), ss.infer(_program())
    assert a.report() == b.report()
    assert not any(_CUT in n or "not minimized" in n for n in _notes(a))
    [d] = a.errors
    assert d.evidence is not None and d.evidence.minimized


def test_a_budget_that_runs_out_while_naming_parts_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    full = _notes(ss.infer(_program()))

    class NoTimeToDescribe(explain._Budget):
        def out(self) -> bool:
            return self.phase == "describe"

    monkeypatch.setattr(explain, "_budget", lambda solver: NoTimeToDescribe(1.0))
    cut = _notes(ss.infer(_program()))
    assert cut[-1] == (
        "the explanation was cut short when its budget (1 s) ran out: "
        "some members are named without the parts of them that the conflict needs"
    )
    # the same core (the same number of located notes), the calls named without their parts
    assert len(cut) == len(full) + 1
    assert cut[:-1] != full
    assert any(n.startswith("dense gives `") and "(" not in n.split("`")[-1] for n in cut)


def test_an_undecided_part_check_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(explain._Problem, "unsat_with", _undecided)
    notes = _notes(ss.infer(_program()))
    assert notes[-1].startswith("the explanation was cut short (a Z3 check was undecided): ")


def _undecided(self: explain._Problem, seqs: object, fs: object) -> None:
    self.cut = True
    return None


_ALEXNET = "light:bvlc_alexnet"


def test_the_fuzzed_alexnet_whose_explanation_took_20_s_is_cut_short() -> None:
    """76 part-naming checks of ~0.27 s each took 13-21 s; now the budget (2.5 timeouts: 5 s, as
    Z3 resource units) bounds them, the report says the explanation was cut short, and, the units
    being a count of Z3's work, where it was cut is the same every run."""
    pytest.importorskip("onnx")
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "onnx"))
    from tests.onnx.test_onnx_malformed import Mutation, mutate, seed_model

    import symshape.onnx as sso

    muts = [
        Mutation("elem", (276494, 2267), 9),
        Mutation("attr", (276494, 2267), "drop"),
        Mutation("attr", (444, 1698), "drop"),
    ]
    # (no time asserted: the budget counts Z3's work, not seconds; the cut shows in the notes)
    res = sso.infer(mutate(seed_model(_ALEXNET), muts))
    assert sso.infer(mutate(seed_model(_ALEXNET), muts)).report() == res.report()
    [d] = res.errors
    assert d.code == "reshape-size"
    assert any(n.message.startswith(_CUT) for n in d.notes), [n.message for n in d.notes]
