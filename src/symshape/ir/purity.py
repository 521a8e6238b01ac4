"""The call graph of a module's global functions: which globals a function uses, the order that
generates callees first, and which unannotated globals are impure (seed 002): a function that calls
an impure operator or impure function, directly or through a chain or cycle of unannotated
functions, is impure.
"""

from __future__ import annotations

from symshape.ir.module import Module
from symshape.ir.nodes import Call, Function, GlobalVar
from symshape.ir.op import Op
from symshape.ir.visit import walk

__all__ = ["globals_used", "own_calls", "impure_globals", "callees_first"]


def globals_used(f: Function) -> list[str]:
    """The names of the global functions ``f`` uses, in program order."""
    return list(dict.fromkeys(e.name for e in walk(f) if isinstance(e, GlobalVar)))


def own_calls(f: Function) -> list[Call]:
    """The calls made by ``f`` itself (not those inside the function literals it contains)."""
    return [e for e in walk(f.body, into=lambda e: not isinstance(e, Function)) if isinstance(e, Call)]


def impure_globals(mod: Module) -> set[str]:
    """The module's global functions that are impure: declared impure, or unannotated (``pure`` is
    None, no ``force_pure``) and calling an impure operator or an impure global function, also
    through a chain or a cycle of mutually recursive unannotated functions.

    The fixpoint over the call graph's strongly connected components is a reachability: an
    unannotated function is impure iff it reaches a directly impure one through unannotated callers
    (declared-pure and ``force_pure`` functions stop the propagation).
    """
    import networkx as nx

    g = nx.DiGraph()
    seeds: set[str] = set()
    for gv, f in mod.items():
        name = gv.name
        g.add_node(name)
        if f.pure is False:
            seeds.add(name)
            continue
        if f.pure is True or f.attrs.get("force_pure", False):
            continue  # pure by declaration: its callers do not inherit its calls
        for c in own_calls(f):
            if c.pure_override:
                continue
            callee = c.callee
            if isinstance(callee, Op) and not callee.pure:
                seeds.add(name)
            elif isinstance(callee, GlobalVar) and callee.name in mod:
                g.add_edge(name, callee.name)
    impure = set(seeds)
    rev = g.reverse(copy=False)
    for s in seeds:
        impure |= nx.descendants(rev, s)
    return impure


def callees_first(mod: Module) -> list[tuple[GlobalVar, Function]]:
    """The module's functions with callees before callers (so a call sees the callee's inferred
    type, its purity in particular); insertion order otherwise and within a recursive cycle."""
    items = {gv.name: (gv, f) for gv, f in mod.items()}
    deps = {name: [d for d in globals_used(f) if d in items] for name, (_, f) in items.items()}
    order: list[tuple[GlobalVar, Function]] = []
    state: dict[str, int] = {}
    for root in items:
        if root in state:
            continue
        state[root] = 1
        stack: list[tuple[str, int]] = [(root, 0)]
        while stack:
            name, i = stack.pop()
            ds = deps[name]
            if i < len(ds):
                stack.append((name, i + 1))
                d = ds[i]
                if d not in state:
                    state[d] = 1
                    stack.append((d, 0))
            else:
                state[name] = 2
                order.append(items[name])
    return order
