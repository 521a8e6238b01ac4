"""A recursive function whose argument grows: the recursive call passes (n, 512) for (n, 256)."""
import symshape as ss

n = ss.dim("n")
mod = ss.Module()
f = ss.GlobalVar("f")
x = ss.var("x", ss.Tensor((n, 256), "float32"))
c = ss.var("c", ss.Tensor((), "bool"))
body = ss.If(c, x, ss.Call(f, [ss.ops.concatenate([x, x], axis=1), c]))
mod[f] = ss.Function([x, c], body)
model = mod
