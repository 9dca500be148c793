r"""The matrices E, E' of App. B.5 (Lemmas 14, 16, Eqns 91–92) as printed and as defined, in mpmath.

A :class:`Case` holds one symmetric E (exact binary values of a float64 draw) and gives, at the working
precision, its eigen-decomposition E = UᵀDU (``mpmath.eigsy``, eigenvalues ordered |λ₁| >= … >= |λ_K|,
L405), (I + E)^{-1} by ``mpmath.inverse`` (the definition, not the spectrum) and E' under either option:
``lemma14`` E' = I − (I + E)^{-1} (canonical), ``appB1`` E' = (I + E)^{-1} − I.

Index conventions (spec §2.8): U = [u₁, …, u_K] has the u_i as columns; u_ik ("the k-th component of u_i")
is U_ki under ``u_index=column`` (canonical) and U_ik under ``row``. Every display is a function
``(E, i, j) -> entry`` (0-based indices, which may arrive as integral mpf), compared entry by entry with
the defined matrix.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import mpmath
from mpmath import mp

EPRIME = ("lemma14", "appB1")
U_INDEX = ("column", "row")


@dataclass(eq=False)
class Case:
    """One symmetric matrix E (a list of rows of floats) and its derived objects at the working precision."""

    rows: list[list[float]]
    label: str = "E"
    _cache: dict = field(default_factory=dict, repr=False)

    @property
    def K(self) -> int:
        return len(self.rows)

    def _at_precision(self) -> dict:
        key = mp.dps
        if key not in self._cache:
            E = mpmath.matrix([[mpmath.mpf(v) for v in row] for row in self.rows])
            values, vectors = mpmath.eigsy(E)
            order = sorted(range(self.K), key=lambda k: -abs(values[k]))
            lam = [values[k] for k in order]
            Q = mpmath.matrix(self.K, self.K)  # columns: eigenvectors, in magnitude order
            for new, old in enumerate(order):
                for r in range(self.K):
                    Q[r, new] = vectors[r, old]
            inverse = mpmath.inverse(mpmath.eye(self.K) + E)
            self._cache[key] = {"E": E, "lam": lam, "U": Q.T, "inverse": inverse}
        return self._cache[key]

    def E(self, i: int, j: int):
        return self._at_precision()["E"][int(i), int(j)]

    def lam(self, k: int):
        return self._at_precision()["lam"][int(k)]

    def U(self, a: int, b: int):
        """Entry (a, b) of U, whose rows are the eigenvectors (E = UᵀDU)."""
        return self._at_precision()["U"][int(a), int(b)]

    def u(self, i: int, k: int, reading: str = "column"):
        """u_ik: U_ki (``column``: the k-th component of the column u_i) or U_ik (``row``)."""
        return self.U(k, i) if reading == "column" else self.U(i, k)

    def inverse(self, i: int, j: int):
        """((I + E)^{-1})_ij from the matrix inverse."""
        return self._at_precision()["inverse"][int(i), int(j)]

    def eprime(self, i: int, j: int, reading: str = "lemma14"):
        """E'_ij: (I − (I + E)^{-1})_ij (``lemma14``) or ((I + E)^{-1} − I)_ij (``appB1``)."""
        delta = 1 if i == j else 0
        value = delta - self.inverse(i, j)
        return value if reading == "lemma14" else -value

    def spectral(self, i: int, j: int, weight) -> mpmath.mpf:
        """(Uᵀ diag(weight(λ)) U)_ij."""
        return mpmath.fsum(self.U(k, i) * weight(self.lam(k)) * self.U(k, j) for k in range(self.K))


def _delta(i: int, j: int) -> int:
    return 1 if i == j else 0


# Lemma 14 (Eqns 75–77)
def eq76_as_printed(E: Case, i: int, j: int):
    """I + Uᵀ(Σ_{n>=1}(−Dⁿ))U, the sum as printed: Σ_{n>=1} −λⁿ = −λ/(1 − λ) (|λ| < 1)."""
    return _delta(i, j) + E.spectral(i, j, lambda v: -v / (1 - v))


def eq77(E: Case, i: int, j: int):
    """I − UᵀD'U, λ'_k = λ_k/(1 + λ_k)."""
    return _delta(i, j) - E.spectral(i, j, lambda v: v / (1 + v))


