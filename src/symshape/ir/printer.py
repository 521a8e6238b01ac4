"""A Relay-like text printer for programs, optionally with inferred types as comments.

>>> import symshape as ss
>>> x = ss.var("x", ss.Tensor((2, 3), "float32"))
>>> print(ss.Function([x], ss.ops.relu(x)))
fn (%x: Tensor[(2, 3), float32]) {
  nn.relu(%x)
}

A program is a DAG: a sub-expression used in more than one place (an ONNX value two nodes read,
a residual branch) is printed once, as a definition ``%0 = ...;`` on its own line before the
statement that first uses it, and by that name everywhere after, as Relay's printer does (a
tuple of variables and constants prints in place); a program without shared sub-expressions
prints as a tree, as before. Printing a DAG as a tree
would repeat each shared part once per path to it: exponential text for a stack of inception
blocks or residual layers.

>>> y = ss.ops.relu(x)
>>> print(ss.Function([x], ss.ops.add(y, y)))
fn (%x: Tensor[(2, 3), float32]) {
  %0 = nn.relu(%x);
  add(%0, %0)
}

The work is linear in the size of the program (its distinct nodes) and of the text: texts are
ropes (nested tuples of strings) joined once at the end, so a deep chain of calls or of ``let``
is not copied once per level.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import Any, TypeAlias, cast

from symshape.encoding.types import Type
from symshape.ir import nodes as X  # noqa: N812
from symshape.ir.op import Op
from symshape.ir.visit import operands

__all__ = ["expr_str", "print_program", "shared_nodes"]

TypeOf = Callable[[Any], "Type | None"]
Rope: TypeAlias = "str | tuple[Rope, ...]"  # a text: a string, or the concatenation of ropes

# the expressions printed once and named when used twice (the others print in place)
_COMPOUND = (X.Call, X.Tuple, X.TupleGetItem, X.Let, X.Function, X.If, X.Match, X.MatchCast, X.Dataflow)


def shared_nodes(root: Any) -> set[int]:
    """The ids of the compound sub-expressions of ``root`` reached along two or more edges (a
    back edge of a cyclic program, to an expression that contains itself, does not count: the
    printer prints ``<cycle>`` there), except a tuple of atoms (``(%x, %x)``: it computes
    nothing, and its text costs no more than a name would). One iterative walk over the distinct
    nodes."""
    seen: set[int] = set()
    done: set[int] = set()  # the nodes whose operands are all walked
    shared: set[int] = set()
    leave = _LEAVE
    stack: list[Any] = [root]
    while stack:
        e = stack.pop()
        if e is leave:
            done.add(id(stack.pop()))
            continue
        i = id(e)
        if i in seen:
            if i in done and not (type(e) is X.Tuple and not any(isinstance(k, _COMPOUND) for k in e.fields)):
                shared.add(i)  # a second edge into a finished node (not a back edge)
            continue
        seen.add(i)
        stack.append(e)
        stack.append(leave)
        stack.extend(k for k in reversed(operands(e)) if isinstance(k, _COMPOUND))
    return shared


_LEAVE = object()  # on the walk's stack above a node: its operands are done when this pops


def flatten(r: Rope) -> str:
    """The string of a rope: its strings left to right, walked with a stack of iterators (ropes
    nest as deep as the program)."""
    if isinstance(r, str):
        return r
    out: list[str] = []
    its = [iter(r)]
    while its:
        for part in its[-1]:
            if isinstance(part, str):
                out.append(part)
            else:
                its.append(iter(part))
                break
        else:
            its.pop()
    return "".join(out)


def _join(sep: str, items: list[Rope]) -> list[Rope]:
    """``items`` with ``sep`` between each two (the parts of their joined text)."""
    out: list[Rope] = []
    for i, r in enumerate(items):
        if i:
            out.append(sep)
        out.append(r)
    return out


_SHORT = 200  # parts of a text shorter than this are joined into one string (cheaper to flatten)


def _cat(parts: tuple[Rope, ...]) -> Rope:
    """The concatenation of ``parts``: one string when they are short strings, else a rope (so
    that nested calls are not copied once per level: every character is copied into a short
    string a bounded number of times)."""
    size = 0
    for p in parts:
        if type(p) is not str:
            return parts
        size += len(p)
    return "".join(cast("tuple[str, ...]", parts)) if size < _SHORT else parts


class _Block:
    """A region of statements (a function body, a dataflow block, a branch, a clause): the
    definitions of shared sub-expressions made while printing its current statement."""

    __slots__ = ("defs", "open")

    def __init__(self) -> None:
        self.defs: list[Rope] = []
        self.open = True


class _Printer:
    def __init__(self, type_of: TypeOf | None, shared: set[int]) -> None:
        self.type_of = type_of
        self.names: dict[int, str] = {}
        self.used: dict[str, int] = {}
        self.shared = shared
        self.temps: dict[int, tuple[str, _Block]] = {}  # a shared node's name, the block defining it
        self.blocks: list[_Block] = []  # the open blocks, innermost last
        self.next_temp = 0

    def name(self, v: Any) -> str:
        key = id(v)
        hit = self.names.get(key)
        if hit is not None:
            return hit
        base = v.name
        k = self.used.get(base, 0)
        self.used[base] = k + 1
        n = f"%{base}" if k == 0 else f"%{base}_{k}"
        self.names[key] = n
        return n

    def temp(self) -> str:
        """A fresh name for a shared sub-expression, ``%0``, ``%1``, ... (a variable of the same
        name printed later gets a suffix)."""
        while True:
            base = str(self.next_temp)
            self.next_temp += 1
            if base not in self.used:
                self.used[base] = 1
                return f"%{base}"

    def ann(self, e: Any) -> str:
        if self.type_of is None:
            return ""
        t = self.type_of(e)
        return f"  /* {t} */" if t is not None else ""

    # -- blocks and statements -----------------------------------------------------------------
    def open(self) -> _Block:
        b = _Block()
        self.blocks.append(b)
        return b

    def close(self, b: _Block) -> None:
        b.open = False
        self.blocks.pop()

    def mark(self) -> int:
        """Where the current statement's definitions start in the innermost block."""
        return len(self.blocks[-1].defs)

    def defs(self, start: int, pad: str) -> Rope:
        """The definitions made since ``start`` in the innermost block, each a line ending with
        ``pad`` (the indentation of the statement they precede), taken out of the block."""
        d = self.blocks[-1].defs
        if len(d) == start:
            return ""
        taken = d[start:]
        del d[start:]
        return tuple((t, "\n", pad) for t in taken)

    def expr(self, e: Any, ind: int) -> str:
        """The text of ``e``; iterative (a stack of generators), so deep programs print. An
        expression that contains itself (built by mutating a node) prints ``<cycle>`` there."""
        root = self.open()
        stack: list[Generator[tuple[Any, int], Rope, Rope]] = [self._expr(e, ind)]
        nodes: list[Any] = [e]
        active: set[int] = {id(e)}
        sent: Rope | None = None
        while True:
            top = stack[-1]
            try:
                req = top.send(sent) if sent is not None else next(top)
            except StopIteration as stop:
                stack.pop()
                node = nodes.pop()
                active.discard(id(node))
                text: Rope = stop.value
                if id(node) in self.shared:  # define it in the innermost block, use its name
                    n = self.temp()
                    self.blocks[-1].defs.append((n, " = ", text, ";", self.ann(node)))
                    self.temps[id(node)] = (n, self.blocks[-1])
                    text = n
                if not stack:
                    self.close(root)
                    return flatten((*(t for d in root.defs for t in (d, "\n")), text))
                sent = text
                continue
            sub = req[0]
            if type(sub) is X.Var:  # (the most common operand: no generator for it)
                sent = self.name(sub)
                continue
            sent = None
            if id(sub) in active:
                sent = "<cycle>"
                continue
            hit = self.temps.get(id(sub))
            if hit is not None and hit[1].open:
                sent = hit[0]
                continue
            stack.append(self._expr(*req))
            nodes.append(sub)
            active.add(id(sub))

    def _expr(self, e: Any, ind: int) -> Generator[tuple[Any, int], Rope, Rope]:
        pad = "  " * ind
        match e:
            case X.Var():
                return self.name(e)
            case X.GlobalVar():
                return f"@{e.name}"
            case X.Constant():
                return f"meta[Constant][{e.type}]"
            case X.Call():
                if isinstance(e.callee, (Op, X.Constructor)):
                    head: Rope = e.callee.name
                else:
                    head = yield (e.callee, ind)
                parts: list[Rope] = []
                for a in e.args:
                    parts.append((yield (a, ind)))
                if e.attrs:
                    parts.append(str(e.attrs))
                if e.pure_override:
                    return _cat(("call_pure(", head, ", " if parts else "", *_join(", ", parts), ")"))
                return _cat((head, "(", *_join(", ", parts), ")"))
            case X.Tuple():
                fields: list[Rope] = []
                for f in e.fields:
                    fields.append((yield (f, ind)))
                return _cat(("(", *_join(", ", fields), ",)" if len(e.fields) == 1 else ")"))
            case X.TupleGetItem():
                tv = yield (e.tuple_value, ind)
                return _cat((tv, f".{e.index}"))
            case X.Let():
                start = self.mark()
                v = self.name(e.var)
                t = f": {e.var.type_annotation}" if e.var.type_annotation is not None else ""
                val = yield (e.value, ind)
                line: Rope = (self.defs(start, pad), f"let {v}{t} = ", val, ";", self.ann(e.value), "\n", pad)
                body = yield (e.body, ind)
                return (line, self.defs(start, pad), body)
            case X.Function():
                params = ", ".join(
                    self.name(p) + (f": {p.type_annotation}" if p.type_annotation is not None else "")
                    for p in e.params
                )
                tps = f"<{', '.join(map(str, e.type_params))}>" if e.type_params else ""
                ret = f" -> {e.ret_type}" if e.ret_type is not None else ""
                purity = "" if e.pure is not False else "[impure] "
                blk = self.open()
                body = yield (e.body, ind + 1)
                body = (self.defs(0, pad + "  "), body)
                self.close(blk)
                return (f"fn {purity}{tps}({params}){ret} {{\n{pad}  ", body, self.ann(e.body), f"\n{pad}}}")
            case X.If():
                c = yield (e.cond, ind)
                branches: list[Rope] = []
                for br in (e.then_branch, e.else_branch):
                    blk = self.open()
                    b = yield (br, ind + 1)
                    branches.append((self.defs(0, pad + "  "), b))
                    self.close(blk)
                th, el = branches
                return ("if (", c, f") {{\n{pad}  ", th, f"\n{pad}}} else {{\n{pad}  ", el, f"\n{pad}}}")
            case X.Match():
                val = yield (e.value, ind)
                clauses: list[Rope] = []
                for cl in e.clauses:
                    pat = self.pattern(cl.pattern)
                    blk = self.open()
                    body = yield (cl.body, ind + 2)
                    inner = "  " * (ind + 2)
                    d = self.defs(0, inner)
                    self.close(blk)
                    # a body of statements (definitions, lets) starts on its own line
                    own_line = d or isinstance(cl.body, (X.Let, X.MatchCast))
                    arrow = f"{pad}  | {pat} =>" + (f"\n{inner}" if own_line else " ")
                    clauses.append((arrow, d, body, "\n"))
                return ("match (", val, ") {\n", tuple(clauses), f"{pad}}}")
            case X.MatchCast():
                start = self.mark()
                cv = self.name(e.var)
                val = yield (e.value, ind)
                head = (self.defs(start, pad), f"let {cv} = match_cast(", val, f", {e.type});\n{pad}")
                body = yield (e.body, ind)
                return (head, self.defs(start, pad), body)
            case X.Dataflow():
                blk = self.open()
                inner = pad + "  "
                lines: list[Rope] = []
                for bv, bx in e.bindings:
                    name = self.name(bv)
                    val = yield (bx, ind + 1)
                    lines.append((inner, self.defs(0, inner), name, " = ", val, ";", self.ann(bx), "\n"))
                body = yield (e.body, ind + 1)
                body = (self.defs(0, inner), body)
                self.close(blk)
                gap = "" if lines else "\n"  # (an empty block keeps its empty line)
                return ("dataflow {\n", tuple(lines), gap, inner, body, f"\n{pad}}}")
            case _:
                return repr(e)

    def pattern(self, p: Any) -> str:
        """The text of a match pattern (nested patterns iteratively, left to right)."""
        done: list[str] = []  # the texts of the patterns finished so far, in order
        stack: list[tuple[Any, bool]] = [(p, False)]
        while stack:
            q, ready = stack.pop()
            subs = q.patterns if isinstance(q, (X.PatternConstructor, X.PatternTuple)) else ()
            if subs and not ready:
                stack.append((q, True))
                stack.extend((r, False) for r in reversed(subs))
                continue
            inner = ", ".join(done[len(done) - len(subs) :])
            del done[len(done) - len(subs) :]
            match q:
                case X.PatternVar():
                    done.append(self.name(q.var))
                case X.PatternConstructor():
                    done.append(f"{q.constructor.name}({inner})" if subs else q.constructor.name)
                case X.PatternTuple():
                    done.append(f"({inner})")
                case _:
                    done.append("_")
        return done[0]


def expr_str(e: Any, type_of: TypeOf | None = None) -> str:
    """The text of an expression; with ``type_of``, inferred types as ``/* ... */`` comments."""
    return _Printer(type_of, shared_nodes(e) if isinstance(e, _COMPOUND) else set()).expr(e, 0)


def print_program(e: Any, type_of: TypeOf | None = None) -> str:
    return expr_str(e, type_of)
