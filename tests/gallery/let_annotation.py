"""A let-bound variable annotated with 12 columns; flatten computes 3 * 5 = 15."""
import symshape as ss

n = ss.dim("n")
x = ss.var("x", ss.Tensor((n, 3, 5), "float32"))
z = ss.var("z", ss.Tensor((n, 12), "float32"))
model = ss.Function([x], ss.Let(z, ss.ops.flatten(x), ss.ops.relu(z)))
