"""The error-code catalogue: every code has a category, the module constants are its entries, and
the categories say what kind of problem a code names (issue 12)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import symshape as ss
from symshape import errors
from symshape.errors import ERROR_CODES, ErrorCategory, ErrorCode, SymshapeError, expect_mapping

ROOT = Path(__file__).resolve().parents[1]


def test_module_constants_are_the_catalogue_entries() -> None:
    consts = {n: getattr(errors, n) for n in errors.__all__ if n.isupper() and n != "ERROR_CODES"}
    assert all(isinstance(c, ErrorCode) for c in consts.values())
    assert sorted(c.code for c in consts.values()) == sorted(ERROR_CODES)
    for name, c in consts.items():
        assert ERROR_CODES[c.code] is c
        assert name == c.code.upper().replace("-", "_")


def test_every_category_names_some_code() -> None:
    used = {c.category for c in ERROR_CODES.values()}
    assert used == set(ErrorCategory)


@pytest.mark.parametrize(
    ("code", "category"),
    [
        ("shape-mismatch", ErrorCategory.CONFLICT),
        ("constraint-violated", ErrorCategory.CONFLICT),
        ("unresolved", ErrorCategory.UNDECIDED),
        ("inconclusive", ErrorCategory.UNDECIDED),
        ("undefined-var", ErrorCategory.PROGRAM),
        ("bad-dtype", ErrorCategory.INPUT),
        ("invalid-argument", ErrorCategory.INPUT),
        ("unsupported-op", ErrorCategory.IMPORT),
        ("pinned-symbol", ErrorCategory.WARNING),
    ],
)
def test_category_of(code: str, category: ErrorCategory) -> None:
    assert ERROR_CODES[code].category is category


def test_api_input_errors_have_input_codes() -> None:
    """The bad-input errors of the API (raised, never reported) carry codes of the input category."""
    cases = [
        lambda: ss.Tensor((2,), "no-such-dtype"),
        lambda: ss.parse_dim("n +"),
        lambda: ss.var(3),  # type: ignore[arg-type]
        lambda: ss.Constant(shape=(-1,)),
        lambda: ss.Call(ss.ops.relu(ss.var("x")).callee, [ss.var("x")], attrs=[1]),  # type: ignore[arg-type]
    ]
    for case in cases:
        with pytest.raises(SymshapeError) as info:
            case()
        assert ERROR_CODES[info.value.code].category is ErrorCategory.INPUT, info.value


def test_solver_conflicts_have_conflict_codes() -> None:
    n = ss.dim("n")
    x = ss.var("x", ss.Tensor((n, 3), "float32"))
    y = ss.var("y", ss.Tensor((n, 4), "float32"))
    res = ss.infer(ss.Function([x, y], ss.ops.add(x, y)))
    assert res.errors
    assert {ERROR_CODES[d.code].category for d in res.errors} == {ErrorCategory.CONFLICT}


def test_expect_mapping() -> None:
    m = {"a": 1}
    assert expect_mapping(m, "x must be a mapping") is m
    with pytest.raises(SymshapeError) as info:
        expect_mapping([("a", 1)], "attributes must be a mapping", errors.BAD_ATTRIBUTE)
    assert info.value.code == "bad-attribute"
    assert info.value.message == "attributes must be a mapping, got list [('a', 1)]"


def test_codes_command_is_unchanged_by_categories() -> None:
    """``symshape codes`` prints code and description only (the README's table is generated from
    it): the categories are data, not output."""
    out = subprocess.run(
        [sys.executable, "-m", "symshape", "codes"],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT / "src")},
    ).stdout
    width = max(len(c) for c in ERROR_CODES)
    assert out.splitlines() == [f"{c.ljust(width)}  {e.description}" for c, e in ERROR_CODES.items()]
