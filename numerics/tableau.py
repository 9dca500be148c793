r"""Butcher tableaux of embedded explicit Runge-Kutta pairs, as exact data checked when built.

A tableau with stages :math:`k_i = f(t + c_i h,\; y + h \sum_{j<i} a_{ij} k_j)` advances
:math:`y_1 = y + h \sum_j b_j k_j` and estimates the local error by
:math:`h \sum_j (b_j - \hat b_j) k_j`. Its dense output is
:math:`y(t + \theta h) = y + h \sum_j k_j \sum_m P_{jm} \theta^{m+1}`, :math:`0 \le \theta \le 1`.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from derivations.errors import InvalidArgument

Row = tuple[Fraction, ...]


def _fractions(values) -> Row:
    return tuple(Fraction(v) for v in values)


@dataclass(frozen=True)
class ButcherTableau:
    r"""An embedded explicit Runge-Kutta pair with FSAL and a polynomial dense output.

    Parameters
    ----------
    name : str
        Name of the method, e.g. ``"Dormand-Prince 5(4)"``.
    c, b, b_hat : sequence of rationals, length ``s``
        Nodes, weights of the propagated solution, weights of the embedded solution.
    a : sequence of ``s`` rows of rationals
        Row ``i`` holds :math:`a_{i0}, \dots, a_{i,i-1}` (explicit: strictly lower triangular).
    dense : sequence of ``s`` rows of rationals
        :math:`P_{jm}`, so that :math:`b_j(\theta) = \sum_m P_{jm} \theta^{m+1}`.
    order, error_order : int
        Orders of :math:`b` and :math:`\hat b`; the step-size controller uses ``error_order``.

    Raises
    ------
    InvalidArgument
        Unless, exactly in rational arithmetic, :math:`\sum_j a_{ij} = c_i`,
        :math:`\sum_j b_j = \sum_j \hat b_j = 1`, the last stage is FSAL
        (:math:`c_s = 1`, :math:`a_{sj} = b_j`), and :math:`b_j(1) = b_j`.
    """

    name: str
    c: Row
    a: tuple[Row, ...]
    b: Row
    b_hat: Row
    dense: tuple[Row, ...]
    order: int
    error_order: int

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "c", _fractions(self.c))
        set_(self, "b", _fractions(self.b))
        set_(self, "b_hat", _fractions(self.b_hat))
        set_(self, "a", tuple(_fractions(row) for row in self.a))
        set_(self, "dense", tuple(_fractions(row) for row in self.dense))
        s = len(self.c)
        for name in ("a", "b", "b_hat", "dense"):
            if len(getattr(self, name)) != s:
                msg = f"{name} has {len(getattr(self, name))} entries but c has s={s}; give one per stage"
                raise InvalidArgument(msg)
        for i, row in enumerate(self.a):
            if len(row) != i:
                msg = f"a[{i}] has {len(row)} entries; an explicit method needs exactly {i} (j < i)"
                raise InvalidArgument(msg)
            if sum(row, Fraction(0)) != self.c[i]:
                msg = f"sum(a[{i}])={sum(row, Fraction(0))} differs from c[{i}]={self.c[i]}; fix row {i}"
                raise InvalidArgument(msg)
        for name in ("b", "b_hat"):
            total = sum(getattr(self, name), Fraction(0))
            if total != 1:
                msg = f"sum({name})={total} must equal 1 (consistency); fix the weights"
                raise InvalidArgument(msg)
        if self.c[-1] != 1 or self.a[-1] + (Fraction(0),) != self.b:
            msg = f"{self.name}: last stage must be FSAL (c[-1]=1, a[-1]=b[:-1], b[-1]=0)"
            raise InvalidArgument(msg)
        widths = {len(row) for row in self.dense}
        if len(widths) != 1:
            msg = f"dense rows have lengths {sorted(widths)}; give one polynomial degree for all stages"
            raise InvalidArgument(msg)
        for j, row in enumerate(self.dense):
            if sum(row, Fraction(0)) != self.b[j]:
                msg = f"dense output b_{j}(1)={sum(row, Fraction(0))} differs from b[{j}]={self.b[j]}"
                raise InvalidArgument(msg)

    @property
    def stages(self) -> int:
        """Number of stages ``s``."""
        return len(self.c)

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Return float64 ``(A (s, s), b (s,), e = b - b_hat (s,), c (s,), P (s, m))``.

        ``e`` is formed in rational arithmetic before rounding, so that the error estimate
        does not suffer the cancellation of two nearly equal rounded weights.
        """
        s = self.stages
        a = np.zeros((s, s))
        for i, row in enumerate(self.a):
            a[i, :i] = [float(v) for v in row]
        b = np.array([float(v) for v in self.b])
        e = np.array([float(x - y) for x, y in zip(self.b, self.b_hat, strict=True)])
        c = np.array([float(v) for v in self.c])
        p = np.array([[float(v) for v in row] for row in self.dense])
        return a, b, e, c, p


F = Fraction

#: Dormand & Prince (1980) 5(4) pair with the 4th-order dense output of Hairer, Nørsett & Wanner,
#: *Solving ODEs I*, II.6 (the ``d`` coefficients of ``dopri5.f``, expanded into powers of θ).
DOPRI5 = ButcherTableau(
    name="Dormand-Prince 5(4)",
    c=(0, F(1, 5), F(3, 10), F(4, 5), F(8, 9), 1, 1),
    a=(
        (),
        (F(1, 5),),
        (F(3, 40), F(9, 40)),
        (F(44, 45), F(-56, 15), F(32, 9)),
        (F(19372, 6561), F(-25360, 2187), F(64448, 6561), F(-212, 729)),
        (F(9017, 3168), F(-355, 33), F(46732, 5247), F(49, 176), F(-5103, 18656)),
        (F(35, 384), 0, F(500, 1113), F(125, 192), F(-2187, 6784), F(11, 84)),
    ),
    b=(F(35, 384), 0, F(500, 1113), F(125, 192), F(-2187, 6784), F(11, 84), 0),
    b_hat=(F(5179, 57600), 0, F(7571, 16695), F(393, 640), F(-92097, 339200), F(187, 2100), F(1, 40)),
    dense=(
        (1, F(-8048581381, 2820520608), F(8663915743, 2820520608), F(-12715105075, 11282082432)),
        (0, 0, 0, 0),
        (0, F(131558114200, 32700410799), F(-68118460800, 10900136933), F(87487479700, 32700410799)),
        (0, F(-1754552775, 470086768), F(14199869525, 1410260304), F(-10690763975, 1880347072)),
        (0, F(127303824393, 49829197408), F(-318862633887, 49829197408), F(701980252875, 199316789632)),
        (0, F(-282668133, 205662961), F(2019193451, 616988883), F(-1453857185, 822651844)),
        (0, F(40617522, 29380423), F(-110615467, 29380423), F(69997945, 29380423)),
    ),
    order=5,
    error_order=4,
)
