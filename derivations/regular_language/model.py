"""The one-layer transformer of Sec. 3 and its logistic loss, symbolically, over an enumerated data set.

T_θ(X) = u^⊤ Σ_ℓ x_ℓ φ_ℓ with φ = softmax(X^⊤ W x_L / λ), θ = (u, W) (spec §2.4), and
L(u, W) = Σ_L 2^{-L} Σ_{n∈I_L} J(y_n T_θ(X^{(n)})) (spec §2.5). x_ℓ = E_ℓ^{c_ℓ}, so the score
of key ℓ is the single entry W[idx(ℓ, c_ℓ), idx(L, c_L)] and u^⊤x_ℓ = u[idx(ℓ, c_ℓ)].

Gradients are ``diff`` of the loss: the derivative of each sample's term J(y T) is taken once
per (length, label) with respect to its own token scores v_ℓ and raw scores s_ℓ, then placed at
the sample's coordinates (each coordinate occurs at most once in a sample, so this is exactly
∂/∂θ_i of the sum). The printed gradient displays of App. A.1 are built separately, literally.
"""

from __future__ import annotations

import functools

import sympy as sp

from derivations.regular_language.data import CHARS, Dataset, Sample
from derivations.regular_language.symbols import J, J_prime, lam


def idx(position: int, char: str) -> int:
    """0-based embedding index of E_position^char: 2(ℓ - 1) + [char = b] (E_ℓ^a = e_{2ℓ-1}, E_ℓ^b = e_{2ℓ})."""
    return 2 * (position - 1) + CHARS.index(char)


@functools.cache
def u_symbol(position: int, char: str) -> sp.Symbol:
    """The token score ⟨u, E_position^char⟩."""
    return sp.Symbol(f"u_{position}{char}", real=True)


@functools.cache
def W_symbol(key_pos: int, key_char: str, query_pos: int, query_char: str) -> sp.Symbol:
    """The raw attention score ⟨E_key^{c'}, W E_query^{c}⟩."""
    return sp.Symbol(f"W_{key_pos}{key_char}_{query_pos}{query_char}", real=True)


def u_vector(max_len: int) -> sp.Matrix:
    """u ∈ R^d, d = 2·max_len, as a column of token-score symbols."""
    return sp.Matrix([u_symbol(pos, c) for pos in range(1, max_len + 1) for c in CHARS])


def W_matrix(max_len: int) -> sp.Matrix:
    """W ∈ R^{d×d} with entry (idx(j, c'), idx(L, c)) = ⟨E_j^{c'}, W E_L^c⟩."""
    keys = [(pos, c) for pos in range(1, max_len + 1) for c in CHARS]
    return sp.Matrix([[W_symbol(*key, *query) for query in keys] for key in keys])


def embedding(position: int, char: str, max_len: int) -> sp.Matrix:
    """E_position^char as a column of R^{2·max_len}."""
    e = sp.zeros(2 * max_len, 1)
    e[idx(position, char)] = 1
    return e


def sample_scores(sample: Sample) -> list[sp.Symbol]:
    """s_ℓ = ⟨x_ℓ, W x_L⟩ for ℓ = 1..L."""
    L, c_L = sample.length, sample.chars[-1]
    return [W_symbol(pos, c, L, c_L) for pos, c in enumerate(sample.chars, 1)]


def sample_token_scores(sample: Sample) -> list[sp.Symbol]:
    """v_ℓ = u^⊤ x_ℓ for ℓ = 1..L."""
    return [u_symbol(pos, c) for pos, c in enumerate(sample.chars, 1)]


def softmax(scores, temperature=lam) -> list[sp.Expr]:
    """φ_ℓ = exp(s_ℓ/λ) / Σ_j exp(s_j/λ)."""
    weights = [sp.exp(s / temperature) for s in scores]
    total = sp.Add(*weights)
    return [w / total for w in weights]


def attention(sample: Sample, temperature=lam) -> list[sp.Expr]:
    """φ_ℓ^{(n)} of a sample, in the W symbols."""
    return softmax(sample_scores(sample), temperature)


def output(sample: Sample, temperature=lam) -> sp.Expr:
    """T_θ(X^{(n)}) = Σ_ℓ u^⊤x_ℓ φ_ℓ."""
    return sp.Add(*[v * p for v, p in zip(sample_token_scores(sample), attention(sample, temperature), strict=True)])


def loss(dataset: Dataset, temperature=lam) -> sp.Expr:
    """L(u, W) = Σ_n 2^{-L_n} J(y_n T(X^{(n)})) as one SymPy sum (spec §2.5)."""
    return sp.Add(*[s.weight * J(s.label * output(s, temperature)) for s in dataset.samples])


def loss_sec3(dataset: Dataset, temperature=lam) -> sp.Expr:
    """The loss as printed in Sec. 3: Σ_L (1/|I_L|) Σ_{n∈I_L} log(1 + exp(-y_n T_θ(X^{(n)})))."""
    return sp.Add(*[s.weight * sp.log(1 + sp.exp(-s.label * output(s, temperature))) for s in dataset.samples])


@functools.cache
def _template(length: int, label: int):
    """∂J(yT)/∂v_ℓ and ∂J(yT)/∂s_ℓ of one sample of ``length`` and ``label``, by diff."""
    v = sp.symbols(f"v1:{length + 1}", real=True)
    s = sp.symbols(f"s1:{length + 1}", real=True)
    T = sp.Add(*[vi * p for vi, p in zip(v, softmax(s), strict=True)])
    term = J(label * T)
    return v, s, [sp.diff(term, vi) for vi in v], [sp.diff(term, si) for si in s]


