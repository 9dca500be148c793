r"""The 1-layer Y, Z model of "Scan and Snap" (spec §2.3–§2.6): objective and gradients in three forms.

One sample: contextual tokens with counts N (M ints, Σ N = T − 1), last token m, next token n. With
``key_query`` False (option ``z_index=query_key``, canonical) the attention logits are the row z = Z[m, :];
with True (``key_query``) the column Z[:, m].

* attention-averaged one-hot v_l = N_l e^{z_l}/Σ_l' N_l' e^{z_l'} (= X ᵀb_T), feature f = v/‖v‖;
* decoder logits o = Yᵀf, α = softmax(o), objective J₁ = o_n − log Σ e^{o} (= log α_n, Eqn 2 per sample);
* gradients (Lemma 1 / Eqn 3 and Eqn 4 in counts form, spec ``ss.dv.row_form``): with d = e_n − α, g = Yd,
  ∂J₁/∂Y = f dᵀ, ∂J₁/∂z = ‖v‖^{-1} v ∘ (g − f(fᵀg)); the other rows (columns) of Z get 0.

Forms: ``counts`` (above, exact for any T), ``sequence`` (X materialised: b_t = softmax over positions,
v = Xᵀb and Eqn 4 read literally, Xᵀdiag(b)X P^⊥_v/‖v‖ · Yd, for validation), ``T_inf`` (v = c_n: N replaced by
ℙ(·|n), Lemma 2). Units: dimensionless; J in nats.

:func:`loss_analytic` is a separate NumPy implementation, complex-dtype safe (softmaxes shifted by the real
part only), for complex-step differentiation; it shares no code with the kernels.
"""

from __future__ import annotations

import math

import numpy as np

from numerics._jit import jit


@jit
def _logits(Z, m, M, key_query, z):
    for l in range(M):
        z[l] = Z[l, m] if key_query else Z[m, l]


@jit
def attention_counts(Z, counts, m, key_query, v):
    """v = Xᵀb_T from the counts (N_l e^{z_l} normalised over the support, shifted by the largest z)."""
    M = counts.shape[0]
    z = np.empty(M)
    _logits(Z, m, M, key_query, z)
    top = -math.inf
    for l in range(M):
        if counts[l] > 0 and z[l] > top:
            top = z[l]
    total = 0.0
    for l in range(M):
        v[l] = counts[l] * math.exp(z[l] - top) if counts[l] > 0 else 0.0
        total += v[l]
    for l in range(M):
        v[l] /= total


@jit
def sample_gradient(Y, v, n, gY, gz, weight):
    """Add ``weight``·∂J₁/∂Y to ``gY`` and ``weight``·∂J₁/∂z to ``gz`` for the attention vector ``v``; return J₁.

    ∂J₁/∂Y = f dᵀ (only rows with v_l > 0 are touched), ∂J₁/∂z = ‖v‖^{-1} v ∘ (g − f(fᵀg)), g = Y d, d = e_n − α.
    """
    M = v.shape[0]
    norm = 0.0
    for l in range(M):
        norm += v[l] * v[l]
    norm = math.sqrt(norm)
    o = np.zeros(M)
    for l in range(M):
        if v[l] != 0.0:
            f = v[l] / norm
            for k in range(M):
                o[k] += Y[l, k] * f
    top = -math.inf
    for k in range(M):
        if o[k] > top:
            top = o[k]
    total = 0.0
    for k in range(M):
        total += math.exp(o[k] - top)
    log_total = top + math.log(total)
    d = np.empty(M)
    for k in range(M):
        d[k] = (1.0 if k == n else 0.0) - math.exp(o[k] - log_total)
    fg = 0.0
    g = np.zeros(M)
    for l in range(M):
        if v[l] != 0.0:
            acc = 0.0
            for k in range(M):
                acc += Y[l, k] * d[k]
            g[l] = acc
            fg += v[l] / norm * acc
            f = v[l] / norm
            for k in range(M):
                gY[l, k] += weight * f * d[k]
    for l in range(M):
        if v[l] != 0.0:
            gz[l] += weight * v[l] / norm * (g[l] - v[l] / norm * fg)
    return o[n] - log_total


@jit
def gradient_counts(Y, Z, counts, m, n, key_query, gY, gZ):
    """∂J₁/∂Y and ∂J₁/∂Z (written into ``gY``, ``gZ``, zeroed first) of one sample in counts form; return J₁."""
    M = counts.shape[0]
    gY[:, :] = 0.0
    gZ[:, :] = 0.0
    v = np.empty(M)
    attention_counts(Z, counts, m, key_query, v)
    gz = np.zeros(M)
    J = sample_gradient(Y, v, n, gY, gz, 1.0)
    for l in range(M):
        if key_query:
            gZ[l, m] = gz[l]
        else:
            gZ[m, l] = gz[l]
    return J


