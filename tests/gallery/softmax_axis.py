"""softmax(axis=3) of a rank-3 value: the rank comes from `x` alone, through dense, relu, dense."""
import symshape as ss

b, s = ss.dims("b s")
x = ss.var("x", ss.Tensor((b, s, 64), "float32"))
w1 = ss.var("w1", ss.Tensor((128, 64), "float32"))
w2 = ss.var("w2", ss.Tensor((64, 128), "float32"))
h = ss.ops.dense(ss.ops.relu(ss.ops.dense(x, w1)), w2)
model = ss.Function([x, w1, w2], ss.ops.softmax(h, axis=3))
