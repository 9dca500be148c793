"""The loss, the EP label and the gradient of the regular-language paper (rl.cf.model_loss, rl.cf.ep_label,
rl.cf.gradient, rl.cf.effective_rate).

Every derived side is built from the enumerated data (``data``) and the model (``model``):
the loss is the literal sum over samples, gradients are ``diff`` of it. The printed sides are
the displays of Sec. 3 and App. A.1, built literally (sums over samples, vectors, outer products).
"""

from __future__ import annotations

import sympy as sp

from derivations.core import Formula, Item
from derivations.regular_language import data as D
from derivations.regular_language import model as M
from derivations.predicates import Predicate
from derivations.regular_language.symbols import READINGS, eta, lam, parameter_domain


def item_model_loss(ep_lengths=range(1, 7), cot_L0=(3, 4), general_max_len: int = 3) -> Item:
    """rl.cf.model_loss — Sec. 3 "One-layer transformer", "Learning objective"; App. A.1.

    Definition used (spec §2.3–2.5): L = Σ_{L=1}^{L_max} 2^{-L} Σ_{n∈I_L} J(y_n T_θ(X^{(n)})) over
    the enumerated strings. Derived: the value at (u, W) = 0 is L_max·log 2 (every length
    contributes J(0) = log 2); for CoT (2L0-1)·log 2 or (2L0-2)·log 2 under ``cot_max_len``. The
    spec's CoT value presumes ``reg_max_len = L0-1``; under ``L0`` length L0 is counted twice.
    The two printed forms of the loss (Sec. 3 and App. A.1) are compared at random (u, W, λ).
    """
    formulas = []
    for n in ep_lengths:
        ds = D.ep_dataset(n)
        formulas.append(Formula(f"rl.cf.model_loss.zero.EP_Lmax{n}", "Sec. 3 loss at θ = 0", n * sp.log(2),
                                M.at(M.loss(ds), {}), parameter_domain([]),
                                f"L(0, 0) = L_max log 2 by enumeration of {len(ds.samples)} samples",
                                latex=rf"\mathcal L(0,0)={n}\log 2"))
    for L0 in cot_L0:
        for cot_max_len in READINGS["cot_max_len"]:
            for reg_max_len in ("L0-1", "L0"):
                ds = D.cot_dataset(L0, cot_max_len, reg_max_len)
                count = 2 * L0 - 1 if cot_max_len == "2L0-1" else 2 * L0 - 2
                formulas.append(Formula(
                    f"rl.cf.model_loss.zero.CoT_L0{L0}_{cot_max_len}_{reg_max_len}", "Eq. (1) at θ = 0",
                    count * sp.log(2), M.at(M.loss(ds), {}), parameter_domain([]),
                    f"L_Parity(0, 0) by enumeration; the spec's value ({count} log 2) presumes reg_max_len = L0-1",
                    reading={"cot_max_len": cot_max_len, "reg_max_len": reg_max_len},
                    latex=rf"\mathcal L_{{Parity}}(0,0)={count}\log 2"))
    ds = D.ep_dataset(general_max_len)
    sec3, a1 = M.loss_sec3(ds), M.loss(ds)
    formulas.append(Formula(
        "rl.cf.model_loss.sec3_vs_A1", "Sec. 3 vs App. A.1", sec3, a1, parameter_domain(sec3.free_symbols),
        f"Σ_L |I_L|^{{-1}} Σ_n log(1 + exp(-y_n T)) (Sec. 3) vs Σ_L 2^{{-L}} Σ_n J(y_n u^⊤Σ_ℓ x_ℓ φ_ℓ) (App. A.1), "
        f"L_max = {general_max_len}",
        latex=r"\sum_{L=1}^{L_{\max}}\frac{1}{|I_L|}\sum_{n\in I_L}\log\left(1+\exp\left(-y_n\mathsf T_\theta"
              r"(X^{(n)})\right)\right)"))
    return Item("rl.cf.model_loss", "Sec. 3; App. A.1", "", "model and loss", formulas,
                         notes=["Monte-Carlo cross-check and vectorised vs per-sample implementations: "
                                "numerics layer"])


EP_EQUIVALENCE_LATEX = (r"\text{EP: }N_{\{ab,ba\}}(X)\text{ even}\iff x_1=x_L\ \text{(Sec. 3: ``equivalent to "
                        r"determining whether the first and last tokens ... are equal'')}")


def _all_strings(max_len: int):
    return lambda: (s for n in range(1, max_len + 1) for s in D.strings(n))


