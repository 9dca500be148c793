"""Special functions and a root finder that ``njit`` code calls: float64 in, float64 out, never raising.

* :func:`lambertw0`: the principal branch W₀ of the Lambert W function, w·e^w = y, w ≥ -1;
* :func:`lambertw0_exp`: W₀(e^x) for every real x, without forming e^x (no overflow);
* :func:`brent_root`, :func:`brent_root_args`: a bracketed root by Brent's method, step for step
  the algorithm of ``scipy.optimize.brentq``, so that both return the same root.

The root finders take the function as an argument, not a closure (which numba cannot cache);
they are compiled into their callers, see :func:`brent_root`.

Errors are values, as in the rest of :mod:`numerics`: an argument outside the domain (W₀ below
-1/e), a NaN argument, a bracket whose ends have the same sign or an iteration that does not
converge all give NaN, which the caller detects.
"""

from __future__ import annotations

import math

from numba import types
from numba.extending import overload

from numerics._jit import jit
from numerics._rk_core import inline_jit

#: 1/e split as hi + lo: hi is the double nearest 1/e (it lies above 1/e), lo = 1/e - hi.
_INV_E_HI = 0.36787944117144233
_INV_E_LO = -1.2428753672788363e-17
#: Below this y, W₀ is computed from the offset q = y + 1/e (the branch point region).
_BRANCH_REGION = -0.25
#: Above this y (x = log y > 1), W₀ is computed from w + log w = log y (no overflow of w·e^w).
_LOG_REGION = math.e
#: Below this |y| the Taylor series of W₀ at 0 is exact to rounding.
_SERIES_REGION = 1e-4
#: Relative Halley step below which the iteration stops: the cubic convergence makes the error
#: of the returned iterate ~ (step)³, far below rounding.
_STEP_TOL = 1e-9
_MAX_HALLEY = 16
_EPS = 2.220446049250313e-16


@jit
def _exp_minus_one_excess(u):
    """Return h(u) = u·e^u - expm1(u) = Σ_{k≥2} (k-1)·u^k/k! for 0 ≤ u ≤ 1, to rounding.

    The series has positive terms, so it has no cancellation where u·e^u - expm1(u) has.
    """
    term = u  # u^k / k! for k = 1
    total = 0.0
    for k in range(2, 40):
        term *= u / k
        piece = (k - 1) * term
        total += piece
        if piece <= _EPS * 0.125 * total:
            break
    return total


@jit
def _lambertw0_branch(y):
    """W₀(y) for -1/e ≤ y ≤ -1/4, from q = y + 1/e with u = 1 + w.

    w·e^w - y = h(u)/e - q with h(u) = u·e^u - expm1(u) (:func:`_exp_minus_one_excess`): both
    sides are known to relative rounding, so u (hence w = u - 1) is accurate even where
    w·e^w - y, the residual of the plain iteration, is pure cancellation (W₀ has slope
    1/(e^w(1+w)) → ∞ at the branch point). Start: the branch-point series
    u = p - p²/3 + 11p³/72 - 43p⁴/540 + 769p⁵/17280 - 221p⁶/8505 + O(p⁷), p = √(2e·q);
    then Halley steps on u. The double nearest -1/e (which is 1.2·10⁻¹⁷ below it) counts as the
    branch point: W₀ = -1 there.
    """
    # y + hi is exact (Sterbenz: y and -hi are within a factor 2), then one rounding for lo.
    q = (y + _INV_E_HI) + _INV_E_LO
    if q <= 0.0:
        return -1.0
    p = math.sqrt(2.0 * math.e * q)
    tail = 769.0 / 17280.0 - p * (221.0 / 8505.0)
    u = p * (1.0 + p * (-1.0 / 3.0 + p * (11.0 / 72.0 + p * (-43.0 / 540.0 + p * tail))))
    if p < 1e-3:
        return u - 1.0  # the O(p⁷) remainder is below rounding
    for _ in range(_MAX_HALLEY):
        eu = math.exp(u - 1.0)
        f = _exp_minus_one_excess(u) * _INV_E_HI - q
        d1 = u * eu
        d2 = (1.0 + u) * eu
        step = 2.0 * f * d1 / (2.0 * d1 * d1 - f * d2)
        u -= step
        if abs(step) <= _STEP_TOL * u:
            break
    return u - 1.0


