"""Derivations layer: SymPy only."""
