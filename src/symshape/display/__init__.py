"""Notebook display and graph drawing.

Everything that shows symshape objects lives here. The classes of the layers below only delegate
(``Dim._repr_html_``, ``TensorType._repr_html_``, ``Diagnostic._repr_html_``,
``Solution._repr_html_``, ``InferenceResult._repr_html_`` / ``graph()`` / ``draw()`` /
``to_dot()``, an expression's ``repr``) through :mod:`symshape.views`, in which this module
registers its functions when it is imported (``import symshape`` imports it last); nothing imports
this module but the package itself.

* HTML (``*_html``) and plain text for IPython's pretty printer (``pretty``, ``*_text``) of
  dimensions, types, diagnostics, solutions and inference results. An inference result is a table
  in A-normal form (``%2 = matmul(%x, %wq)``): expression, type, the guards it needs and where it
  was built; the expression an error is reported at is highlighted red, the other members of the
  error's core orange. Only inline styles are used, so the HTML renders the same in Jupyter,
  VS Code and on GitHub (which strips ``<style>`` blocks); class names and ``data-*`` attributes
  make it machine-readable.
* :func:`result_graph` gives the solver's dependency graph as a networkx ``DiGraph`` with readable
  node names (``add#1``, ``?t17``) and attributes (``kind``, ``label``, ``op``, ``span``, ``state``,
  ``type``, ``role``, ``core``, ``codes``, ``guards``).
* :func:`draw` draws it with matplotlib (optional: ``pip install 'symshape[notebook]'``), the
  error's core and the chain between its members highlighted; :func:`to_dot` exports Graphviz
  text.

Output is deterministic: rows and nodes come in creation (program) order.

Modules: :mod:`~symshape.display.style` (colours, table styles), :mod:`~symshape.display.elements`
(dimensions, types, diagnostics, guards, the status line), :mod:`~symshape.display.result` (the
A-normal-form table of an inference result), :mod:`~symshape.display.solution` (a solver's
solution), :mod:`~symshape.display.graph` (the dependency graph, ``dot``) and
:mod:`~symshape.display.draw` (matplotlib).
"""

from __future__ import annotations

from typing import get_args

from symshape.display.draw import draw
from symshape.display.elements import diagnostic_html, dim_html, type_html
from symshape.display.graph import result_graph, to_dot
from symshape.display.result import result_html, result_text
from symshape.display.solution import solution_html, solution_text
from symshape.encoding.dims import Dim
from symshape.encoding.types import Type, TypeRelation
from symshape.ir.nodes import Expr
from symshape.ir.printer import expr_str
from symshape.ir.result import InferenceResult
from symshape.solver.diagnostics import Diagnostic
from symshape.solver.outcome import Solution
from symshape.views import View, register_view

__all__ = [
    "diagnostic_html",
    "dim_html",
    "draw",
    "result_graph",
    "result_html",
    "result_text",
    "solution_html",
    "solution_text",
    "to_dot",
    "type_html",
]


def _register() -> None:
    """Register every view with :mod:`symshape.views` (the classes delegate to it)."""
    register_view(View.HTML, Dim, dim_html)
    for cls in (*get_args(Type), TypeRelation):  # every class of the Type union, and relations
        register_view(View.HTML, cls, type_html)
    register_view(View.HTML, Diagnostic, diagnostic_html)
    register_view(View.TEXT, Diagnostic, Diagnostic.render)
    register_view(View.HTML, Solution, solution_html)
    register_view(View.TEXT, Solution, solution_text)
    register_view(View.GRAPH, Solution, result_graph)
    register_view(View.HTML, InferenceResult, result_html)
    register_view(View.TEXT, InferenceResult, result_text)
    register_view(View.GRAPH, InferenceResult, result_graph)
    register_view(View.DOT, InferenceResult, to_dot)
    register_view(View.DRAW, InferenceResult, draw)
    register_view(View.TEXT, Expr, expr_str)


_register()
