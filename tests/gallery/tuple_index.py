"""Taking field 2 of a pair."""
import symshape as ss

t = ss.Tensor((2, 2), "float32")
p = ss.var("p", ss.TupleType([t, t]))
model = ss.Function([p], ss.TupleGetItem(p, 2))
