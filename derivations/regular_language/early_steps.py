"""Exact GD steps from zero initialisation (rl.cf.first_step, rl.cf.second_step; proofs of Lemmas B.2, C.2).

θ_{t+1} = θ_t - (η ∇_u L_t, η_W(t) ∇_W L_t) from θ_0 = 0 on the enumerated loss, with η and λ
symbolic and η_W(t) from the schedule and the ``boost_steps`` reading (spec §2.6, §2.9): the
update at step t is boosted (ηλ) iff t < t0 (``t_lt_t0``) or t <= t0 (``t_le_t0``). Every iterate
is a SymPy expression in η (and λ where the schedule leaves one): exact rationals at t = 1,
exponentials of η/(4L) at t = 2. The printed values of the proofs are compared term by term;
the contribution of each length L to a coordinate is obtained from that length's samples alone.
"""

from __future__ import annotations

import functools

import sympy as sp

from derivations.core import Formula, Item, RegionInequality
from derivations.domain import Domain, Interval
from derivations.regular_language import data as D
from derivations.regular_language import model as M
from derivations.regular_language import phase1 as P
from derivations.regular_language.symbols import H, J_prime, check_reading, eta, f, lam

ETA_DOMAIN = Domain({eta: Interval(0, 1)})
ETA_LAM_DOMAIN = Domain({eta: Interval(0, 1), lam: Interval(0.1, 1e4, scale="log")})


def w_step(t: int, t0: int, schedule: str = "two_phase", boost_steps: str = "t_lt_t0") -> sp.Expr:
    """The W step size of the update at step t (the one producing W_{t+1})."""
    check_reading("schedule", schedule)
    check_reading("boost_steps", boost_steps)
    if schedule == "vanilla_eta":
        return eta
    if schedule == "vanilla_etalambda":
        return eta * lam
    boosted = t < t0 if boost_steps == "t_lt_t0" else t <= t0
    return eta * lam if boosted else eta


@functools.cache
def _cached_steps(name: str, steps: int, t0: int, schedule: str, boost_steps: str):
    dataset = _DATASETS[name]
    point: dict[sp.Symbol, sp.Expr] = {s: sp.Integer(0) for s in M.gradient_at(dataset, {})}
    history = [dict(point)]
    for t in range(steps):
        values = M.gradient_at(dataset, point)
        factor = w_step(t, t0, schedule, boost_steps)
        point = {s: sp.expand_mul(point[s] - (eta if s.name.startswith("u_") else factor) * values[s])
                 for s in point}
        history.append(dict(point))
    return history


_DATASETS: dict[str, D.Dataset] = {}


def gd_steps(dataset: D.Dataset, steps: int = 2, t0: int = 3, schedule: str = "two_phase",
             boost_steps: str = "t_lt_t0") -> list[dict[sp.Symbol, sp.Expr]]:
    """θ_0 = 0, θ_1, …, θ_steps (every coordinate that occurs in the loss), exactly."""
    _DATASETS[dataset.name] = dataset
    return _cached_steps(dataset.name, steps, t0, schedule, boost_steps)


def length_contribution(dataset: D.Dataset, coordinate: sp.Symbol, point: dict, length: int) -> sp.Expr:
    """The part of ∂L/∂coordinate at ``point`` contributed by the samples of ``length``."""
    terms = []
    for sample in dataset.samples:
        if sample.length != length:
            continue
        grads = M.sample_gradient(sample)
        if coordinate in grads:
            terms.append(sample.weight * grads[coordinate].xreplace(point))
    return sp.Add(*terms)


def _a(L) -> sp.Expr:
    return eta / (4 * L)


def u2_first_printed(max_len: int) -> sp.Expr:
    """⟨u_2, E_1^w⟩ as printed: η/4 + (η/2)f(η/4) + Σ_{L=2}^{L_max} (η/2)(f(η/4L) - f(-η/4L))/L."""
    return eta / 4 + eta / 2 * f(eta / 4) + sp.Add(*[eta / 2 * (f(_a(L)) - f(-_a(L))) / L
                                                     for L in range(2, max_len + 1)])


