"""conv2d: the data has 3 channels, the kernel expects 4."""
import symshape as ss

n = ss.dim("n")
x = ss.var("x", ss.Tensor((n, 3, 32, 32), "float32"))
w = ss.var("w", ss.Tensor((16, 4, 3, 3), "float32"))
model = ss.Function([x, w], ss.ops.conv2d(x, w, padding=(1, 1)))
