r"""Figure-level attention metrics of "Scan and Snap" (spec §4.9).

* :func:`distinct_entropy` (Fig. 6, ``ss.fig6.entropy_metric``): H = (1/K)Σ_n H(ĉ_n), ĉ_n the entries of
  c_n = ℙ(·|n)∘e^{z_ψ(n)}/Σ(…) on the distinct tokens G_DT(n) of class n, renormalised to sum 1 (option
  ``fig6_metric=distinct_renormalised``) or as they are (``distinct_raw``: −Σ c ln c over G_DT(n) only); natural
  logarithm, or base 2. Units: nats (bits with ``base=2``).
* :func:`attention_entropy` (Fig. 10, ``ss.fig10.entropy_metric``, **[code]** ``decoder_wiki.py``): for attention
  rows a_i over keys j, the mean over i of −Σ_j a_ij ln(a_ij + 10⁻⁸).
"""

from __future__ import annotations

import math

import numpy as np

from derivations.errors import InvalidArgument
from numerics.models.scan_snap.data import Layout

FIG6_METRICS = ("distinct_renormalised", "distinct_raw")


def distinct_tokens(lay: Layout) -> list[np.ndarray]:
    """G_DT(n) for every class: the ids in the support of n and of no other class."""
    support = lay.P > 0
    only = support & (support.sum(axis=0) == 1)
    return [np.flatnonzero(only[n]) for n in range(lay.K)]


def attention_rows(lay: Layout, Z: np.ndarray) -> np.ndarray:
    """c_n for every class (K × M): ℙ(·|n)∘e^{z_ψ(n)}, normalised (shifted by the largest logit on the support)."""
    out = np.empty_like(lay.P)
    for n in range(lay.K):
        z = Z[lay.psi[n]]
        support = lay.P[n] > 0
        w = np.where(support, lay.P[n] * np.exp(z - np.max(z[support])), 0.0)
        out[n] = w / w.sum()
    return out


def distinct_entropy(lay: Layout, Z: np.ndarray, metric: str = "distinct_renormalised", base: float = math.e):
    """(per-class entropies, their mean) of c_n on G_DT(n) (module docstring)."""
    if metric not in FIG6_METRICS:
        raise InvalidArgument(f"fig6_metric={metric!r} is not one of {', '.join(FIG6_METRICS)}")
    if not base > 1:
        raise InvalidArgument(f"base={base!r} must be > 1 (e for nats, 2 for bits)")
    c = attention_rows(lay, Z)
    values = []
    for n, ids in enumerate(distinct_tokens(lay)):
        p = c[n, ids]
        if metric == "distinct_renormalised":
            p = p / p.sum()
        p = p[p > 0]
        values.append(float(-np.sum(p * np.log(p)) / math.log(base)))
    return np.array(values), float(np.mean(values))


def attention_entropy(a: np.ndarray, eps: float = 1e-8) -> float:
    """Fig. 10's −Σ_j a_ij ln(a_ij + eps), averaged over the rows i (and any leading axes)."""
    a = np.asarray(a, dtype=float)
    if a.ndim < 1 or a.shape[-1] < 1:
        raise InvalidArgument(f"a has shape {a.shape}: it must hold attention rows over at least one key")
    return float(np.mean(-np.sum(a * np.log(a + eps), axis=-1)))
