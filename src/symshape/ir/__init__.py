"""Expressions, modules, the operator registry and constraint generation (``infer``)."""
