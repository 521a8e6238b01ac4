"""Reshaping 2 * 3 elements to 7."""
import symshape as ss

x = ss.var("x", ss.Tensor((2, 3), "float32"))
model = ss.Function([x], ss.ops.reshape(x, (7,)))
