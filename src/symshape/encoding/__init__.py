"""Dimensions and types as terms, and their lowering to Z3."""
