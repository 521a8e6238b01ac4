"""Concatenating along axis 0 needs equal sizes on axis 1: 3 vs 4."""
import symshape as ss

n, m = ss.dims("n m")
a = ss.var("a", ss.Tensor((n, 3), "float32"))
b = ss.var("b", ss.Tensor((m, 4), "float32"))
model = ss.Function([a, b], ss.ops.concatenate(ss.Tuple([a, b]), axis=0))
