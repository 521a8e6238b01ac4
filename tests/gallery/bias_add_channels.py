"""bias_add along axis 1: the bias has 8 entries, the data 16 channels."""
import symshape as ss

n = ss.dim("n")
x = ss.var("x", ss.Tensor((n, 16, 7, 7), "float32"))
b = ss.var("b", ss.Tensor((8,), "float32"))
model = ss.Function([x, b], ss.ops.bias_add(x, b, axis=1))
