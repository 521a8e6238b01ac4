"""Calling a global function with an argument of the wrong shape."""
import symshape as ss

n = ss.dim("n")
mod = ss.Module()
f = ss.GlobalVar("f")
a = ss.var("a", ss.Tensor((n, 4), "float32"))
mod[f] = ss.Function([a], ss.ops.relu(a), ret_type=ss.Tensor((n, 4), "float32"))
main = ss.GlobalVar("main")
x = ss.var("x", ss.Tensor((3, 5), "float32"))
mod[main] = ss.Function([x], ss.Call(f, [x]))
model = mod
