"""A Relay-like text printer for programs, optionally with inferred types as comments.

>>> import symshape as ss
>>> x = ss.var("x", ss.Tensor((2, 3), "float32"))
>>> print(ss.Function([x], ss.ops.relu(x)))
fn (%x: Tensor[(2, 3), float32]) {
  nn.relu(%x)
}
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import Any

from symshape.encoding.types import Type
from symshape.ir import nodes as X  # noqa: N812
from symshape.ir.op import Op

__all__ = ["expr_str", "print_program"]

TypeOf = Callable[[Any], "Type | None"]


class _Printer:
    def __init__(self, type_of: TypeOf | None) -> None:
        self.type_of = type_of
        self.names: dict[int, str] = {}
        self.used: dict[str, int] = {}

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

    def ann(self, e: Any) -> str:
        if self.type_of is None:
            return ""
        t = self.type_of(e)
        return f"  /* {t} */" if t is not None else ""

    def expr(self, e: Any, ind: int) -> str:
        """The text of ``e``; iterative (a stack of generators), so deep programs print. An
        expression that contains itself (built by mutating a node) prints ``<cycle>`` there."""
        stack: list[Generator[tuple[Any, int], str, str]] = [self._expr(e, ind)]
        nodes: list[int] = [id(e)]
        active: set[int] = {id(e)}
        sent: str | None = None
        while True:
            top = stack[-1]
            try:
                req = top.send(sent) if sent is not None else next(top)
            except StopIteration as stop:
                stack.pop()
                active.discard(nodes.pop())
                if not stack:
                    return str(stop.value)
                sent = str(stop.value)
                continue
            sent = None
            if id(req[0]) in active:
                sent = "<cycle>"
                continue
            stack.append(self._expr(*req))
            nodes.append(id(req[0]))
            active.add(id(req[0]))

    def _expr(self, e: Any, ind: int) -> Generator[tuple[Any, int], str, str]:
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
                    head = e.callee.name
                else:
                    head = yield (e.callee, 0)
                parts = []
                for a in e.args:
                    parts.append((yield (a, ind)))
                args = ", ".join(parts)
                if e.attrs:
                    args += (", " if args else "") + str(e.attrs)
                if e.pure_override:
                    return f"call_pure({head}{', ' + args if args else ''})"
                return f"{head}({args})"
            case X.Tuple():
                fields = []
                for f in e.fields:
                    fields.append((yield (f, ind)))
                inner = ", ".join(fields)
                return f"({inner},)" if len(e.fields) == 1 else f"({inner})"
            case X.TupleGetItem():
                tv = yield (e.tuple_value, ind)
                return f"{tv}.{e.index}"
            case X.Let():
                v = self.name(e.var)
                t = f": {e.var.type_annotation}" if e.var.type_annotation is not None else ""
                val = yield (e.value, ind)
                body = yield (e.body, ind)
                return f"let {v}{t} = {val};{self.ann(e.value)}\n{pad}{body}"
            case X.Function():
                params = ", ".join(
                    self.name(p) + (f": {p.type_annotation}" if p.type_annotation is not None else "")
                    for p in e.params
                )
                tps = f"<{', '.join(map(str, e.type_params))}>" if e.type_params else ""
                ret = f" -> {e.ret_type}" if e.ret_type is not None else ""
                purity = "" if e.pure is not False else "[impure] "
                body = yield (e.body, ind + 1)
                return f"fn {purity}{tps}({params}){ret} {{\n{pad}  {body}{self.ann(e.body)}\n{pad}}}"
            case X.If():
                c = yield (e.cond, ind)
                th = yield (e.then_branch, ind + 1)
                el = yield (e.else_branch, ind + 1)
                return f"if ({c}) {{\n{pad}  {th}\n{pad}}} else {{\n{pad}  {el}\n{pad}}}"
            case X.Match():
                val = yield (e.value, ind)
                clauses = []
                for cl in e.clauses:
                    pat = self.pattern(cl.pattern)
                    body = yield (cl.body, ind + 2)
                    clauses.append(f"{pad}  | {pat} => {body}\n")
                return f"match ({val}) {{\n{''.join(clauses)}{pad}}}"
            case X.MatchCast():
                cv = self.name(e.var)
                val = yield (e.value, ind)
                body = yield (e.body, ind)
                return f"let {cv} = match_cast({val}, {e.type});\n{pad}{body}"
            case X.Dataflow():
                lines = []
                for bv, bx in e.bindings:
                    name = self.name(bv)
                    val = yield (bx, ind + 1)
                    lines.append(f"{pad}  {name} = {val};{self.ann(bx)}")
                body = yield (e.body, ind + 1)
                return f"dataflow {{\n{chr(10).join(lines)}\n{pad}  {body}\n{pad}}}"
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
    return _Printer(type_of).expr(e, 0)


def print_program(e: Any, type_of: TypeOf | None = None) -> str:
    return expr_str(e, type_of)
