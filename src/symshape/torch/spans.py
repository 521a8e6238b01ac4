"""Source locations in the user's model: where a node was called, where a parameter was defined.

* A node's span comes from its recorded stack trace (``node.stack_trace``; the importer traces
  with ``record_stack_traces`` and ``torch.export`` records it too): the innermost frame outside
  torch and symshape, with the column of the call found in that source line.
* A parameter's span is the line of the model's ``__init__`` that created it: the assignment
  ``self.fc2 = nn.Linear(...)`` (or ``self.cls = nn.Parameter(...)``,
  ``self.register_buffer("mask", ...)``), found in the source of the owning module's class; for a
  parameter of a module inside a container (``self.layer1 = nn.Sequential(...)``) the container's
  definition.
* An input's span is its name in the ``def forward(self, x, ...)`` line.

All of it is read from source text with :mod:`ast`, deterministically; what cannot be found is
``None`` (a report then shows no location for it).

>>> pythonic_path("layer1.0.conv1.weight")
'self.layer1[0].conv1.weight'
"""

from __future__ import annotations

import ast
import bisect
import dis
import functools
import inspect
import linecache
import operator
import os
import re
import sys
import textwrap
import weakref
from collections.abc import Callable, Iterable, Mapping
from types import CodeType, MappingProxyType
from typing import Any

import symshape as ss
from symshape.source import frame_span

__all__ = [
    "SPAN_META",
    "SpanFinder",
    "unpack_count",
    "span_tracer",
    "user_frame_span",
    "call_needles",
    "frames",
    "pythonic_path",
    "source_lines",
]

_FRAME_RE = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<func>[^\n]*)')
_SYMSHAPE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

_OPERATOR_TEXT: dict[Callable[..., Any], str] = {
    operator.add: "+",
    operator.iadd: "+=",
    operator.sub: "-",
    operator.isub: "-=",
    operator.mul: "*",
    operator.imul: "*=",
    operator.truediv: "/",
    operator.itruediv: "/=",
    operator.floordiv: "//",
    operator.mod: "%",
    operator.pow: "**",
    operator.matmul: "@",
    operator.neg: "-",
    operator.getitem: "[",
    operator.eq: "==",
    operator.ne: "!=",
    operator.lt: "<",
    operator.le: "<=",
    operator.gt: ">",
    operator.ge: ">=",
    operator.and_: "&",
    operator.or_: "|",
    operator.invert: "~",
}


#: the ``node.meta`` key under which :func:`span_tracer`'s tracer records a node's call site
SPAN_META = "symshape_span"


def user_frame_span(torch_dir: str) -> ss.Span | None:
    """The call being executed in the innermost frame outside torch and symshape."""
    f = sys._getframe(1)
    known = _USER_FILES.get(torch_dir)
    if known is None:
        known = _USER_FILES[torch_dir] = {}
    while f is not None:
        file = f.f_code.co_filename
        user = known.get(file)
        if user is None:
            user = known[file] = _is_user_file(file, torch_dir)
        if user:
            # cached per call site (a model's line is traced once per run, and again per run)
            return frame_span(f)
        f = f.f_back  # type: ignore[assignment]
    return None


#: argument types torch's ``create_arg`` keeps as they are
_PLAIN = frozenset({int, float, bool, str, type(None)})

#: torch's directory -> file name -> whether it is the user's (asked per frame per traced node)
_USER_FILES: dict[str, dict[str, bool]] = {}

#: (id(code), offset) -> (code, the count of the UNPACK_SEQUENCE at that offset, else None); the
#: code object is kept with its entry, so its id is not reused meanwhile
_UNPACKS: dict[tuple[int, int], tuple[CodeType, int | None]] = {}