def _pair_counts(s, mode: str) -> tuple[int, int]:
    """(number of ab, number of ba) matches in ``s`` under the counting mode."""
    pairs = [(i, i + 1) for i in range(len(s) - 1)] if mode == "contiguous" else \
        [(i, j) for i in range(len(s)) for j in range(i + 1, len(s))]
    ab = sum(s[i] == "a" and s[j] == "b" for i, j in pairs)
    ba = sum(s[i] == "b" and s[j] == "a" for i, j in pairs)
    return ab, ba


def item_ep_label(max_len: int = 12) -> Item:
    """rl.cf.ep_label — Sec. 3: EP "is equivalent to determining whether the first and last tokens … are equal".

    Definition used (spec §2.1, flag ``ep_count``): y = +1 iff N_P is even, N_P counted literally
    as contiguous occurrences of ab/ba or as ordered subsequences. Compared exhaustively with
    [c_1 = c_L] over every string of length ≤ ``max_len``, and the paper's worked example aabba
    ("one ab and one ba") is recounted in each mode.
    """
    predicates = []
    for mode in READINGS["ep_count"]:
        predicates.append(Predicate(
            f"rl.cf.ep_label.{mode}", "Sec. 3", D.first_last_label, lambda s, m=mode: D.ep_label(s, m),
            _all_strings(max_len), f"[c_1 = c_L] vs parity of N_P ({mode} counting), all strings of length "
            f"<= {max_len}", EP_EQUIVALENCE_LATEX, {"ep_count": mode}, show="".join))
        predicates.append(Predicate(
            f"rl.cf.ep_label.example_aabba.{mode}", "Sec. 3 example", lambda s: (1, 1),
            lambda s, m=mode: _pair_counts(s, m), lambda: [tuple("aabba")],
            f"'in the sequence X = aabba, there is one ab and one ba': (ab, ba) counted {mode}",
            r"X=aabba:\ \#ab=1,\ \#ba=1", {"ep_count": mode}, show="".join))
    return Item("rl.cf.ep_label", "Sec. 3", "", "EP label = first token vs last token", [],
                         predicates=predicates)


def dT_ds_formulas(length: int = 4) -> list[Formula]:
    """∂T/∂s_ℓ = φ_ℓ(u_ℓ - T)/λ (spec rl.cf.gradient), and the printed W-display vector in that form."""
    v = sp.symbols(f"v1:{length + 1}", real=True)
    s = sp.symbols(f"s1:{length + 1}", real=True)
    phi = M.softmax(s)
    T = sp.Add(*[vi * p for vi, p in zip(v, phi, strict=True)])
    dom = parameter_domain([*v, *s, lam])
    out = []
    for i in range(length):
        out.append(Formula(f"rl.cf.gradient.dT_ds.L{length}.l{i + 1}", "App. A.1 (chain rule through the softmax)",
                           phi[i] * (v[i] - T) / lam, sp.diff(T, s[i]), dom,
                           f"∂T/∂s_{i + 1} = φ_{i + 1}(u_{i + 1} - T)/λ vs diff of T = Σ_ℓ v_ℓ φ_ℓ(s/λ)"))
        # the printed inner vector Σ_ℓ u^⊤x_ℓ φ_ℓ (x_ℓ - Σ_ℓ' φ_ℓ' x_ℓ'), component i (x_ℓ = e_ℓ here)
        printed = sp.Add(*[v[j] * phi[j] * ((1 if j == i else 0) - phi[i]) for j in range(length)])
        out.append(Formula(f"rl.cf.gradient.W_form.L{length}.l{i + 1}", "App. A.1, ∇_W display (inner vector)",
                           printed, lam * sp.diff(T, s[i]), dom,
                           f"component {i + 1} of Σ_ℓ u^⊤x_ℓ φ_ℓ(x_ℓ - Σ φ x) vs λ ∂T/∂s_{i + 1}"))
    return out


