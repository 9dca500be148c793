"""Token samplers of the induction-head paper: x_i iid N(0, 1) (Gaussian) or Unif{±1} (Boolean).

Positions are 1-based as in the paper: a batch is an array ``X`` of shape (B, L+1) whose
column 0 is unused and columns 1..L hold x_1..x_L. The tokens come from the counter-based
generator of :mod:`numerics.rng` (row b is stream b under one key taken from the caller's NumPy
generator), drawn in parallel and identical at every thread count.
"""

from __future__ import annotations

import numpy as np

from derivations.errors import InvalidArgument
from numerics.rng import key_from_generator, token_rows

TOKEN_LAWS = ("gaussian", "boolean")


def draw_tokens(rng: np.random.Generator, size: int, length: int, law: str = "gaussian") -> np.ndarray:
    """Draw ``size`` sequences x_1..x_L (iid N(0,1) or Unif{±1}) into an array of shape (size, L+1)."""
    if law not in TOKEN_LAWS:
        raise InvalidArgument(f"tokens={law!r} is not one of {', '.join(TOKEN_LAWS)}")
    return token_rows(key_from_generator(rng), size, length + 1, boolean=law == "boolean")


def token_sampler(length: int, law: str = "gaussian"):
    """A ``draw(rng, size)`` for :class:`numerics.montecarlo.MonteCarlo`."""
    return _TokenSampler(length, law)


class _TokenSampler:
    """Picklable token sampler (a closure would not cross process boundaries)."""

    def __init__(self, length: int, law: str):
        if length < 5:
            raise InvalidArgument(f"L={length} must be an integer >= 5 (the IH softmax needs positions 2..L-1)")
        self.length, self.law = length, law

    def __call__(self, rng: np.random.Generator, size: int) -> np.ndarray:
        return draw_tokens(rng, size, self.length, self.law)
