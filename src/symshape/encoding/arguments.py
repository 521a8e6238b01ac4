"""Checks of the arguments users hand to the term language, shared by its modules: mappings
(substitutions, assignments), the texts the parsers read, and ``/`` on dimensions."""

from __future__ import annotations

from collections.abc import Mapping

from symshape.errors import BAD_DIM, INVALID_ARGUMENT, PARSE_ERROR, SymshapeError

__all__ = ["check_mapping", "check_parse_input", "true_division_error"]


def check_mapping(mapping: object, what: str) -> Mapping[object, object]:
    """``mapping`` itself when it is a mapping, else an ``invalid-argument`` error: ``what``, then
    what was given."""
    if not isinstance(mapping, Mapping):
        raise SymshapeError(INVALID_ARGUMENT, f"{what}, got {type(mapping).__name__} {mapping!r}")
    return mapping


def check_parse_input(text: object, env: object, func: str, what: str, limit: int) -> None:
    """What :func:`parse_dim` and :func:`~symshape.encoding.type_parse.parse_type` check before
    reading: ``text`` is a string of at most ``limit`` characters and ``env`` None or a mapping."""
    if not isinstance(text, str):
        raise SymshapeError(PARSE_ERROR, f"{func} expects a string, got {type(text).__name__}")
    if env is not None and not isinstance(env, Mapping):
        raise SymshapeError(INVALID_ARGUMENT, f"{func}'s env must be a mapping of names, got {env!r}")
    if len(text) > limit:
        raise SymshapeError(
            PARSE_ERROR, f"cannot parse {what}: the text has {len(text)} characters (at most {limit})"
        )


def true_division_error(a: object, b: object) -> SymshapeError:
    """The error for ``a / b`` on dimensions: sizes are integers, so division is ``//``."""
    return SymshapeError(
        BAD_DIM,
        f"dimensions are integers: `{a} / {b}` has no dimension value; use `{a} // {b}` "
        "(floor division) for a size",
    )
