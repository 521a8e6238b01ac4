"""A dataflow block's bindings in constraint generation: the loop that generates a block's bindings.

A model imported from ONNX or PyTorch is one dataflow block of thousands of bindings, nearly all an
operator call on typed arguments bound to an unannotated variable, or a constant (a weight). Those
two are generated here directly, without the stack of :meth:`symshape.ir.infer._Gen.gen`; the first
other binding is handed back to that stack (phase 4 resumes the block after it).
"""

from __future__ import annotations

from typing import Any

from symshape.encoding.types import TensorType, Type
from symshape.encoding.values import VALUE_DTYPES
from symshape.ir import nodes as X  # noqa: N812
from symshape.ir.calls import CallGen
from symshape.ir.op import Op
from symshape.relations.values import constant_type
from symshape.solver.diagnostics import next_origin_seq
from symshape.solver.origins import make_origin

__all__ = ["BindingsGen"]


class BindingsGen(CallGen):
    """Constraint generation for a dataflow block's bindings (the generator's hot loop)."""

    def weights(self, df: X.Dataflow) -> int:
        """Bind the annotated variables of dataflow block ``df`` as it is entered, and the leading
        constants bound to them (a model's weights); returns how many bindings that settles (the
        ones ``bindings`` then starts after).

        Unannotated variables are bound when their value is known; an annotation of constants (a
        model's weight) has no symbol to note: ``bind_var``'s steps for it, inline, with its
        admission (``TypeSolver.admit_weight``, inline: a fresh annotation is recorded as its own
        source, its origin made when first read). The leading bindings of weights to their own
        types (a model's block starts with them) are done here: their constants get those types,
        what ``bindings`` would do for them."""
        types, typed, binders = self.types, self.typed, self.binders
        s = self.s
        admit = s.admit_weight
        sources, admitted = s.weight_tables()
        const_cls = X.Constant
        lead = id(df) not in self.df_slow
        skip = 0
        t: Type
        for v, x in df.bindings:
            ann = v.type_annotation
            if ann is None:
                lead = False
                continue
            if ann.__class__ is TensorType and ann._cshape and (iv := id(v)) not in types:
                if ann.value is None and (k := id(ann)) not in sources:
                    # (admit_weight, inline: what it records for a fresh annotation)
                    sources[k] = (ann, v.name, v.span, v, next_origin_seq())  # type: ignore[assignment]
                    admitted[k] = ann
                    t = types[iv] = ann
                else:
                    t = types[iv] = admit(ann, v.name, v.span, v)
                binders.append(v)
                if (
                    lead
                    and x.__class__ is const_cls
                    and x.type is t
                    and ann.dtype not in VALUE_DTYPES  # (t's: ann or a copy)
                    and (ix := id(x)) not in types
                ):
                    types[ix] = t
                    typed += (v, x)
                    skip += 1
                    continue
                typed.append(v)
            else:
                self.bind_var(v)
            lead = False
        return skip

    def bindings(self, df: X.Dataflow, i: int, stack: list[tuple[Any, int]]) -> None:
        """Generate ``df``'s bindings from ``i`` on: operator calls on typed arguments bound to
        unannotated variables (the common case) directly, the first other one through the stack."""
        types = self.types
        get_type = types.get
        binds = df.bindings
        n = len(binds)
        typed, binders = self.typed, self.binders
        # (the sets and maps below are only ever changed in place, and not by what this loop does
        # for an operator call)
        var_left, unreferenced = self.var_left, self.unreferenced
        call_cls, op_cls = X.Call, Op
        while i < n:
            v, x = binds[i]
            i += 1
            if (
                type(x) is call_cls
                and (type(c := x.callee) is op_cls or isinstance(c, Op))
                and v.type_annotation is None
                and (iv := id(v)) not in types
                and (ix := id(x)) not in types
            ):
                # typed_args and op_call inlined (the common case: plain operators whose
                # arguments are typed and in scope)
                argtypes: list[Type] | None = []
                for a in x.args:
                    hit = get_type(id(a))
                    if hit is None or (var_left and id(a) in var_left):
                        argtypes = None
                        break
                    argtypes.append(hit)  # type: ignore[union-attr]
                if argtypes is not None:
                    if unreferenced:
                        for a in x.args:
                            unreferenced.pop(id(a), None)
                    t = self.typed_op_call(x, c, argtypes)
                    types[ix] = t
                    types[iv] = t
                    typed += (x, v)
                    binders.append(v)
                    continue
            if type(x) is X.Constant and (ix := id(x)) not in types:
                # a constant (a model's weight): what phases 0, 1 and 2 do for it, inlined (its
                # type is scanned for symbols unless it is its variable's, scanned when bound)
                t = x.type
                iv = id(v)
                if t is v.type_annotation and get_type(iv) is t and t.dtype not in VALUE_DTYPES:
                    # its variable is bound to this very type (admitted as itself): the steps
                    # below would only record the constant's type
                    types[ix] = t
                    typed.append(x)
                    continue
                if t is not v.type_annotation or iv not in types:
                    self.scan_type(t, x.span)
                if t.dtype in VALUE_DTYPES:  # (else it carries no value: constant_type is t)
                    t = constant_type(t, x.data)
                types[ix] = t
                typed.append(x)
                if iv not in types and v.type_annotation is None:
                    types[iv] = t
                    typed.append(v)
                    binders.append(v)
                elif self.unreferenced and self.unreferenced.pop(iv, None) is not None:
                    self.set(v, t)
                else:
                    tv = get_type(iv)
                    if tv is None or unreferenced:
                        tv = self.ty(v)
                    if tv is not t:  # (unifying a type with itself does nothing)
                        o = make_origin("unify", f"binding `{v.name}`", x.span)  # (Origin(...))
                        if type(tv) is TensorType and type(t) is TensorType:
                            self.s.unifier.unify_tensors(tv, t, o)
                        else:
                            self.s.unifier.unify(tv, t, o)
                continue
            if x.__class__ is X.Var:
                self.uses((x,), df.span)
            stack.append(((df, i), 4))
            stack.append(((v, x), 2))
            stack.append((x, 0))
            return
