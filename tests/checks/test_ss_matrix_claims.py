"""The E, E' claims of ss (spec §6.2: Lemmas 13, 15, 16, 17, Eqns 90, 93) against independent computations.

Nothing here asserts a verdict. The tests recompute, with their own code, what the verdicts report: that a
link reported as holding holds at every matrix (re-drawn from ``random_E``, and on fresh draws), that the
regime counts match an independent classification, that a reported counterexample violates the printed
inequality at 50 digits inside the regime, that pins reach the checks, and that handmade matrices outside a
hypothesis are classified outside.
"""

import mpmath
import numpy as np
import pytest

from checks.registry import load_all
from checks.scan_snap import matrix_claims as MC
from numerics.models.scan_snap.matrices import random_E

SEED = 0
IDS = ("ss.lemma13.entry_bound", "ss.lemma15.eig_bound", "ss.lemma16.sign", "ss.lemma17.eprime_close",
       "ss.thm1.eprime_entry_bound", "ss.thm1a.chain93")


@pytest.fixture(scope="module")
def registry():
    return load_all()


@pytest.fixture(scope="module")
def verdicts(registry):
    return {cid: registry[cid].run({}, seed=SEED) for cid in IDS}


def _record(verdict, key, **reading):
    """The record of link ``key`` at the canonical reading (or at ``reading``)."""
    for r in verdict.evidence["links"]:
        if r["link"] == key and (r["reading"] == {**r["reading"], **reading} if reading else r["canonical"]):
            return r
    raise AssertionError(f"no record of link {key} at {reading or 'the canonical reading'}")


def _spectrum(E):
    lam = np.linalg.eigvalsh(E)
    return lam[np.argsort(-np.abs(lam))]


def _eprime(E):
    """E' = I − (I + E)^{-1} = E(I + E)^{-1} (this form: an error of a few ulps of |λ₁|, not of 1)."""
    return E @ np.linalg.inv(np.eye(len(E)) + E)


def _assumption2(E, M):
    K = len(E)
    lam = _spectrum(E)
    return bool(abs(lam[0]) < 1 / K and np.min(np.abs(lam)) >= 6 / np.sqrt(M) and M >= 10 * K**2
                and np.all(np.diag(E) == 0) and np.all(E >= 0))


@pytest.mark.parametrize("seed", [SEED, 11])
def test_holding_statements_hold_at_every_redrawn_matrix(verdicts, seed):
    """Lemmas 13, 15, 17, Eqn 90 (families a–c) and Lemma 16 (a, b), recomputed matrix by matrix."""
    for cid, key in (("ss.lemma13.entry_bound", "statement"), ("ss.lemma15.eig_bound", "statement_first"),
                     ("ss.lemma17.eprime_close", "statement"), ("ss.thm1.eprime_entry_bound", "statement"),
                     ("ss.lemma16.sign", "negative")):
        if _record(verdicts[cid], key)["status"] != "holds":
            pytest.skip(f"{cid} {key} is not reported as holding")
    counts = {"eqn90_c": 0, "lemma16_a": 0}
    for family in "abc":
        for E in random_E(family, 666, seed):
            K = len(E)
            lam = _spectrum(E)
            lam1 = abs(lam[0])
            Ep = _eprime(E)
            tol = 1e-12 * max(lam1, 1e-300)
            assert np.max(np.abs(E)) <= lam1 + tol  # Lemma 13
            if lam1 < 1:
                kappa = np.max(np.abs(1 + lam)) / np.min(np.abs(1 + lam))
                eig = np.max(np.abs(np.linalg.eigvalsh((Ep + Ep.T) / 2)))
                assert eig <= lam1 / (1 - lam1) + 1e-12 * kappa * lam1  # Lemma 15 at λ = |λ₁|
                assert np.max(np.abs(Ep - E)) <= lam1**2 / (1 - lam1) + 1e-12 * kappa * lam1  # Lemma 17
            if lam1 < 1 / K:
                counts["eqn90_c"] += K * K * (family == "c")
                assert np.max(np.abs(Ep)) <= min(eig, lam1 / (1 - 1 / K)) + 1e-12 * lam1  # Eqn 90
                assert lam1 / (1 - 1 / K) <= 1 / (K - 1)
        if family == "c":
            continue
        for E in random_E(family, 1000, seed):
            K = len(E)
            M_A2 = np.ceil(36 / np.min(_spectrum(E) ** 2))
            inside = [M for M in (M_A2, 10_000) if _assumption2(E, M)]
            counts[f"lemma16_{family}"] = counts.get(f"lemma16_{family}", 0) + K * len(inside)
            if inside:
                assert np.all(np.diag(_eprime(E)) < 0)  # Lemma 16 (every row of a, b has E_ki > 0)
    if seed == SEED:  # the same matrices as the verdicts: the regime counts agree
        assert _record(verdicts["ss.thm1.eprime_entry_bound"], "statement")["inside"]["by_family"]["c"]["n"] == \
            counts["eqn90_c"]
        for family in "ab":
            assert _record(verdicts["ss.lemma16.sign"], "nonpositive")["inside"]["by_family"][family]["n"] == \
                counts[f"lemma16_{family}"]


