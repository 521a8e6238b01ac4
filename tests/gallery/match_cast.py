"""match_cast of a tensor with 4 columns to one with 5."""
import symshape as ss

n, m = ss.dims("n m")
x = ss.var("x", ss.Tensor((n, 4), "float32"))
v = ss.var("v")
model = ss.Function([x], ss.MatchCast(v, x, ss.Tensor((m, 5), "float32"), ss.ops.relu(v)))
