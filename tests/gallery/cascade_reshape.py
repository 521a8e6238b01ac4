"""A reshape that changes the element count: its users are not reported (no cascade)."""
import symshape as ss

n = ss.dim("n")
x = ss.var("x", ss.Tensor((n, 2, 3), "float32"))
bias = ss.var("bias", ss.Tensor((n, 8), "float32"))
r = ss.ops.reshape(x, (n, 7))
model = ss.Function([x, bias], ss.ops.relu(ss.ops.add(r, bias)))
