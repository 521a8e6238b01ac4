"""matmul contracts 64 against 32."""
import symshape as ss

n = ss.dim("n")
x = ss.var("x", ss.Tensor((n, 64), "float32"))
w = ss.var("w", ss.Tensor((32, 128), "float32"))
model = ss.Function([x, w], ss.ops.matmul(x, w))