def u2_later_printed(max_len: int, position: int) -> sp.Expr:
    """⟨u_2, E_ℓ^w⟩ as printed (ℓ >= 2): Σ_{L=ℓ}^{L_max} (η/2)(f(η/4L) - f(-η/4L))/L."""
    return sp.Add(*[eta / 2 * (f(_a(L)) - f(-_a(L))) / L for L in range(position, max_len + 1)])


def u2_diff_printed(position: int) -> sp.Expr:
    """⟨u_2, E_2^w - E_ℓ^w⟩ as printed (ℓ >= 3): Σ_{L=2}^{ℓ-1} (η/2)(f(η/4L) - f(-η/4L))/L."""
    return sp.Add(*[eta / 2 * (f(_a(L)) - f(-_a(L))) / L for L in range(2, position)])


FIRST_STEP_LATEX = {
    "u1_first": r"\langle u_1,E_1^w\rangle=\eta\langle-\nabla_u\mathcal L_0,E_1^w\rangle=\frac{\eta}{4}",
    "u1_later": r"\langle u_1,E_\ell^w\rangle=0,\ \ell\ge2",
    "W1": r"\langle E_\ell^{w'},W_1E_L^w\rangle=0",
    "phi1": r"\varphi_\ell^{(n,1)}=\frac1L",
    "J1": r"-J'_{(n,1)}=\frac1{1+\exp(\frac\eta{4L})},\ n\in I_L^+;\qquad-J'_{(n,1)}=\frac1{1+\exp(-\frac\eta{4L})},"
          r"\ n\in I_L^-",
}


def first_step_formulas(dataset: D.Dataset, boost_steps: str, t0: int = 3) -> list[Formula]:
    """Every printed value at t = 1 against one exact GD step from 0 (``boost_steps`` reading, t0)."""
    theta1 = gd_steps(dataset, 1, t0, "two_phase", boost_steps)[1]
    tag = f"{dataset.name.replace(' ', '')}.{boost_steps}"
    reading = {**dataset.reading, "boost_steps": boost_steps}
    out = []
    for pos in range(1, dataset.max_len + 1):
        for c in D.CHARS:
            stated = eta / 4 if pos == 1 else sp.Integer(0)
            key = "u1_first" if pos == 1 else "u1_later"
            out.append(Formula(f"rl.cf.first_step.u1.l{pos}{c}.{tag}", "proof of Lemma B.2/C.2, t = 1", stated,
                               theta1[M.u_symbol(pos, c)], ETA_DOMAIN, f"⟨u_1, E_{pos}^{c}⟩, {dataset.name}",
                               reading=reading, latex=FIRST_STEP_LATEX[key]))
    W1 = sp.Add(*[v**2 for s, v in theta1.items() if s.name.startswith("W_")])
    out.append(Formula(f"rl.cf.first_step.W1.{tag}", "proof of Lemma B.2/C.2, t = 1", sp.Integer(0), W1,
                       ETA_LAM_DOMAIN, "Σ over the entries of W_1 of their squares", reading=reading,
                       latex=FIRST_STEP_LATEX["W1"]))
    spread = sp.Integer(0)
    for sample in dataset.samples:
        phi = [p.xreplace(theta1) for p in M.attention(sample)]
        spread += sp.Add(*[(p - sp.Rational(1, sample.length)) ** 2 for p in phi])
    out.append(Formula(f"rl.cf.first_step.phi1.{tag}", "proof of Lemma B.2/C.2, t = 1", sp.Integer(0), spread,
                       ETA_LAM_DOMAIN, "Σ_n Σ_ℓ (φ_ℓ^{(n,1)} - 1/L)²", reading=reading,
                       latex=FIRST_STEP_LATEX["phi1"]))
    for L in dataset.lengths():
        for y in (1, -1):
            values = [-J_prime(s.label * M.output(s)).xreplace(theta1)
                      for s in dataset.samples if s.length == L and s.label == y]
            if not values:
                continue
            stated = f(_a(L)) if y == 1 else f(-_a(L))
            mean = sp.Add(*values) / len(values)
            out.append(Formula(f"rl.cf.first_step.J1.L{L}{'+' if y == 1 else '-'}.{tag}",
                               "proof of Lemma B.2/C.2, t = 1", stated, mean, ETA_LAM_DOMAIN,
                               f"mean of -J'_(n,1) over I_{L}^{'+' if y == 1 else '-'}", reading=reading,
                               latex=FIRST_STEP_LATEX["J1"]))
            out.append(Formula(f"rl.cf.first_step.J1_spread.L{L}{'+' if y == 1 else '-'}.{tag}",
                               "proof of Lemma B.2/C.2, t = 1", sp.Integer(0),
                               sp.Add(*[(v - mean) ** 2 for v in values]), ETA_LAM_DOMAIN,
                               "every sample of the class has the same -J'_(n,1)", reading=reading))
    return out


