"""dense: the weight's input features (32) differ from the data's (64)."""
import symshape as ss

n = ss.dim("n")
x = ss.var("x", ss.Tensor((n, 64), "float32"))
w = ss.var("w", ss.Tensor((10, 32), "float32"))
model = ss.Function([x, w], ss.ops.dense(x, w))
