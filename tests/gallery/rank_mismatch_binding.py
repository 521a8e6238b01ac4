"""Binding a rank-3 value to a variable annotated with rank 2."""
import symshape as ss

n = ss.dim("n")
x = ss.var("x", ss.Tensor((n, 4, 1), "float32"))
z = ss.var("z", ss.Tensor((n, 4), "float32"))
model = ss.Function([x], ss.Let(z, ss.ops.relu(x), z))