def item_first_step(ep_lengths=(4, 6), cot_L0=(3, 4), t0: int = 3) -> Item:
    """rl.cf.first_step — proofs of Lemma B.2 and Lemma C.2, t = 1.

    Definition used: one GD step from θ_0 = 0 on the enumerated loss (EP; CoT with L_Parity,
    L_max = 2L0 - 1), symbolic in η and λ, under both ``boost_steps`` readings with t0 = ``t0``
    (G_STEP). Printed: ⟨u_1, E_1^w⟩ = η/4, ⟨u_1, E_ℓ^w⟩ = 0 (ℓ >= 2), W_1 = 0, φ^{(n,1)} = 1/L and
    -J'_{(n,1)} = f(±η/(4L)) on I_L^±.
    """
    datasets = [D.ep_dataset(n) for n in ep_lengths] + [D.cot_dataset(L0) for L0 in cot_L0]
    formulas = [f for ds in datasets for b in ("t_lt_t0", "t_le_t0") for f in first_step_formulas(ds, b, t0)]
    return Item("rl.cf.first_step", "proofs of Lemma B.2 / C.2, t = 1", "", "first GD step", formulas,
                         notes=["60-digit comparison with full-enumeration GD on G_STEP: numerics"])


def second_step_u_formulas(dataset: D.Dataset, boost_steps: str = "t_lt_t0", t0: int = 3) -> list[Formula]:
    """⟨u_2, ·⟩: the closed form (the map of rl.cf.lambda_inf_recursion at u_1), the printed expressions,
    and the printed terms one length at a time."""
    theta = gd_steps(dataset, 2, t0, "two_phase", boost_steps)
    u1 = {P.mu(p): theta[1][M.u_symbol(p, "a")] for p in range(1, dataset.max_len + 1)}
    n = dataset.max_len
    tag = dataset.name.replace(" ", "")
    reading = {**dataset.reading, "boost_steps": boost_steps}
    out = []
    for pos in range(1, n + 1):
        for c in D.CHARS:
            derived = theta[2][M.u_symbol(pos, c)]
            closed = u1[P.mu(pos)] + P.closed_form_u(dataset, pos).xreplace(u1)
            out.append(Formula(f"rl.cf.second_step.u2_closed.l{pos}{c}.{tag}", "derived: u_2 = Φ_∞ at u_1", closed,
                               derived, ETA_DOMAIN, f"closed form vs GD, ⟨u_2, E_{pos}^{c}⟩", reading=reading))
    derived_first = theta[2][M.u_symbol(1, "a")]
    out.append(Formula(f"rl.cf.second_step.u2_first.{tag}", "proof of Lemma B.2, ⟨u_2, E_1^w⟩", u2_first_printed(n),
                       derived_first, ETA_DOMAIN, "printed final expression vs GD", reading=reading,
                       latex=SECOND_STEP_LATEX["u2_first"]))
    point1 = theta[1]
    for L in range(1, n + 1):
        printed = eta / 2 * f(eta / 4) if L == 1 else eta / 2 * (f(_a(L)) - f(-_a(L))) / L
        derived = -eta * length_contribution(dataset, M.u_symbol(1, "a"), point1, L)
        out.append(Formula(f"rl.cf.second_step.u2_first_term.L{L}.{tag}", "proof of Lemma B.2, term by term",
                           printed, derived, ETA_DOMAIN, f"the length-{L} term of η⟨-∇_u L_1, E_1^w⟩",
                           reading=reading))
    for pos in range(2, n + 1):
        out.append(Formula(f"rl.cf.second_step.u2_later.l{pos}.{tag}", "proof of Lemma B.2, ⟨u_2, E_ℓ^w⟩",
                           u2_later_printed(n, pos), theta[2][M.u_symbol(pos, "a")], ETA_DOMAIN,
                           "printed sum vs GD", reading=reading, latex=SECOND_STEP_LATEX["u2_later"]))
    for pos in range(3, n + 1):
        derived = theta[2][M.u_symbol(2, "a")] - theta[2][M.u_symbol(pos, "a")]
        out.append(Formula(f"rl.cf.second_step.u2_diff.l{pos}.{tag}", "proof of Lemma B.2, ⟨u_2, E_2^w - E_ℓ^w⟩",
                           u2_diff_printed(pos), derived, ETA_DOMAIN, "printed sum vs GD", reading=reading,
                           latex=SECOND_STEP_LATEX["u2_diff"]))
    return out