@jit
def gradient_T_inf(Y, Z, p, m, n, key_query, gY, gZ):
    """The same with v = c_n (ℙ(·|n) ∘ e^{z} normalised): the T = ∞ form (Lemma 2)."""
    return gradient_counts(Y, Z, p, m, n, key_query, gY, gZ)


def gradient_sequence(Y, Z, tokens, m, n, key_query=False):
    """Eqns 1, 3 and 4 read literally on an explicit sequence (NumPy; for validation).

    b_t = softmax_t(z_{x_t}) over the T − 1 contextual positions; v = Xᵀb; f = v/‖v‖; α = softmax(Yᵀf);
    ∂J/∂Y = f(e_n − α)ᵀ (Eqn 3); ∂J/∂z_m = Xᵀdiag(b)X · P^⊥_v/‖v‖ · Y(e_n − α) (Eqn 4). Returns (J₁, gY, gZ).
    """
    M = Y.shape[0]
    X = np.zeros((len(tokens), M))
    X[np.arange(len(tokens)), tokens] = 1.0
    z = Z[:, m] if key_query else Z[m, :]
    a = X @ z
    b = np.exp(a - a.max())
    b /= b.sum()
    v = X.T @ b
    norm = np.linalg.norm(v)
    f = v / norm
    o = Y.T @ f
    alpha = np.exp(o - o.max())
    alpha /= alpha.sum()
    d = np.eye(M)[n] - alpha
    gY = np.outer(f, d)
    projector = np.eye(M) - np.outer(v, v) / norm**2
    row = X.T @ np.diag(b) @ X @ projector / norm @ Y @ d
    gZ = np.zeros((M, M))
    if key_query:
        gZ[:, m] = row
    else:
        gZ[m, :] = row
    J = o[n] - (o.max() + np.log(np.exp(o - o.max()).sum()))
    return J, gY, gZ


def loss_analytic(theta, M, counts, m, n, key_query=False):
    """J₁ as an analytic function of θ = (vec Y, vec Z), NumPy, real or complex dtype (complex-step safe)."""
    theta = np.asarray(theta)
    Y = theta[: M * M].reshape(M, M)
    Z = theta[M * M:].reshape(M, M)
    z = Z[:, m] if key_query else Z[m, :]
    support = np.asarray(counts) > 0
    shift = np.max(z.real[support])
    w = np.where(support, np.asarray(counts, dtype=float) * np.exp(z - shift), 0)
    v = w / w.sum()
    norm = np.sqrt(np.sum(v * v))  # analytic: no conjugate
    f = v / norm
    o = Y.T @ f
    top = np.max(o.real)
    return o[n] - (top + np.log(np.sum(np.exp(o - top))))


class Instance:
    """A random model instance (spec ``ss.cfg.fd``): Y, Z with i.i.d. 𝒩(0, 1) entries, a random full-support
    ℙ over M ids, one class (last token m, next token n) and T − 1 contextual tokens drawn from ℙ.

    Derived arrays are computed once (NumPy float64) and cached: the counts, the sequence-form gradient
    (Eqns 3–4 read literally), the counts-form kernel gradient and the complex-step gradient of
    :func:`loss_analytic`.
    """

    def __init__(self, seed: int, M: int = 7, T: int = 12, key_query: bool = False, label: str = ""):
        rng = np.random.default_rng(np.random.SeedSequence([seed, M, T]))
        self.M, self.T, self.key_query = M, T, key_query
        self.Y = rng.standard_normal((M, M))
        self.Z = rng.standard_normal((M, M))
        self.P = rng.dirichlet(np.ones(M))
        self.m, self.n = int(rng.integers(M)), int(rng.integers(M))
        self.tokens = rng.choice(M, size=T - 1, p=self.P)
        self.counts = np.bincount(self.tokens, minlength=M).astype(np.int64)
        self.label = label or f"seed {seed}, M={M}, T={T}, {'key_query' if key_query else 'query_key'}"
        self._cache: dict = {}

    def cached(self, name: str, compute):
        if name not in self._cache:
            self._cache[name] = compute()
        return self._cache[name]

    @property
    def theta(self) -> np.ndarray:
        return np.concatenate([self.Y.ravel(), self.Z.ravel()])

    def kernel_gradient(self):
        """(J₁, ∂J₁/∂Y, ∂J₁/∂Z) from the counts kernel."""
        def compute():
            gY, gZ = np.zeros((self.M, self.M)), np.zeros((self.M, self.M))
            J = gradient_counts(self.Y, self.Z, self.counts, self.m, self.n, self.key_query, gY, gZ)
            return J, gY, gZ
        return self.cached("kernel", compute)

    def sequence_gradient(self):
        """(J₁, ∂J₁/∂Y, ∂J₁/∂Z) from Eqns 1, 3, 4 read literally."""
        return self.cached("sequence", lambda: gradient_sequence(self.Y, self.Z, self.tokens, self.m, self.n,
                                                                 self.key_query))
