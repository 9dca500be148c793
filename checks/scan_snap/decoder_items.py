"""The decoder-level items of spec §4.3–§4.6 on simulated decoder-only runs (F frozen, Y trained).

Runs (:mod:`numerics.models.scan_snap.decoder`): ``ss.cfg.lemma3`` (M = 200, K = 4, random overlapping ℙ,
a fixed random Z row 𝒩(0, 0.5²) of the shared last token, T = ∞ features), ``ss.cfg.thm1`` (the features of
``ss.cfg.K3_shared`` at Z = 0) and ``ss.cfg.rem1`` (equal overlaps ρ). The target of class n is the id n
(the algebra of the decoder depends on the target ids only through their distinctness). Each printed display
is compared with the same quantity taken from the run, every entry of every step (R8, with the rounding of a
300-step recursion: relative 1e-11), by :class:`checks.array_identity.ArrayIdentityCheck`; the readings
(``decoder_update``, ``eprime``, ``h_variant``, ``gamma_arg``, the completion F° of F) are all run and the
canonical one of each item decides.
"""

from __future__ import annotations

import math
from functools import cache
from typing import Any

import numpy as np

from checks.array_identity import ArrayDisplay, ArrayIdentityCheck
from checks.claim import Claim
from checks.configurations import reading_params
from checks.registry import register
from derivations.scan_snap.symbols import DEFAULT_READINGS
from numerics.models.scan_snap import scalar as N
from numerics.models.scan_snap.data import features, layout, random_P
from numerics.models.scan_snap.decoder import DecoderRun, eprime, run_decoder

PAPER = "ss"
RTOL = 1e-11


@cache
def lemma3_features(seed: int) -> np.ndarray:
    """ss.cfg.lemma3: features of random_P(seed) at a fixed random row z of the shared last token (𝒩(0, 0.5²))."""
    lay = random_P(seed)
    rng = np.random.default_rng(np.random.SeedSequence([seed, 23]))
    Z = np.zeros((lay.M, lay.M))
    Z[lay.psi[0]] = rng.normal(0.0, 0.5, lay.M)
    return features(lay, Z)


@cache
def thm1_features() -> np.ndarray:
    return features(layout("K3_shared"))


def equal_overlap_features(K: int, M: int, rho: float) -> np.ndarray:
    """f_n ∝ e_n + c𝟏_K (zero beyond the first K ids) with f_nᵀf_n' = ρ (ss.cfg.rem1)."""
    c = (-2 * (1 - rho) + math.sqrt(4 * (1 - rho) ** 2 + 4 * K * (1 - rho) * rho)) / (2 * K * (1 - rho))
    F = np.zeros((M, K))
    F[:K, :K] = np.eye(K) + c
    return F / np.linalg.norm(F, axis=0)


def completion(F: np.ndarray, kind: str, seed: int = 0) -> np.ndarray:
    """F° (M × (M−K)) completing F to a full-rank F' = [F, F°]: orthonormal complement or random Gaussian."""
    M, K = F.shape
    if kind == "orthogonal":
        q, _ = np.linalg.qr(np.concatenate([F, np.eye(M)], axis=1))
        return q[:, K:M]
    return np.random.default_rng(np.random.SeedSequence([seed, 29])).standard_normal((M, M - K))


def _runs(seed, F, etas, updates, schedules, steps, eprimes=("lemma14",), observe=None, tag="") -> list[DecoderRun]:
    out = []
    for eta in etas:
        for update in updates:
            for schedule in schedules:
                for reading in eprimes if update == "modified" else ("lemma14",):
                    run = run_decoder(F, eta, steps, update=update, schedule=schedule, eprime_reading=reading,
                                      seed=seed, observe=observe,
                                      label=f"{tag} {update} ({reading}), {schedule}, η_Y={eta}")
                    run.meta.update(update=update, schedule=schedule, eprime=reading, eta=eta)
                    out.append(run)
    return out


def _increments(run: DecoderRun) -> np.ndarray:
    return np.diff(run.W_history, axis=0)


