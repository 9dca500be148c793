r"""Rosenbrock methods in Hairer's transformed form, as data checked against their order conditions.

A step of size :math:`h` from :math:`(t, y)` with :math:`J = \partial f/\partial y(t, y)` and
:math:`f_t = \partial f/\partial t(t, y)` solves, for :math:`i = 1, \dots, s`,

.. math:: \Bigl(\tfrac{1}{h\gamma} I - J\Bigr) u_i
          = f\Bigl(t + c_i h,\; y + \sum_{j<i} a_{ij} u_j\Bigr) + \sum_{j<i} \tfrac{C_{ij}}{h} u_j
          + h\, d_i f_t,

one LU decomposition per step, and advances :math:`y_1 = y + \sum_i m_i u_i` with the error estimate
:math:`\sum_i (m_i - \hat m_i) u_i`. These are the variables :math:`u_i = \sum_j \gamma_{ij} k_j` of
the classical form :math:`(I - h\gamma J) k_i = h f(t + \alpha_i h, y + \sum_j \alpha_{ij} k_j) + hJ
\sum_j \gamma_{ij} k_j + h^2 \gamma_i f_t` (Hairer & Wanner, *Solving ODEs II*, IV.7, (7.25)), so
with :math:`\Gamma = (\gamma_{ij})`: :math:`\Gamma^{-1} = \operatorname{diag}(1/\gamma) - C`,
:math:`\alpha = A\Gamma`, :math:`b = m\Gamma`, :math:`d_i = \sum_j \gamma_{ij}`. The check at build
time maps back to :math:`(\alpha, \gamma, b)` and evaluates the Rosenbrock order conditions (HW II,
Table IV.7.1) for :math:`m` and :math:`\hat m`.

The continuous extension is :math:`y(t + \theta h) \approx (1-\theta)\, y + \theta\, \bigl(y_1 +
(1-\theta)(\sum_i D_{1i} u_i + \theta \sum_i D_{2i} u_i)\bigr)`, which is :math:`y + h\sum_r K_r
\sum_q P_{rq}\theta^{q+1}` with :math:`K = ((y_1 - y)/h,\ \sum_i D_{1i} u_i/h,\ \sum_i D_{2i} u_i/h)`
and :data:`DENSE_P`: the form of :func:`numerics._rk_core.dense`, so that events and saved states are
evaluated by the same code as for Dormand-Prince.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from derivations.errors import InvalidArgument

#: θ-polynomials of the continuous extension: θ, θ - θ², θ² - θ³ (rows: K_0, K_1, K_2)
DENSE_P = np.array([[1.0, 0.0, 0.0], [1.0, -1.0, 0.0], [0.0, 1.0, -1.0]])
#: order conditions are checked to this absolute residual (the coefficients are 16-digit decimals)
ORDER_TOL = 1e-12


def _conditions(alpha: np.ndarray, gam: np.ndarray, b: np.ndarray, gamma: float,
                order: int) -> list[tuple[str, float]]:
    """Residuals of the Rosenbrock order conditions up to ``order`` (≤ 4) for weights ``b``."""
    beta = alpha + gam
    np.fill_diagonal(beta, 0.0)
    a_i = alpha.sum(axis=1)
    bp = beta.sum(axis=1)
    g = gamma
    rows = [
        (1, "sum b = 1", b.sum() - 1),
        (2, "sum b beta' = 1/2 - gamma", b @ bp - (0.5 - g)),
        (3, "sum b alpha^2 = 1/3", b @ a_i**2 - 1 / 3),
        (3, "sum b beta beta' = 1/6 - gamma + gamma^2", b @ beta @ bp - (1 / 6 - g + g * g)),
        (4, "sum b alpha^3 = 1/4", b @ a_i**3 - 0.25),
        (4, "sum b alpha alpha_jk beta'_k = 1/8 - gamma/3", (b * a_i) @ alpha @ bp - (1 / 8 - g / 3)),
        (4, "sum b beta alpha^2 = 1/12 - gamma/3", b @ beta @ a_i**2 - (1 / 12 - g / 3)),
        (4, "sum b beta beta beta' = 1/24 - gamma/2 + 3gamma^2/2 - gamma^3",
         b @ beta @ beta @ bp - (1 / 24 - g / 2 + 1.5 * g * g - g**3)),
    ]
    return [(text, float(r)) for k, text, r in rows if k <= order]


@dataclass(frozen=True, eq=False)
class RosenbrockTableau:
    r"""A Rosenbrock method with an embedded solution and a continuous extension (module docstring).

    Parameters
    ----------
    name : str
    gamma : float
        The diagonal :math:`\gamma` (one LU decomposition of :math:`I/(h\gamma) - J` per step).
    a, C : (s, s) array_like
        Strictly lower triangular :math:`a_{ij}`, :math:`C_{ij}` of the transformed form.
    c, d : (s,) array_like
        Stage times :math:`c_i` and the :math:`f_t` coefficients :math:`d_i = \gamma_i`.
    m, m_hat : (s,) array_like
        Weights of the propagated and the embedded solution.
    dense : (2, s) array_like
        :math:`D_{1i}, D_{2i}` of the continuous extension.
    order, error_order : int
        Orders of ``m`` and ``m_hat`` (≤ 4: the conditions checked); the controller uses ``error_order``.

    Raises
    ------
    InvalidArgument
        Unless the shapes agree, ``a`` and ``C`` are strictly lower triangular, the row sums of
        :math:`\alpha` equal ``c``, those of :math:`\Gamma` equal ``d``, and ``m`` (``m_hat``)
        satisfies the order conditions up to ``order`` (``error_order``) to :data:`ORDER_TOL`.
    """

    name: str
    gamma: float
    a: np.ndarray
    C: np.ndarray
    c: np.ndarray
    d: np.ndarray
    m: np.ndarray
    m_hat: np.ndarray
    dense: np.ndarray
    order: int
    error_order: int

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        for name in ("a", "C", "c", "d", "m", "m_hat", "dense"):
            value = np.array(getattr(self, name), dtype=np.float64)
            value.flags.writeable = False
            set_(self, name, value)
        s = self.c.size
        shapes = {"a": (s, s), "C": (s, s), "d": (s,), "m": (s,), "m_hat": (s,), "dense": (2, s)}
        for name, shape in shapes.items():
            if getattr(self, name).shape != shape:
                msg = f"{self.name}: {name} has shape {getattr(self, name).shape}; s={s} stages need {shape}"
                raise InvalidArgument(msg)
        for name in ("a", "C"):
            if np.any(np.triu(getattr(self, name)) != 0):
                msg = f"{self.name}: {name} must be strictly lower triangular (stage i uses stages j < i)"
                raise InvalidArgument(msg)
        if not (self.order <= 4 and self.error_order <= 4):
            msg = f"{self.name}: order={self.order}, error_order={self.error_order}; conditions go up to 4"
            raise InvalidArgument(msg)
        gam = np.linalg.inv(np.diag(np.full(s, 1.0 / self.gamma)) - self.C)
        alpha = self.a @ gam
        checks = [("row sums of alpha = c", np.max(np.abs(alpha.sum(axis=1) - self.c))),
                  ("row sums of Gamma = d", np.max(np.abs(gam.sum(axis=1) - self.d)))]
        checks += _conditions(alpha, gam, self.m @ gam, self.gamma, self.order)
        checks += [(f"embedded: {t}", r) for t, r in _conditions(alpha, gam, self.m_hat @ gam, self.gamma,
                                                                 self.error_order)]
        for text, residual in checks:
            if not abs(residual) <= ORDER_TOL:
                msg = f"{self.name}: condition {text} fails by {residual:.3g} (> {ORDER_TOL:g}); fix the data"
                raise InvalidArgument(msg)

    @property
    def stages(self) -> int:
        """Number of stages ``s``."""
        return self.c.size

    def arrays(self) -> tuple:
        """Return ``(gamma, a, C, c, d, m, e = m - m_hat, dense (2, s), DENSE_P)`` for the kernels."""
        copies = (x.copy() for x in (self.a, self.C, self.c, self.d, self.m))
        return (float(self.gamma), *copies, self.m - self.m_hat, self.dense.copy(), DENSE_P.copy())


def _lower(rows) -> np.ndarray:
    out = np.zeros((len(rows), len(rows)))
    for i, row in enumerate(rows):
        out[i, :i] = row
    return out


_A5 = (1.221224509226641, 6.019134481288629, 12.53708332932087, -0.6878860361058950)

#: RODAS (Hairer & Wanner, *Solving ODEs II*, IV.7; ``rodas.f``, METH=1): 6 stages, order 4, embedded
#: order 3, L-stable and stiffly accurate (the last two stages are the embedded and the propagated
#: solution, so the error estimate is the last stage :math:`u_6`); continuous extension of order 3.
#: On a stiff forced component (Prothero-Robinson, :math:`y' = \lambda(y - \varphi(t)) + \varphi'`)
#: its local error falls only like :math:`h\varphi''/\lambda` (order reduction).
RODAS4 = RosenbrockTableau(
    name="Rodas4",
    gamma=0.25,
    a=_lower([(), (1.544,), (0.9466785280815826, 0.2557011698983284),
              (3.314825187068521, 2.896124015972201, 0.9986419139977817), _A5, (*_A5, 1.0)]),
    C=_lower([(), (-5.6688,), (-2.430093356833875, -0.2063599157091915),
              (-0.1073529058151375, -9.594562251023355, -20.47028614809616),
              (7.496443313967647, -10.24680431464352, -33.99990352819905, 11.70890893206160),
              (8.083246795921522, -7.981132988064893, -31.52159432874371, 16.31930543123136,
               -6.058818238834054)]),
    c=(0.0, 0.386, 0.21, 0.63, 1.0, 1.0),
    d=(0.25, -0.1043, 0.1035, -0.03620000000000023, 0.0, 0.0),
    m=(*_A5, 1.0, 1.0),
    m_hat=(*_A5, 1.0, 0.0),
    dense=((10.12623508344586, -7.487995877610167, -34.80091861555747, -7.992771707568823,
            1.025137723295662, 0.0),
           (-0.6762803392801253, 6.087714651680015, 16.43084320892478, 24.76722511418386,
            -6.594389125716872, 0.0)),
    order=4,
    error_order=3,
)

_P5 = (-7.170454962423024, -4.741636671481785, -16.31002631330971, -1.062004044111401)

#: RODAS4P (Steinebach, *Order-reduction of ROW-methods for DAEs and method of lines applications*,
#: TH Darmstadt preprint 1741, 1995; the digits as in OrdinaryDiffEq.jl): the structure, orders and
#: stability of :data:`RODAS4`, with coefficients chosen so that the Prothero-Robinson problem shows
#: no order reduction (exact for cubic :math:`\varphi`, whatever :math:`h\lambda`), and a continuous
#: extension of order 3.
RODAS4P = RosenbrockTableau(
    name="Rodas4P",
    gamma=0.25,
    a=_lower([(), (3.0,), (1.831036793486759, 0.4955183967433795),
              (2.304376582692669, -0.05249275245743001, -1.176798761832782), _P5, (*_P5, 1.0)]),
    C=_lower([(), (-12.0,), (-8.791795173947035, -2.207865586973518),
              (10.81793056857153, 6.780270611428266, 19.53485944642410),
              (34.19095006749676, 15.49671153725963, 54.74760875964130, 14.16005392148534),
              (34.62605830930532, 15.30084976114473, 56.99955578662667, 18.40807009793095,
               -5.714285714285717)]),
    c=(0.0, 0.75, 0.21, 0.63, 1.0, 1.0),
    d=(0.25, -0.5, -0.023504, -0.0362, 0.0, 0.0),
    m=(*_P5, 1.0, 1.0),
    m_hat=(*_P5, 1.0, 0.0),
    dense=((25.09876703708589, 11.62013104361867, 28.49148307714626, -5.664021568594133, 0.0, 0.0),
           (1.638054557396973, -0.7373619806678748, 8.47791821923899, 15.9925314877952,
            -1.882352941176471, 0.0)),
    order=4,
    error_order=3,
)
