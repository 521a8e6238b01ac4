"""Nothing determines the parameter's type: the report names it."""
import symshape as ss

x = ss.var("x")
model = ss.Function([x], ss.ops.relu(x))