def _line3_line4_at_50_digits(cx):
    """Eqn 93's lines 3 and 4 at the counterexample, computed here from the printed expressions."""
    E, p = cx["matrix"]["E"], cx["point"]
    K, n = len(E), p["n"]
    with mpmath.workdps(50):
        A = mpmath.matrix(E)
        vals, vecs = mpmath.eigsy(A)
        d1, d3, s, M = (mpmath.mpf(p[k]) for k in ("delta1", "delta3", "sigma", "M"))
        # u_nk = U_kn = the n-th component of the k-th eigenvector (canonical u_index), as in Eqn 79
        w = mpmath.fsum(vals[k] ** 2 / (1 + vals[k]) * vecs[n, k] ** 2 for k in range(K))
        rowsum = mpmath.fsum(A[n, m] for m in range(K) if m != n)
        lam1 = max(abs(v) for v in vals)
        m2 = min(v**2 for v in vals)
        line3 = (1 + s) * ((1 + d1) * w + d3 * rowsum)
        line4 = (1 + s) * ((1 + d1) / (1 - lam1) * m2 - 3 / M * K * lam1)
        inside = (lam1 < mpmath.mpf(1) / K and mpmath.sqrt(m2) >= 6 / mpmath.sqrt(M) and M >= 10 * K**2
                  and abs(d1) <= mpmath.mpf("0.1") and abs(d3) < 3 / M and -1 < s <= 1)
        return line3, line4, inside


def _line4_violations():
    """Eqn 93 lines 3 and 4 at every (matrix, M, draw, n) of the check, computed here: inside points, violations."""
    mats = [MC.Matrix(f, i, E) for f in "ab" for i, E in enumerate(random_E(f, 1000, SEED))]
    mats += [MC.Matrix(f"thm_hyp.{v}", 0, E, M=1e4) for v, E in _thm_hyp_E().items()]
    inside = violated = 0
    for m in mats:
        E, K = m.E, m.K
        lam, Q = np.linalg.eigh(E)
        lam1, m2 = np.max(np.abs(lam)), np.min(lam**2)
        w = (Q**2) @ (lam**2 / (1 + lam))  # Σ_k λ_k²/(1+λ_k) u_nk², u_nk = Q_nk
        rowsum = E.sum(axis=1)
        # M_A2 from the spectrum _assumption2 reads (eigh and eigvalsh may differ in the last bit)
        for M in ([m.M] if m.M else [np.ceil(36 / np.min(_spectrum(E) ** 2)), 10_000]):
            if not _assumption2(E, M):
                continue
            for d1, unit, s in MC.draws(m, 5, SEED):
                d3 = unit * 3 / M
                line3 = (1 + s) * ((1 + d1) * w + d3 * rowsum)
                line4 = (1 + s) * ((1 + d1) / (1 - lam1) * m2 - 3 / M * K * lam1)
                inside += K
                violated += int(np.sum(line3 < line4 - 1e-9 * np.abs(line4)))
    return inside, violated


def _thm_hyp_E():
    from numerics.models.scan_snap.data import layout, setting_quantities

    out = {}
    for v in ("ct1", "ct2"):
        E = np.array(setting_quantities(layout(f"thm_hyp.{v}"))["E"])
        np.fill_diagonal(E, 0.0)
        out[v] = E
    return out


def test_chain93_line4_as_reported_and_its_counterexample_at_50_digits(verdicts):
    rec = _record(verdicts["ss.thm1a.chain93"], "line4")
    inside, violated = _line4_violations()
    assert rec["inside"]["n"] == inside
    assert rec["inside"]["satisfied_fraction"] == pytest.approx(1 - violated / inside, abs=1e-3)
    if not violated:
        assert "counterexample" not in rec
        return
    cx = rec["counterexample"]  # violations exist: one must be reported and confirmed
    m = cx["matrix"]
    E = np.array(m["E"])
    if m["family"] in ("a", "b"):  # the evidence names the matrix the generator really drew
        assert np.array_equal(random_E(m["family"], 1000, SEED)[m["index"]], E)
    assert np.all(np.diag(E) == 0) and np.all(E >= 0)
    line3, line4, inside_50 = _line3_line4_at_50_digits(cx)
    assert inside_50
    with mpmath.workdps(50):
        assert line3 < line4 - mpmath.mpf(10) ** -40
        assert abs(line3 - line4 - mpmath.mpf(cx["slack_50"])) < mpmath.mpf(10) ** -15


