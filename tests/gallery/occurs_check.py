"""Applying a function parameter to itself: its type would have to contain itself."""
import symshape as ss

f = ss.var("f")
model = ss.Function([f], ss.Call(f, [f]))
