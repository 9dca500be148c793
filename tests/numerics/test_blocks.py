"""numerics.blocks.BlockLayout: views share memory, pack/views round-trip, masks, complex vectors, bad input."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from derivations.errors import InvalidArgument
from numerics.blocks import BlockLayout

shapes = st.dictionaries(st.sampled_from(["W", "WV", "WK", "WQ", "b"]),
                         st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple), min_size=1)


@settings(max_examples=50, deadline=None)
@given(shapes=shapes, seed=st.integers(0, 2**31 - 1))
def test_pack_then_views_round_trip(shapes, seed):
    lay = BlockLayout(shapes)
    rng = np.random.default_rng(seed)
    blocks = {name: rng.standard_normal(shape) for name, shape in shapes.items()}
    flat = lay.pack(blocks)
    assert flat.size == sum(int(np.prod(s)) for s in shapes.values())
    for name, view in lay.views(flat).items():
        np.testing.assert_array_equal(view, blocks[name])


def test_views_write_through_and_keep_complex_dtype():
    lay = BlockLayout({"W": (2, 3), "v": (4,)})
    flat = np.zeros(lay.size, dtype=complex)
    lay.view(flat, "W")[1, 2] = 1j
    assert flat[5] == 1j and lay.view(flat, "W").dtype == complex


def test_mask_selects_the_trainable_blocks():
    lay = BlockLayout({"a": (2,), "b": (3,), "c": (1,)})
    np.testing.assert_array_equal(lay.mask(["a", "c"]), [True, True, False, False, False, True])


@pytest.mark.parametrize("call, words", [
    (lambda lay: lay.view(np.zeros(3), "a"), "shape"),
    (lambda lay: lay.slice("z"), "unknown parameter block"),
    (lambda lay: lay.pack({"a": np.zeros(2)}), "missing"),
    (lambda lay: lay.pack({"a": np.zeros(3), "b": np.zeros(3)}), "block 'a' has shape"),
])
def test_bad_input_is_refused(call, words):
    with pytest.raises(InvalidArgument, match=words):
        call(BlockLayout({"a": (2,), "b": (3,)}))


def test_an_empty_dimension_is_refused():
    with pytest.raises(InvalidArgument, match="every dimension must be >= 1"):
        BlockLayout({"a": (2, 0)})
