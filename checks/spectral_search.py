"""Certify that no non-negative symmetric matrix has its whole spectrum in a band, by branch and bound.

The statement decided: there is no real symmetric K×K matrix E with zero diagonal and off-diagonal
entries in [0, ρ̄] such that

    ρ(E) < ρ̄   and   min_i |λ_i(E)| ≥ μ,

where ρ(E) is the spectral radius. (For a non-negative symmetric E, E_ij = e_iᵀE e_j ≤ ‖E‖₂ = ρ(E),
so the box [0, ρ̄]^{K(K−1)/2} of off-diagonal entries holds every candidate.) A box B of entries is
closed when one of two exact (rational) tests shows that no E ∈ B qualifies:

* radius: ρ is monotone in the entries of a non-negative matrix (Perron–Frobenius), so for every
  E ∈ B and every vector v, ρ(E) ≥ ρ(E_lo) ≥ vᵀE_lo v / vᵀv; the box is closed when this Rayleigh
  quotient (v the floating-point Perron vector of E_lo, taken exactly) is ≥ ρ̄.
* smallest modulus: for symmetric E, min_i |λ_i(E)| = min_x ‖Ex‖/‖x‖ ≤ ‖Ev‖/‖v‖ for any v, and with
  E = E_c + Δ, |Δ| ≤ R entrywise (E_c the centre, R the half-widths),
  ‖Ev‖ ≤ ‖E_c v‖ + ‖R|v|‖. The box is closed when ‖E_c v‖ + ‖R|v|‖ < μ‖v‖ (v the eigenvector of E_c
  of smallest |λ|, taken exactly); the square roots are removed exactly: √a + √b < √c ⇔
  c − a − b > 0 and (c − a − b)² > 4ab.

Every test runs in exact rational arithmetic (python-flint ``fmpq_mat``); floating point only picks
the vectors v, so a closed box is proven. The budget is a number of boxes (``max_boxes``), so the
same call gives the same certificate on any machine. A box centre that qualifies in floating point
by a margin of 1e-9 is reported as a counterexample (the statement is then false).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np
from flint import fmpq, fmpq_mat

from derivations.errors import InvalidArgument


@dataclass
class SpectralBandCertificate:
    """The outcome of :func:`certify_no_spectrum_in_band`.

    ``status`` is ``certified`` (every box closed), ``counterexample`` (a matrix in the band was
    found: ``example``) or ``undecided`` (the box budget ran out; ``open_boxes`` remain)."""

    status: str
    size: int
    radius_bound: Fraction
    modulus_floor_squared: Fraction
    boxes: int
    closed_by_radius: int = 0
    closed_by_modulus: int = 0
    open_boxes: int = 0
    example: list | None = None
    example_spectrum: list | None = None
    notes: list = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"status": self.status, "K": self.size, "radius_bound": str(self.radius_bound),
                "modulus_floor": float(self.modulus_floor_squared) ** 0.5, "boxes": self.boxes,
                "closed_by_radius": self.closed_by_radius, "closed_by_modulus": self.closed_by_modulus,
                "open_boxes": self.open_boxes, "example": self.example, "example_spectrum": self.example_spectrum}


def _exact(x: float) -> fmpq:
    f = Fraction(float(x))
    return fmpq(f.numerator, f.denominator)


def _symmetric(entries, K: int, pairs) -> np.ndarray:
    E = np.zeros((K, K), dtype=object)
    for (i, j), value in zip(pairs, entries):
        E[i, j] = E[j, i] = value
    return E


def _fmpq_matrix(E: np.ndarray) -> fmpq_mat:
    return fmpq_mat([[fmpq(x.numerator, x.denominator) if isinstance(x, Fraction) else fmpq(x) for x in row]
                     for row in E])


def _column(v: np.ndarray) -> fmpq_mat:
    return fmpq_mat([[_exact(x)] for x in v])


def _squared_norm(col: fmpq_mat) -> fmpq:
    return (col.transpose() * col)[0, 0]


def _radius_closes(lo: np.ndarray, radius_bound: fmpq) -> bool:
    """ρ(E) ≥ ρ̄ on the whole box: a Rayleigh quotient of E_lo reaches ρ̄."""
    floats = lo.astype(float)
    if not floats.any():
        return False
    v = np.abs(np.linalg.eigh(floats)[1][:, -1])
    col, A = _column(v), _fmpq_matrix(lo)
    return (col.transpose() * A * col)[0, 0] >= radius_bound * _squared_norm(col)


def _modulus_closes(centre: np.ndarray, half: np.ndarray, floor_squared: fmpq) -> bool:
    """min|λ_i(E)| < μ on the whole box: ‖E_c v‖ + ‖R|v|‖ < μ‖v‖ for the smallest-|λ| eigenvector v of E_c."""
    w, V = np.linalg.eigh(centre.astype(float))
    v = V[:, int(np.argmin(np.abs(w)))]
    col, abs_col = _column(v), _column(np.abs(v))
    a = _squared_norm(_fmpq_matrix(centre) * col)
    b = _squared_norm(_fmpq_matrix(half) * abs_col)
    c = floor_squared * _squared_norm(col)
    slack = c - a - b
    return slack > 0 and slack * slack > 4 * a * b


def certify_no_spectrum_in_band(K: int, radius_bound: Fraction, modulus_floor_squared: Fraction, *,
                                max_boxes: int = 20_000) -> SpectralBandCertificate:
    """Decide "no zero-diagonal non-negative symmetric K×K E has ρ(E) < ρ̄ and min|λ_i(E)| ≥ μ" (module doc).

    ``radius_bound`` is ρ̄ and ``modulus_floor_squared`` is μ² (both exact rationals, so that μ = 6/√M
    needs no rounding); ``max_boxes`` bounds the boxes examined."""
    if not isinstance(K, int) or K < 2:
        raise InvalidArgument(f"K must be an integer >= 2 (the matrix order); got {K!r}")
    radius_bound, floor_squared = Fraction(radius_bound), Fraction(modulus_floor_squared)
    if radius_bound <= 0 or floor_squared <= 0:
        raise InvalidArgument(f"radius_bound and modulus_floor_squared must be > 0; got {radius_bound}, "
                              f"{floor_squared}")
    if max_boxes < 1:
        raise InvalidArgument(f"max_boxes must be >= 1; got {max_boxes}")
    pairs = [(i, j) for i in range(K) for j in range(i + 1, K)]
    rho_bar = fmpq(radius_bound.numerator, radius_bound.denominator)
    mu2 = fmpq(floor_squared.numerator, floor_squared.denominator)
    mu = float(floor_squared) ** 0.5
    certificate = SpectralBandCertificate("certified", K, radius_bound, floor_squared, 0)
    stack = [[(Fraction(0), radius_bound)] * len(pairs)]
    while stack:
        if certificate.boxes >= max_boxes:
            certificate.status, certificate.open_boxes = "undecided", len(stack)
            return certificate
        box = stack.pop()
        certificate.boxes += 1
        lo = _symmetric([a for a, _ in box], K, pairs)
        centre = _symmetric([(a + b) / 2 for a, b in box], K, pairs)
        half = _symmetric([(b - a) / 2 for a, b in box], K, pairs)
        if _radius_closes(lo, rho_bar):
            certificate.closed_by_radius += 1
            continue
        if _modulus_closes(centre, half, mu2):
            certificate.closed_by_modulus += 1
            continue
        spectrum = np.linalg.eigvalsh(centre.astype(float))
        if (np.max(np.abs(spectrum)) < float(radius_bound) - 1e-9
                and np.min(np.abs(spectrum)) >= mu + 1e-9):
            certificate.status = "counterexample"
            certificate.example = [[float(x) for x in row] for row in centre]
            certificate.example_spectrum = spectrum.tolist()
            return certificate
        widest = max(range(len(box)), key=lambda k: box[k][1] - box[k][0])
        a, b = box[widest]
        for piece in ((a, (a + b) / 2), ((a + b) / 2, b)):
            child = list(box)
            child[widest] = piece
            stack.append(child)
    return certificate
