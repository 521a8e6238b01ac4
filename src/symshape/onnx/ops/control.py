"""Control flow: ``If``, ``Scan``, ``Loop``, ``SequenceMap``.

An ``If`` whose condition is a constant is its taken branch, converted in place. Otherwise both
branches become symshape blocks and the node a symshape ``If``, whose type is the join of the
branches' types (equal dimensions stay, differing ones become fresh symbols).

``Scan`` (opset 9+) converts its body once, on the initial states and the first slice of each scan
input (the scan axis taken away): the final states have the initial states' types (the body's
state outputs must have their shapes), and each scan output is the body's output with the scan
length (the scan inputs' common size along their axes, a shape value) inserted at its output axis
(a negative one counted from the output's end). The directions do not change the types.
Opset 8's ``Scan`` (a batch axis first, the sequence axis second) is converted the same way.

``Loop`` applies its body once, and to a fixpoint for a loop-carried sequence or a tensor whose
type an iteration changes (see :func:`_loop`); ``SequenceMap`` applies its body to each element
of sequences of known length, else once to an element (see :func:`_sequence_map`).
An ``If`` whose outputs are declared sequences joins its branches' element types.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

import symshape as ss
from symshape import Expr
from symshape.encoding.dims import const, fresh_join
from symshape.errors import BAD_ATTRIBUTE
from symshape.onnx.context import NodeContext
from symshape.onnx.dtypes import to_dtype
from symshape.onnx.ops.common import like, stacked, value_slice
from symshape.onnx.ops.loop_premise import premised, trip_size
from symshape.onnx.ops.loop_types import LOOP_RESULT, LOOP_TENSOR, covers_tensor
from symshape.onnx.ops.sequence_types import (
    DECLARED,
    LOOP_SEQ,
    LOOP_STATE,
    OF_TYPE,
    SEQ_AT,
    SEQ_ELEMENT,
    SEQ_OF,
    SEQ_PICK,
    is_sequence,
)
from symshape.onnx.probe import probe_types, settled
from symshape.onnx.registry import Outputs, register

if TYPE_CHECKING:
    import onnx

__all__: list[str] = []


@register("If", since=1)
def _if(ctx: NodeContext) -> Outputs:
    then_g, else_g = ctx.graph_attr("then_branch"), ctx.graph_attr("else_branch")
    c = ctx.const(0)
    if c is not None and c.size == 1:
        return ctx.inline(then_g if bool(c.reshape(-1)[0]) else else_g)
    cond = ss.ops.reshape(ctx.input(0), ())
    n = len(then_g.output)
    seqs = [_is_sequence_output(then_g, i) or _is_sequence_output(else_g, i) for i in range(n)]
    if not any(seqs):
        r = ss.If(cond, ctx.block(then_g), ctx.block(else_g))
        return [r] if n == 1 else [r[i] for i in range(n)]
    # a sequence output: the branches' tuples of one length joined, else a sequence of unknown
    # length of the join of their element types (see SEQ_PICK)
    branches = []
    for g in (then_g, else_g):
        b = ctx.block(g)
        outs = [b] if n == 1 else [b[i] for i in range(n)]
        branches.append(ss.Tuple(outs + [SEQ_ELEMENT(o) for o, q in zip(outs, seqs) if q]))
    r = ss.If(cond, branches[0], branches[1])
    elems = iter(range(n, n + sum(seqs)))
    return [SEQ_PICK(r[i], r[next(elems)]) if q else r[i] for i, q in enumerate(seqs)]


def _is_sequence_output(g: onnx.GraphProto, i: int) -> bool:
    """Whether output ``i`` of ``g`` is declared a sequence (or an optional sequence)."""
    if i >= len(g.output):
        return False
    tp = g.output[i].type
    if tp.HasField("optional_type"):
        tp = tp.optional_type.elem_type
    return bool(tp.HasField("sequence_type"))


def _declared_sizes(ctx: NodeContext, body: onnx.GraphProto, xs: list[Expr], kind: str) -> list[Expr]:
    """A ``Scan`` body's inputs (``kind``) or outputs ``xs`` with the constant sizes the body
    declares for them: onnxruntime allocates them by those and refuses others (a ``dim_param``
    takes any size), so each must be the size computed (a guard or an error naming the value)."""
    vis = body.input if kind == "input" else body.output
    out = list(xs)
    for i, vi in enumerate(vis[: len(xs)]):
        tt = vi.type.tensor_type if vi.type.HasField("tensor_type") else None
        if tt is None or not tt.HasField("shape"):
            continue
        shape = tuple(int(d.dim_value) if d.HasField("dim_value") else None for d in tt.shape.dim)
        if any(k is not None for k in shape):
            sizes = ", ".join("?" if k is None else str(k) for k in shape)
            with ctx.checking(f"the body {kind} '{vi.name}' has the sizes the body declares ({sizes})"):
                out[i] = DECLARED(xs[i], shape=shape, what=f"Scan body {kind} '{vi.name}'")
    return out


@register("Scan", since=9)
def _scan(ctx: NodeContext) -> Outputs:
    body = ctx.graph_attr("body")
    m = ctx.attr_int("num_scan_inputs")
    xs = [ctx.input(i) for i in range(ctx.num_inputs)]
    n = len(xs) - m
    if m < 1 or n < 0:
        ctx.fail(BAD_ATTRIBUTE, f"num_scan_inputs={m} for {len(xs)} inputs")
    in_axes = ctx.attr_ints("scan_input_axes") or (0,) * m
    k = len(body.output) - n
    out_axes = ctx.attr_ints("scan_output_axes") or (0,) * k
    if len(in_axes) != m or len(out_axes) != k or k < 0:
        ctx.fail(BAD_ATTRIBUTE, "scan_input_axes/scan_output_axes do not match the scan inputs/outputs")
    states, scanned = xs[:n], xs[n:]
    first = ss.ops.int_tensor(0)
    slices = [ss.ops.take(x, first, axis=a, mode="fast") for x, a in zip(scanned, in_axes)]
    ins = _declared_sizes(ctx, body, [*states, *slices], "input")
    states = ins[:n]  # (the final states: with the sizes declared for the body's)
    outs = _declared_sizes(ctx, body, ctx.apply(body, ins), "output")
    steps: Expr | None = None  # (L,): every scan input has the same length (onnxruntime's check)
    for j, (x, a) in enumerate(zip(scanned, in_axes)):
        length = value_slice(ss.ops.shape_of(x), [a], [a + 1 if a != -1 else None])
        here = ss.ops.zeros(length, "int64")
        with ctx.checking(f"scan input {j} has the length (axis {a}) of the scan inputs before it"):
            steps = here if steps is None else ss.ops.take(stacked(steps, here), first, axis=0)
    assert steps is not None
    # a final state has its initial state's type (onnxruntime refuses a body that changes it)
    result: list[Expr] = []
    for j, (o, s) in enumerate(zip(outs[:n], states)):
        with ctx.checking(
            f"the body's state output {j} '{body.output[j].name}' has its initial state's shape"
        ):
            result.append(ss.ops.cast_like(like(o, s), stacked(s, o)))
    for y, ax in zip(outs[n:], out_axes):  # a negative axis counts in the output (rank + 1)
        result.append(ss.ops.take(ss.ops.expand_dims(y, ax), steps, axis=ax))
    return result


@register("Scan", since=8)
def _scan_v8(ctx: NodeContext) -> Outputs:
    """Opset 8's ``Scan``: every state and scan input has a batch axis first, the scan inputs their
    sequence axis second; the body sees one batch entry and one step. The final states have the
    initial states' types, each scan output is ``(B, L, *body output)``; the optional sequence
    lengths (input 0) are ``(B,)``."""
    body = ctx.graph_attr("body")
    m = ctx.attr_int("num_scan_inputs")
    xs = [ctx.input(i) for i in range(1, ctx.num_inputs)]
    n = len(xs) - m
    if m < 1 or n < 0 or len(body.output) < n:
        ctx.fail(BAD_ATTRIBUTE, f"num_scan_inputs={m} for {len(xs)} inputs")
    states, scanned = xs[:n], xs[n:]
    zero = ss.ops.int_tensor(0)
    one_entry: list[Expr] = [ss.ops.take(s, zero, axis=0) for s in states]
    steps_in = [ss.ops.take(ss.ops.take(x, zero, axis=0), zero, axis=0) for x in scanned]
    ins = _declared_sizes(ctx, body, [*one_entry, *steps_in], "input")
    one_entry = ins[:n]  # (the final states: with the sizes declared for the body's)
    outs = _declared_sizes(ctx, body, ctx.apply(body, ins), "output")
    bl: Expr | None = None  # (B, L): every scan input's batch and length agree
    for j, x in enumerate(scanned):
        here = ss.ops.cast(ss.ops.sum(x, axis=(0, 1), exclude=True), "int64")
        with ctx.checking(f"scan input {j} has the batch (axis 0) and length (axis 1) of those before it"):
            bl = here if bl is None else ss.ops.cast_like(bl, stacked(bl, here))
    assert bl is not None
    batch = ss.ops.take(bl, zero, axis=1)  # (B,)
    steps = ss.ops.take(bl, zero, axis=0)  # (L,)
    checks: list[Expr] = []
    for j, s in enumerate(states):
        with ctx.checking(f"state {j} has the scan inputs' batch (axis 0)"):
            checks.append(stacked(ss.ops.sum(s, axis=0, exclude=True), batch))
    if ctx.has_input(0):
        with ctx.checking("sequence_lens is (batch,), of the scan inputs"):
            checks.append(stacked(batch, ctx.input(0)))
    result: list[Expr] = []
    for j, (e, o) in enumerate(zip(one_entry, outs[:n])):
        with ctx.checking(
            f"the body's state output {j} '{body.output[j].name}' has its initial state's shape"
        ):
            result.append(
                ss.ops.cast_like(ss.ops.take(ss.ops.expand_dims(e, 0), batch, axis=0), stacked(e, o))
            )
    for y in outs[n:]:
        y = ss.ops.take(ss.ops.expand_dims(y, 0, num_newaxis=2), steps, axis=1)
        result.append(ss.ops.take(y, batch, axis=0))
    for check in checks:
        result = [ss.ops.cast_like(r, ss.ops.cast_like(check, r)) for r in result]
    return result


@register("Loop", since=1, value_inputs=(0, 1))
def _loop(ctx: NodeContext) -> Outputs:
    """The body is applied once, to the initial states, an iteration number (see
    :func:`_iteration`; when every iteration runs and the trip count ``M`` is not a constant of
    at most 16: ``j mod max(M, 1)`` for a new symbol ``j``, below ``M``, unless a guard mentions
    ``j``: then not known, see :func:`symshape.onnx.infer`) and a condition that is true (the
    body runs only while it is; without the condition input, one not known). A final state has
    its initial type when the body gives it back with that type (then every iteration sees the
    same types). A tensor state whose type the body changes (a probe tells, :func:`_moving`) is
    seen again with each size that changed a ``?`` (``onnx.loop_tensor``), and the body applied
    to that (twice at most) until what it gives is covered: then every iteration's checks are the
    body's, and the final state has that type (else an unknown rank); a scan output then has the
    first iteration's shape at every iteration, or one iteration runs (a guard). One iteration (a
    trip count of 1) gives the tensors it computes. A sequence grows by the join of what the
    iteration adds:
    the body is applied again (:data:`_SEQUENCE_ROUNDS` times) to a sequence of unknown length of
    the elements before and those it added (``onnx.loop_seq``), to a fixpoint: the elements it
    adds then are of that type (sizes that keep changing are any size), else an unknown rank.
    A scan output has the iteration count first: the trip count when the condition stays true
    (no condition input, or a true one that the body passes on, or that of the outer graph it
    gives back), none for a false one, else a new symbol."""
    body = ctx.graph_attr("body")
    states = [ctx.input(i) for i in range(2, ctx.num_inputs)]
    n = len(states)
    k = len(body.output) - 1 - n
    if k < 0 or len(body.input) != n + 2:
        ctx.fail(
            BAD_ATTRIBUTE,
            f"the body has {len(body.input)} inputs and {len(body.output)} outputs"
            f" for {n} loop-carried values",
        )
    m = ctx.value_of(0) if ctx.has_input(0) else None
    trip = int(m.reshape(-1)[0]) if m is not None and m.size == 1 else None
    c0 = ctx.value_of(1) if ctx.has_input(1) else None
    if (c0 is not None and c0.size == 1 and not bool(c0.reshape(-1)[0])) or (trip is not None and trip <= 0):
        # no iteration runs: the initial states; onnxruntime gives a scan output (0, *shape)
        # when its inference knows the body's output shape, else (0,): no rank is claimed
        scans = [OF_TYPE(type=ss.Tensor(None, _declared_dtype(vi))) for vi in body.output[1 + n :]]
        return [*states, *scans]
    # the trip count when the condition stays true: the body passes on its condition (or gives a
    # constant true), which is true or not an input (onnxruntime stops on a false one even then)
    outer_cond = ctx.input_name(1) if ctx.has_input(1) else ""
    runs_all = _passes_true(body, outer_cond) and (not ctx.has_input(1) or (c0 is not None and c0.size == 1))
    cond_in = ctx.constant(True, "bool") if ctx.has_input(1) else ss.Constant(shape=(), dtype="bool")
    it = _iteration(trip) if runs_all else None
    bounded = it is None and runs_all and ctx.has_input(0)
    if bounded:  # a trip count M not constant: the iteration number is j mod max(M, 1), below M
        it = ctx.iteration_symbol()
        bounded = it is not None
    iteration = (
        ss.Constant(shape=(), dtype="int64")
        if it is None
        else OF_TYPE(type=ss.TensorType((), "int64", value=it))
    )
    if bounded:
        iteration = ss.ops.mod(
            iteration, ss.ops.maximum(ss.ops.cast(ctx.input(0), "int64"), ss.ops.int_tensor(1))
        )
    it_dim = ss.dim("iteration", min=0) if it is None else it  # (none: no size mentions it)
    seen: list[Expr] = [LOOP_STATE(x) for x in states]  # what the body sees of the states
    # a trip count not constant may be 0: the body's checks hold where it runs (loop_premise)
    m_dim = trip_size(ctx.tensor_type(0)) if ctx.has_input(0) and trip is None else None

    def apply(seen: Sequence[Expr]) -> list[Expr]:
        got = ctx.apply(body, [iteration, cond_in, *seen])
        if m_dim is None:
            return got
        outer = ctx.visible_exprs() | {id(e) for e in (iteration, cond_in, *seen)}
        return premised(got, m_dim, outer, ctx.importer())

    outs = apply(seen)
    # a sequence (say grown) is seen as the body left it, then again, to a fixpoint (see LOOP_SEQ);
    # a tensor whose type the iteration changed, with the sizes that changed any size, until that
    # covers what the body gives (see LOOP_TENSOR; one iteration: the first only)
    seqs = [i for i in range(n) if _sequence_state(ctx, body, i)]
    moving = [] if trip == 1 else _moving(ctx, [i for i in range(n) if i not in seqs], seen, outs)
    general = set(moving)  # (the tensors seen with sizes generalized)
    first = outs
    rounds = _SEQUENCE_ROUNDS if (seqs or moving) and trip != 1 else 0
    for rnd in range(rounds):
        seen = [
            LOOP_SEQ(seen[i], outs[1 + i], iteration=it_dim) if i in seqs
            else LOOP_TENSOR(seen[i], outs[1 + i]) if i in moving
            else seen[i]
            for i in range(n)
        ]  # fmt: skip
        outs = apply(seen)
        moving = _moving(ctx, moving, seen, outs) if moving and rnd + 1 < rounds else []
        general.update(moving)
        if not seqs and not moving:
            break
    before = [seen[i] if i in seqs or i in general else x for i, x in enumerate(states)]
    if runs_all and ctx.has_input(0):
        count = ss.ops.maximum(ss.ops.cast(ctx.input(0), "int64"), ss.ops.int_tensor(0))
        steps: Expr = ss.ops.zeros(ss.ops.reshape(count, (1,)), "int64")
    else:
        steps = ss.Constant(shape=(ctx.fresh_dim("iterations"),), dtype="int64")
    if general:  # (the first iteration's scan outputs: every iteration's must have their shape)
        r = LOOP_RESULT(steps, *before, *outs[1:], *first[1 + n :], n=n, iteration=it_dim, first=k)
    elif trip == 1 and runs_all:  # (one iteration: the tensors it gives, whatever their types)
        r = LOOP_RESULT(steps, *before, *outs[1:], n=n, iteration=it_dim, once=True)
    else:
        r = LOOP_RESULT(steps, *before, *outs[1 : 1 + n], *outs[1 + n :], n=n, iteration=it_dim)
    return [r[i] for i in range(n + k)]


def _moving(ctx: NodeContext, which: Sequence[int], seen: Sequence[Expr], outs: Sequence[Expr]) -> list[int]:
    """The loop-carried tensors among ``which`` whose type the body's application (``seen`` ->
    ``outs``) changes: the body's state output is not covered by what it saw (see
    :func:`~symshape.onnx.ops.loop_types.covers_tensor`). A probe infers both (a type not known
    or not settled: not changed, as :data:`LOOP_RESULT` then gives an unknown rank)."""
    if not which:
        return []
    got = probe_types(ctx, [e for i in which for e in (seen[i], outs[1 + i])])
    out: list[int] = []
    for k, i in enumerate(which):
        a, b = got[2 * k], got[2 * k + 1]
        if (
            isinstance(a, ss.TensorType)
            and isinstance(b, ss.TensorType)
            and settled(a)
            and settled(b)
            and not covers_tensor(a, b)
        ):
            out.append(i)
    return out


def _sequence_state(ctx: NodeContext, body: onnx.GraphProto, i: int) -> bool:
    """Whether loop-carried value ``i`` is a sequence: the body declares it one, else (the body
    declares no type) its initial value is one."""
    tp = body.input[2 + i].type
    if tp.HasField("sequence_type"):
        return True
    if tp.WhichOneof("value") is not None:
        return False
    t = ctx.type_of(2 + i)
    return isinstance(t, ss.TupleType) or is_sequence(t)


#: the rounds of a loop-carried sequence's fixpoint after the first (which sees the initial one)
_SEQUENCE_ROUNDS: Final = 2


def _iteration(trip: int | None) -> ss.Dim | None:
    """The iteration number's value: one of 0 to the trip count less one (a join: a condition
    over it is required of each) when every iteration of a constant trip count of at most
    :data:`_MAX_NAMED_ITERATIONS` runs, else not known."""
    if trip is not None and 1 <= trip <= _MAX_NAMED_ITERATIONS:
        return fresh_join(tuple(const(k) for k in range(trip)))
    return None


#: the most iterations whose numbers a ``Loop``'s iteration value is the join of (each condition
#: over it is stated for each; see :func:`symshape.encoding.conds.expand_joins`)
_MAX_NAMED_ITERATIONS: Final = 16


def _declared_dtype(vi: onnx.ValueInfoProto) -> str | None:
    """The dtype a body output declares (None when it does not, or symshape has none)."""
    tt = vi.type.tensor_type if vi.type.HasField("tensor_type") else None
    return to_dtype(tt.elem_type) if tt is not None and tt.elem_type else None


def _passes_true(body: onnx.GraphProto, outer_cond: str) -> bool:
    """Whether the body's condition output is true whenever its condition input is: the input
    itself or the ``Loop``'s own condition ``outer_cond`` (a value of the outer graph, the same
    every iteration; through ``Identity`` nodes), or a constant true."""
    from onnx import numpy_helper

    producers = {o: nd for nd in body.node for o in nd.output}
    name, cond_in = body.output[0].name, body.input[1].name
    for _ in range(len(body.node) + 1):
        if name == cond_in or (name == outer_cond and name not in producers):
            return True
        nd = producers.get(name)
        if nd is None:
            return False
        if nd.op_type == "Identity" and not nd.domain:
            name = nd.input[0]
        elif nd.op_type == "Constant" and not nd.domain and len(nd.attribute) == 1:
            a = nd.attribute[0]
            if a.name != "value":
                return False
            v = numpy_helper.to_array(a.t)
            return bool(v.size == 1 and v.reshape(-1)[0])
        else:
            return False
    return False


@register("SequenceMap", since=17)
def _sequence_map(ctx: NodeContext) -> Outputs:
    """The body applied to each element (input 0 and every other sequence input; a tensor input
    is the same for each): sequences of known length of one length give the sequences of the
    body's outputs element by element, others a sequence of unknown length of the body's output
    types (the body applied to an element at a position not known)."""
    body = ctx.graph_attr("body")
    xs = ctx.inputs()
    types = [ctx.type_of(i) for i in range(len(xs))]
    seqs = [i for i, t in enumerate(types) if i == 0 or isinstance(t, ss.TupleType) or is_sequence(t)]
    lengths = {len(t.fields) for i in seqs if isinstance(t := types[i], ss.TupleType)}
    if all(isinstance(types[i], ss.TupleType) for i in seqs) and len(lengths) == 1:
        (length,) = lengths
        per = [
            ctx.apply(body, [ss.TupleGetItem(x, j) if i in seqs else x for i, x in enumerate(xs)])
            for j in range(length)
        ]
        return [ss.Tuple([p[o] for p in per]) for o in range(len(body.output))]
    if len(lengths) > 1:
        ctx.fail(BAD_ATTRIBUTE, f"SequenceMap of sequences of lengths {sorted(lengths)}")
    outs = ctx.apply(body, [SEQ_AT(x) if i in seqs else x for i, x in enumerate(xs)])
    return [SEQ_OF(o) for o in outs]