def item_gradient(max_len: int = 3, template_length: int = 4) -> Item:
    """rl.cf.gradient — App. A.1, gradient display.

    Definition used: the chain rule through the softmax applied to rl.cf.model_loss, i.e. ``diff``
    of the enumerated loss. Compared coordinate by coordinate (every u coordinate, every live W
    entry and the length-1 entries) with the printed ∇_u L and ∇_W L built literally, at
    L_max = ``max_len``; and the identity ∂T/∂s_ℓ = φ_ℓ(u_ℓ - T)/λ at L = ``template_length``.
    """
    ds = D.ep_dataset(max_len)
    gu, gW = M.printed_gradient_u(ds), M.printed_gradient_W(ds)
    formulas = dT_ds_formulas(template_length)
    for pos in range(1, max_len + 1):
        for c in D.CHARS:
            sym = M.u_symbol(pos, c)
            stated, derived = gu[M.idx(pos, c)], M.grad(ds, sym)
            formulas.append(Formula(f"rl.cf.gradient.u.{sym.name}.Lmax{max_len}", "App. A.1, ∇_u L",
                                    stated, derived, parameter_domain(stated.free_symbols | derived.free_symbols),
                                    f"printed ∇_u L at E_{pos}^{c} vs ∂L/∂{sym.name}",
                                    latex=GRAD_U_LATEX))
    entries = M.live_W_entries(ds) + [M.W_symbol(1, c, 1, c) for c in D.CHARS]
    for sym in entries:
        (kp, kc), (qp, qc) = _key_query(sym)
        stated, derived = gW[M.idx(kp, kc), M.idx(qp, qc)], M.grad(ds, sym)
        formulas.append(Formula(f"rl.cf.gradient.W.{sym.name}.Lmax{max_len}", "App. A.1, ∇_W L",
                                stated, derived, parameter_domain(stated.free_symbols | derived.free_symbols),
                                f"printed ∇_W L at (E_{kp}^{kc}, E_{qp}^{qc}) vs ∂L/∂{sym.name}",
                                latex=GRAD_W_LATEX))
    return Item("rl.cf.gradient", "App. A.1", "", "gradients", formulas,
                         notes=["finite-difference, complex-step and autodiff comparisons over all d + d² "
                                "coordinates at L_max = 6: numerics layer"])


GRAD_U_LATEX = (r"\nabla_u\mathcal L_t=\sum_{L=1}^{L_{\max}}\frac1{2^L}\sum_{n\in I_L}J'_{(n,t)}y_n\sum_\ell "
                r"x_\ell^{(n)}\varphi_\ell^{(n,t)}")
GRAD_W_LATEX = (r"\nabla_W\mathcal L_t=\frac1\lambda\sum_{L=2}^{L_{\max}}\frac1{2^L}\sum_{n\in I_L}J'_{(n,t)}y_n"
                r"\sum_\ell u_t^\top x_\ell^{(n)}\varphi_\ell^{(n,t)}\Big(x_\ell^{(n)}-\sum_{\ell'}"
                r"\varphi_{\ell'}^{(n,t)}x_{\ell'}^{(n)}\Big)(x_L^{(n)})^\top")


def _key_query(sym: sp.Symbol):
    _, key, query = sym.name.split("_")
    return (int(key[:-1]), key[-1]), (int(query[:-1]), query[-1])


#: W-step factor of each schedule (spec §2.6, §2.9): phase 1 ηλ, phase 2 η; vanilla modes keep one
W_STEP = {"phase1": eta * lam, "phase2": eta, "vanilla_eta": eta, "vanilla_etalambda": eta * lam}
#: the K-rate of each schedule as the spec states it (rl.cf.effective_rate)
K_RATE = {"phase1": eta / lam, "phase2": eta / lam**2, "vanilla_eta": eta / lam**2, "vanilla_etalambda": eta / lam}


def item_effective_rate(max_len: int = 2) -> Item:
    """rl.cf.effective_rate — derived from the Sec. 3 schedule.

    With K = W/λ, ∇_W L = λ^{-1} ∇_K L̃ where L̃(u, K) = L(u, λK). The W step of each schedule,
    divided by λ, is compared with the stated K step: η/λ (phase 1, ``vanilla_etalambda``) and
    η/λ² (phase 2, ``vanilla_eta``), for every live entry at L_max = ``max_len``.
    """
    ds = D.ep_dataset(max_len)
    live = M.live_W_entries(ds)
    K = {w: sp.Symbol("K" + w.name[1:], real=True) for w in live}
    loss_K = M.loss(ds).xreplace({w: lam * K[w] for w in live})
    formulas = []
    for w in live:
        dK = sp.diff(loss_K, K[w])
        dW_at_K = M.grad(ds, w).xreplace({v: lam * K[v] for v in live})
        for mode, factor in W_STEP.items():
            stated, derived = -K_RATE[mode] * dK, -factor * dW_at_K / lam
            formulas.append(Formula(
                f"rl.cf.effective_rate.{mode}.{w.name}", "Sec. 3 schedule (derived identity)", stated, derived,
                parameter_domain(stated.free_symbols | derived.free_symbols),
                f"K-step -({sp.sstr(K_RATE[mode])}) ∂L̃/∂K vs (W-step with factor {sp.sstr(factor)})/λ",
                reading={"schedule": "two_phase" if mode.startswith("phase") else mode}))
    return Item("rl.cf.effective_rate", "Sec. 3 schedule", "", "effective logit rate", formulas)
