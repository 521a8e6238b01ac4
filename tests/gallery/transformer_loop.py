"""Twenty transformer blocks built in a loop, one value weight (64, 65): explained locally."""
import symshape as ss

b, s = ss.dims("b s")
D = 64
x = ss.var("x", ss.Tensor((b, s, D), "float32"))
params = [x]
h = x
for i in range(20):
    wq = ss.var(f"wq{i}", ss.Tensor((D, D), "float32"))
    wk = ss.var(f"wk{i}", ss.Tensor((D, D), "float32"))
    wv = ss.var(f"wv{i}", ss.Tensor((D, D + (1 if i == 13 else 0)), "float32"))
    w1 = ss.var(f"w1{i}", ss.Tensor((4 * D, D), "float32"))
    w2 = ss.var(f"w2{i}", ss.Tensor((D, 4 * D), "float32"))
    params += [wq, wk, wv, w1, w2]
    q = ss.ops.dense(h, wq)
    k = ss.ops.dense(h, wk)
    v = ss.ops.dense(h, wv)
    a = ss.ops.softmax(ss.ops.batch_matmul(q, k), axis=-1)
    h = ss.ops.add(h, ss.ops.batch_matmul(a, ss.ops.transpose(v, (0, 2, 1))))
    h = ss.ops.add(h, ss.ops.dense(ss.ops.relu(ss.ops.dense(h, w1)), w2))
model = ss.Function(params, h)
