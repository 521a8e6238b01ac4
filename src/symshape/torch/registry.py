"""The one dispatch table: torch callables, method names, aten overloads and module classes.

A converter is ``fn(ctx, *args, **kwargs) -> value``, called with the node's arguments in torch's
own calling convention (nodes already replaced by their values, see :mod:`symshape.torch.values`);
a method call passes ``self`` first, as the function form does. One converter serves every
spelling of an operation: ``@converts(torch.add, operator.add, "add", "add_", aten.add.Tensor)``.
Leaf modules are keyed by their class and looked up along the MRO, so a subclass of
``nn.Linear`` is typed as a linear layer; aten overloads fall back to their overload packet
(``aten.add``) when the exact overload has no entry.

>>> from symshape.torch.registry import converts, lookup
>>> @converts("doc_example_method")
... def _example(ctx, x):
...     return x
>>> lookup("call_method", "doc_example_method") is _example
True
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["Converter", "CONVERTERS", "converts", "lookup", "target_name"]

Converter = Callable[..., Any]
F = TypeVar("F", bound=Converter)

#: the registry (keys: callables, method names, aten overloads/packets, module classes)
CONVERTERS: dict[Any, Converter] = {}


def converts(*keys: Any) -> Callable[[F], F]:
    """Register the decorated converter under each key."""

    def deco(fn: F) -> F:
        for k in keys:
            CONVERTERS[k] = fn
        return fn

    return deco


def _get(key: Any) -> Converter | None:
    try:
        return CONVERTERS.get(key)
    except TypeError:  # an unhashable target
        return None


def lookup(op: str, target: Any) -> Converter | None:
    """The converter for a node (``op`` is the fx opcode; ``target`` the callable, the method
    name, or for ``call_module`` the module's class)."""
    if op == "call_module":
        for klass in getattr(target, "__mro__", ()):
            conv = _get(klass)
            if conv is not None:
                return conv
        return None
    conv = _get(target)
    if conv is None:
        packet = getattr(target, "overloadpacket", None)
        if packet is not None:
            conv = _get(packet)
    return conv


def target_name(op: str, target: Any) -> str:
    """How a report names a call: ``torch.cat``, ``F.interpolate``, ``x.view``, ``aten.add.Tensor``,
    ``nn.ConvTranspose2d``, ``operator.add``."""
    if op == "call_method":
        return f"Tensor.{target}"
    if op == "call_module":
        mod = getattr(target, "__module__", "")
        name = getattr(target, "__qualname__", str(target))
        return f"nn.{name}" if mod.startswith("torch.nn") else f"{mod}.{name}"
    if type(target).__module__ == "torch._ops":
        return str(target)
    mod = getattr(target, "__module__", None) or ""
    name = getattr(target, "__name__", None) or repr(target)
    if mod in ("torch.nn.functional", "torch._C._nn"):
        return f"F.{name}"
    if mod in ("_operator", "operator"):
        return f"operator.{name}"
    if mod == "builtins":
        return name
    if mod.startswith("torch"):
        public = mod if not any(p.startswith("_") for p in mod.split(".")) else "torch"
        return f"{public}.{name}"
    return f"{mod}.{name}" if mod else name
