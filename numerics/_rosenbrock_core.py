"""Building blocks of the Rosenbrock kernels that do not call the vector field: the linear algebra of a step.

They live in a real module of their own, so they are compiled and cached once for all vector
fields; :mod:`numerics._rosenbrock_template` (instantiated per field) calls them. Shapes: ``jmat``,
``w`` are (n, n) C-contiguous, ``piv`` (n,) int64, ``u`` (s, n) the stages of one step.
"""

import math

from numerics._jit import jit


@jit
def factor_iteration_matrix(jmat, fac, w, piv):
    """LU-decompose ``w = fac I - jmat`` in place (partial pivoting, ``piv[k]`` the row swapped with k).

    Returns False when a pivot is zero or not finite (``w`` singular to working precision or
    ``jmat`` non-finite); the caller then shortens the step or stops.
    """
    n = jmat.shape[0]
    for i in range(n):
        for j in range(n):
            w[i, j] = -jmat[i, j]
        w[i, i] += fac
    for k in range(n):
        p = k
        big = abs(w[k, k])
        for i in range(k + 1, n):
            if abs(w[i, k]) > big:
                big = abs(w[i, k])
                p = i
        piv[k] = p
        if not (big > 0.0 and math.isfinite(big)):
            return False
        if p != k:
            for j in range(n):
                tmp = w[k, j]
                w[k, j] = w[p, j]
                w[p, j] = tmp
        inv = 1.0 / w[k, k]
        for i in range(k + 1, n):
            w[i, k] *= inv
            lik = w[i, k]
            if lik != 0.0:
                for j in range(k + 1, n):
                    w[i, j] -= lik * w[k, j]
    return True


@jit
def lu_solve(w, piv, b):
    """Overwrite ``b`` with the solution of ``A x = b``, ``A`` given by :func:`factor_iteration_matrix`."""
    n = b.size
    for k in range(n):
        p = piv[k]
        if p != k:
            tmp = b[k]
            b[k] = b[p]
            b[p] = tmp
    for i in range(n):
        acc = b[i]
        for j in range(i):
            acc -= w[i, j] * b[j]
        b[i] = acc
    for i in range(n - 1, -1, -1):
        acc = b[i]
        for j in range(i + 1, n):
            acc -= w[i, j] * b[j]
        b[i] = acc / w[i, i]


@jit
def matrix_finite(a):
    """Whether every entry of the 2-D array ``a`` is finite."""
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            if not math.isfinite(a[i, j]):
                return False
    return True
