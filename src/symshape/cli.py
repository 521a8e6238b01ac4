"""The command line: ``symshape demo``, ``symshape check PATH``, ``symshape codes``, ``--version``.

Exit codes:

- ``0`` — success: the checked program is well typed (status ``ok`` or ``guarded``; with
  ``--strict`` only ``ok``), or every bundled example of the demo ended as intended (the demo's
  broken example is *meant* to report an error);
- ``1`` — type errors (``check``: status ``error``, ``unresolved`` or ``inconclusive``), or a
  bundled example that did not end as intended (``demo``);
- ``2`` — bad usage: an unknown subcommand or option, a missing file, a file that fails to run or
  defines no ``model``. stderr says what in one line (argparse adds its usage line); a file that
  raises is named with the line of *that file* the exception came through
  (``model.py:7: ValueError: ...``). With ``--json`` a usage error is a JSON document on stdout
  instead, ``{"version": ..., "error": {"kind": "usage", "message": ..., "file": ..., "line": ...}}``
  (still exit code 2; nothing on stderr), so a caller that reads stdout always gets JSON.

``symshape check model.onnx [--dim NAME[=VALUE]]`` checks an ONNX model instead (a path ending in
``.onnx``; see :mod:`symshape.onnx.cli`).

``symshape check`` prints the model's type — for a :class:`~symshape.Module`, every global
function's type (``@f: fn(...) -> ...``; JSON ``"globals": {"f": ...}``) — then the report.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NoReturn

if TYPE_CHECKING:
    from symshape.examples import Example
    from symshape.ir.result import InferenceResult

__all__ = ["main", "build_parser", "codes_markdown", "EXIT_OK", "EXIT_TYPE_ERROR", "EXIT_USAGE"]

EXIT_OK = 0
EXIT_TYPE_ERROR = 1
EXIT_USAGE = 2


class _UsageError(Exception):
    """Bad usage: reported as ``symshape: error: ...`` on stderr (JSON on stdout with ``--json``),
    exit code 2. ``file`` and ``line`` locate it in the user's file when known."""

    def __init__(self, message: str, file: str | None = None, line: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.file = file
        self.line = line


class _Parser(argparse.ArgumentParser):
    """argparse, with errors raised as :class:`_UsageError` when ``--json`` was asked for (so they
    can be printed as JSON), and printed by argparse otherwise."""

    json_errors = False

    def error(self, message: str) -> NoReturn:
        if _Parser.json_errors:
            raise _UsageError(message)
        super().error(message)


def _version() -> str:
    from symshape import __version__

    return __version__


_COMMANDS: dict[str, tuple[str, str]] = {  # the subcommands: their help and description
    "demo": (
        "infer the bundled examples: a symbolic model, a guarded one, a broken one",
        "Infer the bundled example programs and print their types, guards and errors. "
        "Exits 0 when every example ends as intended (the broken example is meant to fail), "
        "1 otherwise.",
    ),
    "check": (
        "run a Python file that defines `model` and type-check the model",
        "Execute PATH, take its module-level `model` (an ss.Function, ss.Module or "
        "other expression), infer its types and print the report. Exits 0 if well typed, "
        "1 on type errors, 2 on bad usage.",
    ),
    "codes": ("list the error-code catalogue", "Print every error code with its one-line description."),
}


def _json_flag(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print one JSON document instead of text")


def build_parser() -> argparse.ArgumentParser:
    """The argparse parser of ``symshape``."""
    p = _Parser(
        prog="symshape",
        description="Infer and check tensor types with symbolic shapes.",
        epilog="exit codes: 0 well typed / demo as intended, 1 type errors, 2 bad usage",
    )
    p.add_argument("--version", action="version", version=f"symshape {_version()}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    demo, check, codes = (sub.add_parser(n, help=h, description=d) for n, (h, d) in _COMMANDS.items())
    _json_flag(demo)
    check.add_argument("path", metavar="PATH", help="a Python file defining a module-level `model`")
    check.add_argument("--strict", action="store_true", help="report every guard as an error")
    check.add_argument(
        "--timeout-ms", type=int, default=2000, metavar="MS", help="Z3 timeout per query (default 2000)"
    )
    _json_flag(check)
    check.add_argument(  # ONNX models (symshape.onnx.cli)
        "--dim", action="append", default=[], metavar="NAME[=VALUE]",
        help="ONNX models (PATH ending in .onnx): dim_param NAME is VALUE, or a symbol; a NAME that "
        "is not a dim_param names the inputs' dimension 0 (the batch)",
    )  # fmt: skip

    codes.add_argument("--markdown", action="store_true", help="print the README's table (with HTML anchors)")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code (the console script exits with it)."""
    parser = build_parser()
    as_script = argv is None
    argv = list(sys.argv[1:] if argv is None else argv)
    as_json = "--json" in argv
    _Parser.json_errors = as_json
    try:
        args = parser.parse_args(argv)
        if args.command == "demo":
            return _demo(as_json=args.json)
        if args.command == "check":
            if args.path.lower().endswith(".onnx"):  # ONNX models: symshape.onnx.cli
                try:
                    from symshape.onnx.cli import UsageError, check_onnx
                except ImportError as e:
                    raise _UsageError(f"checking an ONNX model needs the onnx extra: {e}") from None
                if as_script:
                    _skip_final_collection()
                try:
                    return check_onnx(args.path, args.dim, args.strict, args.timeout_ms, args.json)
                except UsageError as e:
                    raise _UsageError(e.message) from None
            if args.dim:
                raise _UsageError("--dim applies to ONNX models (a PATH ending in .onnx)")
            return _check(args.path, strict=args.strict, timeout_ms=args.timeout_ms, as_json=args.json)
        if args.command == "codes":
            print(codes_markdown() if args.markdown else _codes_text())
            return EXIT_OK
        if not as_json:
            parser.print_usage(sys.stderr)
        raise _UsageError("a command is required (demo, check, codes)")
    except _UsageError as e:
        if as_json:
            err = {"kind": "usage", "message": e.message, "file": e.file, "line": e.line}
            print(json.dumps({"version": _version(), "error": err}, indent=2))
        else:
            where = f"{e.file}:{e.line}: " if e.file is not None and e.line is not None else ""
            print(f"symshape: error: {where}{e.message}", file=sys.stderr)
        return EXIT_USAGE
    finally:
        _Parser.json_errors = False


def _skip_final_collection() -> None:
    """At the exit of a process run as ``symshape check model.onnx``: no cyclic garbage collection
    over every object of the process (numpy, onnx, Z3, the model's inference; 7 % of the CPU of
    checking densenet121). ``gc.freeze`` at exit, from an ``atexit`` handler registered last
    (so it runs first, before the interpreter's final collections): the objects are freed as
    the modules are cleared (cycles, with the process), the output is flushed as before. Only
    for an ONNX model (no user code runs, so no finalizer of the user's depends on that
    collection) and only when ``main`` reads ``sys.argv`` (a script; a caller of ``main(argv)``
    keeps its collector)."""
    import atexit
    import gc

    atexit.unregister(gc.freeze)
    atexit.register(gc.freeze)


def _type_str(res: InferenceResult, e: Any) -> str:
    from symshape.errors import SymshapeError

    try:
        return str(res.type_of(e))
    except SymshapeError as exc:
        return f"<unknown: {exc.message}>"


# ---------------------------------------------------------------------------------------------
# symshape demo


def _demo(as_json: bool) -> int:
    import symshape as ss
    from symshape.examples import all_examples
    from symshape.solver.diagnostics import IdNumbering, raw_ids, renumber_ids

    records: list[dict[str, Any]] = []
    blocks: list[str] = []
    all_as_intended = True
    for ex in all_examples():
        res = ss.infer(ex.program)
        diags = res.diagnostics
        as_intended = res.status == ex.expect_status and tuple(d.code for d in diags) == ex.expect_codes
        all_as_intended = all_as_intended and as_intended
        with raw_ids():  # (each example's output numbers its unknown types once)
            types = {name: _type_str(res, e) for name, e in ex.bindings}
            record = {
                "name": ex.name,
                "description": ex.description,
                "status": res.status,
                "expected_status": ex.expect_status,
                "as_intended": as_intended,
                "types": types,
                "guards": [str(g) for g in res.guards],
                "warnings": [d.to_json() for d in res.warnings],
                "errors": [d.to_json() for d in diags],
            }
            block = _demo_block(ex, res, types, as_intended)
        records.append(IdNumbering().json(record))
        blocks.append(renumber_ids(block))

    if as_json:
        print(json.dumps({"version": _version(), "examples": records}, indent=2))
    else:
        print("\n\n".join(blocks))
        verdict = (
            "every example ended as intended"
            if all_as_intended
            else "some examples did NOT end as intended (see UNEXPECTED above)"
        )
        print(f"\nsymshape {_version()} demo: {verdict}")
    return EXIT_OK if all_as_intended else EXIT_TYPE_ERROR


def _demo_block(ex: Example, res: InferenceResult, types: dict[str, str], as_intended: bool) -> str:
    lines = [f"== {ex.name}: {ex.description}", ""]
    src = ex.source.rstrip("\n").splitlines()
    lines.extend(f"  {i:>2} | {ln}".rstrip() for i, ln in enumerate(src, start=1))
    lines.append("")
    lines.append(f"status: {res.status}")
    if not as_intended:
        want = ex.expect_status + (f" with {', '.join(ex.expect_codes)}" if ex.expect_codes else "")
        lines.append(f"  UNEXPECTED: this example is meant to end {want}")
    lines.append("types:")
    width = max((len(k) for k in types), default=0)
    lines.extend(f"  {k.ljust(width)} : {v}" for k, v in types.items())
    if res.guards:
        lines.append("guards (well typed only if):")
        for g in res.guards:
            who = f"    (needed by {g.origin.describe()})" if g.origin is not None else ""
            lines.append(f"  {g}{who}")
    if res.diagnostics:
        lines.append("errors:")
        for d in res.diagnostics:
            lines.extend("  " + ln for ln in d.render().splitlines())
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# symshape codes


def _codes_text() -> str:
    from symshape.errors import ERROR_CODES

    width = max(len(c) for c in ERROR_CODES)
    return "\n".join(f"{c.ljust(width)}  {e.description}" for c, e in ERROR_CODES.items())


def codes_markdown() -> str:
    """The README's error-code table: one row per code, each with an ``error-codes-CODE`` anchor."""
    from symshape.errors import ERROR_CODES

    rows = ["| code | meaning |", "| --- | --- |"]
    for c, e in ERROR_CODES.items():
        rows.append(f'| <a id="error-codes-{c}"></a>`{c}` | {e.description} |')
    return "\n".join(rows)


# ---------------------------------------------------------------------------------------------
# symshape check PATH


def _load_model(path: str) -> Any:
    import runpy

    import symshape as ss
    from symshape.ir.nodes import Expr

    if not os.path.exists(path):
        raise _UsageError(f"no such file: {path}")
    if not os.path.isfile(path):
        raise _UsageError(f"not a file: {path}")
    # Like `python PATH`: the file's directory comes first on sys.path, so it can import its
    # neighbours. It runs as `__symshape_check__`, so an `if __name__ == "__main__":` block is skipped.
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    try:
        namespace = runpy.run_path(path, run_name="__symshape_check__")
    except SystemExit as e:
        file, line = _user_frame(e, path)
        raise _UsageError(f"{path} called exit({e.code}) while loading", file, line) from None
    except Exception as e:
        msg = " ".join(str(e).split())
        file, line = _user_frame(e, path)
        raise _UsageError(f"{type(e).__name__}: {msg}", file or path, line) from None
    if "model" not in namespace:
        raise _UsageError(f"{path} defines no module-level `model`")
    model = namespace["model"]
    if not isinstance(model, (Expr, ss.Module)):
        raise _UsageError(
            f"`model` in {path} is a {type(model).__name__}; expected an ss.Function, ss.Module "
            "or another expression"
        )
    return model


def _user_frame(e: BaseException, path: str) -> tuple[str | None, int | None]:
    """Where the user's code raised ``e``: the innermost traceback frame of the user's code (the
    checked file, or a neighbour it imports) — not symshape's, the standard library's or an
    installed package's; for a syntax error, its own location."""
    import sysconfig

    if isinstance(e, SyntaxError) and e.filename and e.lineno:
        return (path if os.path.abspath(e.filename) == os.path.abspath(path) else e.filename), e.lineno
    target = os.path.abspath(path)
    skip = {os.path.dirname(os.path.abspath(__file__))}
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        p = sysconfig.get_paths().get(key)
        if p:
            skip.add(os.path.abspath(p))
    found: tuple[str | None, int | None] = (None, None)
    tb = e.__traceback__
    while tb is not None:
        fname = tb.tb_frame.f_code.co_filename
        full = os.path.abspath(fname)
        if full == target:
            found = (path, tb.tb_lineno)
        elif not fname.startswith("<") and not any(full.startswith(d + os.sep) for d in skip):
            found = (fname, tb.tb_lineno)
        tb = tb.tb_next
    return found


def _check(path: str, strict: bool, timeout_ms: int, as_json: bool) -> int:
    import symshape as ss
    from symshape.solver.diagnostics import raw_ids, renumber_ids

    if timeout_ms <= 0:
        raise _UsageError(f"--timeout-ms must be positive, got {timeout_ms}")
    model = _load_model(path)
    try:
        res = ss.infer(model, strict=strict, timeout_ms=timeout_ms)
    except ss.SymshapeError as e:
        raise _UsageError(f"{path}: {e}") from None
    with raw_ids():  # (the whole output numbers its unknown types once, below)
        text = _check_text(path, model, res, as_json)
    print(renumber_ids(text))
    return EXIT_OK if res.ok else EXIT_TYPE_ERROR


def _check_text(path: str, model: Any, res: InferenceResult, as_json: bool) -> str:
    """What ``symshape check`` prints for a Python file, holes named by their ids."""
    import symshape as ss
    from symshape.ir.nodes import Expr

    model_type = _type_str(res, model) if isinstance(model, Expr) else None
    globals_ = (
        {gv.name: _type_str(res, gv) for gv, _ in model.items()} if isinstance(model, ss.Module) else {}
    )
    if as_json:
        doc = {
            "version": _version(),
            "file": path,
            "status": res.status,
            "type": model_type,
            "globals": globals_,
            "guards": [str(g) for g in res.guards],
            "warnings": [d.to_json() for d in res.warnings],
            "errors": [d.to_json() for d in res.diagnostics],
        }
        return json.dumps(doc, indent=2)
    lines = [] if model_type is None else [f"model: {model_type}"]
    lines.extend(f"@{name}: {t}" for name, t in globals_.items())
    lines.append(res.report())
    return "\n".join(lines)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