def sample_gradient(sample: Sample) -> dict[sp.Symbol, sp.Expr]:
    """∂J(y T(X))/∂θ for the coordinates θ the sample touches (without its weight)."""
    v, s, dv, ds = _template(sample.length, sample.label)
    sub = dict(zip(v, sample_token_scores(sample), strict=True)) | dict(zip(s, sample_scores(sample), strict=True))
    grads = {}
    for template, derivative in zip((*v, *s), (*dv, *ds), strict=True):
        grads[sub[template]] = derivative.xreplace(sub)
    return grads


_GRADIENTS: dict[str, dict[sp.Symbol, sp.Expr]] = {}


def gradient(dataset: Dataset) -> dict[sp.Symbol, sp.Expr]:
    """∇L: coordinate symbol -> ∂L/∂θ (every coordinate that occurs in the loss), built by ``diff``."""
    if dataset.name not in _GRADIENTS:
        parts: dict[sp.Symbol, list[sp.Expr]] = {}
        for sample in dataset.samples:
            for sym, derivative in sample_gradient(sample).items():
                parts.setdefault(sym, []).append(sample.weight * derivative)
        _GRADIENTS[dataset.name] = {sym: sp.Add(*terms) for sym, terms in parts.items()}
    return _GRADIENTS[dataset.name]


def gradient_at(dataset: Dataset, values: dict) -> dict[sp.Symbol, sp.Expr]:
    """∇L at a point (parameters missing from ``values`` are 0): the same ``diff`` templates, evaluated
    sample by sample before summing (much cheaper than :func:`gradient` followed by substitution)."""
    parts: dict[sp.Symbol, list[sp.Expr]] = {}
    seen: dict[tuple, list[sp.Expr]] = {}  # samples whose coordinates take the same values share the evaluation
    for sample in dataset.samples:
        v, s, dv, ds = _template(sample.length, sample.label)
        coords = [*sample_token_scores(sample), *sample_scores(sample)]
        point = tuple(values.get(c, sp.Integer(0)) for c in coords) + (values.get(lam, lam),)
        key = (sample.length, sample.label, point)
        if key not in seen:
            sub = dict(zip((*v, *s, lam), point, strict=True))
            seen[key] = [derivative.xreplace(sub) for derivative in (*dv, *ds)]
        for coord, value in zip(coords, seen[key], strict=True):
            parts.setdefault(coord, []).append(sample.weight * value)
    return {sym: sp.Add(*terms) for sym, terms in parts.items()}


def grad(dataset: Dataset, sym: sp.Symbol) -> sp.Expr:
    """∂L/∂sym (0 for a coordinate the loss does not contain: a never-live entry)."""
    return gradient(dataset).get(sym, sp.Integer(0))


def live_W_entries(dataset: Dataset) -> list[sp.Symbol]:
    """W entries that receive gradient: (idx(j, c'), idx(L, c)) used by a sample of length L >= 2 (spec §2.4)."""
    seen = dict.fromkeys(s for sample in dataset.samples if sample.length >= 2 for s in sample_scores(sample))
    return sorted(seen, key=_order)


def _order(sym: sp.Symbol):
    _, key, query = sym.name.split("_")
    return int(query[:-1]), query[-1], int(key[:-1]), key[-1]


def printed_gradient_u(dataset: Dataset) -> sp.Matrix:
    """App. A.1 as printed: ∇_u L = Σ_L 2^{-L} Σ_n J'_{(n)} y_n Σ_ℓ x_ℓ φ_ℓ (J' = -1/(1 + exp(y T)))."""
    d = 2 * dataset.max_len
    total = sp.zeros(d, 1)
    for sample in dataset.samples:
        phi = attention(sample)
        v = sp.zeros(d, 1)
        for (pos, c), p in zip(enumerate(sample.chars, 1), phi, strict=True):
            v += embedding(pos, c, dataset.max_len) * p
        total += sample.weight * J_prime(sample.label * output(sample)) * sample.label * v
    return total


def printed_gradient_W(dataset: Dataset) -> sp.Matrix:
    """App. A.1 as printed: ∇_W L = (1/λ) Σ_{L≥2} 2^{-L} Σ_n J' y_n Σ_ℓ u^⊤x_ℓ φ_ℓ (x_ℓ - Σ_ℓ' φ_ℓ' x_ℓ') x_L^⊤."""
    d = 2 * dataset.max_len
    total = sp.zeros(d, d)
    for sample in dataset.samples:
        if sample.length < 2:
            continue
        phi = attention(sample)
        xs = [embedding(pos, c, dataset.max_len) for pos, c in enumerate(sample.chars, 1)]
        mean = sp.zeros(d, 1)
        for x_l, p in zip(xs, phi, strict=True):
            mean += x_l * p
        inner = sp.zeros(d, 1)
        for x_l, p, v in zip(xs, phi, sample_token_scores(sample), strict=True):
            inner += v * p * (x_l - mean)
        total += sample.weight * J_prime(sample.label * output(sample)) * sample.label * inner * xs[-1].T
    return total / lam


def at(expr: sp.Expr, values: dict) -> sp.Expr:
    """``expr`` with parameters replaced (missing W entries and u entries set to 0)."""
    zero = {s: sp.Integer(0) for s in expr.free_symbols if s.name.startswith(("u_", "W_")) and s not in values}
    return expr.xreplace({**zero, **values})