SECOND_STEP_LATEX = {
    "u2_first": (r"\langle u_2,E_1^w\rangle=\frac\eta4+\frac\eta2\frac1{1+\exp(\eta/4)}+\sum_{L=2}^{L_{\max}}"
                 r"\frac\eta2\Big(\frac1{1+\exp(\frac\eta{4L})}-\frac1{1+\exp(-\frac\eta{4L})}\Big)\frac1L"),
    "u2_bound": (r"\Big|\langle u_2,E_1^w\rangle-\frac{2\eta}4\Big|\le\frac\eta2\Big|\frac1{1+\exp(\eta/4)}-\frac12"
                 r"\Big|+\sum_{L=2}^{L_{\max}}\frac\eta{2L}\cdot\frac\eta{2L}\le\frac{3\eta^2}8"),
    "u2_later": (r"\langle u_2,E_\ell^w\rangle=\sum_{L=\ell}^{L_{\max}}\frac\eta2\Big(\frac1{1+\exp(\frac\eta{4L})}-"
                 r"\frac1{1+\exp(-\frac\eta{4L})}\Big)\frac1L\le-\sum_{L=\ell}^{L_{\max}}\frac{\eta^2}{4L^2}\le-"
                 r"\frac{\eta^2}{4\ell^2}"),
    "u2_diff": (r"\langle u_2,E_2^w-E_\ell^w\rangle=\sum_{L=2}^{\ell-1}\frac\eta2\Big(\frac1{1+\exp(\frac\eta{4L})}-"
                r"\frac1{1+\exp(-\frac\eta{4L})}\Big)\frac1L\le-\frac{\eta^2}{16}"),
    "B2_attention": (r"\lambda\langle E_1^w-E_2^w,(-\nabla_W\mathcal L_1)E_L^w\rangle=\frac18\cdot\frac1{1+\exp("
                     r"\frac\eta{4L})}\cdot\frac1L\left[2\langle u_1,E_1^w\rangle-\langle u_1,E_2^w\rangle\right]+"
                     r"\frac18\frac1{1+\exp(-\frac\eta{4L})}\cdot\frac1L\left(\langle u_1,E_2^w\rangle-\frac\eta{4L}"
                     r"\right)"),
}


