"""Cor. F.2's ratio bound from first principles: g_i/g_j <= 2e^{z_j}/e^{z_i} ⟺ 1 <= 2e^{z_j − z_i} + e^{z_j}."""

import math

from hypothesis import given
from hypothesis import strategies as st

import derivations.word_cooccurrence as D


def _holds(zi: float, zj: float) -> bool:
    ratio = (1 + math.exp(zj)) / (1 + math.exp(zi))
    return ratio <= 2 * math.exp(zj - zi) * (1 + 1e-12)


@given(zi=st.floats(-20, 20), zj=st.floats(0, 20))
def test_the_bound_holds_whenever_z_j_is_nonnegative(zi, zj):
    assert _holds(zi, zj)


def test_the_printed_condition_on_z_i_alone_does_not_suffice():
    assert not _holds(0.5, -5.0)


def test_the_item_encodes_every_region_and_constant():
    item = D.item("co.cf.corF_2_ratio")
    readings = {(q.reading["corF2_region"], q.reading["corF2_C"]) for q in item.inequalities}
    assert readings == {(r, c) for r in ("printed", "both", "j") for c in ("0", "1/10", "1")}
