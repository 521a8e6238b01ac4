"""Calling a function declared impure inside a dataflow block."""
import symshape as ss

x = ss.var("x", ss.Tensor((2, 3), "float32"))
a = ss.var("a", ss.Tensor((2, 3), "float32"))
log = ss.Function([a], ss.ops.relu(a), pure=False)
v = ss.var("v")
model = ss.Function([x], ss.Dataflow([(v, ss.Call(log, [x]))], v))
