"""Unifying types without sub-types (type variables, global type variables, ``Object``, shapes),
the kind check of a hole meeting a type, and the names of forms in mismatch details."""

from __future__ import annotations

from symshape.encoding import types as ty
from symshape.errors import KIND_MISMATCH, RANK_MISMATCH, TYPE_MISMATCH
from symshape.solver.unify_tensors import Mismatch

__all__ = ["OWN_KIND", "check_hole_kind", "unify_atoms"]

OWN_KIND = (ty.TypeVar, ty.IncompleteType, ty.GlobalTypeVar)  # forms of another kind than ``type``
_FORMS: dict[type, str] = {
    ty.TensorType: "a tensor",
    ty.TupleType: "a tuple",
    ty.FuncType: "a function",
    ty.TypeVar: "a type variable",
    ty.GlobalTypeVar: "a global type variable",
    ty.TypeCall: "a type call",
    ty.ObjectType: "Object",
    ty.ShapeType: "a shape",
}


def unify_atoms(a: ty.Type, b: ty.Type) -> ty.Type:
    """Two types without sub-types to unify (or of different forms)."""
    match a, b:
        case ty.TypeVar(), ty.TypeVar():
            if a != b:
                if a.kind != b.kind:
                    raise Mismatch(KIND_MISMATCH, f"kind {a.kind} vs {b.kind}")
                raise Mismatch(TYPE_MISMATCH, f"type variables {a} vs {b}")
            return a
        case ty.GlobalTypeVar(), ty.GlobalTypeVar():
            if a != b:
                raise Mismatch(TYPE_MISMATCH, f"global type variables {a} vs {b}")
            return a
        case ty.ObjectType(), ty.ObjectType():
            return a
        case ty.ShapeType(na), ty.ShapeType(nb):
            if na is not None and nb is not None and na != nb:
                raise Mismatch(RANK_MISMATCH, f"shapes of rank {na} vs {nb}")
            return a if na is not None else b
        case _:
            if ty.type_kind(a) != ty.type_kind(b):
                raise Mismatch(KIND_MISMATCH, f"kind {ty.type_kind(a)} vs {ty.type_kind(b)}")
            raise Mismatch(TYPE_MISMATCH, f"{_form(a)} vs {_form(b)}")


def check_hole_kind(root: ty.IncompleteType, other: ty.Type) -> None:
    """A hole of kind ``type`` takes a type or an ADT; one of another kind, only its kind."""
    kind = ty.type_kind(other) if type(other) in OWN_KIND else "type"
    if root.kind != kind and not (root.kind == "type" and kind == "adt"):
        raise Mismatch(KIND_MISMATCH, f"a hole of kind {root.kind} cannot be `{other}`")


def _form(t: ty.Type) -> str:
    return _FORMS.get(type(t), type(t).__name__)
