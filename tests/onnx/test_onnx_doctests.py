"""The examples in the docstrings of symshape.onnx run as written."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import symshape.onnx

MODULES = ["symshape.onnx"] + [
    m.name for m in pkgutil.walk_packages(symshape.onnx.__path__, "symshape.onnx.")
]


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name: str) -> None:
    mod = importlib.import_module(name)
    result = doctest.testmod(mod, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
