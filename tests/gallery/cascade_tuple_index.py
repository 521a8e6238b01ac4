"""A tuple index out of range: the users of the result are not asked for annotations."""
import symshape as ss

p = ss.var("p", ss.TupleType([ss.Tensor((2, 2), "float32"), ss.Tensor((2, 2), "float32")]))
g = ss.TupleGetItem(p, 2)
model = ss.Function([p], ss.ops.add(ss.ops.relu(g), ss.ops.softmax(g)))
