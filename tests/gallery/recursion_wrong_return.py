"""A recursive function whose return annotation (n, 4) disagrees with its body (n, 8)."""
import symshape as ss

n = ss.dim("n")
mod = ss.Module()
f = ss.GlobalVar("f")
x = ss.var("x", ss.Tensor((n, 4), "float32"))
body = ss.ops.concatenate(ss.Tuple([x, ss.Call(f, [x])]), axis=1)
mod[f] = ss.Function([x], body, ret_type=ss.Tensor((n, 4), "float32"))
model = mod