def second_step_inequalities(dataset: D.Dataset, t0: int = 3) -> list[RegionInequality]:
    """The printed bounds of the t = 2 chains, with the exact ⟨u_2, ·⟩ on their left."""
    theta = gd_steps(dataset, 2, t0)[2]
    n = dataset.max_len
    tag = dataset.name.replace(" ", "")
    u = {p: theta[M.u_symbol(p, "a")] for p in range(1, n + 1)}
    middle = (eta / 2 * sp.Abs(f(eta / 4) - sp.Rational(1, 2))
              + sp.Add(*[(eta / (2 * L)) ** 2 for L in range(2, n + 1)]))
    out = [
        RegionInequality(f"rl.cf.second_step.u2_first_bound.middle.{tag}", "proof of Lemma B.2",
                         sp.Abs(u[1] - eta / 2), middle, ETA_DOMAIN, latex=SECOND_STEP_LATEX["u2_bound"],
                         description="|⟨u_2, E_1^w⟩ - 2η/4| <= (η/2)|f(η/4) - 1/2| + Σ (η/2L)²"),
        RegionInequality(f"rl.cf.second_step.u2_first_bound.final.{tag}", "proof of Lemma B.2", middle,
                         3 * eta**2 / 8, ETA_DOMAIN, latex=SECOND_STEP_LATEX["u2_bound"],
                         description="(η/2)|f(η/4) - 1/2| + Σ_{L=2}^{L_max} (η/2L)² <= 3η²/8"),
    ]
    for pos in range(2, n + 1):
        out.append(RegionInequality(f"rl.cf.second_step.u2_later_bound.sum.l{pos}.{tag}", "proof of Lemma B.2",
                                    u[pos], -eta**2 * H(pos, n) / 4, ETA_DOMAIN, latex=SECOND_STEP_LATEX["u2_later"],
                                    description="⟨u_2, E_ℓ^w⟩ <= -Σ_{L=ℓ}^{L_max} η²/(4L²) (exact u_2)"))
        out.append(RegionInequality(f"rl.cf.second_step.u2_later_bound.printed_sum.l{pos}.{tag}",
                                    "proof of Lemma B.2 (its own middle member)", u2_later_printed(n, pos),
                                    -eta**2 * H(pos, n) / 4, ETA_DOMAIN, latex=SECOND_STEP_LATEX["u2_later"],
                                    description="the printed sum <= -Σ η²/(4L²)"))
        out.append(RegionInequality(f"rl.cf.second_step.u2_later_bound.final.l{pos}.{tag}", "proof of Lemma B.2",
                                    u[pos], -eta**2 / (4 * pos**2), ETA_DOMAIN, latex=SECOND_STEP_LATEX["u2_later"],
                                    description="⟨u_2, E_ℓ^w⟩ <= -η²/(4ℓ²) (exact u_2)"))
    for pos in range(3, n + 1):
        out.append(RegionInequality(f"rl.cf.second_step.u2_diff_bound.l{pos}.{tag}", "proof of Lemma B.2",
                                    u[2] - u[pos], -eta**2 / 16, ETA_DOMAIN, latex=SECOND_STEP_LATEX["u2_diff"],
                                    description="⟨u_2, E_2^w - E_ℓ^w⟩ <= -η²/16 (exact u_2)"))
        out.append(RegionInequality(f"rl.cf.second_step.u2_diff_bound.printed_sum.l{pos}.{tag}",
                                    "proof of Lemma B.2 (its own middle member)", u2_diff_printed(pos),
                                    -eta**2 / 16, ETA_DOMAIN, latex=SECOND_STEP_LATEX["u2_diff"],
                                    description="the printed sum <= -η²/16"))
    return out


