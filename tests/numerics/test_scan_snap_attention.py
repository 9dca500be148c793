"""Eqn 10's right-hand side and ξ_n (numerics.models.scan_snap.attention) against Eqn 97 written term by term,
the row-sum identity Σ_l ż_ml = 0 of ``ss.dv.reduced_rowsum``, and Eqn 13's constants (derivations.scan_snap.eq13)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from derivations.errors import InvalidArgument
from derivations.scan_snap import eq13
from numerics.models.scan_snap import attention


def _random_state(seed, K=4, M=9):
    rng = np.random.default_rng(seed)
    F = np.abs(rng.standard_normal((M, K))) * (rng.random((M, K)) < 0.6)
    F[rng.integers(M), :] += 0.3  # a token every class holds
    F /= np.linalg.norm(F, axis=0)
    beta = rng.standard_normal((K, K)) * 0.2
    psi = tuple(int(v) for v in rng.integers(0, 2, K))
    return F, beta, psi


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_eqn10_equals_eqn97_term_by_term_and_its_rows_sum_to_zero(seed):
    F, beta, psi = _random_state(seed)
    K, M = F.shape[1], F.shape[0]
    for m in set(psi):
        rate = attention.z_rate(F, beta, psi, m, eta_Z=0.7, gamma=1.3)
        by_hand = np.zeros(M)
        for l in range(M):
            for n in range(K):
                if psi[n] != m:
                    continue
                for n2 in range(K):
                    if n2 != n:
                        by_hand[l] += F[l, n] * beta[n, n2] * ((F[:, n] @ F[:, n2]) * F[l, n] - F[l, n2])
        np.testing.assert_allclose(rate, 0.7 * 1.3 * by_hand, rtol=1e-13, atol=1e-15)
        assert abs(rate.sum()) <= 1e-13 * max(1.0, np.abs(rate).max())  # ‖f_n‖ = 1 (ss.dv.reduced_rowsum)
    xi = attention.xi(F, beta, gamma=2.0)
    for n in range(K):
        assert np.isclose(xi[n], 2.0 * sum(beta[n, k] * (F[:, n] @ F[:, k]) for k in range(K) if k != n), rtol=1e-13)


def test_xi_keeps_overlaps_far_below_one():
    u = 1e-5
    F = np.array([[u, u], [np.sqrt(1 - u * u), 0.0], [0.0, np.sqrt(1 - u * u)]])
    assert np.isclose(attention.xi(F, F.T @ F)[0], u**4, rtol=1e-12)  # 1 + u⁴ − 1 would give 0


def test_bad_shapes_are_refused():
    with pytest.raises(InvalidArgument, match="beta"):
        attention.xi(np.eye(3), np.eye(2))
    with pytest.raises(InvalidArgument, match="psi"):
        attention.z_rate(np.eye(3), np.eye(3), (0, 0), 0)


@pytest.mark.parametrize("structure", eq13.STRUCTURES, ids=lambda s: s.tag)
def test_eq13_constants_follow_the_law(structure):
    """c_z(m) = (|C| − 1)|ψ⁻¹(m) ∩ C| and c_ξ = |C| − 1 from the explicit expansion of Eqn 97 (constants raises
    on a mismatch); the printed K agrees only for ż_l with two classes sharing their last token."""
    cz, cx = eq13.constants(structure)
    agree = [m for m, c in cz.items() if c == structure.K] + [n for n, c in cx.items() if c == structure.K]
    two_shared = structure.K == 2 and len(set(structure.psi)) == 1
    assert bool(agree) is two_shared


def test_theorem1_coefficients_equal_eqns_86_88_written_term_by_term():
    from numerics.models.scan_snap.decoder import theorem1_coefficients
    rng = np.random.default_rng(1)
    K, M = 4, 50
    Ep = rng.standard_normal((K, K)) * 0.1
    Ep = (Ep + Ep.T) / 2
    q1, q0 = 1 + 1 / (M - 1), -M / (M - 1) ** 2
    for reading, sign in (("eq88", 1), ("derived", -1)):
        iota, beta = theorem1_coefficients(Ep, reading, M)
        for n in range(K):
            assert np.isclose(iota[n], q1 * (1 - Ep[n, n]) - q0 * sum(Ep[k, n] for k in range(K) if k != n), rtol=1e-14)
            for m in range(K):
                expected = 0.0 if m == n else q1 * Ep[n, m] + q0 * (sign + sum(Ep[k, m] for k in range(K) if k != n))
                assert np.isclose(beta[n, m], expected, rtol=1e-14, atol=1e-16)
    iota, beta = theorem1_coefficients(Ep, "leading", M)
    assert np.allclose(iota, 1 - np.diag(Ep)) and np.allclose(beta, Ep - np.diag(np.diag(Ep)))
    with pytest.raises(InvalidArgument, match="ss.opt.beta"):
        theorem1_coefficients(Ep, "printed", M)


@pytest.mark.parametrize("name", ["K3_shared", "asym_2ct", "thm_hyp.ct2"])
def test_xi_signs_from_E_equal_xi_from_the_features(name):
    """checks.scan_snap.xi_positive reads the sign of ξ_n from E = FᵀF − I; attention.xi builds it from F."""
    from checks.scan_snap.xi_positive import signs
    from numerics.models.scan_snap import data
    from numerics.models.scan_snap.decoder import eprime, theorem1_coefficients

    lay = data.layout(name)
    rng = np.random.default_rng(4)
    Z = np.zeros((lay.M, lay.M))
    for m in set(lay.psi):
        Z[m, : min(lay.M, 40)] = rng.standard_normal(min(lay.M, 40))
    F = data.features(lay, Z)
    E = F.T @ F - np.eye(lay.K)
    for reading, S in signs(E, lay.M, "lemma14").items():
        beta = theorem1_coefficients(eprime(E, "lemma14"), reading, lay.M)[1]
        np.testing.assert_allclose(attention.xi(F, beta), S, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("update", ["gradient", "modified"])
def test_the_live_row_decoder_is_the_full_decoder_on_the_support(update):
    from numerics.models.scan_snap import data
    from numerics.models.scan_snap.decoder import run_decoder

    P = np.zeros((3, 40))
    P[0, [0, 1, 2]], P[1, [0, 3, 4]], P[2, [0, 5, 6]] = (0.2, 0.3, 0.5), (0.2, 0.4, 0.4), (0.2, 0.1, 0.7)
    F = data.features(data.Layout("live", P, (30, 30, 30), (31, 32, 33)))
    full = run_decoder(F, 0.7, 60, update=update, schedule="iid_uniform", seed=3)
    live = run_decoder(F, 0.7, 60, update=update, schedule="iid_uniform", seed=3, live_rows=True)
    rows = live.meta["rows"]
    assert rows.tolist() == list(range(7))
    np.testing.assert_allclose(full.Y[60][rows], live.Y[60], rtol=1e-13, atol=1e-15)  # BLAS order differs
    assert not np.any(full.Y[60][7:])
    np.testing.assert_allclose(full.W_history, live.W_history, rtol=0, atol=1e-15)
