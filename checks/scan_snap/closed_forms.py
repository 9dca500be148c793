"""The closed forms and derive-and-verify items of "Scan and Snap" built so far (``ss.*`` of spec §4–§5).

Each item is built by ``derivations.scan_snap`` (the printed displays as SymPy beside the same quantities
derived from the definitions) and decided by the shared kind :class:`checks.kinds.ItemCheck`: displays
compared symbolically or at 30-digit random points, inequalities sampled and certified. The canonical
value of every option decides (spec §2.9); the other readings are reported beside the verdict. The
second, independent method of an item (float64/numba kernels, numerical integration, root finding,
the recursion iterated) is in :mod:`checks.scan_snap.cross_checks`.
"""

from __future__ import annotations

import math

import derivations.scan_snap as D
from checks.claim import Claim, Param
from checks.kinds import ItemCheck, deferred_build
from checks.registry import register
from derivations.domain import Domain, Interval
from derivations.scan_snap import symbols as S
from derivations.scan_snap.scalar_items import K_VALUES, M_VALUES, Ki, Mi

PAPER = "ss"

#: paper label of each item (spec §11)
LABELS = {
    "ss.appB1.zeta": "App. B.1 (L408–L409)",
    "ss.lemma5.w_solution": "Lemma 5, Eqns 31–33",
    "ss.lemma5.proof_steps": "proof of Lemma 5, Eqns 34–39",
    "ss.lemma3.modified_update": "Eqns 26–30",
    "ss.lemma6.implicit": "Lemma 6, Eqns 44–45",
    "ss.lemma8.roots": "Lemma 8, Eqns 50–51",
    "ss.lemma9.gamma_def": "L579; Eqn 85; L979",
    "ss.thm1.iota": "Eqns 86–87",
    "ss.thm1.beta": "Eqns 88–89",
    "ss.dv.thm1_coefficients": "derived (Eqn 83)",
    "ss.lemma9.stage_identities": "proof of Lemma 9, Eqns 53–57",
    "ss.lemma11.g_derivative": "Eqn 64, lines 1–2",
    "ss.thm4.z_solution": "Eqns 116, 118–120",
    "ss.thm4.xi_solution": "Eqns 117, 121",
    "ss.thm4.B_integral": "Eqn 122",
    "ss.thm4.gamma_integral": "Eqns 123–126",
    "ss.thm4.B_closed": "Eqn 127",
    "ss.dv.lambertw": "derived (Lemma 6)",
    "ss.dv.gamma_stable": "derived (L579)",
    "ss.dv.gamma_peak": "derived (L579)",
    "ss.dv.balance_time": "derived (Lemma 8, Eqn 45)",
    "ss.dv.cor1_exact_steps": "derived (Corollary 1)",
    "ss.dv.equal_overlap_spectrum": "derived (Remark 1, Corollary 2)",
    "ss.dv.lemma10_region": "derived (Eqn 58)",
    "ss.dv.lemma11_factor": "derived (Eqns 64–65)",
    "ss.dv.eq130_validity": "derived (Eqn 130, L1005)",
    "ss.dv.eq13_constants": "derived (Eqn 97 → Eqn 13, L192–L196)",
}

#: the parameters a user may pin, per item (a pin fixes the symbol in every display of the item that has it)
PINNABLE = {
    "ss.lemma6.implicit": ("M", "etaY"),
    "ss.lemma8.roots": ("M",),
    "ss.lemma9.gamma_def": ("M", "K", "etaY"),
    "ss.lemma9.stage_identities": ("M", "K", "etaY"),
    "ss.lemma11.g_derivative": ("M", "etaY"),
    "ss.thm4.z_solution": ("K", "rho0", "etaZ"),
    "ss.thm4.xi_solution": ("K", "rho0"),
    "ss.thm4.B_integral": ("K", "rho0"),
    "ss.thm4.gamma_integral": ("K", "etaZ", "etaY"),
    "ss.thm4.B_closed": ("K", "rho0", "etaZ", "etaY"),
    "ss.dv.lambertw": ("M", "etaY"),
    "ss.dv.gamma_stable": ("M",),
    "ss.dv.gamma_peak": ("M", "K", "etaY"),
    "ss.dv.balance_time": ("M", "K", "etaY"),
    "ss.dv.cor1_exact_steps": ("M", "etaY"),
}

#: natural ranges of the pinnable parameters (a pinned value outside is refused by name)
_INTEGER_NAMES = {"M": Mi, "K": Ki}
_REAL = {"etaY": (S.etaY, Interval(0, math.inf)), "etaZ": (S.etaZ, Interval(0, math.inf)),
         "rho0": (S.rho0, Interval(0, math.inf))}
#: the scalar-level items state M and K as vocabulary sizes; Theorem 4's K is a real constant
_REAL_K = {"ss.thm4.z_solution", "ss.thm4.xi_solution", "ss.thm4.B_integral", "ss.thm4.gamma_integral",
           "ss.thm4.B_closed"}


def _domain(item_id: str, names: tuple[str, ...]) -> Domain:
    intervals, integers = {}, {}
    for name in names:
        if name == "K" and item_id in _REAL_K:
            intervals[S.K] = Interval(0, math.inf)
        elif name == "M":
            integers[Mi] = (3, M_VALUES)  # M − 1 > e: Lemma 8's two roots exist
        elif name == "K":
            integers[Ki] = (1, K_VALUES)
        else:
            sym, interval = _REAL[name]
            intervals[sym] = interval
    return Domain(intervals, integers)


def _extra(item_id: str):
    """The second method of an item (``cross_checks``), if it has one."""
    from checks.scan_snap import cross_checks

    return cross_checks.CROSS_CHECKS.get(item_id)


#: the options whose readings an item's displays are encoded under (pinning one makes it decide)
OPTIONS = {
    "ss.lemma5.w_solution": ("alpha_index",),
    "ss.lemma5.proof_steps": ("alpha_index", "wdot"),
    "ss.lemma3.modified_update": ("eprime",),
    "ss.thm1.iota": ("eprime",),
    "ss.thm1.beta": ("eprime",),
    "ss.dv.thm1_coefficients": ("eprime",),
    "ss.dv.eq130_validity": ("nu",),
}


def option_params(flags) -> tuple[Param, ...]:
    """Declared parameters for the options ``flags`` (``ss.opt.*``): canonical default, every value a choice."""
    return tuple(Param(flag, S.READINGS[flag][0], choices=S.READINGS[flag],
                       doc=f"ss.opt.{flag}: the reading that decides (the others are reported)") for flag in flags)


def register_item(item_id: str) -> None:
    """Register one item (kind ``formula`` for a printed closed form, ``derive`` for ``ss.dv.*``)."""
    names = PINNABLE.get(item_id, ())
    check = ItemCheck(build=deferred_build(D, item_id), default_readings=dict(S.DEFAULT_READINGS), extra=_extra(item_id))
    doc = D.builder(item_id).__doc__ or ""
    kind = "derive" if item_id.startswith("ss.dv.") else "formula"
    register(Claim(item_id, PAPER, LABELS[item_id], kind, check, statement=doc, label_alt="",
                   params=(*names, *option_params(OPTIONS.get(item_id, ()))), domain=_domain(item_id, names),
                   doc=doc))


for _id in D.ITEMS:
    register_item(_id)
