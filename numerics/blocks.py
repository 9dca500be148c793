"""Parameter blocks: named, matrix-valued views into one flat parameter vector.

A model's parameters θ = [W, W_V, W_K, W_Q, …] live in one contiguous vector (what the integrators, the
training driver and the complex-step oracle take); :class:`BlockLayout` gives each block its shape and
offset. Views share memory with the vector (writes go through) and keep its dtype, so the same layout
serves float64 states and the complex vectors of a complex-step derivative. A trainable subset is a
boolean mask over the vector (:meth:`BlockLayout.mask`), the form :class:`numerics.train.ParamGroup` and
the flows' frozen blocks take.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np

from derivations.errors import InvalidArgument, unknown_name


class BlockLayout:
    """Blocks in declaration order; block ``name`` occupies ``flat[start:stop]`` reshaped (C order) to its shape."""

    def __init__(self, shapes: Mapping[str, tuple[int, ...]]):
        if not shapes:
            raise InvalidArgument("a BlockLayout needs at least one block")
        self.shapes: dict[str, tuple[int, ...]] = {}
        self.offsets: dict[str, tuple[int, int]] = {}
        start = 0
        for name, shape in shapes.items():
            shape = tuple(int(s) for s in shape)
            if not isinstance(name, str) or not name:
                raise InvalidArgument(f"block name {name!r} must be a non-empty string")
            if any(s < 1 for s in shape):
                raise InvalidArgument(f"block {name!r}: every dimension must be >= 1; got shape {shape}")
            size = int(np.prod(shape, dtype=np.int64))
            self.shapes[name] = shape
            self.offsets[name] = (start, start + size)
            start += size
        self.size = start

    def _check(self, flat: np.ndarray) -> np.ndarray:
        if flat.ndim != 1 or flat.size != self.size:
            raise InvalidArgument(f"a parameter vector of this layout has shape ({self.size},); got {flat.shape}")
        return flat

    def slice(self, name: str) -> slice:
        """The block's coordinates in the flat vector."""
        if name not in self.offsets:
            raise unknown_name("parameter block", name, self.offsets)
        return slice(*self.offsets[name])

    def view(self, flat: np.ndarray, name: str) -> np.ndarray:
        """Block ``name`` of ``flat`` with its shape (a view: writes go through)."""
        return self._check(flat)[self.slice(name)].reshape(self.shapes[name])

    def views(self, flat: np.ndarray) -> dict[str, np.ndarray]:
        """Every block of ``flat`` as a view."""
        self._check(flat)
        return {name: self.view(flat, name) for name in self.shapes}

    def pack(self, blocks: Mapping[str, np.ndarray], dtype=float) -> np.ndarray:
        """One flat vector from every block (each of its declared shape)."""
        missing = [name for name in self.shapes if name not in blocks]
        extra = [name for name in blocks if name not in self.shapes]
        if missing or extra:
            raise InvalidArgument(f"pack needs exactly the blocks {list(self.shapes)}; missing {missing}, "
                                  f"unknown {extra}")
        flat = np.empty(self.size, dtype=dtype)
        for name, value in blocks.items():
            value = np.asarray(value)
            if value.shape != self.shapes[name]:
                raise InvalidArgument(f"block {name!r} has shape {self.shapes[name]}; got {value.shape}")
            flat[self.slice(name)] = value.reshape(-1)
        return flat

    def mask(self, trainable: Iterable[str]) -> np.ndarray:
        """Boolean mask over the flat vector, True on the coordinates of the ``trainable`` blocks."""
        out = np.zeros(self.size, dtype=bool)
        for name in trainable:
            out[self.slice(name)] = True
        return out
