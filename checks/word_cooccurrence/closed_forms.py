"""The SymPy items of "word co-occurrence" built so far (``co.cf.loss_derivs``, ``co.cf.softmax_jacobian``,
``co.dv.loss_bounds``): each printed display beside its derivation (``derivations.word_cooccurrence``),
decided by the shared kind :class:`checks.kinds.ItemCheck` (symbolic or 30-digit comparison; inequalities
sampled and certified)."""

from __future__ import annotations

import derivations.word_cooccurrence as D
from checks.claim import Claim
from checks.kinds import ItemCheck, deferred_build
from checks.registry import register
from derivations.word_cooccurrence.symbols import DEFAULT_READINGS

PAPER = "co"
LABELS = {
    "co.cf.loss_derivs": "L227–L233; F.5 proof (L5590–L5647); F.6 proof",
    "co.dv.loss_bounds": "derived (L6676)",
    "co.cf.softmax_jacobian": "Eq. (17) (L7707–L7722), Lemma G.1 (L7723–L7736)",
    "co.cf.ratio_R": "R (L745–L752; L6083–L6088), Eq. (13), Eq. (15)",
    "co.cf.eq12_balance": "Lemma F.5 proof (L5500–L5655), Eq. (12)",
    "co.cf.lossode_F8": "Thm F.8 (L6523–L6526); proof (L6527–L6703)",
    "co.cf.corF_2_ratio": "Cor. F.2 proof (L5172–L5185)",
    "co.cf.group_rates": "Lemma F.5 proof (L5680–L5730), Lemma F.6 (L6010–L6330), Thm F.8 proof",
    "co.cf.eq16_quadratic": "Lemma F.6 proof (L6262–L6491)",
    "co.dv.quadratic_exact": "derived (Lemma F.6)",
}

for _id in D.ITEMS:
    _doc = D.builder(_id).__doc__ or ""
    register(Claim(_id, PAPER, LABELS[_id], "derive" if _id.startswith("co.dv.") else "formula",
                   ItemCheck(build=deferred_build(D, _id), default_readings=dict(DEFAULT_READINGS)),
                   statement=_doc, doc=_doc))