def neumann(E: Case, i: int, j: int):
    """I + Σ_{n>=1}(−1)ⁿEⁿ summed by the eigen-decomposition term by term: Σ_{n>=1}(−λ)ⁿ by ``nsum``."""
    return _delta(i, j) + E.spectral(i, j, lambda v: mpmath.nsum(lambda n: (-v) ** n, [1, mpmath.inf]))


def inverse(E: Case, i: int, j: int):
    return E.inverse(i, j)


def statement_inverse(reading: str):
    """(I − E')_ij with E' per ``reading``: the statement (I + E)^{-1} = I − E'."""
    return lambda E, i, j: _delta(i, j) - E.eprime(i, j, reading)


def statement_spectral(E: Case, i: int, j: int):
    """(UᵀD'U)_ij: the statement E' = UᵀD'U."""
    return E.spectral(i, j, lambda v: v / (1 + v))


def eprime_of(reading: str):
    return lambda E, i, j: E.eprime(i, j, reading)


# Lemma 16 (Eqn 79), at zero-diagonal E; j is unused (diagonal entries)
def eq79_E_ii(u_reading: str):
    """Σ_k λ_k u_ik² with u_ik per ``u_reading``."""
    return lambda E, i, j: mpmath.fsum(E.lam(k) * E.u(i, k, u_reading) ** 2 for k in range(E.K))


def diagonal(E: Case, i: int, j: int):
    return E.E(i, i)


def zero(E: Case, i: int, j: int):
    return mpmath.mpf(0)


def eq79_Ep_first(u_reading: str):
    """Σ_k λ'_k u_ik²."""
    return lambda E, i, j: mpmath.fsum(E.lam(k) / (1 + E.lam(k)) * E.u(i, k, u_reading) ** 2 for k in range(E.K))


def eq79_Ep_second(u_reading: str):
    """Σ_k λ_k u_ik² − Σ_k λ_k²/(1 + λ_k) u_ik²."""
    return lambda E, i, j: mpmath.fsum(
        (E.lam(k) - E.lam(k) ** 2 / (1 + E.lam(k))) * E.u(i, k, u_reading) ** 2 for k in range(E.K))


def eq79_Ep_third(u_reading: str):
    """−Σ_k λ_k²/(1 + λ_k) u_ik²."""
    return lambda E, i, j: -mpmath.fsum(E.lam(k) ** 2 / (1 + E.lam(k)) * E.u(i, k, u_reading) ** 2
                                        for k in range(E.K))


def eprime_diagonal(reading: str):
    return lambda E, i, j: E.eprime(i, i, reading)


# Eqns 91–92
def premise(reading: str):
    """(E − E' − EE')_ij with E' per ``reading``; the printed premise says it is 0."""
    def value(E: Case, i: int, j: int):
        product = mpmath.fsum(E.E(i, k) * E.eprime(k, j, reading) for k in range(E.K))
        return E.E(i, j) - E.eprime(i, j, reading) - product
    return value


def eq92_lhs(reading: str):
    """Σ_{k≠n} E_nk E'_nk (n = i)."""
    return lambda E, i, j: mpmath.fsum(E.E(i, k) * E.eprime(i, k, reading) for k in range(E.K) if k != i)


def eq92_rhs(reading: str):
    """−E'_nn."""
    return lambda E, i, j: -E.eprime(i, i, reading)


def eq91_lhs(reading: str):
    """(EE')_nn from the matrix product."""
    return lambda E, i, j: mpmath.fsum(E.E(i, k) * E.eprime(k, i, reading) for k in range(E.K))


def eq91_rhs(reading: str):
    """Σ_{k≠n} E_nk E'_nk + E_nn E'_nn (the last member of Eqn 91)."""
    return lambda E, i, j: (mpmath.fsum(E.E(i, k) * E.eprime(i, k, reading) for k in range(E.K) if k != i)
                            + E.E(i, i) * E.eprime(i, i, reading))


def geometric_fact(E: Case, i: int, j: int):
    """Σ_{n>=1}(−λ_k)ⁿ by ``nsum`` for the eigenvalue k = i (the printed fact's left side)."""
    v = E.lam(i)
    return mpmath.nsum(lambda n: (-v) ** n, [1, mpmath.inf])


def geometric_closed(E: Case, i: int, j: int):
    """−λ_k/(1 + λ_k), k = i."""
    v = E.lam(i)
    return -v / (1 + v)
