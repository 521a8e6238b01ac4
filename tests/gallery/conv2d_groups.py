"""conv2d with groups=2: 6 input channels make 3 per group, the kernel has 2."""
import symshape as ss

n = ss.dim("n")
x = ss.var("x", ss.Tensor((n, 6, 16, 16), "float32"))
w = ss.var("w", ss.Tensor((8, 2, 3, 3), "float32"))
model = ss.Function([x, w], ss.ops.conv2d(x, w, groups=2))
