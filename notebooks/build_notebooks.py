"""Write the tutorial notebooks from the cell lists below, execute them and save the outputs.

    python notebooks/build_notebooks.py            # all notebooks
    python notebooks/build_notebooks.py 02_errors  # one

Needs the ``notebook`` extra (nbformat, nbclient, ipykernel, matplotlib). The notebooks are the
source of truth for readers; this script is how they are regenerated, so edit the cells here.
``tests/test_notebooks.py`` executes the saved notebooks and checks their key outputs.
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient

HERE = Path(__file__).resolve().parent

Cell = tuple[str, str]  # ("md" | "code", source)


def md(text: str) -> Cell:
    return ("md", text.strip("\n"))


def code(text: str) -> Cell:
    return ("code", text.strip("\n"))


TOUR: list[Cell] = [
    md("""
# A tour of symshape

symshape infers and checks tensor types whose shapes contain **symbols**: a batch size `n`, a
sequence length `s`. Every dimension is a canonical integer expression, relations in the style of
TVM Relay give each operator its typing rule, and the Z3 SMT solver decides what the canonical
forms cannot. This notebook shows dimensions, types, and the inference of a transformer block
whose batch and sequence length are symbolic.
"""),
    code("""
import symshape as ss

n, s = ss.dims("n s")   # given symbols: any value >= 1
d = 12 * n
d
"""),
    md("""
Dimensions have one canonical form, so `n*3*4` *is* `12*n`; `==` is structural and never calls Z3.
`str` prints Python syntax that `ss.parse_dim` reads back.
"""),
    code("""
print(d == n * 3 * 4, d.subs({n: 3}), d.symbols)
h = ss.dim("h")
out_h = ss.parse_dim("(h - 1)//2 + 1", {"h": h})
print(out_h, "at h=224:", out_h.subs({h: 224}))
"""),
    md("""
## Types

`ss.Tensor(shape, dtype)` builds a `TensorType`. Its printed form is what `ss.parse_type` reads.
In a notebook, types display as code.
"""),
    code("""
t = ss.Tensor((n, s, 64), "float32")
print(t.shape, t.dtype, t.ndim)
assert ss.parse_type(str(t), {"n": n, "s": s}) == t
t
"""),
    code("""
ss.FuncType([t, ss.Tensor((64, 256), "float32")], ss.Tensor((n, s, 256), "float32"))
"""),
    md("""
## Inference: a transformer block with symbolic batch and sequence length

Pre-norm multi-head self-attention (4 heads of 16) and an MLP, over `x: (n, s, 64)`. Nothing
about `n` or `s` is assumed beyond `>= 1`. Weights follow Relay's `dense` convention
`(units, in_features)`. Expressions take Python's operators (`+`, `@`, ...) and numpy's methods
(`.reshape`, `.transpose`, `.sum`, ...); each builds the same call as its `ss.ops` function.
"""),
    code("""
D, H = 64, 4
x = ss.var("x", ss.Tensor((n, s, D), "float32"))
g1, b1, g2, b2 = (ss.var(p, ss.Tensor((D,), "float32")) for p in ("g1", "b1", "g2", "b2"))
wq, wk, wv, wo = (ss.var(p, ss.Tensor((D, D), "float32")) for p in ("wq", "wk", "wv", "wo"))
w1 = ss.var("w1", ss.Tensor((4 * D, D), "float32"))
w2 = ss.var("w2", ss.Tensor((D, 4 * D), "float32"))

def split_heads(t):
    # (n, s, D) -> (n, H, s, D/H); reshape's 0 copies a dimension, -1 infers one
    return t.reshape(0, 0, H, -1).transpose(0, 2, 1, 3)

