r"""Guarded closed forms of the weighted geometric sums S_j(c, n) = Σ_{k=0}^{n-1} k^j e^{-ck}, j = 0, 1, 2.

The sums stand in for O(n) loops in generated right-hand sides, so every function here is O(1)
(at most a fixed number of terms) and compiled with the house :func:`numerics._jit.jit`.
Domain: real c (c < 0: growing terms), integer n ≥ 1 given as int or float, n ≤ 10⁶; the
accuracy below was measured for c ∈ [-50, 700]. A sum that overflows float64 gives ``inf``.

The textbook closed forms cancel: the r-form S_1 = r(1 - n r^{n-1} + (n-1) r^n)/(1 - r)² with
r = e^{-c} loses every digit when c·n is small, and forms built on ∫₀ⁿ x^j e^{-cx} dx lose
them when c is large. So S_1 and S_2 are evaluated in one of these regimes, with a = |c|,
m = n - 1, u = a·n, q = e^{-a}, g = 1 - q = -expm1(-a), E = e^{-u}, G = 1 - E = -expm1(-u):

* c = 0: the power sums n(n-1)/2 and (n-1)n(2n-1)/6, exactly.
* direct, n ≤ 16 or a ≥ 3: at most 16 positive terms. For c > 0, Σ_{k<min(n,16)} k^j e^{-ck}:
  when a ≥ 3 a term k ≥ 16 is below e^{-45}·16² ≈ 2⁻⁵⁷ of the sum. For c < 0 the sum is
  reversed so that its terms decrease, Σ_{k<n} k^j e^{ak} = e^{am} Σ_{i<n} (m-i)^j e^{-ai}.
* r-forms, 1/4 ≤ a < 3 (so n > 16 and u > 4): for c > 0, S_1 = qG/g² - nE/g and
  S_2 = q(1+q)G/g³ - E(n²/g + 2nq/g²), whose subtracted tails are at most 9 % and 24 % of the
  result (the worst case is n = 17, a = 1/4); for c < 0, S_j = e^{am} R_j with
  R_1 = (m - w)/g + E/g² and R_2 = (m - w)²/g + (q - (1+q)E)/g³, where w = q/g = 1/expm1(a)
  < 1/a ≤ n/4, so every term is positive and m - w > 0.7 m.
* integral forms, a < 1/4 (and n > 16): the Euler–Maclaurin identity of exponentials,
  Σ_{k<n} e^{-ck} = β(c)·∫₀ⁿ e^{-cx} dx with β(c) = c/(1 - e^{-c}) = Σ B_k⁺ c^k/k! (the
  Bernoulli series, radius 2π), differentiated in c with I_k = ∫₀ⁿ x^k e^{-cx} dx:
  S_1 = β I_1 - β' I_0 and S_2 = β I_2 - 2β' I_1 + β'' I_0. The subtracted terms are at most
  about 1/n or a/2 of the result. The integrals I_k = n^{k+1} J_k(-cn), J_k(z) = ∫₀¹ t^k e^{zt} dt:

  - u < 4: series with positive terms only, J_k(z) = Σ_p z^p/(p!(p+k+1)) for z ≥ 0 and
    J_k(z) = e^{z} Σ_p k!(-z)^p/(p+k+1)! for z < 0 (36 terms, compensated Horner);
  - u ≥ 4, c > 0: I_k = (k! - E·P_k(u))/c^{k+1} with P_1 = 1 + u, P_2 = 2 + 2u + u², so that
    c^{j+1} S_j = L_j(c) - E·T_j, where L_j(c) = c^{j+1} Σ_{k≥0} k^j e^{-ck} is an even
    series (L_1 = 1 - c²/12 + ..., L_2 = 2 - c⁴/120 + ...), T_1 = β P_1 - cβ',
    T_2 = β P_2 - 2cβ' P_1 + c²β'', and E·T_j ≤ 0.24 L_j;
  - u ≥ 4, c < 0: I_k = e^{u} Y_k/a^{k+1} with Y_0 = G, Y_1 = (u - 1) + E and
    Y_2 = (u - 1)² + 1 - 2E, all sums of positive terms (β's taken at c = -a).

The sums are very sensitive to c·n (∂ log S/∂ log c reaches |c|·n, 7·10⁸ here), so wherever
c·n matters the product is carried exactly as c·n = p + δ (Dekker's two-product) and the
rounding δ is put back to first order: e^{p+δ} = e^p(1 + δ), J_k(z + δ) = J_k(z) + δ J_{k+1}(z).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from numerics._jit import jit

DIRECT_TERMS = 16
"""Sums of at most this many terms are added term by term."""
STEEP = 3.0
"""From this |c| on the sum is direct: its terms from k = 16 on are below 2⁻⁵⁷ of it."""
GENTLE = 0.25
"""Below this |c| the integral forms are used, from it to STEEP the r-forms."""
SERIES_SPAN = 4.0
"""Below this |c|·n the integrals J_k come from their power series."""
GROWTH_LIMIT = 700.0
"""Below this -c·n (c < 0) S_0 = expm1(-cn)/expm1(-c) is used unreversed: expm1(-cn) is finite."""

_SERIES_TERMS = 36  # 4³⁶/36! < 10⁻¹⁹: the J_k series at |z| < 4 to full precision
_COMPENSATED_TERMS = 12  # Horner steps below this power are error-free; above it they weigh < 2⁻⁶⁰
_SPLITTER = 134217729.0  # 2²⁷ + 1: Veltkamp's split of a double into two 26-bit halves


def _rounded_pair(values):
    """Each value as a double-double (hi, lo): two float64 arrays with hi + lo = value to 2⁻¹⁰⁶."""
    high = [float(v) for v in values]
    low = [float(Fraction(v) - Fraction(h)) for v, h in zip(values, high, strict=True)]
    return np.array(high), np.array(low)


def _rising_coefficients(k):
    """Coefficients of J_k(z) = Σ_p z^p / (p! (p + k + 1)), for z ≥ 0."""
    return [Fraction(1, math.factorial(p) * (p + k + 1)) for p in range(_SERIES_TERMS)]


def _falling_coefficients(k):
    """Coefficients of e^{-z} J_k(z) = Σ_p k! (-z)^p / (p + k + 1)!, for z < 0."""
    return [Fraction(math.factorial(k), math.factorial(p + k + 1)) for p in range(_SERIES_TERMS)]


_RISING_HIGH, _RISING_LOW = (np.stack(part) for part in zip(
    *(_rounded_pair(_rising_coefficients(k)) for k in range(4)), strict=True))  # fmt: skip
_FALLING_HIGH, _FALLING_LOW = (np.stack(part) for part in zip(
    *(_rounded_pair(_falling_coefficients(k)) for k in range(4)), strict=True))  # fmt: skip

# β(c) = c/(1 - e^{-c}) = Σ_k b_k c^k with b_k = B_k⁺/k! (Bernoulli numbers, B_1⁺ = 1/2), to c¹⁶.
_B = [Fraction(1), Fraction(1, 2), Fraction(1, 12), 0, Fraction(-1, 720), 0, Fraction(1, 30240), 0,
      Fraction(-1, 1209600), 0, Fraction(1, 47900160), 0, Fraction(-691, 1307674368000), 0,
      Fraction(1, 74724249600), 0, Fraction(-3617, 10670622842880000)]  # fmt: skip
_BETA = np.array([float(b) for b in _B])
_BETA_SLOPE = np.array([float(k * b) for k, b in enumerate(_B)][1:])
_BETA_CURVATURE = np.array([float(k * (k - 1) * b) for k, b in enumerate(_B)][2:])
# L_1(c) = c² Σ_k k e^{-ck} = Σ (1-k) b_k c^k and L_2(c) = c³ Σ_k k² e^{-ck} = Σ (k-1)(k-2) b_k c^k.
_FIRST_LIMIT = np.array([float((1 - k) * b) for k, b in enumerate(_B)])
_SECOND_LIMIT = np.array([float((k - 1) * (k - 2) * b) for k, b in enumerate(_B)])


@jit
def _product_error(x, y, product):
    """Return the rounding error x·y - fl(x·y) exactly (Dekker's two-product, no FMA)."""
    t = _SPLITTER * x
    x_high = t - (t - x)
    x_low = x - x_high
    t = _SPLITTER * y
    y_high = t - (t - y)
    y_low = y - y_high
    return ((x_high * y_high - product) + x_high * y_low + x_low * y_high) + x_low * y_low


@jit
def _sum_error(x, y, total):
    """Return the rounding error x + y - fl(x + y) exactly (Knuth's two-sum)."""
    y_part = total - x
    return (x - (total - y_part)) + (y - y_part)


@jit
def _exp_of_product(x, y):
    """e^{x·y} with the product carried exactly: e^{p+δ} = e^p + e^p δ; inf (not NaN) past overflow."""
    product = x * y
    scale = math.exp(product)
    if math.isinf(scale):
        return scale
    return scale + scale * _product_error(x, y, product)


@jit
def _expm1_of_product(x, y):
    """e^{x·y} - 1 with the product carried exactly (finite below x·y ≈ 709.78)."""
    product = x * y
    return math.expm1(product) + math.exp(product) * _product_error(x, y, product)


@jit
def _one_minus_exp_of_product(x, y):
    """1 - e^{-x·y} (for x·y ≥ 0) with the product carried exactly."""
    product = x * y
    return -math.expm1(-product) + math.exp(-product) * _product_error(x, y, product)


@jit
def _divide_by_power(x, base, exponent):
    """x / base^exponent for exponent ≥ 1, the power carried as a double-double (one rounding in all)."""
    high = base
    low = 0.0
    for _ in range(exponent - 1):
        product = high * base
        low = _product_error(high, base, product) + low * base
        high = product
    quotient = x / high
    return quotient - quotient * (low / high)


@jit
def _power(x, j):
    """x^j for j ∈ {0, 1, 2}, with 0⁰ = 1."""
    if j == 0:
        return 1.0
    if j == 1:
        return x
    return x * x


@jit
def _polynomial(coefficients, x):
    """Horner's rule for Σ_p coefficients[p]·x^p."""
    total = 0.0
    for p in range(coefficients.shape[0] - 1, -1, -1):
        total = total * x + coefficients[p]
    return total


@jit
def _compensated_polynomial(high, low, x):
    """Σ_p (high[p] + low[p])·x^p for x ≥ 0 to about 1/2 ulp: compensated Horner (Graillat et al.).

    The terms of power ≥ _COMPENSATED_TERMS go through plain Horner's rule (they weigh less than
    2⁻⁶⁰ of the sum for x < 4); the last steps carry their rounding errors, and the low parts
    of the coefficients, in a second Horner sum that is added at the end.
    """
    total = 0.0
    for p in range(high.shape[0] - 1, _COMPENSATED_TERMS - 1, -1):
        total = total * x + high[p]
    correction = 0.0
    for p in range(_COMPENSATED_TERMS - 1, -1, -1):
        product = total * x
        product_error = _product_error(total, x, product)
        total = product + high[p]
        correction = correction * x + (product_error + _sum_error(product, high[p], total) + low[p])
    return total + correction


@jit
def _power_sum(j, n):
    """Σ_{k<n} k^j at c = 0: n(n-1)/2, (n-1)n(2n-1)/6 (in integers, then rounded once)."""
    count = np.int64(n)
    if j == 1:
        return float(count * (count - 1) // 2)
    return float((count - 1) * count * (2 * count - 1) // 6)


@jit
def _direct_sum(j, c, n):
    """Σ_{k<n} k^j e^{-ck} from its first min(n, 16) terms, smallest first.

    For c < 0 the sum is reversed, e^{am} Σ_{i<n} (m-i)^j e^{-ai} (a = -c, m = n-1), so that
    the terms decrease and the one large factor e^{am} is formed from the exact product a·m.
    """
    count = min(np.int64(n), DIRECT_TERMS)
    total = 0.0
    if c >= 0.0:
        for k in range(count - 1, -1, -1):
            total += _power(float(k), j) * math.exp(-c * k)
        return total
    last = n - 1.0
    for i in range(count - 1, -1, -1):
        total += _power(last - i, j) * math.exp(c * i)
    return _exp_of_product(-c, last) * total


@jit
def _bernoulli_combination(j, c, integrals):
    """Σ_i C(j,i) (-d/dc)^i β(c) · integrals[j-i] for j ∈ {1, 2}: β I_1 - β' I_0, β I_2 - 2β' I_1 + β'' I_0."""
    beta = _polynomial(_BETA, c)
    slope = _polynomial(_BETA_SLOPE, c)
    if j == 1:
        return beta * integrals[1] - slope * integrals[0]
    curvature = _polynomial(_BETA_CURVATURE, c)
    return beta * integrals[2] - 2.0 * slope * integrals[1] + curvature * integrals[0]


@jit
def _series_form(j, c, n):
    """S_j for |c| < 1/4, |c|·n < 4: β-combination of I_k = n^{k+1} J_k(z), z = -cn, J_k from series.

    For z < 0 the common factor e^{z} of the J_k is applied once, to the whole combination.
    """
    z = -c * n
    z_error = _product_error(-c, n, z)
    series = np.empty(4)
    if z >= 0.0:
        scale = 1.0
        for k in range(4):
            series[k] = _compensated_polynomial(_RISING_HIGH[k], _RISING_LOW[k], z)
    else:
        scale = math.exp(z)
        for k in range(4):
            series[k] = _compensated_polynomial(_FALLING_HIGH[k], _FALLING_LOW[k], -z)
    integrals = np.empty(3)
    for k in range(3):
        integrals[k] = _power(n, k) * n * (series[k] + z_error * series[k + 1])
    return scale * _bernoulli_combination(j, c, integrals)


@jit
def _decaying_integral_form(j, c, n):
    """S_j for 0 < c < 1/4, c·n ≥ 4: (L_j(c) - e^{-cn} T_j)/c^{j+1} (see the module docstring)."""
    u = c * n
    tail = _exp_of_product(-c, n)
    beta = _polynomial(_BETA, c)
    slope = c * _polynomial(_BETA_SLOPE, c)
    first = 1.0 + u
    if j == 1:
        return _divide_by_power(_polynomial(_FIRST_LIMIT, c) - tail * (beta * first - slope), c, 2)
    curvature = c * c * _polynomial(_BETA_CURVATURE, c)
    second = 2.0 + u * (2.0 + u)
    weight = beta * second - 2.0 * slope * first + curvature
    return _divide_by_power(_polynomial(_SECOND_LIMIT, c) - tail * weight, c, 3)


@jit
def _growing_integral_form(j, a, n):
    """S_j for c = -a, 0 < a < 1/4, a·n ≥ 4: e^{an} β-combination of Y_k/a^{k+1} (module docstring)."""
    u = a * n
    u_error = _product_error(a, n, u)
    start = u - 1.0  # exact: u ≥ 4
    tail = _exp_of_product(-a, n)
    square = start * start  # (u - 1)² = start² + 2·start·u_error to first order
    square_error = _product_error(start, start, square) + 2.0 * start * u_error
    scaled = np.empty(3)  # a^{j+1} I_k / e^{an} = a^{j-k} Y_k
    scaled[0] = _power(a, j) * _one_minus_exp_of_product(a, n)
    scaled[1] = _power(a, j - 1) * ((start + u_error) + tail)
    scaled[2] = square + (square_error + (1.0 - 2.0 * tail))
    return _exp_of_product(a, n) * _divide_by_power(_bernoulli_combination(j, -a, scaled), a, j + 1)


@jit
def _decaying_closed_form(j, c, n):
    """S_j for 1/4 ≤ c < 3: S_1 = qG/g² - nE/g, S_2 = q(1+q)G/g³ - E(n²/g + 2nq/g²)."""
    q = math.exp(-c)
    g = -math.expm1(-c)
    tail = _exp_of_product(-c, n)
    head = _one_minus_exp_of_product(c, n)
    if j == 1:
        return _divide_by_power(q * head - n * tail * g, g, 2)
    return _divide_by_power(q * (1.0 + q) * head - tail * n * (n * g + 2.0 * q) * g, g, 3)


@jit
def _growing_closed_form(j, a, n):
    """S_j for c = -a, 1/4 ≤ a < 3: e^{am} R_j, R_1 = (m - w)/g + E/g², R_2 = (m - w)²/g + (q - (1+q)E)/g³."""
    last = n - 1.0
    q = math.exp(-a)
    g = -math.expm1(-a)
    excess = last - 1.0 / math.expm1(a)
    tail = _exp_of_product(-a, n)
    if j == 1:
        reversed_sum = _divide_by_power(excess * g + tail, g, 2)
    else:
        reversed_sum = _divide_by_power((excess * g) ** 2 + (q - (1.0 + q) * tail), g, 3)
    return _exp_of_product(a, last) * reversed_sum


@jit
def _weighted_moment(j, c, n):
    """S_j(c, n) for j ∈ {1, 2}: the regime dispatch described in the module docstring."""
    if c == 0.0:
        return _power_sum(j, n)
    rate = abs(c)
    if n <= DIRECT_TERMS or rate >= STEEP:
        return _direct_sum(j, c, n)
    if rate >= GENTLE:
        if c > 0.0:
            return _decaying_closed_form(j, c, n)
        return _growing_closed_form(j, rate, n)
    if rate * n < SERIES_SPAN:
        return _series_form(j, c, n)
    if c > 0.0:
        return _decaying_integral_form(j, c, n)
    return _growing_integral_form(j, rate, n)


@jit
def geometric_moment0(c, n):
    """S_0(c, n) = Σ_{k<n} e^{-ck} = (1 - e^{-cn})/(1 - e^{-c}).

    c > 0: expm1(-cn)/expm1(-c), a ratio of two relative-accurate factors, neither of which
    cancels, for every c and n. c < 0: expm1(-cn)/expm1(-c) while -cn < 700; beyond, reversed
    as e^{a(n-1)}·expm1(-an)/expm1(-a) at a = -c, which overflows only with the sum itself
    (expm1(an) alone would overflow up to a factor e^{a} too early). c = 0: n. The product c·n
    is carried exactly (see the module docstring).
    Measured error: at most 2.4 ulp (dense grid, see the tests' module docstring).
    """
    n = float(n)
    if c == 0.0:
        return n
    if c > 0.0:
        return _one_minus_exp_of_product(c, n) / -math.expm1(-c)
    a = -c
    if a * n < GROWTH_LIMIT:
        return _expm1_of_product(a, n) / math.expm1(a)
    return _exp_of_product(a, n - 1.0) * (_one_minus_exp_of_product(a, n) / -math.expm1(-a))


@jit
def geometric_moment1(c, n):
    """S_1(c, n) = Σ_{k<n} k e^{-ck}.

    Regimes (a = |c|, q = e^{-a}, g = 1 - q, E = e^{-an}, G = 1 - E, m = n - 1; details and
    stability arguments in the module docstring):
    c = 0 → n(n-1)/2; n ≤ 16 or a ≥ 3 → direct sum of ≤ 16 positive terms (reversed, times
    e^{am}, for c < 0); 1/4 ≤ a < 3 → qG/g² - nE/g for c > 0 (tail ≤ 9 %),
    e^{am}[(m - 1/expm1(a))/g + E/g²] for c < 0 (positive terms); a < 1/4 →
    β(c) I_1 - β'(c) I_0 with β(c) = c/(1 - e^{-c}) (Bernoulli series) and I_k = ∫₀ⁿ x^k e^{-cx} dx
    from a positive series when a·n < 4, as (1 - c²/12 + ... - E(β(1 + an) - cβ'))/c² for
    c > 0 and as e^{an}(β(u - 1 + E) - aβ'G)/a² for c < 0 when a·n ≥ 4.
    Measured error: at most 3 ulp (dense grid, see the tests' module docstring).
    """
    return _weighted_moment(1, c, float(n))


@jit
def geometric_moment2(c, n):
    """S_2(c, n) = Σ_{k<n} k² e^{-ck}.

    Regimes as for :func:`geometric_moment1` (details in the module docstring): c = 0 →
    (n-1)n(2n-1)/6; n ≤ 16 or |c| ≥ 3 → direct; 1/4 ≤ |c| < 3 → q(1+q)G/g³ - E(n²/g + 2nq/g²)
    for c > 0 (tail ≤ 24 %) and e^{am}[(m - 1/expm1(a))²/g + (q - (1+q)E)/g³] for c < 0;
    |c| < 1/4 → β I_2 - 2β' I_1 + β'' I_0, the I_k from a positive series when |c|·n < 4, as
    (2 - c⁴/120 + ... - E·T_2)/c³ for c > 0 and as e^{an}·(...)/a³ with positive terms for c < 0.
    Measured error: at most 4 ulp (dense grid, see the tests' module docstring).
    """
    return _weighted_moment(2, c, float(n))


@jit
def geometric_moment(j, c, n):
    """S_j(c, n) = Σ_{k=0}^{n-1} k^j e^{-ck} for j ∈ {0, 1, 2} (NaN for any other j)."""
    if j == 0:
        return geometric_moment0(c, n)
    if j == 1:
        return geometric_moment1(c, n)
    if j == 2:
        return geometric_moment2(c, n)
    return math.nan
