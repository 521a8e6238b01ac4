"""split into sections that do not divide the axis: no made-up pieces flow on (no cascade)."""
import symshape as ss

n = ss.dim("n")
x = ss.var("x", ss.Tensor((n, 1024), "float32"))
w = ss.var("w", ss.Tensor((10, 300), "float32"))
parts = ss.ops.split(x, 3, axis=1)
model = ss.Function([x, w], ss.ops.dense(ss.TupleGetItem(parts, 0), w))
