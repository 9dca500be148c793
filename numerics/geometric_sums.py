r"""Guarded closed forms of the weighted geometric sums S_j(c, n) = Σ_{k=0}^{n-1} k^j e^{-ck}, j = 0, 1, 2.

The sums stand in for O(n) loops in generated right-hand sides, so each function here is O(1)
(at most a fixed number of terms) and compiled with the house :func:`numerics._jit.jit`.
Domain: real c (c < 0: growing terms), integer n ≥ 1 passed as int or float. The accuracy
stated in each docstring was measured for c ∈ [-50, 700] (|c| down to 10⁻³⁰⁰, and 0) and
n ∈ [1, 10⁶], against mpmath (tests/numerics/test_geometric_sums.py says how). A sum that
overflows float64 gives ``inf``, never NaN.

Why regimes. The textbook r-form S_1 = r(1 - n r^{n-1} + (n-1) r^n)/(1 - r)², r = e^{-c}, loses
every digit when c·n is small; forms built on ∫₀ⁿ x^j e^{-cx} dx lose them when c is large
(S_1 ≈ e^{-c} while the integrals are O(1/c²)). Notation: a = |c|, m = n - 1, u = a·n,
E = e^{-u}, G = 1 - E = -expm1(-u), t = expm1(a). S_1 and S_2 are evaluated as follows; S_0
needs no regimes (see :func:`geometric_moment0`).

* c = 0: the power sums n(n-1)/2 and (n-1)n(2n-1)/6, exactly (integer arithmetic).
* direct, n ≤ 16 or a ≥ 3: at most 16 positive terms, added smallest first. For c > 0,
  Σ_{k<min(n,16)} k^j e^{-ck}: when a ≥ 3 the terms k ≥ 16 are below e^{-45}·16² < 2⁻⁵⁷ of the
  sum. For c < 0 the sum is reversed so that its terms decrease,
  Σ_{k<n} k^j e^{ak} = e^{am} Σ_{i<n} (m-i)^j e^{-ai}, and e^{am} overflows only with the sum.
* series, a·n < 4 (with n > 16, so a < 4/17): the Euler-Maclaurin identity of exponentials,
  Σ_{k<n} e^{-ck} = β(c)·∫₀ⁿ e^{-cx} dx with β(c) = c/(1 - e^{-c}) = Σ_k B_k⁺ c^k/k! (the
  Bernoulli series, radius 2π), differentiated in c. With I_k = ∫₀ⁿ x^k e^{-cx} dx:
  S_1 = β I_1 - β' I_0 and S_2 = β I_2 - 2β' I_1 + β'' I_0, where the subtracted terms are at
  most 16 % of the result (they are O(1/n) against it). I_k = n^{k+1} J_k(-cn) with
  J_k(z) = ∫₀¹ t^k e^{zt} dt from series of positive terms only: J_k(z) = Σ_p z^p/(p!(p+k+1))
  for z ≥ 0, J_k(z) = e^{z} Σ_p k!(-z)^p/(p+k+1)! for z < 0 (36 terms, compensated Horner).
  Taylor series of e^{z} in powers of z, and the expm1 forms of J_k, would cancel here.
* decaying, 0 < c < 1, c·n ≥ 4: the same identity with I_k = (k! - E·P_k(u))/c^{k+1},
  P_1 = 1 + u, P_2 = 2 + 2u + u², regrouped as c^{j+1} S_j = L_j(c) - E·T_j. Here
  L_j(c) = c^{j+1} Σ_{k≥0} k^j e^{-ck} are even series without cancellation for c < 1
  (L_1 = Σ (1-k) b_k c^k = 1 - c²/12 + ..., L_2 = Σ (k-1)(k-2) b_k c^k = 2 - c⁴/120 + ...,
  b_k = B_k⁺/k!), T_1 = β P_1 - cβ', T_2 = β P_2 - 2cβ' P_1 + c²β'', and E·T_j is at most
  0.26 L_j (at u = 4).
* decaying, 1 ≤ c < 3 (and n > 16): the r-forms in t = expm1(c), S_1 = (1+t)(G - ntE)/t² and
  S_2 = (1+t)((2+t)G - E·nt(nt + 2))/t³, expanded so that the leading (1+t) and (1+t)(2+t)
  are carried with their rounding errors. The tails ntE are below 17(e - 1)e^{-17} < 2·10⁻⁶,
  and an error of t enters with a factor below 2 (the r-forms in q = e^{-c}, g = 1 - q would
  need q and g³ and have about twice the error).
* growing, c < 0, a·n ≥ 4: the reversed r-forms in t = expm1(a),
  S_1 = e^{an}(mt - 1 + e^{-am})/t², S_2 = e^{an}((mt - 1)² + e^{a} - (1 + e^{a}) e^{-am})/t³,
  with every term positive (mt - 1 ≥ 2 is formed from the exact product m·t, e^{-am} < 0.05),
  and an error of t entering with a factor at most 1. e^{an} is taken as e^{am}·e^{a} where it
  alone would overflow before the sum.

The sums are very sensitive to c·n (∂ log S/∂ log c reaches |c|·n, 7·10⁸ here), so wherever
c·n matters the product is carried exactly as c·n = p + δ (Dekker's two-product) and the
rounding δ is put back to first order: e^{p+δ} = e^p + e^p δ, J_k(z + δ) = J_k(z) + δ J_{k+1}(z).
Every division by a power is by a double-double power, so it rounds once.
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
SERIES_SPAN = 4.0
"""Below this |c|·n (and for n > DIRECT_TERMS) the series form is used."""
GENTLE = 1.0
"""Below this c > 0 (and from SERIES_SPAN on) the Bernoulli limits L_j are used, above it the r-forms."""
GROWTH_LIMIT = 700.0
"""Below this |c|·n a factor e^{|c|·n} or expm1(|c|·n) is formed directly: it is finite."""

_SERIES_TERMS = 36  # 4³⁶/36! < 10⁻¹⁹: the J_k series at |z| < 4 to full precision
_COMPENSATED_TERMS = 12  # rounding errors of the Horner steps above this power are scaled by < 10⁻³
_SPLITTER = 134217729.0  # 2²⁷ + 1: Veltkamp's split of a double into two 26-bit halves


def _bernoulli_plus(count):
    """B_0⁺, ..., B_{count-1}⁺ (with B_1⁺ = +1/2) exactly, by the Akiyama-Tanigawa algorithm."""
    numbers, row = [], []
    for m in range(count):
        row.append(Fraction(1, m + 1))
        for i in range(m, 0, -1):
            row[i - 1] = i * (row[i - 1] - row[i])
        numbers.append(row[0])
    return numbers


def _double_double(values):
    """Each exact value as (high, low) float64 arrays with high + low = value to 2⁻¹⁰⁶."""
    high = [float(v) for v in values]
    low = [float(Fraction(v) - Fraction(h)) for v, h in zip(values, high, strict=True)]
    return np.array(high), np.array(low)


def _series_tables(coefficient):
    """(high, low) tables [k, p] of coefficient(k, p) for k = 0..3 and p < _SERIES_TERMS."""
    pairs = [_double_double([coefficient(k, p) for p in range(_SERIES_TERMS)]) for k in range(4)]
    return np.stack([high for high, _ in pairs]), np.stack([low for _, low in pairs])


# J_k(z) = Σ_p z^p / (p! (p+k+1)) for z ≥ 0; e^{-z} J_k(z) = Σ_p k! (-z)^p / (p+k+1)! for z < 0.
_RISING_HIGH, _RISING_LOW = _series_tables(lambda k, p: Fraction(1, math.factorial(p) * (p + k + 1)))
_FALLING_HIGH, _FALLING_LOW = _series_tables(
    lambda k, p: Fraction(math.factorial(k), math.factorial(p + k + 1))
)

# β(c) = c/(1 - e^{-c}) = Σ_k b_k c^k, b_k = B_k⁺/k!, to c³⁰: the rest is below 2(c/2π)³² < 2⁻⁸⁰ for |c| < 1.
_B = [number / math.factorial(k) for k, number in enumerate(_bernoulli_plus(31))]
_BETA = np.array([float(b) for b in _B])
_BETA_SLOPE = np.array([float(k * b) for k, b in enumerate(_B)][1:])
_BETA_CURVATURE = np.array([float(k * (k - 1) * b) for k, b in enumerate(_B)][2:])
# L_1(c) = c² Σ_k k e^{-ck} = Σ (1-k) b_k c^k and L_2(c) = c³ Σ_k k² e^{-ck} = Σ (k-1)(k-2) b_k c^k.
_FIRST_LIMIT = np.array([float((1 - k) * b) for k, b in enumerate(_B)])
_SECOND_LIMIT = np.array([float((k - 1) * (k - 2) * b) for k, b in enumerate(_B)])


@jit
def _product_error(x, y, product):
    """Return the rounding error x·y - fl(x·y), exactly (Dekker's two-product, no FMA needed)."""
    t = _SPLITTER * x
    x_high = t - (t - x)
    x_low = x - x_high
    t = _SPLITTER * y
    y_high = t - (t - y)
    y_low = y - y_high
    return ((x_high * y_high - product) + x_high * y_low + x_low * y_high) + x_low * y_low


@jit
def _sum_error(x, y, total):
    """Return the rounding error x + y - fl(x + y), exactly (Knuth's two-sum)."""
    y_part = total - x
    return (x - (total - y_part)) + (y - y_part)


@jit
def _exp_of_product(x, y):
    """e^{x·y} with the product carried exactly, e^{p+δ} = e^p + e^p δ; inf (not NaN) past overflow."""
    product = x * y
    scale = math.exp(product)
    if math.isinf(scale):
        return scale
    return scale + scale * _product_error(x, y, product)


@jit
def _growth_factor(a, last):
    """e^{a(last+1)}, as e^{a·last}·e^{a} where e^{a(last+1)} alone might overflow before the sum."""
    if a * (last + 1.0) < GROWTH_LIMIT:
        return _exp_of_product(a, last + 1.0)
    return _exp_of_product(a, last) * math.exp(a)


@jit
def _expm1_of_product(x, y):
    """e^{x·y} - 1 with the product carried exactly (for x·y < GROWTH_LIMIT)."""
    product = x * y
    return math.expm1(product) + math.exp(product) * _product_error(x, y, product)


@jit
def _one_minus_exp_of_product(x, y):
    """1 - e^{-x·y} (for x·y ≥ 0) with the product carried exactly."""
    product = x * y
    return -math.expm1(-product) + math.exp(-product) * _product_error(x, y, product)


@jit
def _divide_by_power(x, base, exponent):
    """Return x / base^exponent (exponent ≥ 1), the power carried as a double-double: one rounding."""
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
    """Σ_p coefficients[p]·x^p by Horner's rule."""
    total = 0.0
    for p in range(coefficients.shape[0] - 1, -1, -1):
        total = total * x + coefficients[p]
    return total


@jit
def _compensated_polynomial(high, low, x):
    """Σ_p (high[p] + low[p])·x^p for 0 ≤ x < 4 to about 1/2 ulp: compensated Horner (Graillat et al.).

    The steps of power ≥ _COMPENSATED_TERMS use plain Horner's rule (their rounding errors are
    scaled by their share of the sum, < 10⁻³); the last steps carry their rounding errors, and
    the low parts of the coefficients, in a second Horner sum added at the end.
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
    """Σ_{k<n} k^j at c = 0 for j ∈ {1, 2}: n(n-1)/2, (n-1)n(2n-1)/6, in integers and rounded once."""
    count = np.int64(n)
    if j == 1:
        return float(count * (count - 1) // 2)
    return float((count - 1) * count * (2 * count - 1) // 6)


@jit
def _direct_sum(j, c, n):
    """Σ_{k<n} k^j e^{-ck} from its first min(n, 16) terms, smallest first.

    For c < 0 the sum is reversed, e^{am} Σ_{i<n} (m-i)^j e^{-ai} (a = -c, m = n - 1), so that
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
    """β I_1 - β' I_0 (j = 1) or β I_2 - 2β' I_1 + β'' I_0 (j = 2), β(c) = c/(1 - e^{-c}) by its series."""
    beta = _polynomial(_BETA, c)
    slope = _polynomial(_BETA_SLOPE, c)
    if j == 1:
        return beta * integrals[1] - slope * integrals[0]
    curvature = _polynomial(_BETA_CURVATURE, c)
    return beta * integrals[2] - 2.0 * slope * integrals[1] + curvature * integrals[0]


@jit
def _series_form(j, c, n):
    """S_j for |c|·n < 4, n > 16: the β-combination of I_k = n^{k+1} J_k(-cn), J_k by series.

    For z = -cn < 0 the common factor e^{z} of the J_k is applied once, to the whole combination.
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
    """S_j for 0 < c < 1, c·n ≥ 4: (L_j(c) - e^{-cn} T_j)/c^{j+1}."""
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
def _decaying_closed_form(j, c, n):
    """S_j for 1 ≤ c < 3, n > 16, t = expm1(c), G = 1 - E, E = e^{-cn}.

    S_1 = (1+t)(G - ntE)/t² = ((1+t) - E(1+t)(1 + nt))/t² and
    S_2 = (1+t)((2+t)G - E·nt(nt + 2))/t³ = ((1+t)(2+t) - E(1+t)((2+t) + nt(nt + 2)))/t³, where
    the leading (1+t) or (1+t)(2+t) is carried with its rounding errors (two-sum, two-product).
    """
    t = math.expm1(c)
    tail = _exp_of_product(-c, n)
    up = 1.0 + t
    up_error = _sum_error(1.0, t, up)
    scaled = n * t
    if j == 1:
        return _divide_by_power(up + (up_error - tail * up * (1.0 + scaled)), t, 2)
    up2 = 2.0 + t
    up2_error = _sum_error(2.0, t, up2)
    product = up * up2
    product_error = _product_error(up, up2, product) + up * up2_error + up2 * up_error
    return _divide_by_power(product + (product_error - tail * up * (up2 + scaled * (scaled + 2.0))), t, 3)


@jit
def _growing_closed_form(j, a, n):
    """S_j for c = -a < 0, a·n ≥ 4, n > 16, t = expm1(a).

    S_1 = e^{an}(mt - 1 + e^{-am})/t², S_2 = e^{an}((mt - 1)² + e^a - (1 + e^a)e^{-am})/t³.
    """
    last = n - 1.0
    t = math.expm1(a)
    scaled = last * t
    excess = scaled - 1.0  # exact, as m·t ≥ 3 (m·t = mt - 1 + 1 is excess + excess_error + 1)
    excess_error = _product_error(last, t, scaled)
    remainder = _exp_of_product(-a, last)
    if j == 1:
        bracket = excess + (excess_error + remainder)
    else:
        square = excess * excess
        square_error = _product_error(excess, excess, square) + 2.0 * excess * excess_error
        bracket = square + (square_error + ((1.0 + t) - (2.0 + t) * remainder))
    return _growth_factor(a, last) * _divide_by_power(bracket, t, j + 1)


@jit
def _weighted_moment(j, c, n):
    """S_j(c, n) for j ∈ {1, 2} (n a float): the regime dispatch of the module docstring."""
    if c == 0.0:
        return _power_sum(j, n)
    rate = abs(c)
    if n <= DIRECT_TERMS or rate >= STEEP:
        return _direct_sum(j, c, n)
    if rate * n < SERIES_SPAN:
        return _series_form(j, c, n)
    if c < 0.0:
        return _growing_closed_form(j, rate, n)
    if c < GENTLE:
        return _decaying_integral_form(j, c, n)
    return _decaying_closed_form(j, c, n)


@jit
def geometric_moment0(c, n):
    """S_0(c, n) = Σ_{k<n} e^{-ck} = (1 - e^{-cn})/(1 - e^{-c}), for real c and integer n ≥ 1.

    c = 0: n. c > 0: expm1(-cn)/expm1(-c), for every c and n: a ratio of two factors that
    expm1 gives to about 1/2 ulp each, and neither is a difference. c < 0 (a = -c):
    expm1(an)/expm1(a) while a·n < 700; beyond, reversed as e^{a(n-1)}·expm1(-an)/expm1(-a),
    which overflows only with the sum itself (expm1(an) alone overflows up to a factor e^{a}
    too early). The product c·n is carried exactly, as the sum is sensitive to it.
    Measured error: at most 3.0 ulp (how: tests/numerics/test_geometric_sums.py).
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
    """S_1(c, n) = Σ_{k<n} k e^{-ck}, for real c and integer n ≥ 1.

    With a = |c|, m = n - 1, E = e^{-an}, G = 1 - E, t = expm1(a) (details in the module docstring):

    * c = 0: n(n-1)/2, exactly.
    * n ≤ 16 or a ≥ 3: the first min(n, 16) terms, all positive; for c < 0 reversed,
      e^{am} Σ_i (m-i) e^{-ai}, so that the terms decrease (the rest is < 2⁻⁵⁷ when a ≥ 3).
    * a·n < 4: β(c)·n²J_1(-cn) - β'(c)·nJ_0(-cn), β(c) = c/(1 - e^{-c}) by its Bernoulli series,
      J_k(z) = ∫₀¹ t^k e^{zt} dt by series of positive terms; the subtracted term is ≤ 14 %.
    * c < 0: e^{an}(mt - 1 + e^{-am})/t², all terms positive, mt - 1 from the exact m·t.
    * 0 < c < 1: (L_1(c) - E(β·(1 + cn) - cβ'))/c², with L_1(c) = c²e^{-c}/(1 - e^{-c})²
      = 1 - c²/12 + c⁴/240 - ... by its series (no cancellation for c < 1); the tail is ≤ 11 %.
    * 1 ≤ c < 3: ((1+t) - E(1+t)(1 + nt))/t² (= (1+t)(G - ntE)/t²); the tail is < 10⁻⁵.

    Measured error: at most 3.4 ulp (how: tests/numerics/test_geometric_sums.py).
    """
    return _weighted_moment(1, c, float(n))


@jit
def geometric_moment2(c, n):
    """S_2(c, n) = Σ_{k<n} k² e^{-ck}, for real c and integer n ≥ 1.

    With a = |c|, m = n - 1, E = e^{-an}, G = 1 - E, t = expm1(a), u = an (details in the
    module docstring):

    * c = 0: (n-1)n(2n-1)/6, exactly.
    * n ≤ 16 or a ≥ 3: the first min(n, 16) terms, as for :func:`geometric_moment1`.
    * a·n < 4: β n³J_2 - 2β' n²J_1 + β'' nJ_0 at z = -cn; the subtracted term is ≤ 16 %.
    * c < 0: e^{an}((mt - 1)² + e^a - (1 + e^a)e^{-am})/t³, all terms positive
      (e^{-am} < 0.05), (mt - 1)² from the exact m·t.
    * 0 < c < 1: (L_2(c) - E·T_2)/c³ with L_2(c) = c³e^{-c}(1 + e^{-c})/(1 - e^{-c})³
      = 2 - c⁴/120 + ... by its series and T_2 = β(2 + 2u + u²) - 2cβ'(1 + u) + c²β''; the
      tail E·T_2 is ≤ 26 % (at u = 4).
    * 1 ≤ c < 3: ((1+t)(2+t) - E(1+t)((2+t) + nt(nt + 2)))/t³ (= (1+t)((2+t)G - E·nt(nt + 2))/t³).

    Measured error: at most 3.6 ulp (how: tests/numerics/test_geometric_sums.py).
    """
    return _weighted_moment(2, c, float(n))


@jit
def geometric_moment(j, c, n):
    """S_j(c, n) = Σ_{k=0}^{n-1} k^j e^{-ck} for j ∈ {0, 1, 2} (NaN for any other j).

    Dispatches to :func:`geometric_moment0`, :func:`geometric_moment1`, :func:`geometric_moment2`,
    whose docstrings give the formulas; measured errors at most 3.0, 3.4 and 3.6 ulp.
    """
    if j == 0:
        return geometric_moment0(c, n)
    if j == 1:
        return geometric_moment1(c, n)
    if j == 2:
        return geometric_moment2(c, n)
    return math.nan