def _softmax_rows(W: np.ndarray) -> np.ndarray:
    e = np.exp(W - W.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _eq8_printed(run: DecoderRun) -> np.ndarray:
    """Eqn 8 at every step s: ẇ_j = η_Y 𝕀(j = n)(e_n − α_n), α_n = softmax(w_n(s−1)) (Eqn 25)."""
    steps = len(run.classes)
    out = np.zeros((steps, run.K, run.W_history.shape[2]))
    for s, n in enumerate(run.classes):
        d = -_softmax_rows(run.W_history[s, n])
        d[n] += 1.0
        out[s, n] = run.eta * d
    return out


#: steps of the runs that record W' = F'ᵀY (M × M per step): the rows of W' are compared on these
L430_STEPS = 20


def _families_lemma3(ctx) -> dict[str, list[Any]]:
    steps = 300 if ctx.quick else 1000
    F = lemma3_features(ctx.seed)
    observe = {"orthogonal": completion(F, "orthogonal"), "random": completion(F, "random", ctx.seed)}
    schedules = ("round_robin",) if ctx.quick else ("round_robin", "iid_uniform")
    fam: dict[str, list[Any]] = {}
    for run in _runs(ctx.seed, F, (0.1, 1.0), ("gradient", "modified"), schedules, steps, ("lemma14", "appB1"),
                     tag="lemma3"):
        fam.setdefault(f"{run.meta['update']}.{run.meta['eprime']}", []).append(run)
    for run in _runs(ctx.seed, F, (0.1, 1.0), ("gradient", "modified"), schedules, L430_STEPS, ("lemma14", "appB1"),
                     observe, "lemma3 (W' recorded)"):
        fam.setdefault(f"L430.{run.meta['update']}.{run.meta['eprime']}", []).append(run)
    return fam


def _lemma3_displays() -> list[ArrayDisplay]:
    out = []
    for key in ("gradient.lemma14", "modified.lemma14", "modified.appB1"):
        update, reading = key.split(".")
        tag = {"decoder_update": update, "eprime": reading}
        out.append(ArrayDisplay(f"eq8.{key}", "Eqn 8", _eq8_printed, _increments, key, tag,
                                "per-step increments of every row of W against η_Y𝕀(j = n)(e_n − α_n)", RTOL))
        for completion_kind in ("orthogonal", "random"):
            out.append(ArrayDisplay(
                f"L430.{completion_kind}.{key}", "L430", lambda r: np.zeros_like(np.diff(
                    r.observed[completion_kind], axis=0)),
                lambda r, c=completion_kind: np.diff(r.observed[c], axis=0), f"L430.{key}",
                {**tag, "completion": completion_kind},
                f"the last M − K rows of W' = F'ᵀY (F° {completion_kind}) are not updated (first {L430_STEPS} steps)",
                RTOL, floor=1.0))
    return out


LEMMA3_NOTES = ("Eqn 8 is the W dynamics Lemma 3 claims for the modified update (L136–L138): that reading decides; "
                "under the gradient (Eqn 7) the rows j ≠ n move by η_Y(F ᵀf_n)_j(e_n − α_n) (reported)",
                "L430's rows of W' are compared for an orthonormal and a random completion F°: the paper does not "
                "say which; the orthonormal one decides")


def _families_rem1(ctx) -> dict[str, list[Any]]:
    grid = [(4, 4), (4, 40)] if ctx.quick else [(3, 3), (4, 4), (4, 10), (4, 40), (10, 100)]
    rhos = (0.2,) if ctx.quick else (0.1, 0.2, 0.5)
    schedules = ("round_robin",) if ctx.quick else ("round_robin", "iid_uniform")
    fam: dict[str, list[Any]] = {"runs": []}
    for K, M in grid:
        for rho in rhos:
            F = equal_overlap_features(K, M, rho)
            for run in _runs(ctx.seed, F, (0.1, 1.0), ("gradient",), schedules, 100 * K, tag=f"K={K}, M={M}, ρ={rho}"):
                run.meta["rho"] = rho
                fam["runs"].append(run)
    return fam


def _rem1_displays() -> list[ArrayDisplay]:
    def first(reading):
        def value(run):
            E = run.E
            return np.eye(run.K) + (np.eye(run.K) + E) @ eprime(E, reading)  # column n: e_n + (I+E)E'e_n
        return value

    def second(run):
        steps = len(run.classes)
        out = np.zeros((steps, run.K, run.W_history.shape[2]))
        G = run.F.T @ run.F
        for s, n in enumerate(run.classes):
            d = -_softmax_rows(run.W_history[s, n])
            d[n] += 1.0
            out[s] = run.eta * np.outer(G[:, n], d)
        return out

    def eq41_42(run):
        steps = len(run.classes)
        rho = run.meta["rho"]
        out = np.zeros((steps, run.K, run.W_history.shape[2]))
        for s, n in enumerate(run.classes):
            d = -_softmax_rows(run.W_history[s, n])
            d[n] += 1.0
            out[s] = run.eta * rho * d
            out[s, n] = run.eta * d
        return out

    return [
        *[ArrayDisplay(f"eq40_first.{r}", "Eqn 40", first(r), lambda run: run.F.T @ run.F, "runs", {"eprime": r},
                       "e_n + (I + E)E'e_n against Fᵀf_n (columns n)", RTOL) for r in ("lemma14", "appB1")],
        ArrayDisplay("eq40_second", "Eqn 40", second, _increments, "runs", {},
                     "η_Y Fᵀf_n(e_n − α_n)ᵀ against the increments of W under Eqn 7", RTOL),
        ArrayDisplay("eq41_42", "Eqns 41–42", eq41_42, _increments, "runs", {},
                     "ẇ_n = η_Y(e_n − α_n), ẇ_j = η_Yρ(e_n − α_n) against the increments", RTOL),
    ]


# Lemma 12, Theorem 5, Corollary 1 and Theorem 1's g (modified dynamics, E' = I − (I+E)^{-1})
def _families_modified(ctx) -> dict[str, list[Any]]:
    return _modified_runs(ctx.seed, ctx.quick)


@cache
def _modified_runs(seed: int, quick: bool) -> dict[str, list[Any]]:
    """The modified-dynamics runs shared by Lemma 12, Theorem 5, Corollary 1 and Eqn 9 (computed once per process)."""
    visits = 300 if quick else 1000
    fam: dict[str, list[Any]] = {}
    schedules = ("round_robin", "iid_uniform")
    for name, F, etas in (("lemma3", lemma3_features(seed), (0.1, 1.0)), ("thm1", thm1_features(), (0.5,)
                                                                          if quick else (0.1, 0.5))):
        K = F.shape[1]
        runs = _runs(seed, F, etas, ("modified",), schedules, visits * K, ("lemma14", "appB1"), None, name)
        for run in runs:
            fam.setdefault(run.meta["eprime"], []).append(run)
    return fam


def _h(variant: str, visits, M: int, eta: float) -> np.ndarray:
    """h*(N_n) (``discrete``, Eqn 33) or h(N_n) (``continuous``, Lemma 6) at integer visit counts."""
    visits = np.asarray(visits)
    if variant == "discrete":
        table = N.h_star(int(np.max(visits)) + 1, float(M), eta)
        return table[visits]
    return N.h_many(eta * visits.ravel().astype(float), float(M)).reshape(visits.shape)


def _zeta(M: int, targets) -> np.ndarray:
    Z = np.full((len(targets), M), -1.0 / (M - 1))
    Z[np.arange(len(targets)), targets] = 1.0
    return Z


def _final(run: DecoderRun) -> int:
    return len(run.classes)


def _w_printed(variant: str, which: str):
    """Rows w_n(N) as printed in Lemma 12's chain: (M−1)h(N_n)ζ_n (first) or (1+θ_n)w̄_n (last)."""
    def value(run: DecoderRun) -> np.ndarray:
        N_ = _final(run)
        M = run.W_history.shape[2]
        Nn = run.visits(N_)
        Nbar = math.ceil(N_ / run.K)
        h_n, h_bar = _h(variant, Nn, M, run.eta), _h(variant, [Nbar], M, run.eta)[0]
        zeta = _zeta(M, np.arange(run.K))
        if which == "first":
            return (M - 1) * h_n[:, None] * zeta
        theta = h_n / h_bar - 1
        return (1 + theta)[:, None] * (M - 1) * h_bar * zeta
    return value


def _lemma12_displays() -> list[ArrayDisplay]:
    out = []
    for variant in ("discrete", "continuous"):
        for which in ("first", "last"):
            out.append(ArrayDisplay(f"eq66_{which}.{variant}", "Lemma 12", _w_printed(variant, which),
                                    lambda run: run.W_history[_final(run)], "lemma14", {"h_variant": variant},
                                    f"w_n(N) against the {which} member of the chain", RTOL))
    def complement_rows(run):
        return completion(run.F, "orthogonal").T @ run.Y[_final(run)]

    out.append(ArrayDisplay("W_prime_rows", "Lemma 12", lambda r: np.zeros_like(complement_rows(r)), complement_rows,
                            "lemma14", {}, "rows K+1..M of W' = F'ᵀY (orthonormal F°) are 0", RTOL, floor=1.0))
    return out


def _thm5_displays() -> list[ArrayDisplay]:
    def printed(variant):
        def value(run: DecoderRun):
            Wbar_theta = _w_printed(variant, "last")(run)
            Ep = eprime(run.E, run.eprime_reading)
            return run.F @ (np.eye(run.K) - Ep) @ Wbar_theta
        return value

    def pinv_printed(run: DecoderRun):
        return (np.eye(run.K) - eprime(run.E, run.eprime_reading)) @ run.F.T

    out = []
    for reading in ("lemma14", "appB1"):
        for variant in ("discrete", "continuous"):
            out.append(ArrayDisplay(f"eq70.{variant}.{reading}", "Eqn 70", printed(variant),
                                    lambda run: run.Y[_final(run)], reading, {"h_variant": variant, "eprime": reading},
                                    "F(I − E')(I + Θ)W̄(N) against Y(N) of Eqn 26", RTOL))
        out.append(ArrayDisplay(f"pseudo_inverse.{reading}", "L767", pinv_printed, lambda run: np.linalg.pinv(run.F),
                                reading, {"eprime": reading}, "F† = (I − E')Fᵀ against the Moore–Penrose inverse",
                                RTOL))
    return out


def _cor1_displays() -> list[ArrayDisplay]:
    def printed(variant):
        def value(run: DecoderRun):
            N_ = _final(run)
            M = run.W_history.shape[2]
            h_n = _h(variant, run.visits(N_), M, run.eta)
            return ((M - 1) / ((M - 1) + np.exp(M * h_n)))[:, None] * _zeta(M, np.arange(run.K))
        return value

    def derived(run: DecoderRun):
        W = run.W_history[_final(run)]
        return np.eye(run.K, W.shape[1]) - _softmax_rows(W)

    return [ArrayDisplay(f"eq71_first.{v}", "Eqn 71", printed(v), derived, "lemma14", {"h_variant": v},
                         "(M−1)ζ_n/((M−1) + e^{Mh(N_n)}) against e_n − softmax(w_n(N))", RTOL)
            for v in ("discrete", "continuous")]


def _g_form_displays() -> list[ArrayDisplay]:
    from derivations.scan_snap.symbols import M as _M  # noqa: F401  (documentation of the symbol used)

    def parts(run: DecoderRun, variant: str, gamma_arg: str):
        N_ = _final(run)
        M = run.W_history.shape[2]
        K = run.K
        Nbar = math.ceil(N_ / K) if gamma_arg == "ceil" else N_ / K
        h_bar = float(_h(variant, [int(Nbar)], M, run.eta)[0]) if float(Nbar).is_integer() else \
            N.h_of_tau(run.eta * Nbar, float(M))
        h_n = _h(variant, run.visits(N_), M, run.eta)
        theta = h_n / h_bar - 1
        gamma = (M - 1) ** 2 * h_bar / ((M - 1) + math.exp(M * h_bar))
        residual = np.eye(K, M) - _softmax_rows(run.W_history[N_])
        # σ from Eqn 71: (M−1)/((M−1)+e^{Mh(N_n)}) = (M−1)/((M−1)+e^{Mh(N̄)})(1+σ_n)
        sigma = ((M - 1) + math.exp(M * h_bar)) / ((M - 1) + np.exp(M * h_n)) - 1
        return M, K, theta, gamma, sigma, residual

    def derived(run: DecoderRun):
        Y = run.Y[_final(run)]
        residual = np.eye(run.K, Y.shape[0]) - _softmax_rows(run.W_history[_final(run)])
        return np.stack([Y @ residual[n] for n in range(run.K)])

    def eq82(variant, gamma_arg):
        def value(run):
            M, K, theta, gamma, sigma, residual = parts(run, variant, gamma_arg)
            Ep = eprime(run.E, "lemma14")
            Wbar = (M - 1) * float(_h(variant, [math.ceil(_final(run) / K)], M, run.eta)[0]) * _zeta(M, np.arange(K))
            return np.stack([run.F @ (np.eye(K) - Ep) @ np.diag(1 + theta) @ Wbar @ residual[n] for n in range(K)])
        return value

    def coefficients(run, variant, gamma_arg):
        """(M, K, θ, γ, σ, E', q₁, q₀) of a run: what Eqns 83–84 are written with."""
        M, K, theta, gamma, sigma, _ = parts(run, variant, gamma_arg)
        return M, K, theta, gamma, sigma, eprime(run.E, "lemma14"), 1 + 1 / (M - 1), -M / (M - 1) ** 2

    def eq83(variant, gamma_arg):
        def value(run):
            M, K, theta, gamma, sigma, Ep, q1, q0 = coefficients(run, variant, gamma_arg)
            out = []
            for n in range(K):
                q = np.full(K, q0)
                q[n] = q1
                out.append((1 + sigma[n]) * gamma * run.F @ (np.eye(K) - Ep) @ np.diag(1 + theta) @ q)
            return np.stack(out)
        return value

    def eq84(variant, gamma_arg):
        def value(run):
            M, K, theta, gamma, sigma, Ep, q1, q0 = coefficients(run, variant, gamma_arg)
            out = []
            for n in range(K):
                s = sigma[n]
                iota = (1 + s) * (q1 * (1 + theta[n]) * (1 - Ep[n, n])
                                  - q0 * sum((1 + theta[k]) * Ep[k, n] for k in range(K) if k != n))
                g = iota * run.F[:, n]
                for m in range(K):
                    if m != n:
                        beta = (1 + s) * (q1 * (1 + theta[n]) * Ep[n, m] + q0 * ((1 + theta[m]) + sum(
                            (1 + theta[k]) * Ep[k, m] for k in range(K) if k != n)))
                        g = g - beta * run.F[:, m]
                out.append(gamma * g)
            return np.stack(out)
        return value

    out = []
    for variant in ("discrete", "continuous"):
        for gamma_arg in ("ceil", "t_over_K"):
            tag = {"h_variant": variant, "gamma_arg": gamma_arg}
            for name, printed in (("eq82", eq82), ("eq83", eq83), ("eq84", eq84)):
                out.append(ArrayDisplay(f"{name}.{variant}.{gamma_arg}", f"Eqn {name[2:]}", printed(variant, gamma_arg),
                                        derived, "lemma14", tag, "g = Y(e_n − α_n) for every class n", RTOL))
    return out


def _register(item_id, label, displays, families, doc, readings=None, notes=()):
    defaults = dict(DEFAULT_READINGS)
    defaults.update(readings or {})
    check = ArrayIdentityCheck(displays=displays, families=families, default_readings=defaults, notes=tuple(notes))
    register(Claim(item_id, PAPER, label, "formula", check, statement=doc, doc=doc,
                   params=reading_params((d.reading for d in displays()), defaults)))


_register("ss.lemma3.w_dynamics", "Lemma 3, Eqns 8, 24–25 (L136; L422–L432)", _lemma3_displays, _families_lemma3,
          "Given x_{T+1} = n, ẇ_j = η_Y𝕀(j = n)(e_n − α_n) (Eqn 8), achieved by Ẏ = η_Y(f_n − FE'e_n)(e_n − α_n)ᵀ; "
          "Ẇ' = e_n(x_{T+1} − α)ᵀ and the last M − K rows of W' are not updated (L430).",
          {"decoder_update": "modified", "completion": "orthogonal"}, LEMMA3_NOTES)
_register("ss.rem1.w_dynamics", "Remark 1, Eqns 40–42 (L486–L494)", _rem1_displays, _families_rem1,
          "Ẇ = η_Y(e_n + (I + E)E'e_n)(e_n − α_n)ᵀ = η_Y Fᵀf_n(e_n − α_n)ᵀ (40); with equal overlaps ρ: "
          "ẇ_n = η_Y(e_n − α_n) (41), ẇ_j = η_Yρ(e_n − α_n) (42).")
_register("ss.lemma12.w_perturbation", "Lemma 12, Eqns 66–69 (L664–L676)", _lemma12_displays, _families_modified,
          "w_n(N) = (M−1)h(N_n)ζ_n = (1 + θ_n)w̄_n(N), W'(N) = (I + Θ')W̄'(N): rows K+1..M of W' vanish.")
_register("ss.thm5.y_solution", "Theorem 5, Eqn 70 (L680–L688); L767", _thm5_displays, _families_modified,
          "Y = (F†)ᵀ(I + Θ)W̄(N) = F(I − E')(I + Θ)W̄(N), F† = (I − E')Fᵀ.")
_register("ss.cor1.residual_form", "Corollary 1, Eqn 71 (L694)", _cor1_displays, _families_modified,
          "x_{T+1} − α_n = (M−1)ζ_n/((M−1) + exp(Mh(N_n))) = (M−1)(1 + σ)ζ_n/((M−1) + exp(Mh(N̄))).")
_register("ss.thm1.g_form", "Theorem 1, Eqns 9, 81–84 (L144; L760–L775)", _g_form_displays, _families_modified,
          "g[i] = Y(x_{T+1}[i] − α[i]) = F(I − E')(I + Θ)W̄(N)(x − α) (82) = (1 + σ)γF(I − E')(I + Θ)[q₀, …, q₁, …, "
          "q₀]ᵀ (83) = γ(ι_n f_n − Σ_{n'≠n} β_nn' f_n') (84), with ι, β of Eqns 86, 88.",
          {"gamma_arg": "ceil"},
          ("under the modified dynamics (Theorem 5) at ss.cfg.lemma3 and ss.cfg.thm1; ss.cfg.thm_hyp (M = 10⁴) "
           "needs the sparse-row kernel of part 2",))
