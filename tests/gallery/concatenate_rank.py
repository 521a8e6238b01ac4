"""Concatenating tensors of rank 2 and rank 3."""
import symshape as ss

n = ss.dim("n")
a = ss.var("a", ss.Tensor((n, 3), "float32"))
b = ss.var("b", ss.Tensor((n, 3, 1), "float32"))
model = ss.Function([a, b], ss.ops.concatenate(ss.Tuple([a, b]), axis=1))
