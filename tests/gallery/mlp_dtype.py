"""A float16 bias in a float32 MLP: the float32 comes from the first layer's bias."""
import symshape as ss

n = ss.dim("n")
x = ss.var("x", ss.Tensor((n, 784), "float32"))
w1 = ss.var("w1", ss.Tensor((256, 784), "float32"))
b1 = ss.var("b1", ss.Tensor((256,), "float32"))
w2 = ss.var("w2", ss.Tensor((128, 256), "float32"))
b2 = ss.var("b2", ss.Tensor((128,), "float16"))
w3 = ss.var("w3", ss.Tensor((10, 128), "float32"))
h = ss.ops.relu(ss.ops.add(ss.ops.dense(x, w1), b1))
h = ss.ops.relu(ss.ops.add(ss.ops.dense(h, w2), b2))
model = ss.Function([x, w1, b1, w2, b2, w3], ss.ops.dense(h, w3))