def second_step_W_formulas(dataset: D.Dataset, t0: int, boost_steps: str) -> list[Formula]:
    """S_L^w(ℓ, c) at t = 2 from GD against the closed-form increment of Φ_∞ at u_1 (exact since W_1 = 0).

    The update at t = 1 is boosted when 1 < t0 (t_lt_t0) or 1 <= t0 (t_le_t0); otherwise the
    closed form carries the factor 1/λ (spec rl.cf.second_step).
    """
    theta = gd_steps(dataset, 2, t0, "two_phase", boost_steps)
    u1 = {P.mu(p): theta[1][M.u_symbol(p, "a")] for p in range(1, dataset.max_len + 1)}
    boosted = w_step(1, t0, "two_phase", boost_steps) == eta * lam
    tag = f"{dataset.name.replace(' ', '')}.t0_{t0}.{boost_steps}"
    reading = {**dataset.reading, "boost_steps": boost_steps}
    out = []
    for entry in M.live_W_entries(dataset):
        stated = P.closed_form_W(dataset, entry).xreplace(u1) * (1 if boosted else 1 / lam)
        out.append(Formula(f"rl.cf.second_step.W2.{entry.name}.{tag}", "derived: W_2 = Φ_∞ increment at u_1",
                           stated, theta[2][entry], ETA_LAM_DOMAIN,
                           f"S at t = 2, {'boosted' if boosted else 'plain'} update at t = 1", reading=reading))
    return out


def b2_attention_formulas(dataset: D.Dataset, t0: int = 3) -> list[Formula]:
    """Proof of Lemma B.2: the explicit form of λ⟨E_1^w - E_2^w, (-∇_W L_1)E_L^w⟩, for L = 2..L_max."""
    theta1 = gd_steps(dataset, 1, t0)[1]
    grads = M.gradient_at(dataset, theta1)
    u11, u12 = theta1[M.u_symbol(1, "a")], theta1[M.u_symbol(2, "a")]
    out = []
    for L in range(2, dataset.max_len + 1):
        a = _a(L)
        printed = (f(a) / (8 * L) * (2 * u11 - u12) + f(-a) / (8 * L) * (u12 - a))
        derived = -lam * (grads[M.W_symbol(1, "a", L, "a")] - grads[M.W_symbol(2, "a", L, "a")])
        out.append(Formula(f"rl.cf.second_step.B2_attention.L{L}.{dataset.name.replace(' ', '')}",
                           "proof of Lemma B.2 (attention at t = 1, second member)", printed, sp.expand_mul(derived),
                           ETA_LAM_DOMAIN, f"λ⟨E_1^a - E_2^a, -∇_W L_1 E_{L}^a⟩",
                           latex=SECOND_STEP_LATEX["B2_attention"]))
    return out


def item_second_step(ep_lengths=(4, 6), cot_L0=(3,), t0_values=(3, 1)) -> Item:
    """rl.cf.second_step — proofs of Lemma B.2 and Lemma C.2, t = 2.

    Definition used: two exact GD steps from θ_0 = 0 (EP, and CoT with L_Parity). Derived: u_2
    and W_2 are one step of Φ_∞ (rl.cf.lambda_inf_recursion) from u_1 because W_1 = 0; the
    closed forms are compared with GD under both ``boost_steps`` readings for each t0 in
    ``t0_values`` (t0 = 3: both boost the t = 1 update; t0 = 1: only ``t_le_t0`` does). Printed:
    the final expressions of ⟨u_2, E_1^w⟩, ⟨u_2, E_ℓ^w⟩, ⟨u_2, E_2^w - E_ℓ^w⟩ (also term by term)
    and the bounds 3η²/8, -Σ η²/(4L²), -η²/(4ℓ²), -η²/16 (on η in (0, 1)); and, from the proof
    of Lemma B.2, the explicit form of λ⟨E_1^w - E_2^w, -∇_W L_1 E_L^w⟩.
    """
    formulas, inequalities = [], []
    datasets = [D.ep_dataset(n) for n in ep_lengths] + [D.cot_dataset(L0) for L0 in cot_L0]
    for ds in datasets:
        formulas += second_step_u_formulas(ds)
        for t0 in t0_values:
            for boost in ("t_lt_t0", "t_le_t0"):
                formulas += second_step_W_formulas(ds, t0, boost)
        if ds.L0 is None:
            formulas += b2_attention_formulas(ds)
        inequalities += second_step_inequalities(ds)
    return Item("rl.cf.second_step", "proofs of Lemma B.2 / C.2, t = 2", "", "second GD step", formulas,
                         inequalities, notes=["W_3 from 60-digit GD on G_STEP: numerics"])