h1 = ss.ops.layer_norm(x, g1, b1)
q, k, v = (split_heads(ss.ops.dense(h1, w)) for w in (wq, wk, wv))
attn = ss.ops.softmax(q @ k.transpose(0, 1, 3, 2), axis=-1)
heads = (attn @ v).transpose(0, 2, 1, 3).reshape(0, 0, -1)
x1 = x + ss.ops.dense(heads, wo)
mlp = ss.ops.dense(ss.ops.relu(ss.ops.dense(ss.ops.layer_norm(x1, g2, b2), w1)), w2)
out = x1 + mlp
block = ss.Function([x, g1, b1, wq, wk, wv, wo, g2, b2, w1, w2], out)

res = ss.infer(block)
res
"""),
    md("""
The table is the program in A-normal form with every expression's inferred type. Single types are
available with `res.type_of`; the function's type is generic in the symbols it uses.
"""),
    code("""
print(res.status)
print(res.type_of(attn))
print(res.type_of(out))
res.type_of(block)
"""),
    md("""
## Guards

Some programs are well typed only for some values of the symbols. Adding a learned positional
embedding of a fixed length 128 broadcasts `s` against `128`: fine when `s` is 1 or 128. symshape
returns such conditions as **guards** instead of failing; `strict=True` turns them into errors.
"""),
    code("""
pos = ss.var("pos", ss.Tensor((1, 128, D), "float32"))
embed = ss.Function([x, pos], x + pos)
res2 = ss.infer(embed)
g = res2.guards[0]
print(res2.status, "|", g, "| s=128:", g.holds({s: 128}), "| s=100:", g.holds({s: 100}))
res2
"""),
    code("""
print(ss.infer(embed, strict=True).report())
"""),
    md("""
## Indexing, scalars and readable guards

Tensors index like numpy arrays (`x[:, 0]`, `x[..., ::2]`, `x[None]`, negative indices): each
index becomes `strided_slice`, `squeeze`, `expand_dims` or `take`. A Python number is a 0-d
constant of the other operand's dtype, and dtypes may be spelled the numpy or torch way.
Guards are simplified before they are reported: two poolings need `h >= 2` and `h//2 >= 2`, which
together read `h >= 4`.
"""),
    code("""
import numpy as np

h, w = ss.dims("h w")
img = ss.var("img", ss.Tensor((n, 3, h, w), "float32"))


def pool(t):
    return ss.ops.max_pool2d(t, pool_size=(2, 2), strides=(2, 2))


red = pool(pool(img))[:, 0]          # an int index drops the axis
strided = red[..., ::2]              # numpy slicing
feat = (strided * 0.5 + 1).mean(axis=-1).astype(np.float16)
res3 = ss.infer(ss.Function([img], feat))
for e in (red, strided, feat):
    print(res3.type_of(e))
print([str(g) for g in res3.guards])
"""),
    md("""
## The dependency graph

The solver orders relations with a networkx dependency graph (operator calls and the holes between
them). `res.graph()` returns it with readable node names and attributes; `res.to_dot()` exports
Graphviz text and `ss.draw(res)` (also `res.draw()`) draws it, as the next notebook shows.
"""),
    code("""
G = res.graph()
print(G.number_of_nodes(), "nodes,", G.number_of_edges(), "edges")
for name in list(G.nodes)[:4]:
    print(f"{name:14} {G.nodes[name]['kind']:9} {G.nodes[name]['label']!r}")
print(res.to_dot().splitlines()[3])
"""),
]

ERRORS: list[Cell] = [
    md("""
# Explained type errors

When no values of the symbols make a program well typed, symshape reports the **minimal set of
annotations and operator calls that conflict** (the Z3 unsat core, with the chain of inference
between them), not just the place it noticed. Three broken models follow.
"""),
    code("""
import symshape as ss

n, s = ss.dims("n s")
D = 64
"""),
    md("""
## 1. A residual connection around a mis-shaped MLP

The second MLP weight should be `(64, 256)` but is `(32, 256)`, so the MLP returns width 32 and the
residual `add` cannot broadcast `64` against `32`. The report points at the `add` and lists, as
notes, the annotations and the calls whose results flow into it.
"""),
    code("""
