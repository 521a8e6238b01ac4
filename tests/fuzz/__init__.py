"""The differential fuzzer: seeded random programs checked against numpy.

``generate(seed)`` builds a program (:mod:`.gen`), ``check_program`` compares symshape with numpy at
several values of its symbols (:mod:`.check`), ``run_fuzz(count, seed)`` does both for many
programs. The pytest entry is ``tests/test_fuzz.py`` (a few hundred programs; ``SYMSHAPE_FUZZ=5000``
and ``SYMSHAPE_FUZZ_SEED=7`` for a large run); from the command line::

    python -m tests.fuzz --count 5000 --seed 7
"""

from .check import Finding, Stats, check_program, run_fuzz, valuations
from .gen import OP_KINDS, Node, Program, generate

__all__ = [
    "Finding",
    "Stats",
    "check_program",
    "run_fuzz",
    "valuations",
    "OP_KINDS",
    "Node",
    "Program",
    "generate",
]