@jit
def _lambertw0_direct(y):
    """W₀(y) for -1/4 < y ≤ e by Halley's iteration on w·e^w - y.

    Start: y - y² + 3y³/2 - 8y⁴/3 for y < 0; l·(1 - log(1+l)/(2+l)) with l = log(1+y) for
    y ≥ 0 (within 2 %).
    """
    if abs(y) < _SERIES_REGION:
        # W₀(y) = y - y² + 3y³/2 - 8y⁴/3 + 125y⁵/24 - O(y⁶): the remainder is below rounding
        return y * (1.0 - y * (1.0 - y * (1.5 - y * (8.0 / 3.0 - y * 125.0 / 24.0))))
    if y < 0.0:
        w = y * (1.0 - y * (1.0 - y * (1.5 - y * 8.0 / 3.0)))
    else:
        lg = math.log1p(y)
        w = lg * (1.0 - math.log1p(lg) / (2.0 + lg))
    for _ in range(_MAX_HALLEY):
        ew = math.exp(w)
        f = w * ew - y
        d1 = (w + 1.0) * ew
        step = f / (d1 - (w + 2.0) * f / (2.0 * w + 2.0))
        w -= step
        if abs(step) <= _STEP_TOL * abs(w):
            break
    return w


@jit
def _lambertw0_log(x):
    """W₀(e^x) for x ≥ 1 (w ≥ 1) by Halley's iteration on w + log(w) - x.

    In this form nothing overflows (x up to the largest double) and the residual has no
    cancellation: its rounding error is a few ulp of x, which moves w by a few ulp of w since
    dw/dx = w/(1 + w). Start: w = x - log(x) + log(x)/x (the asymptotic expansion, relative
    error O(log²x/x²)); at most a handful of steps for x near 1, one for large x.
    """
    if x == math.inf:
        return math.inf
    lx = math.log(x)
    w = x - lx + lx / x
    for _ in range(_MAX_HALLEY):
        f = w + math.log(w) - x
        d1 = 1.0 + 1.0 / w
        # Halley: f/(f' - f f''/(2f')), f'' = -1/w²
        step = f / (d1 + f / (2.0 * w * w * d1))
        w -= step
        if abs(step) <= _STEP_TOL * w:
            break
    return w


@jit
def lambertw0(y):
    """Return W₀(y), the principal branch of the Lambert W function: w·e^w = y, w ≥ -1.

    Defined for real y ≥ -1/e, where W₀(-1/e) = -1, W₀(0) = 0, W₀(e) = 1 and W₀(∞) = ∞; NaN
    below -1/e (the double nearest -1/e, -0.36787944117144233, counts as the branch point) and
    for NaN. Relative error within a few ulp over the whole domain, including next to the
    branch point where W₀ is steep (slope 1/(e^w (1 + w))):

    * y ≤ -1/4: Halley steps on u = 1 + w from the branch-point series in p = √(2(e·y + 1)),
      with e·y + 1 formed from a two-double 1/e (no cancellation);
    * -1/4 < y ≤ e: the Taylor series for |y| < 10⁻⁴, otherwise Halley steps on w·e^w - y;
    * y > e: Halley steps on w + log(w) = log(y), as :func:`lambertw0_exp` (no overflow).
    """
    if not y >= -_INV_E_HI:
        return math.nan
    if y <= _BRANCH_REGION:
        return _lambertw0_branch(y)
    if y <= _LOG_REGION:
        return _lambertw0_direct(y)
    return _lambertw0_log(math.log(y))


@jit
def lambertw0_exp(x):
    """Return W₀(e^x) for every real x, without forming e^x where it would overflow.

    W₀(e^x) is the solution w > 0 of w + log(w) = x. For x > 1 it is solved in that form
    (:func:`lambertw0` does the same with x = log y), so x = 10⁸ or 10³⁰⁰ costs nothing and loses
    nothing; for x ≤ 1, ``lambertw0(exp(x))`` (e^x ≤ e; below x ≈ -745, e^x and W₀(e^x) ≈ e^x
    underflow to 0). Both forms are accurate to a few ulp at the switch x = 1 (where W₀ = 1), so
    the function is continuous there, and it is one formula across x = 700 where e^x overflows
    soon after. NaN for NaN; W₀(e^∞) = ∞, W₀(e^-∞) = 0.
    """
    if x != x:
        return math.nan
    if x > 1.0:
        return _lambertw0_log(x)
    return lambertw0(math.exp(x))


@jit
def _same_sign(fa, fb):
    return math.copysign(1.0, fa) == math.copysign(1.0, fb)


def _evaluate(f, x, args):
    """Return f(x) when ``args`` is None, else f(x, args); jitted code gets the overload below."""
    return f(x) if args is None else f(x, args)


@overload(_evaluate, inline="always")
def _evaluate_jit(f, x, args):
    # chosen while typing, so that numba never types the call f does not take
    if isinstance(args, types.NoneType):
        return lambda f, x, args: f(x)
    return lambda f, x, args: f(x, args)


