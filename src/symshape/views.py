"""How objects are shown: the functions that draw them, registered by class from above.

Dimensions, types, diagnostics, solutions, expressions and inference results show themselves in
notebooks (IPython's ``_repr_html_`` and ``_repr_pretty_``), as text, and as a dependency graph,
but the code that draws them (:mod:`symshape.display`, :mod:`symshape.ir.printer`) sits in the
layers above theirs. So each such class inherits :class:`Shown`, whose methods look the drawing
function up here, by :class:`View` and class (the nearest registered base class counts), and
:mod:`symshape.display` registers every function when it is imported; ``import symshape`` imports
it last, so a notebook that imports symshape displays everything richly.

>>> import symshape as ss
>>> ss.Tensor((2, 3))._repr_html_()[:21]
"<code class='ss-type'"
"""

from __future__ import annotations

from collections.abc import Callable
from enum import Enum
from typing import Any

from symshape.errors import INVALID_ARGUMENT, SymshapeError

__all__ = ["View", "Shown", "register_view", "show"]


class View(Enum):
    """What a registered function gives."""

    HTML = "html"  #: notebook HTML (``_repr_html_``)
    TEXT = "text"  #: plain text (IPython's pretty printer; ``repr`` for expressions)
    GRAPH = "graph"  #: the dependency graph as a networkx ``DiGraph``
    DOT = "dot"  #: Graphviz text of the dependency graph
    DRAW = "draw"  #: a matplotlib figure of the dependency graph


_VIEWS: dict[View, dict[type, Callable[..., Any]]] = {v: {} for v in View}


def register_view(view: View, cls: type, fn: Callable[..., Any]) -> None:
    """Show objects of ``cls`` (and of its subclasses) through ``fn`` for ``view``."""
    _VIEWS[view][cls] = fn


def _lookup(view: View, obj: object) -> Callable[..., Any] | None:
    table = _VIEWS[view]
    for cls in type(obj).__mro__:
        fn = table.get(cls)
        if fn is not None:
            return fn
    return None


def show(view: View, obj: object, *args: Any, **kwargs: Any) -> Any:
    """``obj`` shown as ``view`` by the function registered for its class."""
    fn = _lookup(view, obj)
    if fn is None:
        raise SymshapeError(
            INVALID_ARGUMENT,
            f"nothing shows {type(obj).__name__} as {view.value}: import symshape (it registers "
            "symshape.display)",
        )
    return fn(obj, *args, **kwargs)


class Shown:
    """The display protocol of IPython, answered through the registered views.

    IPython's pretty printer takes the nearest class in the MRO that defines ``_repr_pretty_`` *or*
    ``__repr__`` (dataclasses define ``__repr__``), so every subclass gets ``_repr_pretty_`` in its
    own namespace.
    """

    __slots__ = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "_repr_pretty_" not in cls.__dict__:
            cls._repr_pretty_ = Shown._repr_pretty_  # type: ignore[method-assign]

    def _repr_html_(self) -> str:
        return str(show(View.HTML, self))

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        fn = _lookup(View.TEXT, self)
        if cycle:
            p.text(f"{type(self).__name__}(...)")
        else:
            p.text(str(self) if fn is None else fn(self))