x = ss.var("x", ss.Tensor((n, s, D), "float32"))
w1 = ss.var("w1", ss.Tensor((4 * D, D), "float32"))
b1 = ss.var("b1", ss.Tensor((4 * D,), "float32"))
w2 = ss.var("w2", ss.Tensor((D // 2, 4 * D), "float32"))   # bug: should be (D, 4 * D)
hidden = ss.ops.relu(ss.ops.dense(x, w1) + b1)
y = x + ss.ops.dense(hidden, w2)
res = ss.infer(ss.Function([x, w1, b1, w2], y))
print(res.report())
"""),
    md("""
In a notebook the result is a table; the row the error is reported at is red, the other members of
the error's core orange.
"""),
    code("""
res
"""),
    md("""
The dependency graph drawn with `ss.draw(res)` (here through the equivalent method `res.draw()`):
the failing call is red, the core members orange and the holes on the chain between them yellow.
"""),
    code("""
res.draw()
"""),
    md("""
## 2. Two call sites that cannot both be satisfied

Neither call is wrong on its own: splitting the feature dimension `d` into 4 heads needs
`d % 4 == 0`, adding a bias of length 3 needs `d == 1 or d == 3`. Together they are unsatisfiable;
Z3's unsat core names both call sites.
"""),
    code("""
d = ss.dim("d")
x = ss.var("x", ss.Tensor((n, s, d), "float32"))
bias = ss.var("bias", ss.Tensor((3,), "float32"))
heads = x.reshape(0, 0, 4, -1)
shifted = x + bias
res2 = ss.infer(ss.Function([x, bias], ss.Tuple([heads, shifted])))
print(res2.report())
"""),
    code("""
err = res2.errors[0]
print(err.code, "|", err.message)
err
"""),
    md("""
## 3. A guard that hides a bug

Prepending a class token makes the sequence `s + 1` long, but the positional embedding was written
for length `s`. Broadcasting `s + 1` against `s` only works when `s == 1`, so by default the
program is merely *guarded* — with a `pinned-symbol` warning, since a guard that allows one
size only is almost always a bug; with `strict=True` every unproven guard is an error.
"""),
    code("""
x = ss.var("x", ss.Tensor((n, s, D), "float32"))
cls = ss.var("cls", ss.Tensor((n, 1, D), "float32"))
pos = ss.var("pos", ss.Tensor((1, s, D), "float32"))   # bug: should be (1, s + 1, D)
tokens = ss.ops.concatenate([cls, x], axis=1) + pos
vit_embed = ss.Function([x, cls, pos], tokens)
print(ss.infer(vit_embed).report())
"""),
    code("""
res3 = ss.infer(vit_embed, strict=True)
print([e.code for e in res3.errors])
res3.errors[0]
"""),
    md("""
Diagnostics are data: `code`, `message`, `span`, `notes`, and `to_json()` for tools.
"""),
    code("""
res.errors[0].to_json()["code"], [n.message for n in res.errors[0].notes][:3]
"""),
]

CUSTOM: list[Cell] = [
    md("""
# Writing your own operator

An operator is a name, a number of inputs, and a **relation**: a Python function over the
(resolved) argument types that computes the output type. A relation

* returns `False` to *defer* while its input is not known yet (it is re-run when it is),
* fails with `ctx.fail(code, message)` on a structural error (a wrong rank),
* states conditions on the symbols with `ctx.require(cond, code, message)`: a condition that
  always holds is silent, one that can never hold is an error (with an unsat core), and the rest
  become **guards**,
* assigns the output with `ctx.assign(out, type)` and returns `True`.

Here: a vision transformer's `patchify`, `(b, h, w, c) -> (b, (h/p)*(w/p), p*p*c)`, which needs the
patch size `p` to divide the height and the width.
"""),
    code("""
import symshape as ss
from symshape.encoding.conds import eq  # condition constructors: eq, ne, le, lt, ge, gt, any_of


@ss.relation("patchify")
def patchify_rel(ctx, args, attrs):
    \"\"\"patchify(x: (b, h, w, c), patch=p) -> (b, (h//p)*(w//p), p*p*c)\"\"\"
    x, out = args
    if not isinstance(x, ss.TensorType) or x.ndim is None:
        return False                                   # not known yet: defer
    if x.ndim != 4:
        ctx.fail("rank-mismatch", f"patchify expects (batch, height, width, channels), got `{x}`")
    p = attrs.get("patch", 16)
    b, h, w, c = x.dims
    ctx.require(eq(h % p, 0), "shape-mismatch", f"patchify: patch size {p} must divide the height {h}")
    ctx.require(eq(w % p, 0), "shape-mismatch", f"patchify: patch size {p} must divide the width {w}")
    ctx.assign(out, ss.Tensor((b, (h // p) * (w // p), p * p * c), x.dtype))
    return True


patchify = ss.register_op("vit.patchify", "patchify", 1)
patchify
"""),
    md("""
Calling the operator builds a call expression; keyword arguments are its attributes.
With concrete image sizes everything is decided on the spot:
"""),
    code("""
b, h, w = ss.dims("b h w")
img = ss.var("img", ss.Tensor((b, 224, 224, 3), "float32"))
tokens = patchify(img, patch=16)
res = ss.infer(ss.Function([img], tokens))
print(res.status, res.type_of(tokens))
"""),
    md("""
## A guard

With a symbolic image size the conditions cannot be proved from the declarations (`h, w >= 1`),
so they become guards: the program is well typed for exactly the images whose sides are
multiples of 16.
"""),
    code("""
img = ss.var("img", ss.Tensor((b, h, w, 3), "float32"))
res = ss.infer(ss.Function([img], patchify(img, patch=16)))
print([str(g) for g in res.guards], res.guards[0].holds({h: 224}), res.guards[0].holds({h: 200}))
res
"""),
    md("""
Guards combine with the rest of the program. Adding a positional embedding for 196 patches to a
square image of side `h` broadcasts `(h//16)**2` patches against 196, so `(h//16)**2` must be 1 or
196; with `h % 16 == 0` that leaves `h = 16` (one patch, broadcast) and `h = 224`.
"""),
    code("""
img = ss.var("img", ss.Tensor((b, h, h, 3), "float32"))
pos = ss.var("pos", ss.Tensor((1, 196, 768), "float32"))
res = ss.infer(ss.Function([img, pos], patchify(img, patch=16) + pos))
for g in res.guards:
    print(g, "  holds at h=224:", g.holds({h: 224}))
"""),
    md("""
## An error

A 224 x 200 image cannot be cut into 16 x 16 patches: the condition is refuted and reported with
the code the relation gave, at the call site.
"""),
    code("""
img = ss.var("img", ss.Tensor((b, 224, 200, 3), "float32"))
res = ss.infer(ss.Function([img], patchify(img, patch=16)))
print(res.report())
res.errors[0]
"""),
    md("""
A structural error from `ctx.fail`, and an input nothing determines (the relation keeps deferring,
so the program is *unresolved* and the report asks for an annotation):
"""),
    code("""
flat = ss.var("flat", ss.Tensor((b, 784), "float32"))
print(ss.infer(ss.Function([flat], patchify(flat))).report())
u = ss.var("u")   # no annotation
print(ss.infer(ss.Function([u], patchify(u))).status)
"""),
]

NOTEBOOKS: dict[str, list[Cell]] = {
    "01_tour": TOUR,
    "02_errors": ERRORS,
    "03_custom_operator": CUSTOM,
}


def build(name: str, cells: list[Cell]) -> Path:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    for kind, src in cells:
        nb.cells.append(
            nbformat.v4.new_markdown_cell(src) if kind == "md" else nbformat.v4.new_code_cell(src)
        )
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"{name.replace('_', '-')}-{i}"
    NotebookClient(
        nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(HERE)}}
    ).execute()
    path = HERE / f"{name}.ipynb"
    nbformat.write(nb, path)
    return path


def main(argv: list[str]) -> None:
    names = argv or list(NOTEBOOKS)
    for name in names:
        print("built", build(name, NOTEBOOKS[name]))


if __name__ == "__main__":
    main(sys.argv[1:])
