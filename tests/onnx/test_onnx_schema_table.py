"""``symshape.onnx.schema_table``: onnx's operator schemas, as the type-constraint check reads them.

The table spares a process its first ``onnx.defs.get_schema``, which builds onnx's whole registry
(10 ms, a fifth of the first inference of densenet121). It is generated from onnx's schemas by
:func:`render`; ``python tests/onnx/test_onnx_schema_table.py`` rewrites it (after an onnx upgrade).
Checked here: the file is what onnx's schemas give now, and every operator of the checked domains
at every opset (and one past the last) has the same rule from the table as from ``get_schema``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import onnx
import pytest

from symshape.onnx import schema_table
from symshape.onnx import type_constraints as tc

TABLE = Path(tc.__file__).with_name("schema_table.py")
_VARIADIC = onnx.defs.OpSchema.FormalParameterOption.Variadic


def _formal(p: Any, sets: dict[frozenset[str], int], cons: dict[str, frozenset[str]]) -> tuple[Any, ...]:
    ts = p.type_str
    index = sets.setdefault(cons[ts], len(sets)) if ts in cons else -1
    variadic = p.option == _VARIADIC
    return (ts, index, variadic, not variadic or bool(p.is_homogeneous))


def render() -> str:
    """The text of ``schema_table.py`` for the installed onnx."""
    sets: dict[frozenset[str], int] = {}
    entries: dict[tuple[str, str], list[tuple[Any, ...]]] = {}
    for s in sorted(
        onnx.defs.get_all_schemas_with_history(), key=lambda s: (s.domain, s.name, s.since_version)
    ):
        if s.domain not in tc.CHECKED_DOMAINS:
            continue
        cons = {c.type_param_str: frozenset(c.allowed_type_strs) for c in s.type_constraints}
        ins = tuple(_formal(p, sets, cons) for p in s.inputs)
        outs = tuple(_formal(p, sets, cons) for p in s.outputs)
        entries.setdefault((s.domain, s.name), []).append((s.since_version, ins, outs))
    ranges = onnx.defs.C.schema_version_map()
    last = {d: ranges[d][1] for d in sorted(tc.CHECKED_DOMAINS)}
    lines = [
        '"""onnx\'s operator schemas for :mod:`symshape.onnx.type_constraints` (generated: do not edit).',
        "",
        "Written by ``python tests/onnx/test_onnx_schema_table.py`` from onnx's schemas; read only",
        "with the onnx it was written from (:data:`ONNX_VERSION`), and only up to each domain's last",
        "opset then (:data:`LAST_OPSET`). :data:`SCHEMAS` maps ``(domain, operator)`` to its",
        "versions, ascending: ``(since_version, inputs, outputs)``, each formal a tuple ``(type_str,",
        "type set, variadic, homogeneous)``, the type set an index into :data:`TYPE_SETS` (-1 for a",
        "literal type ``type_str``).",
        '"""',
        "",
        "# ruff: noqa: E501",
        "# fmt: off",
        "",
        "from __future__ import annotations",
        "",
        "from typing import Final",
        "",
        '__all__ = ["ONNX_VERSION", "LAST_OPSET", "TYPE_SETS", "SCHEMAS", "Formal", "Version"]',
        "",
        "Formal = tuple[str, int, bool, bool]",
        "Version = tuple[int, tuple[Formal, ...], tuple[Formal, ...]]",
        "",
        f"ONNX_VERSION: Final = {onnx.__version__!r}",
        f"LAST_OPSET: Final[dict[str, int]] = {last!r}",
        "TYPE_SETS: Final[tuple[tuple[str, ...], ...]] = (",
        *(f"    {tuple(sorted(s))!r}," for s in sets),
        ")",
        "SCHEMAS: Final[dict[tuple[str, str], tuple[Version, ...]]] = {",
        *(f"    {k!r}: {tuple(v)!r}," for k, v in entries.items()),
        "}",
        "# fmt: on",
        "",
    ]
    return "\n".join(lines)


#: whether the table was written from the onnx installed (after an onnx upgrade it is not read,
#: and ``python tests/onnx/test_onnx_schema_table.py`` rewrites it)
CURRENT = schema_table.ONNX_VERSION == onnx.__version__


def test_table_is_onnxs_schemas() -> None:
    if CURRENT:
        assert TABLE.read_text(encoding="utf-8") == render(), (
            "regenerate: python tests/onnx/test_onnx_schema_table.py"
        )
    else:  # (another onnx: every rule comes from get_schema)
        assert all(tc._rule_of_table(d, op, 1) is tc._NOT_IN_TABLE for d, op in schema_table.SCHEMAS)


def _names() -> list[tuple[str, str]]:
    ops = {(s.domain, s.name) for s in onnx.defs.get_all_schemas_with_history()}
    return sorted((d, n) for d, n in ops if d in tc.CHECKED_DOMAINS)


@pytest.mark.parametrize("domain", sorted(tc.CHECKED_DOMAINS))
def test_every_rule_is_get_schemas(domain: str) -> None:
    last = schema_table.LAST_OPSET[domain]
    names = [n for d, n in _names() if d == domain]
    assert len(names) > 15  # (19 in ai.onnx.ml, 203 in the default domain with onnx 1.23)
    for op in [*names, "NoSuchOp"]:
        for opset in range(1, last + 2):
            expected = tc._rule_of_schema(domain, op, opset)
            found = tc._rule_of_table(domain, op, opset)
            if not CURRENT or opset > last or op == "NoSuchOp":
                assert found is tc._NOT_IN_TABLE  # (left to get_schema)
            else:
                assert found == expected, (op, opset)


def test_schema_rule_reads_the_table_not_get_schema(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("get_schema called")

    monkeypatch.setattr(tc, "_SCHEMAS", {})
    monkeypatch.setattr(schema_table, "ONNX_VERSION", onnx.__version__)  # (as if written from it)
    monkeypatch.setattr(onnx.defs, "get_schema", refuse)
    rule = tc.schema_rule("", "Conv", 17)
    assert rule is not None and rule.name == "Conv-11"
    assert tc.schema_rule("ai.onnx.ml", "Scaler", 5) is not None
    assert tc.schema_rule("", "Conv", 0) is None  # (no version yet)
    with pytest.raises(AssertionError, match="get_schema called"):
        tc.schema_rule("", "NoSuchOp", 17)  # (not in the table: onnx decides)


def test_a_table_of_another_onnx_is_not_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tc, "_SCHEMAS", {})
    monkeypatch.setattr(schema_table, "ONNX_VERSION", "0.0")
    monkeypatch.setattr(schema_table, "SCHEMAS", {("", "Conv"): ((1, (), ()),)})  # (would be wrong)
    assert tc._rule_of_table("", "Conv", 17) is tc._NOT_IN_TABLE
    assert tc.schema_rule("", "Conv", 17) == tc._rule_of_schema("", "Conv", 17)


if __name__ == "__main__":
    TABLE.write_text(render(), encoding="utf-8")
    print(f"wrote {TABLE}")
