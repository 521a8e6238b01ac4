"""conv2d, pooling and flatten compute 16 * 8 * 8 = 1024 features; dense expects 1000."""
import symshape as ss

n = ss.dim("n")
x = ss.var("x", ss.Tensor((n, 3, 16, 16), "float32"))
k = ss.var("k", ss.Tensor((16, 3, 3, 3), "float32"))
w = ss.var("w", ss.Tensor((10, 1000), "float32"))
h = ss.ops.conv2d(x, k, padding=(1, 1))
h = ss.ops.relu(h)
h = ss.ops.max_pool2d(h, pool_size=(2, 2), strides=(2, 2))
h = ss.ops.flatten(h)
model = ss.Function([x, k, w], ss.ops.dense(h, w))
