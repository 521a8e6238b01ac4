"""Rich display: HTML of dimensions, types, diagnostics, solutions and inference results (parsed,
not just non-empty), IPython pretty text, the labelled dependency graph, dot export, drawing."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import networkx as nx
import pytest

import symshape as ss
from symshape import display
from symshape.examples import attention_block, broadcast_guard, broken_model

# ----------------------------------------------------------------------------------------------
# a tiny HTML model: elements with attributes and their text content


class _Elem:
    def __init__(self, tag: str, attrs: dict[str, str], parent: _Elem | None) -> None:
        self.tag = tag
        self.attrs = attrs
        self.parent = parent
        self.children: list[_Elem] = []
        self.parts: list[str] = []

    @property
    def text(self) -> str:
        return "".join(self.parts)

    @property
    def classes(self) -> set[str]:
        return set(self.attrs.get("class", "").split())

    def iter(self) -> list[_Elem]:
        out = [self]
        for c in self.children:
            out.extend(c.iter())
        return out

    def find_all(self, tag: str | None = None, cls: str | None = None) -> list[_Elem]:
        return [
            e for e in self.iter()[1:] if (tag is None or e.tag == tag) and (cls is None or cls in e.classes)
        ]


_VOID = {"br", "hr", "img", "input", "meta", "link"}


class _Parser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = _Elem("#root", {}, None)
        self.cur = self.root

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        e = _Elem(tag, {k: v or "" for k, v in attrs}, self.cur)
        self.cur.children.append(e)
        if tag not in _VOID:
            self.cur = e

    def handle_endtag(self, tag: str) -> None:
        e: _Elem | None = self.cur
        while e is not None and e.tag != tag:
            e = e.parent
        assert e is not None and e.parent is not None, f"unbalanced </{tag}>"
        self.cur = e.parent

    def handle_data(self, data: str) -> None:
        e: _Elem | None = self.cur
        while e is not None:  # text belongs to every enclosing element
            e.parts.append(data)
            e = e.parent


def parse(markup: str) -> _Elem:
    p = _Parser()
    p.feed(markup)
    p.close()
    assert p.cur is p.root, "unclosed elements in the HTML"
    return p.root


def rows(doc: _Elem) -> list[_Elem]:
    return [r for r in doc.find_all("tr") if r.find_all("td")]


def cells(row: _Elem) -> list[str]:
    return [td.text for td in row.find_all("td")]


# ----------------------------------------------------------------------------------------------
# fixtures


@pytest.fixture
def broken() -> ss.InferenceResult:
    return ss.infer(broken_model().program)


@pytest.fixture
def guarded() -> ss.InferenceResult:
    return ss.infer(broadcast_guard().program)


def _unsat_core_program() -> tuple[Any, Any, Any]:
    """Two calls that are fine alone: reshape needs d % 4 == 0, add needs d == 1 or d == 3."""
    n, d = ss.dims("n d")
    x = ss.var("x", ss.Tensor((n, d), "float32"))
    b = ss.var("b", ss.Tensor((3,), "float32"))
    r = ss.ops.reshape(x, (0, 4, -1))
    a = ss.ops.add(x, b)
    return ss.Function([x, b], ss.Tuple([r, a])), r, a


# ----------------------------------------------------------------------------------------------
# dimensions and types


def test_dim_html_is_the_canonical_form() -> None:
    n = ss.dim("n")
    doc = parse((n * 3 * 4)._repr_html_())
    (code,) = doc.find_all("code", "ss-dim")
    assert code.text == "12*n" == str(12 * n)
    assert "n" in code.attrs["title"]
    assert parse(ss.parse_dim("7")._repr_html_()).find_all("code", "ss-dim")[0].text == "7"


def test_type_html_reads_back_with_parse_type() -> None:
    n, s = ss.dims("n s")
    a = ss.TypeVar("a")
    L = ss.GlobalTypeVar("List")  # noqa: N806
    types: list[Any] = [
        ss.Tensor((n, s, 64), "float32"),
        ss.Tensor((n,), "int32"),
        ss.Tensor((), "bool"),
        ss.Tensor(None, "float32"),
        ss.TupleType([ss.Tensor((n, 3)), ss.Tensor((2,), "int64")]),
        ss.FuncType([ss.Tensor((n, 3))], ss.Tensor((3 * n,))),
        a,
        ss.IncompleteType(),
        ss.ObjectType(),
        ss.ShapeType(2),
        ss.TypeCall(L, [ss.Tensor((2,), "int32")]),
    ]
    for t in types:
        doc = parse(t._repr_html_())
        (code,) = doc.find_all("code", "ss-type")
        assert code.text == str(t), (code.text, str(t))
    t0 = types[0]
    assert ss.parse_type(parse(t0._repr_html_()).text, {"n": n, "s": s}) == t0
    # characters that HTML escapes survive (function types print <...>)
    n2 = ss.dim("n")
    x = ss.var("x", ss.Tensor((n2, 4), "float32"))
    f = ss.Function([x], ss.ops.relu(x))
    fty = ss.infer(f).type_of(f)
    assert "<" in str(fty)
    assert parse(fty._repr_html_()).text == str(fty)
    assert "&lt;" in fty._repr_html_()


def test_ipython_pretty_prints_str() -> None:
    pretty = pytest.importorskip("IPython.lib.pretty")
    n = ss.dim("n")
    t = ss.Tensor((n * 3 * 4, 3), "float32")
    assert pretty.pretty(t) == "Tensor[(12*n, 3), float32]"
    assert pretty.pretty(12 * n) == "12*n"
    assert pretty.pretty(ss.TupleType([t])) == str(ss.TupleType([t]))


# ----------------------------------------------------------------------------------------------
# diagnostics


def test_diagnostic_html_has_code_message_and_notes(broken: ss.InferenceResult) -> None:
    d = broken.errors[0]
    for markup in (d._repr_html_(), display.diagnostic_html(d)):
        doc = parse(markup)
        (div,) = doc.find_all("div", "symshape-diagnostic")
        assert div.attrs["data-code"] == "not-broadcastable"
        assert "[not-broadcastable]" in doc.find_all("code", "ss-code")[0].text
        assert "Tensor[(n, 12), float32]" in doc.text and "Tensor[(n, 5), float32]" in doc.text
        assert "flatten gives `Tensor[(n, 12), float32]`" in doc.text
        assert str(d.span) in doc.text
    # the richer version also quotes the source line
    src = parse(display.diagnostic_html(d)).find_all("pre", "ss-source")
    assert src and "ss.ops.add(fx, y)" in src[0].text


# ----------------------------------------------------------------------------------------------
# solutions


def test_solution_html_guarded_lists_relations_and_guards() -> None:
    n = ss.dim("n")
    solver = ss.TypeSolver()
    out = solver.hole()
    solver.add_relation("broadcast", [ss.Tensor((n, 3)), ss.Tensor((5, 3)), out])
    sol = solver.solve()
    doc = parse(sol._repr_html_())
    (status,) = doc.find_all("span", "ss-status")
    assert status.attrs["data-status"] == "guarded"
    (row,) = rows(doc)
    c = cells(row)
    assert c[0] == "broadcast#0"
    assert "Tensor[(n, 3), float32]" in c[1] and "Tensor[(5, 3), float32]" in c[1]
    assert c[2] == "Tensor[(5, 3), float32]" and c[3] == "solved"
    assert c[4] == "n == 1 or n == 5"
    assert next(g.text for g in doc.find_all("li", "ss-guard")).startswith("n == 1 or n == 5")


def test_solution_html_error_highlights_the_failing_relation() -> None:
    n = ss.dim("n")
    solver = ss.TypeSolver()
    o1, o2 = solver.hole(), solver.hole()
    solver.add_relation("broadcast", [ss.Tensor((n, 4)), ss.Tensor((n, 4)), o1])
    solver.add_relation("broadcast", [o1, ss.Tensor((n, 5)), o2])
    sol = solver.solve()
    assert sol.status == "error"
    doc = parse(sol._repr_html_())
    bad = [r for r in rows(doc) if "ss-error" in r.classes]
    assert len(bad) == 1 and cells(bad[0])[0].startswith("broadcast#1")
    assert "[not-broadcastable]" in cells(bad[0])[0]
    assert doc.find_all("div", "symshape-diagnostic")[0].attrs["data-code"] == "not-broadcastable"
    pretty = pytest.importorskip("IPython.lib.pretty")
    text = pretty.pretty(sol)
    assert text.startswith("Solution: status error") and "[not-broadcastable]" in text


# ----------------------------------------------------------------------------------------------
# inference results


def test_result_html_table_of_expressions_types_and_guards(guarded: ss.InferenceResult) -> None:
    doc = parse(guarded._repr_html_())
    assert doc.find_all("span", "ss-status")[0].attrs["data-status"] == "guarded"
    heads = [th.text for th in doc.find_all("th")]
    assert heads == ["expression", "type", "guards", "at"]
    table = {cells(r)[0]: cells(r) for r in rows(doc)}
    assert table["%x"][1] == "Tensor[(n, 3, 4), float32]"
    assert table["%y"][1] == "Tensor[(5, 3, 4), float32]"
    assert table["%0 = add(%x, %y)"][1] == "Tensor[(5, 3, 4), float32]"
    assert table["%0 = add(%x, %y)"][2] == "n == 1 or n == 5"
    assert table["%1 = flatten(%0, axis=1)"][1] == "Tensor[(5, 12), float32]"
    assert table["%1 = flatten(%0, axis=1)"][3] == "<demo:broadcast_guard>:7"
    fn_row = table["fn(%x, %y)"]
    assert fn_row[1] == "fn<n: dim>(Tensor[(n, 3, 4), float32], Tensor[(5, 3, 4), float32]) -> " + (
        "Tensor[(5, 12), float32]"
    )
    assert not [r for r in rows(doc) if r.attrs.get("data-role")]


def test_result_html_highlights_the_error_and_its_core(broken: ss.InferenceResult) -> None:
    doc = parse(broken._repr_html_())
    assert doc.find_all("span", "ss-status")[0].attrs["data-status"] == "error"
    by_role: dict[str, list[str]] = {}
    for r in rows(doc):
        by_role.setdefault(r.attrs.get("data-role", ""), []).append(cells(r)[0])
    assert by_role["error"] == ["%1 = add(%0, %y) [not-broadcastable]"]
    # the core: both annotations and the flatten whose result reaches the add
    assert by_role["core"] == ["%x", "%y", "%0 = flatten(%x, axis=1)"]
    err_row = next(r for r in rows(doc) if r.attrs.get("data-role") == "error")
    assert "background" in err_row.attrs["style"]
    assert doc.find_all("div", "symshape-diagnostic")[0].attrs["data-code"] == "not-broadcastable"


def test_result_html_marks_both_members_of_an_unsat_core() -> None:
    f, _, _ = _unsat_core_program()
    res = ss.infer(f)
    assert res.status == "error"
    doc = parse(res._repr_html_())
    roles = {cells(r)[0].split(" [")[0]: r.attrs.get("data-role", "") for r in rows(doc)}
    assert roles["%1 = add(%x, %b)"] == "error"
    assert roles["%0 = reshape(%x, newshape=(0, 4, -1))"] == "core"


def test_result_pretty_text(broken: ss.InferenceResult) -> None:
    pretty = pytest.importorskip("IPython.lib.pretty")
    text = pretty.pretty(broken)
    lines = text.splitlines()
    assert any(ln.startswith("! %1 = add(%0, %y)") and "[not-broadcastable]" in ln for ln in lines)
    assert any(
        ln.startswith("* %0 = flatten(%x, axis=1)") and "Tensor[(n, 12), float32]" in ln for ln in lines
    )
    assert "status: error" in lines
    assert broken.report() in text


def test_result_html_of_a_module_lists_globals() -> None:
    n = ss.dim("n")
    x = ss.var("x", ss.Tensor((n, 4), "float32"))
    mod = ss.Module()
    mod["f"] = ss.Function([x], ss.ops.relu(x))
    res = ss.infer(mod)
    table = {cells(r)[0]: cells(r)[1] for r in rows(parse(res._repr_html_()))}
    assert table["@f"] == str(res.type_of("f"))
    assert "Tensor[(n, 4), float32]" in table["@f"]


def test_result_html_caps_rows_but_keeps_the_error() -> None:
    n = ss.dim("n")
    x = ss.var("x", ss.Tensor((n, 8), "float32"))
    y: Any = x
    for _ in range(300):
        y = ss.ops.relu(y)
    bad = ss.var("bad", ss.Tensor((n, 5), "float32"))
    y = ss.ops.add(y, bad)
    res = ss.infer(ss.Function([x, bad], y))
    assert res.status == "error"
    markup = display.result_html(res, max_rows=50)
    doc = parse(markup)
    assert len(rows(doc)) <= 52
    assert "more rows not shown" in doc.text
    assert [cells(r)[0] for r in rows(doc) if r.attrs.get("data-role") == "error"] == [
        "%300 = add(%299, %bad) [not-broadcastable]"
    ]


# ----------------------------------------------------------------------------------------------
# the graph, dot, drawing


def test_graph_has_readable_labels_and_attributes() -> None:
    res = ss.infer(attention_block().program)
    g = res.graph()
    assert isinstance(g, nx.DiGraph)
    rels = [n for n, d in g.nodes(data=True) if d["kind"] == "relation"]
    assert "matmul#0" in rels and "flatten#13" in rels
    assert g.nodes["matmul#0"]["op"] == "matmul" and g.nodes["matmul#0"]["state"] == "solved"
    assert g.nodes["matmul#0"]["label"] == "matmul#0\n<demo:attention_block>:10"
    holes = [n for n, d in g.nodes(data=True) if d["kind"] == "hole"]
    assert holes and all(h.startswith("?t") for h in holes)
    out_hole = next(iter(g.successors("flatten#13")))
    assert g.nodes[out_hole]["type"] == "Tensor[(n, 64*s), float32]"
    assert g.nodes[out_hole]["label"] == f"{out_hole}\nTensor[(n, 64*s), float32]"
    assert g.edges["flatten#13", out_hole]["role"] == "output"
    assert not any(d["core"] for _, d in g.nodes(data=True))
    # an ok program's graph is a DAG in evaluation order
    assert nx.is_directed_acyclic_graph(g)


def test_graph_core_attributes_for_an_error(broken: ss.InferenceResult) -> None:
    g = broken.graph()
    assert g.nodes["add#1"]["role"] == "error" and g.nodes["add#1"]["core"] is True
    assert g.nodes["add#1"]["codes"] == "not-broadcastable"
    assert g.nodes["flatten#0"]["role"] == "core" and g.nodes["flatten#0"]["core"] is True
    (mid,) = [n for n in g.successors("flatten#0")]
    assert g.nodes[mid]["role"] == "chain" and g.nodes[mid]["core"] is True
    assert g.nodes[mid]["type"] == "Tensor[(n, 12), float32]"
    (out,) = [n for n in g.successors("add#1")]
    assert g.nodes[out]["core"] is False
    # the same graph from the Solution
    assert set(broken.solution.graph().nodes) == set(g.nodes)


def test_graph_core_of_an_unsat_core_error() -> None:
    f, _, _ = _unsat_core_program()
    g = ss.infer(f).graph()
    roles = {n: d["role"] for n, d in g.nodes(data=True) if d["kind"] == "relation"}
    assert roles == {"reshape#0": "core", "add#1": "error"}
    assert "d % 4 == 0" in g.nodes["reshape#0"]["guards"]


def test_graph_guards_attribute(guarded: ss.InferenceResult) -> None:
    g = guarded.graph()
    assert g.nodes["add#0"]["guards"] == "n == 1 or n == 5"


def test_to_dot_labels_nodes_and_marks_the_core(broken: ss.InferenceResult) -> None:
    dot = broken.to_dot()
    assert dot == display.to_dot(broken)
    assert dot.startswith("digraph symshape {") and dot.rstrip().endswith("}")
    lines = {ln.strip().split(" [")[0]: ln for ln in dot.splitlines() if " [" in ln and "->" not in ln}
    assert 'label="add#1\\n<demo:broken_model>:7"' in lines['"add#1"']
    assert 'class="error"' in lines['"add#1"'] and "fillcolor" in lines['"add#1"']
    assert 'class="core"' in lines['"flatten#0"']
    mid = next(n for n in broken.graph().successors("flatten#0"))
    assert 'class="chain"' in lines[f'"{mid}"']
    assert "Tensor[(n, 12), float32]" in lines[f'"{mid}"']
    assert f'"flatten#0" -> "{mid}"' in dot and f'"{mid}" -> "add#1"' in dot
    out = next(n for n in broken.graph().successors("add#1"))
    assert "class=" not in lines[f'"{out}"']


def test_to_dot_escapes_quotes() -> None:
    g = nx.DiGraph()
    g.add_node('a"b', kind="relation", label='a"b\\c', role="", core=False)
    dot = display.to_dot(g)
    assert '"a\\"b" [label="a\\"b\\\\c"' in dot


_PNG = b"\x89PNG\r\n\x1a\n"


def test_draw_writes_a_png(tmp_path: Path, broken: ss.InferenceResult) -> None:
    pytest.importorskip("matplotlib")
    path = tmp_path / "graph.png"
    fig = ss.draw(broken, path) if hasattr(ss, "draw") else display.draw(broken, path)
    data = path.read_bytes()
    assert data[:8] == _PNG and len(data) > 5_000
    # the highlighted nodes and labels are drawn: the figure holds the node labels as text
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert any(t.startswith("add#1") and "[not-broadcastable]" in t for t in texts)
    assert "not-broadcastable" in fig.axes[0].get_title(loc="left")
    # the method delegates; drawing into given axes works too
    path2 = tmp_path / "g2.png"
    broken.draw(path2)
    assert path2.read_bytes()[:8] == _PNG
    from matplotlib.figure import Figure

    fig2 = Figure()
    ax = fig2.add_subplot(1, 1, 1)
    assert display.draw(broken, ax=ax) is fig2


def test_draw_focuses_large_graphs_on_the_core(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    n = ss.dim("n")
    x = ss.var("x", ss.Tensor((n, 8), "float32"))
    bad = ss.var("bad", ss.Tensor((n, 5), "float32"))
    z: Any = x
    for _ in range(200):
        z = ss.ops.relu(z)
    res2 = ss.infer(ss.Function([x, bad], ss.ops.add(z, bad)))
    fig = display.draw(res2, tmp_path / "big.png", max_nodes=30)
    title = fig.axes[0].get_title(loc="left")
    assert "of 402 nodes shown" in title
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert len(texts) <= 30 and any(t.startswith("add#200") for t in texts)
    assert (tmp_path / "big.png").read_bytes()[:8] == _PNG


def test_graph_of_something_without_one_is_an_error() -> None:
    with pytest.raises(ss.SymshapeError):
        display.result_graph(object())