def unpack_count(code: CodeType, lasti: int) -> int | None:
    """The number of targets when the instruction at ``lasti`` unpacks a sequence, else None:
    what ``torch.fx.Proxy.__iter__`` asks of its caller, which disassembles the caller's whole
    function each time (``B, T, C = x.size()`` in every block of a model); remembered per call
    site."""
    key = (id(code), lasti)
    hit = _UNPACKS.get(key)
    if hit is not None and hit[0] is code:
        return hit[1]
    insts = list(dis.get_instructions(code))
    if sys.version_info >= (3, 11):
        inst = insts[bisect.bisect_left(insts, lasti, key=lambda x: x.offset)]
    else:  # pragma: no cover - torch's rule before 3.11
        inst = insts[lasti // 2]
    n = inst.argval if inst.opname == "UNPACK_SEQUENCE" else None
    if len(_UNPACKS) >= 4096:
        _UNPACKS.clear()
    _UNPACKS[key] = (code, n)
    return n


def span_tracer(proxy_buffers: bool = True) -> Any:
    """A ``torch.fx.Tracer`` that records each node's call site in the model's source in
    ``node.meta[SPAN_META]``: one walk up the Python stack per node, with the exact column of the
    call (torch's ``record_stack_traces`` formats a whole traceback per node instead).
    ``proxy_buffers``: buffers are graph nodes, as parameters are (so a buffer can be sliced by a
    traced size), rather than constants (so Python code may branch on one)."""
    return _tracer_class(proxy_buffers)()


@functools.lru_cache(maxsize=2)
def _tracer_class(proxy_buffers: bool) -> Any:
    """The class of :func:`span_tracer`'s tracers (made once: torch is imported lazily)."""
    import collections

    import torch
    import torch.fx
    from torch.fx.proxy import Scope

    torch_dir = os.path.dirname(os.path.abspath(torch.__file__))

    # torch copies the tracer's module stack into every node's ``nn_module_stack`` and its scope
    # on every module call with ``copy.copy``, whose generic path (``__reduce_ex__``) costs a
    # tenth of a trace: the same copies, made directly
    class _ModuleStack(collections.OrderedDict[str, Any]):
        def __copy__(self) -> collections.OrderedDict[str, Any]:
            return collections.OrderedDict(self)

    class _Scope(Scope):
        def __copy__(self) -> _Scope:
            return _Scope(self.module_path, self.module_type)

    class SpanProxy(torch.fx.Proxy):
        """A proxy whose unpacking (``a, b = proxy``) looks up its call site's instruction once
        (:func:`unpack_count`), as ``torch.fx.Proxy.__iter__`` decides it."""

        def __iter__(self) -> Any:
            caller = sys._getframe(1)
            n = unpack_count(caller.f_code, caller.f_lasti)
            if n is not None:
                return (self[i] for i in range(n))  # type: ignore[index]
            return self.tracer.iter(self)

    class SpanTracer(torch.fx.Tracer):
        # buffers are graph nodes (``get_attr``), as parameters are: a model that slices one by a
        # traced size (HF's ``self.position_ids[:, :t]``) can then be traced
        proxy_buffer_attributes = proxy_buffers

        def __init__(self) -> None:
            super().__init__()
            self.scope = _Scope("", None)
            self.module_stack = _ModuleStack()

        def proxy(self, node: torch.fx.Node) -> torch.fx.Proxy:
            return SpanProxy(node, self)

        def create_arg(self, a: Any) -> Any:
            # the common arguments first: a proxy is its node, a plain constant itself, a tuple
            # its items (what torch's create_arg makes of them after a dozen type checks)
            cls = a.__class__
            if cls is SpanProxy:
                return a.node
            if cls in _PLAIN:
                return a
            if cls is tuple:
                return tuple([self.create_arg(x) for x in a])
            return super().create_arg(a)

        def create_node(self, *args: Any, **kwargs: Any) -> torch.fx.Node:
            node = super().create_node(*args, **kwargs)
            if node.op != "placeholder":
                node.meta[SPAN_META] = user_frame_span(torch_dir)
            return node

    return SpanTracer


@functools.lru_cache(maxsize=8192)
def pythonic_path(qualname: str) -> str:
    """``layer1.0.conv1.weight`` as the model's source spells it: ``self.layer1[0].conv1.weight``."""
    out = "self"
    for seg in qualname.split(".") if qualname else ():
        if seg.isidentifier():
            out += f".{seg}"
        elif seg.isdigit():
            out += f"[{seg}]"
        else:
            out += f"[{seg!r}]"
    return out


def frames(stack_trace: str | None) -> list[tuple[str, int, str]]:
    """``(file, line, function)`` of each frame of a recorded stack trace, outermost first."""
    if not stack_trace:
        return []
    return [(m["file"], int(m["line"]), m["func"].strip()) for m in _FRAME_RE.finditer(stack_trace)]


@functools.lru_cache(maxsize=4096)
def _is_user_file(path: str, torch_dir: str) -> bool:
    """A file of the user's (not torch's, not symshape's, not generated); asked per frame per
    traced node, so remembered per path."""
    if path.startswith("<eval_with_key>") or path.startswith("<frozen"):
        return False
    ap = os.path.abspath(path) if not path.startswith("<") else path
    return not (ap.startswith(torch_dir) or ap.startswith(_SYMSHAPE_DIR))


def _find_column(text: str, needles: Iterable[str]) -> int:
    """The 1-based column of the first needle found in ``text`` (word-bounded on the left),
    else of the first non-blank character."""
    for needle in needles:
        if not needle:
            continue
        start = 0
        while True:
            i = text.find(needle, start)
            if i < 0:
                break
            before = text[i - 1] if i > 0 else " "
            if not (needle[0].isidentifier() and (before.isalnum() or before == "_")):
                return i + 1
            start = i + 1
    return len(text) - len(text.lstrip()) + 1


@functools.lru_cache(maxsize=64)
def _parse_file(file: str, mtime_ns: int, size: int) -> ast.Module | None:
    """A source file's syntax tree (memoized per file version)."""
    text = "".join(linecache.getlines(file))
    try:
        return ast.parse(text) if text else None
    except SyntaxError:
        return None


def _find_class(tree: ast.AST, qualname: str) -> ast.ClassDef | None:
    """The class definition at ``qualname`` (``Outer.Inner``, ``func.<locals>.Cls``)."""
    node: ast.AST = tree
    for part in qualname.split("."):
        if part == "<locals>":
            continue
        found = None
        for child in ast.iter_child_nodes(node):
            if (
                isinstance(child, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                and child.name == part
            ):
                found = child
        if found is None:
            return None
        node = found
    return node if isinstance(node, ast.ClassDef) else None


def _class_source(cls: type) -> tuple[ast.ClassDef, str, int, int] | None:
    """The class definition, its file, first line and indentation (the whole file is parsed once
    per version; ``inspect.getsource`` would parse it once per class)."""
    try:
        file = inspect.getsourcefile(cls)
    except TypeError:
        return None
    if file is None:
        return None
    try:
        st = os.stat(file)
    except OSError:
        return None
    tree = _parse_file(file, st.st_mtime_ns, st.st_size)
    node = _find_class(tree, cls.__qualname__) if tree is not None else None
    return (node, file, 1, 0) if node is not None else None


def _attr_assignment(cls_def: ast.ClassDef, attr: str) -> ast.AST | None:
    """The first statement of the class that defines ``self.<attr>`` (an assignment, or
    ``register_buffer``/``register_parameter``/``add_module`` with that name)."""
    for node in ast.walk(cls_def):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = list(node.targets)
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            targets = [node.target]
        for t in targets:
            for leaf in ast.walk(t):
                if (
                    isinstance(leaf, ast.Attribute)
                    and leaf.attr == attr
                    and isinstance(leaf.value, ast.Name)
                    and leaf.value.id in ("self", "s")
                ):
                    return leaf
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("register_buffer", "register_parameter", "add_module", "register_module")
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and node.args[0].value == attr
        ):
            return node
    return None


def _resolve_class(name: str) -> type | None:
    """A class from its qualified name as ``torch.export`` records it (``pkg.mod.Class``)."""
    mod, _, rest = name.rpartition(".")
    while mod:
        m = sys.modules.get(mod)
        if m is not None:
            obj: Any = m
            for part in rest.split("."):
                obj = getattr(obj, part, None)
                if obj is None:
                    return None
            return obj if isinstance(obj, type) else None
        mod, _, head = mod.rpartition(".")
        rest = f"{head}.{rest}"
    return None


def source_lines(fn: Any) -> tuple[str, list[str], int] | None:
    """The file, source lines and first line of a function (remembered per function object:
    its code does not move)."""
    try:
        return _source_lines(fn)
    except TypeError:  # an unhashable callable
        return _source_lines.__wrapped__(fn)


@functools.lru_cache(maxsize=256)
def _source_lines(fn: Any) -> tuple[str, list[str], int] | None:
    try:
        file = inspect.getsourcefile(fn)
        lines, first = inspect.getsourcelines(fn)
    except (OSError, TypeError):
        return None
    return (file, lines, first) if file is not None else None


@functools.lru_cache(maxsize=256)
def _forward_args(fn: Any, torch_dir: str) -> Mapping[str, ss.Span]:
    src = source_lines(fn)
    if src is None or not _is_user_file(src[0], torch_dir):
        return {}
    file, lines, first = src
    indent = len(lines[0]) - len(lines[0].lstrip())
    try:
        tree = ast.parse(textwrap.dedent("".join(lines)))
    except SyntaxError:
        return {}
    out: dict[str, ss.Span] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            a = node.args
            for arg in [*a.posonlyargs, *a.args, *a.kwonlyargs]:
                out[arg.arg] = ss.Span(file, first + arg.lineno - 1, arg.col_offset + indent + 1)
            break
    return MappingProxyType(out)


#: class -> attribute -> where the class's source defines it (shared by every import: a class
#: object's source lines do not move; a redefined class is a new object)
_ATTR_SPANS: weakref.WeakKeyDictionary[type, dict[str, ss.Span | None]] = weakref.WeakKeyDictionary()
_CLASS_DEFS: weakref.WeakKeyDictionary[type, tuple[ast.ClassDef, str, int, int] | None] = (
    weakref.WeakKeyDictionary()
)


class SpanFinder:
    """Spans for one model: nodes, parameters, inputs (caches per class and attribute)."""

    def __init__(self, classes: Mapping[str, type], torch_dir: str) -> None:
        #: module path ('' for the root) -> the class of the module at that path
        self.classes: dict[str, type] = dict(classes)
        self.torch_dir = torch_dir
        self._defs: dict[str, ss.Span | None] = {}  # path -> definition (see definition)
        self._attr_spans: dict[tuple[type, str], ss.Span | None] = {}

    # -- classes ------------------------------------------------------------------------------
    def learn_module_stack(self, stack: Mapping[str, Any] | None) -> None:
        """Record the classes an ``nn_module_stack`` entry names (fx: classes, export: names)."""
        if not stack:
            return
        for value in stack.values():
            if not (isinstance(value, tuple) and len(value) == 2):
                continue
            path, cls = value
            if not isinstance(path, str) or path in self.classes:
                continue
            if isinstance(cls, str):
                resolved = _resolve_class(cls)
                if resolved is None:
                    continue
                cls = resolved
            if isinstance(cls, type):
                self.classes[path] = cls
                self._defs.clear()

    def _is_user_class(self, cls: type) -> bool:
        f = getattr(sys.modules.get(cls.__module__), "__file__", None)
        return f is not None and _is_user_file(f, self.torch_dir)

    def _class_def(self, cls: type) -> tuple[ast.ClassDef, str, int, int] | None:
        if cls not in _CLASS_DEFS:
            _CLASS_DEFS[cls] = _class_source(cls)
        return _CLASS_DEFS[cls]

    def _attr_span(self, cls: type, attr: str) -> ss.Span | None:
        # this model's classes first (a plain dict: the shared one is keyed weakly, slower)
        try:
            return self._attr_spans[cls, attr]
        except KeyError:
            span = self._attr_spans[cls, attr] = self._class_attr_span(cls, attr)
            return span

    def _class_attr_span(self, cls: type, attr: str) -> ss.Span | None:
        known = _ATTR_SPANS.get(cls)
        if known is None:
            known = _ATTR_SPANS[cls] = {}
        elif attr in known:
            return known[attr]
        span = None
        for klass in cls.__mro__:
            if klass is object or not self._is_user_class(klass):
                continue
            src = self._class_def(klass)
            if src is None:
                continue
            cls_def, file, first, indent = src
            hit = _attr_assignment(cls_def, attr)
            if hit is not None:
                line = first + getattr(hit, "lineno", 1) - 1
                span = ss.Span(file, line, getattr(hit, "col_offset", 0) + indent + 1)
                break
        known[attr] = span
        return span

    # -- parameters ----------------------------------------------------------------------------
    def definition(self, qualname: str) -> ss.Span | None:
        """Where the parameter/buffer/submodule ``qualname`` is defined in the model's source."""
        # the attribute of its owner's class, else the owner's definition (a parameter of a
        # module inside a container: the container's), remembered per path (a module's
        # parameters share their owners')
        try:
            return self._defs[qualname]
        except KeyError:
            pass
        owner, dot, attr = qualname.rpartition(".")
        span = None
        cls = self.classes.get(owner)
        if cls is not None:
            span = self._attr_span(cls, attr)
        if span is None and dot:
            span = self.definition(owner)
        self._defs[qualname] = span
        return span

    # -- inputs --------------------------------------------------------------------------------
    def forward_args(self, fn: Any) -> Mapping[str, ss.Span]:
        """Spans of the parameter names in the ``def forward(...)`` of ``fn``."""
        try:
            return _forward_args(fn, self.torch_dir)
        except TypeError:  # an unhashable callable
            return _forward_args.__wrapped__(fn, self.torch_dir)

    # -- nodes ---------------------------------------------------------------------------------
    def node(self, stack_trace: str | None, needles: Iterable[str]) -> ss.Span | None:
        """The innermost user frame of a stack trace, with the column of the first needle."""
        user = [f for f in frames(stack_trace) if _is_user_file(f[0], self.torch_dir)]
        if not user:
            return None
        file, line, _ = user[-1]
        text = linecache.getline(file, line)
        if not text:
            return ss.Span(file, line, 1)
        return ss.Span(file, line, _find_column(text.rstrip("\n"), needles))


def call_needles(op: str, target: Any, module_path: str | None) -> list[str]:
    """What to look for in a node's source line to place the caret."""
    out: list[str] = []
    if op == "call_module" and isinstance(target, str):
        segs = target.split(".")
        out += [f"self.{s}" for s in reversed(segs) if s.isidentifier()]
    elif op == "call_method" and isinstance(target, str):
        out += [f".{target}(", f".{target}"]
    elif op == "get_attr" and isinstance(target, str):
        out += [f"self.{target.split('.')[-1]}"]
    elif op == "call_function":
        text = _OPERATOR_TEXT.get(target)
        if text is not None:
            out.append(f" {text} " if text not in ("[", "-", "~") else text)
            out.append(text)
        name = getattr(target, "__name__", None)
        packet = getattr(target, "overloadpacket", None)
        if packet is not None:
            name = getattr(packet, "__name__", name)
        if isinstance(name, str):
            base = name.split(".")[0].lstrip("_")
            out += [f"{base}(", f".{base}"]
    if module_path:
        out += [f"self.{s}" for s in reversed(module_path.split(".")) if s.isidentifier()]
    return out
