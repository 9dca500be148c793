"""Vocabulary layouts of the ss paper: distributions, structure, derived setting quantities, bad input."""

import numpy as np
import pytest

from derivations.errors import InvalidArgument
from numerics.models.scan_snap.data import LAYOUTS, Layout, features, layout, random_P, setting_quantities


@pytest.mark.parametrize("name", sorted(LAYOUTS))
def test_layouts_are_distributions_with_disjoint_roles(name):
    lay = layout(name)
    assert np.allclose(lay.P.sum(axis=1), 1)
    contextual = set(np.flatnonzero(lay.P.sum(axis=0)).tolist())
    if not name.endswith("paper_literal"):
        assert not contextual & set(lay.psi) and not contextual & set(lay.next_token)
    q = setting_quantities(lay)
    E = np.array(q["E"])
    assert np.allclose(E, E.T) and np.allclose(np.diag(E), 0, atol=1e-15) and np.all(E >= -1e-15)
    assert np.all(np.diff(np.abs(q["spectrum"])) <= 1e-15)


def test_known_sizes():
    assert (layout("K3_shared").M, layout("K3_own").M, layout("K2_own").M) == (23, 25, 17)
    assert (layout("synsmall.code").M, layout("synsmall.shared_last").M) == (34, 33)
    assert layout("thm_hyp.ct2").M == 10**4
    # Syn-Small: common ℙ = 1/15.5, the largest distinct 1/15.5
    P = layout("synsmall.code").P
    assert np.isclose(P[0, 0], 1 / 15.5) and np.isclose(P[0, 19], 1 / 15.5) and np.isclose(P[0, 10], 0.1 / 15.5)


def test_E_of_overlapping_classes_is_the_common_mass_overlap():
    # K3_shared at Z = 0: f_nᵀf_n' = 0.12² / (‖P_n‖‖P_n'‖) (only id 0 is shared)
    lay = layout("K3_shared")
    F = features(lay)
    norm = np.linalg.norm(lay.P[0])
    assert np.isclose((F.T @ F)[0, 1], 0.12**2 / norm**2)


def test_random_P_is_reproducible_and_shares_ids_0_and_1():
    a, b = random_P(7), random_P(7)
    assert np.array_equal(a.P, b.P)
    assert np.all(a.P[:, :2] > 0) and np.all(np.sum(a.P[:, 2:30] > 0, axis=1) == 8)


def test_bad_layouts_are_refused_by_name():
    with pytest.raises(InvalidArgument, match="M=1"):
        Layout("x", np.ones((1, 1)), (0,), (0,))
    with pytest.raises(InvalidArgument, match="K=3 must be <= M=2"):
        Layout("x", np.full((3, 2), 0.5), (0, 0, 0), (0, 1, 1))
    with pytest.raises(InvalidArgument, match="ss layout"):
        layout("K9")


def test_attention_metrics_known_answers_and_bad_input():
    from numerics.models.scan_snap.metrics import attention_entropy, distinct_entropy, distinct_tokens

    lay = layout("K2_own")
    Z = np.zeros((lay.M, lay.M))
    for n, ids in enumerate(distinct_tokens(lay)):
        Z[lay.psi[n], ids] = -np.log(lay.P[n, ids])
    per_class, mean = distinct_entropy(lay, Z)
    assert np.allclose(per_class, np.log(6)) and np.isclose(mean, np.log(6))
    assert np.allclose(distinct_entropy(lay, Z, base=2)[0], np.log2(6))
    raw = distinct_entropy(lay, Z, metric="distinct_raw")[0]
    assert np.all(raw < per_class)  # without renormalisation the mass on G_DT is below 1
    assert abs(attention_entropy(np.full((2, 5), 0.2)) - np.log(5)) < 5e-8
    with pytest.raises(InvalidArgument, match="fig6_metric='mean'"):
        distinct_entropy(lay, Z, metric="mean")
    with pytest.raises(InvalidArgument, match="base=1"):
        distinct_entropy(lay, Z, base=1)
