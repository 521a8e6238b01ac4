"""A pair annotation bound to a triple."""
import symshape as ss

t = ss.Tensor((2, 2), "float32")
a = ss.var("a", t)
p = ss.var("p", ss.TupleType([t, t]))
model = ss.Function([a], ss.Let(p, ss.Tuple([a, a, a]), p))
