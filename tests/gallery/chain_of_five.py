"""A conflict that travels through five operators before it surfaces."""
import symshape as ss

n = ss.dim("n")
x = ss.var("x", ss.Tensor((n, 4), "float32"))
y = ss.var("y", ss.Tensor((n, 5), "float32"))
h = ss.ops.relu(x)
h = ss.ops.sigmoid(h)
h = ss.ops.tanh(h)
h = ss.ops.exp(h)
h = ss.ops.negative(h)
model = ss.Function([x, y], ss.ops.add(h, y))
