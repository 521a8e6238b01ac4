"""A Relay-like text printer for programs, optionally with inferred types as comments.

>>> import symshape as ss
>>> x = ss.var("x", ss.Tensor((2, 3), "float32"))
>>> print(ss.Function([x], ss.ops.relu(x)))
fn (%x: Tensor[(2, 3), float32]) {
  relu(%x)
}
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from symshape.encoding.types import Constructor, Type

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

    def callee(self, c: Any) -> str:
        from symshape.ir.op import Op

        if isinstance(c, Op):
            return c.name
        if isinstance(c, Constructor):
            return c.name
        return self.expr(c, 0)

    def expr(self, e: Any, ind: int) -> str:
        from symshape.ir import expr as X

        pad = "  " * ind
        match e:
            case X.Var():
                return self.name(e)
            case X.GlobalVar():
                return f"@{e.name}"
            case X.Constant():
                return f"meta[Constant][{e.type}]"
            case X.Call():
                args = ", ".join(self.expr(a, ind) for a in e.args)
                if e.attrs:
                    args += (", " if args else "") + str(e.attrs)
                head = self.callee(e.callee)
                if e.pure_override:
                    return f"call_pure({head}{', ' + args if args else ''})"
                return f"{head}({args})"
            case X.Tuple():
                inner = ", ".join(self.expr(f, ind) for f in e.fields)
                return f"({inner},)" if len(e.fields) == 1 else f"({inner})"
            case X.TupleGetItem():
                return f"{self.expr(e.tuple_value, ind)}.{e.index}"
            case X.Let():
                v = self.name(e.var)
                t = f": {e.var.type_annotation}" if e.var.type_annotation is not None else ""
                val = self.expr(e.value, ind)
                return f"let {v}{t} = {val};{self.ann(e.value)}\n{pad}{self.expr(e.body, ind)}"
            case X.Function():
                params = ", ".join(
                    self.name(p) + (f": {p.type_annotation}" if p.type_annotation is not None else "")
                    for p in e.params
                )
                tps = f"<{', '.join(map(str, e.type_params))}>" if e.type_params else ""
                ret = f" -> {e.ret_type}" if e.ret_type is not None else ""
                purity = "" if e.pure is not False else "[impure] "
                body = self.expr(e.body, ind + 1)
                return f"fn {purity}{tps}({params}){ret} {{\n{pad}  {body}{self.ann(e.body)}\n{pad}}}"
            case X.If():
                return (
                    f"if ({self.expr(e.cond, ind)}) {{\n{pad}  {self.expr(e.then_branch, ind + 1)}\n"
                    f"{pad}}} else {{\n{pad}  {self.expr(e.else_branch, ind + 1)}\n{pad}}}"
                )
            case X.Match():
                clauses = "".join(
                    f"{pad}  | {self.pattern(c.pattern)} => {self.expr(c.body, ind + 2)}\n"
                    for c in e.clauses
                )
                return f"match ({self.expr(e.value, ind)}) {{\n{clauses}{pad}}}"
            case X.MatchCast():
                v = self.name(e.var)
                return (
                    f"let {v} = match_cast({self.expr(e.value, ind)}, {e.type});\n"
                    f"{pad}{self.expr(e.body, ind)}"
                )
            case X.Dataflow():
                lines = []
                for v, x in e.bindings:
                    lines.append(f"{pad}  {self.name(v)} = {self.expr(x, ind + 1)};{self.ann(x)}")
                body = "\n".join(lines)
                return f"dataflow {{\n{body}\n{pad}  {self.expr(e.body, ind + 1)}\n{pad}}}"
            case _:
                return repr(e)

    def pattern(self, p: Any) -> str:
        from symshape.ir import expr as X

        match p:
            case X.PatternVar():
                return self.name(p.var)
            case X.PatternConstructor():
                inner = ", ".join(self.pattern(q) for q in p.patterns)
                return f"{p.constructor.name}({inner})" if p.patterns else p.constructor.name
            case X.PatternTuple():
                return "(" + ", ".join(self.pattern(q) for q in p.patterns) + ")"
            case _:
                return "_"


def expr_str(e: Any, type_of: TypeOf | None = None) -> str:
    """The text of an expression; with ``type_of``, inferred types as ``/* ... */`` comments."""
    return _Printer(type_of).expr(e, 0)


def print_program(e: Any, type_of: TypeOf | None = None) -> str:
    return expr_str(e, type_of)
