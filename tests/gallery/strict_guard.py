"""Strict mode: broadcasting n against 5 needs a guard, which strict mode rejects."""
import symshape as ss

STRICT = True
n = ss.dim("n")
x = ss.var("x", ss.Tensor((n,), "float32"))
y = ss.var("y", ss.Tensor((5,), "float32"))
model = ss.Function([x, y], ss.ops.add(x, y))