def test_signed_reading_of_lemma17_counterexample_at_50_digits(registry):
    verdict = registry["ss.lemma17.eprime_close"].run({"hypothesis": "signed", "count": 60})
    assert verdict.evidence["canonical"]["hypothesis"] == "signed"
    rec = _record(verdict, "statement")
    probes = MC.probes(SEED, zero_diagonal=False)
    inside_probes = sum(m.K**2 for m in probes if _spectrum(m.E)[0] < 1)
    assert rec["inside"]["by_family"].get("probe", {"n": 0})["n"] == inside_probes
    # λ₁ <= −1 makes the bound |λ₁|²/(1 − |λ₁|) negative: such a probe violates the statement at every entry
    if any(_spectrum(m.E)[0] < -1 for m in probes):
        cx = rec["counterexample"]
    elif "counterexample" not in rec:
        return
    else:
        cx = rec["counterexample"]
    i, j = cx["point"]["i"], cx["point"]["j"]
    with mpmath.workdps(50):
        A = mpmath.matrix(cx["matrix"]["E"])
        vals = mpmath.eigsy(A)[0]
        lam1 = max(vals, key=abs)
        Ep = mpmath.eye(A.rows) - mpmath.inverse(mpmath.eye(A.rows) + A)
        assert lam1 < 1  # inside the printed hypothesis read literally
        assert abs(Ep[i, j] - A[i, j]) > abs(lam1) ** 2 / (1 - abs(lam1))


def test_pins_reach_the_checks(registry):
    v = registry["ss.lemma13.entry_bound"].run({"count": 30})
    assert {f: v.evidence["matrices"][f] for f in "abc"} == {"a": 10, "b": 10, "c": 10}
    assert "count" in v.pinned

    v = registry["ss.lemma16.sign"].run({"eprime": "appB1", "count": 200, "M": 10_000})
    assert v.evidence["canonical"] == {"eprime": "appB1"} and v.evidence["M"] == [10_000]
    assert {r["reading"]["eprime"] for r in v.evidence["links"]} == {"appB1"}
    rec = _record(v, "nonpositive")
    inside, satisfied = 0, 0
    for family in "ab":
        for E in random_E(family, 100, SEED):
            if _assumption2(E, 10_000):
                diag = -np.diag(_eprime(E))  # appB1: E' = (I + E)^{-1} − I
                inside += len(E)
                satisfied += int(np.sum(diag <= 0))
    assert rec["inside"]["n"] == inside
    assert rec["inside"]["satisfied_fraction"] == pytest.approx(satisfied / inside if inside else 0)

    v = registry["ss.thm1a.chain93"].run({"draws": 2, "count": 20, "M": "M_A2"})
    thm = _record(v, "conclusion")["inside"]["by_family"]
    assert thm["thm_hyp.ct1"]["n"] == 2 * 2 and thm["thm_hyp.ct2"]["n"] == 2 * 2  # draws × n, K = 2


def test_handmade_matrices_outside_a_hypothesis_are_outside():
    big = MC.Matrix("hand", 0, np.array([[0.0, 0.9], [0.9, 0.0]]))  # |λ₁| = 0.9 >= 1/K
    zero = MC.Matrix("hand", 1, np.zeros((2, 2)))  # λ = 0: |λ_i| >= 6/√M fails at every M
    for mats in ([big], [zero]):
        for item, readings, settings in (
                (MC.LEMMA16, {"eprime": ["lemma14"]}, {"M": ["M_A2", 10_000]}),
                (MC.CHAIN93, {"eprime": ["lemma14"], "u_index": ["column"]}, {"M": ["M_A2"], "draws": 2}),
                (MC.EQN90, {"eprime": ["lemma14"]}, {})):
            if item is MC.EQN90 and mats == [zero]:
                continue  # |λ₁| = 0 < 1/K: inside Eqn 90's hypothesis
            result = MC.evaluate(item, mats, readings, {**settings, "seed": 0})
            assert result["status"] == "outside-regime"
    small = MC.Matrix("hand", 2, np.array([[0.0, 0.3], [0.3, 0.0]]))
    result = MC.evaluate(MC.LEMMA16, [small], {"eprime": ["lemma14"]}, {"M": ["M_A2"], "seed": 0})
    assert result["status"] != "outside-regime"

    negative = MC.Matrix("hand", 3, np.diag([-1.5, 0.2]))  # λ₁ = −1.5: outside |λ₁| < 1, inside λ₁ < 1
    readings = {"eprime": ["lemma14"], "u_index": ["column"]}
    absolute = MC.evaluate(MC.LEMMA17, [negative], {**readings, "hypothesis": ["absolute"]}, {"seed": 0})
    signed = MC.evaluate(MC.LEMMA17, [negative], {**readings, "hypothesis": ["signed"]}, {"seed": 0})
    assert absolute["status"] == "outside-regime"
    assert signed["records"][0]["inside"]["n"] == 4


def test_an_exact_equality_is_not_a_violation():
    """|E₁₂| = |λ₁| exactly for E = a(e₁e₂ᵀ + e₂e₁ᵀ): float64 rounding must not make it a counterexample."""
    mats = [MC.Matrix("hand", k, np.array([[0.0, a], [a, 0.0]])) for k, a in enumerate((0.1, 1 / 3, 0.49))]
    result = MC.evaluate(MC.LEMMA13, mats, {}, {"seed": 0})
    rec = next(r for r in result["records"] if r["link"] == "statement")
    assert rec["status"] == "holds" and abs(rec["inside"]["min_relative_slack"]) < 1e-14