@inline_jit
def _brent(f, a, b, args, xtol, rtol, maxiter):
    """Brent's method, step for step as ``scipy.optimize.brentq`` (its C code, brentq.c)."""
    if not (xtol >= 0.0 and rtol == rtol and a == a and b == b):
        return math.nan
    rtol = max(rtol, 4.0 * _EPS)
    xpre, xcur = a * 1.0, b * 1.0
    xblk, fblk, spre, scur = 0.0, 0.0, 0.0, 0.0
    fpre = _evaluate(f, xpre, args)
    fcur = _evaluate(f, xcur, args)
    if fpre != fpre or fcur != fcur:
        return math.nan
    if fpre == 0.0:
        return xpre
    if fcur == 0.0:
        return xcur
    if _same_sign(fpre, fcur):
        return math.nan
    for _ in range(maxiter):
        if fcur != fcur:
            return math.nan
        if fpre != 0.0 and fcur != 0.0 and not _same_sign(fpre, fcur):
            xblk, fblk = xpre, fpre
            spre = scur = xcur - xpre
        if abs(fblk) < abs(fcur):
            xpre, xcur, xblk = xcur, xblk, xcur
            fpre, fcur, fblk = fcur, fblk, fcur
        delta = (xtol + rtol * abs(xcur)) / 2.0
        sbis = (xblk - xcur) / 2.0
        if fcur == 0.0 or abs(sbis) < delta:
            return xcur
        if abs(spre) > delta and abs(fcur) < abs(fpre):
            if xpre == xblk:
                stry = -fcur * (xcur - xpre) / (fcur - fpre)  # interpolate (secant)
            else:
                dpre = (fpre - fcur) / (xpre - xcur)  # extrapolate (inverse quadratic)
                dblk = (fblk - fcur) / (xblk - xcur)
                stry = -fcur * (fblk * dblk - fpre * dpre) / (dblk * dpre * (fblk - fpre))
            if 2.0 * abs(stry) < min(abs(spre), 3.0 * abs(sbis) - delta):
                spre, scur = scur, stry  # good short step
            else:
                spre = scur = sbis  # bisect
        else:
            spre = scur = sbis  # bisect
        xpre, fpre = xcur, fcur
        if abs(scur) > delta:
            xcur += scur
        else:
            xcur += delta if sbis > 0.0 else -delta
        fcur = _evaluate(f, xcur, args)
    return math.nan


@inline_jit
def brent_root(f, a, b, xtol, rtol, maxiter):
    """Return a root of f in [a, b] by Brent's method, the root ``scipy.optimize.brentq`` returns.

    Parameters
    ----------
    f
        A numba-jitted function (a dispatcher made with :func:`numerics._jit.jit` or ``njit``) of
        one float64 returning a float64; a plain Python function or a closure cannot be passed.
    a, b
        The bracket: f(a) and f(b) must have opposite signs (or one of them be 0).
    xtol, rtol
        The root is located within xtol + rtol·|x| (scipy's defaults: 2e-12 and 4·2⁻⁵², the
        smallest rtol accepted; a smaller rtol is raised to it). xtol must be ≥ 0.
    maxiter
        Most iterations (scipy's default: 100).

    Returns
    -------
    float
        The root; NaN when f(a) and f(b) have the same sign, f returns NaN, an argument is NaN,
        xtol < 0, or the iteration does not converge within ``maxiter`` (never raises).

    Compilation and caching: ``brent_root`` is compiled into its caller (``inline_jit``: numba
    inlines it), so a jitted caller with ``cache=True`` is cached whole, calls of f included, and
    is reloaded by the next process. It is not a cached function of its own because it cannot be
    one: numba passes a function argument as the address of that dispatcher object, and compiled
    code holding such an address is refused by numba's disk cache (a ``NumbaWarning``, then a
    recompilation in every process); inlined, f is a direct call. Called from Python, it is
    compiled once per process and per f (a fraction of a second) and nothing is written to disk.
    """
    return _brent(f, a, b, None, xtol, rtol, maxiter)


@inline_jit
def brent_root_args(f, a, b, args, xtol, rtol, maxiter):
    """Return a root of x ↦ f(x, args) in [a, b]: :func:`brent_root` with parameters, no closure.

    ``f`` is a numba-jitted function of (float64, float64 1-D array) returning a float64;
    ``args`` is that array (the data of the equation, passed unchanged to every call). All
    else as :func:`brent_root`, including NaN for a bad bracket or no convergence.
    """
    return _brent(f, a, b, args, xtol, rtol, maxiter)
