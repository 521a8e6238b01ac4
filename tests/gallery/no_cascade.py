"""An error does not cascade: the operators using the failed result are not reported."""
import symshape as ss

n = ss.dim("n")
x = ss.var("x", ss.Tensor((n, 4), "float32"))
w = ss.var("w", ss.Tensor((5, 3), "float32"))
h = ss.ops.matmul(x, w)
h = ss.ops.relu(h)
h = ss.ops.softmax(h)
model = ss.Function([x, w], ss.ops.sum(h, axis=[1]))
