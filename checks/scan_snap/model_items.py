"""The model, objective and gradient items of spec §4.1 and the model-level derive-and-verify items (§5).

Each printed display is evaluated as printed (NumPy float64, R1/R2: shapes as printed, the
shape-consistent reading where the print is not) and compared, entry by entry, with the same quantity
from the definitions: the counts-form kernel of :mod:`numerics.models.scan_snap.model` and, for gradients,
the complex-step derivative of a separate analytic implementation (``loss_analytic``). Tolerance R8: 1e-12
relative to the array's scale (float64 identities), at the random instances of ``ss.cfg.fd`` (M = 7,
T = 12, Y, Z ~ 𝒩(0, 1), a random full-support ℙ) under both ``z_index`` readings; the full budget adds
M = 30 with T ∈ {12, 128}. A second method per item reports central differences (1e-7) or an explicit
identity.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from checks.claim import Claim
from checks.numeric_identity import Display, IdentityItemCheck
from checks.configurations import reading_params
from checks.registry import register
from derivations.scan_snap.symbols import DEFAULT_READINGS
from numerics.differences import complex_step_gradient
from numerics.models.scan_snap.model import Instance, loss_analytic

PAPER = "ss"
Z_READINGS = ("query_key", "key_query")
#: entries of size O(1): an absolute tolerance of 1e-12 on them is R8's float64 relative 1e-12
ATOL = 1e-12


def _instances(ctx, key_query: bool) -> list[Instance]:
    sizes = [(7, 12)] * 8 if ctx.quick else [(7, 12)] * 32 + [(30, 12)] * 16 + [(30, 128)] * 16
    return [Instance(ctx.seed * 1000 + i, M, T, key_query) for i, (M, T) in enumerate(sizes)]


def _families(ctx) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for reading in Z_READINGS:
        cases = _instances(ctx, reading == "key_query")
        out[f"matrix.{reading}"] = [{"x": c, "i": i, "j": j} for c in cases for i in range(c.M) for j in range(c.M)]
        out[f"vector.{reading}"] = [{"x": c, "i": i, "j": 0} for c in cases for i in range(c.M)]
        out[f"scalar.{reading}"] = [{"x": c, "i": 0, "j": 0} for c in cases]
        out[f"positions.{reading}"] = [{"x": c, "i": t, "j": 0} for c in cases for t in range(c.T - 1)]
        out[f"matrix_positions.{reading}"] = [{"x": c, "i": i, "j": t} for c in cases for i in range(c.M)
                                              for t in range(c.T - 1)]
        out[f"embedding.{reading}"] = [{"x": c, "i": k, "j": 0} for c in cases
                                       for k in range(D_EMBED if c.M <= 7 else 16)]
    return out


# --- the objects of one sample, as the paper writes them -------------------------------------------------
def _X(x: Instance) -> np.ndarray:
    return x.cached("X", lambda: np.eye(x.M)[x.tokens])


def _logits_row(x: Instance) -> np.ndarray:
    return x.Z[:, x.m] if x.key_query else x.Z[x.m, :]


def _b(x: Instance, shift: float = 0.0) -> np.ndarray:
    a = _X(x) @ (_logits_row(x) + shift)
    b = np.exp(a - a.max())
    return b / b.sum()


def _v(x: Instance) -> np.ndarray:
    return _X(x).T @ _b(x)


def _alpha(x: Instance, Y=None) -> np.ndarray:
    Y = x.Y if Y is None else Y
    f = _v(x) / np.linalg.norm(_v(x))
    o = Y.T @ f
    e = np.exp(o - o.max())
    return e / e.sum()


def _d(x: Instance) -> np.ndarray:
    return np.eye(x.M)[x.n] - _alpha(x)


def _complex_step(x: Instance) -> np.ndarray:
    """∇J₁ by complex step of ``loss_analytic`` (the derived gradient), as (gY, gZ)."""
    def compute():
        g = complex_step_gradient(lambda th: loss_analytic(th, x.M, x.counts, x.m, x.n, x.key_query), x.theta)
        return g[: x.M**2].reshape(x.M, x.M), g[x.M**2:].reshape(x.M, x.M)
    return x.cached("complex_step", compute)


def _entry(f):
    """A display from ``f(x) -> array``: its (i, j) entry (or i-th, or the scalar)."""
    def value(x, i, j):
        a = np.asarray(f(x))
        return float(a) if a.ndim == 0 else float(a[int(i)]) if a.ndim == 1 else float(a[int(i), int(j)])
    return value


def _printed_Ydot(x):
    """Eqn 3, Ẏ/η_Y = LN(Xᵀb_T)(x_{T+1} − α)ᵀ."""
    v = _v(x)
    return np.outer(v / np.linalg.norm(v), _d(x))


def _printed_Zdot(x):
    """Eqn 3, Ż/η_Z = x_T(x_{T+1} − α)ᵀYᵀ P^⊥_{Xᵀb}/‖Xᵀb‖ XᵀDiag(b)X (row m as printed)."""
    v = _v(x)
    P = np.eye(x.M) - np.outer(v, v) / (v @ v)
    X, b = _X(x), _b(x)
    return np.outer(np.eye(x.M)[x.m], _d(x) @ x.Y.T @ P / np.linalg.norm(v) @ X.T @ np.diag(b) @ X)


def _eq4_row(x):
    """Eqn 4, ż_m/η_Z = XᵀDiag(b)X P^⊥/‖Xᵀb‖ Y(x_{T+1} − α), placed in row m (Eqn 4: 'ż_m', the row of m)."""
    v = _v(x)
    P = np.eye(x.M) - np.outer(v, v) / (v @ v)
    X, b = _X(x), _b(x)
    row = X.T @ np.diag(b) @ X @ P / np.linalg.norm(v) @ x.Y @ _d(x)
    out = np.zeros((x.M, x.M))
    out[x.m] = row
    return out


def _counts_row_form(x):
    """spec ss.dv.row_form: ‖v‖^{-1} v ∘ (g − f(fᵀg)), g = Y(e_n − α), in row m (column m under key_query)."""
    v = _v(x)
    f = v / np.linalg.norm(v)
    g = x.Y @ _d(x)
    row = v * (g - f * (f @ g)) / np.linalg.norm(v)
    out = np.zeros((x.M, x.M))
    if x.key_query:
        out[:, x.m] = row
    else:
        out[x.m] = row
    return out


def _displays_for(builder) -> list[Display]:
    out = []
    for reading in Z_READINGS:
        out += builder(reading, {"z_index": reading})
    return out


def _gradient_displays(reading, tag):
    return [
        Display(f"eq3_Y.{reading}", "Eqn 3 (Ẏ)", _entry(_printed_Ydot), _entry(lambda x: _complex_step(x)[0]),
                f"matrix.{reading}", tag, "Ẏ/η_Y as printed against ∂J₁/∂Y (complex step)", ATOL),
        Display(f"eq3_Z.{reading}", "Eqn 3 (Ż)", _entry(_printed_Zdot), _entry(lambda x: _complex_step(x)[1]),
                f"matrix.{reading}", tag, "Ż/η_Z as printed against ∂J₁/∂Z (complex step)", ATOL),
    ]


def _row_update_displays(reading, tag):
    return [
        Display(f"eq4.{reading}", "Eqn 4", _entry(_eq4_row), _entry(lambda x: _complex_step(x)[1]),
                f"matrix.{reading}", tag, "ż_m/η_Z (row m) against ∂J₁/∂Z (complex step)", ATOL),
        Display(f"eq4_vs_eq3.{reading}", "Eqns 3–4", _entry(_eq4_row), _entry(_printed_Zdot), f"matrix.{reading}",
                tag, "Eqn 4 against row m of Eqn 3's Ż", ATOL),
    ]


def _row_form_displays(reading, tag):
    return [
        Display(f"row_form.{reading}", "derived (Eqn 4)", _entry(_counts_row_form),
                _entry(lambda x: _complex_step(x)[1]), f"matrix.{reading}", tag,
                "‖v‖^{-1}v∘(g − f fᵀg) against ∂J₁/∂Z (complex step)", ATOL),
        Display(f"kernel.{reading}", "derived (counts kernel)", _entry(lambda x: x.kernel_gradient()[2]),
                _entry(lambda x: _complex_step(x)[1]), f"matrix.{reading}", tag,
                "the numba counts kernel's ∂J₁/∂Z against complex step", ATOL),
    ]


def _counts_displays(reading, tag):
    return [
        Display(f"J.{reading}", "derived", _entry(lambda x: x.kernel_gradient()[0]),
                _entry(lambda x: x.sequence_gradient()[0]), f"scalar.{reading}", tag,
                "J₁ from the counts kernel against the sequence form", ATOL),
        Display(f"gY.{reading}", "derived", _entry(lambda x: x.kernel_gradient()[1]),
                _entry(lambda x: x.sequence_gradient()[1]), f"matrix.{reading}", tag,
                "∂J₁/∂Y: counts kernel against the sequence form", ATOL),
        Display(f"gZ.{reading}", "derived", _entry(lambda x: x.kernel_gradient()[2]),
                _entry(lambda x: x.sequence_gradient()[2]), f"matrix.{reading}", tag,
                "∂J₁/∂Z: counts kernel against the sequence form", ATOL),
    ]


def _diag_displays(reading, tag):
    return [Display(f"diag.{reading}", "derived (Eqn 6)",
                    _entry(lambda x: _X(x).T @ np.diag(_b(x)) @ _X(x)), _entry(lambda x: np.diag(_v(x))),
                    f"matrix.{reading}", tag, "XᵀDiag(b_T)X against Diag(Xᵀb_T)", ATOL)]


def _gauge_displays(reading, tag):
    shift = 0.731  # any constant c
    u = lambda x: np.linspace(-1, 1, x.M)  # noqa: E731
    return [
        Display(f"b_shift.{reading}", "derived", _entry(lambda x: _b(x, shift)), _entry(_b),
                f"positions.{reading}", tag, "b_T(z_m + c𝟏) against b_T(z_m)", ATOL),
        Display(f"alpha_shift.{reading}", "derived", _entry(lambda x: _alpha(x, x.Y + np.outer(u(x), np.ones(x.M)))),
                _entry(_alpha), f"vector.{reading}", tag, "α(Y + u𝟏ᵀ) against α(Y)", ATOL),
        Display(f"Ydot_rows.{reading}", "derived", _entry(lambda x: _complex_step(x)[0] @ np.ones(x.M)),
                _entry(lambda x: np.zeros(x.M)), f"vector.{reading}", tag, "(∂J₁/∂Y)𝟏 = 0", ATOL),
        Display(f"zdot_sum.{reading}", "derived", _entry(lambda x: np.sum(_complex_step(x)[1])),
                _entry(lambda x: 0.0), f"scalar.{reading}", tag, "ż_mᵀ𝟏 = 0", ATOL),
    ]


def _alpha_displays(reading, tag):
    def eq16(x):
        v = _v(x)
        o = x.Y.T @ (v / np.linalg.norm(v))
        return np.exp(o) / np.sum(np.exp(o))

    return [Display(f"eq16.{reading}", "Eqn 16", _entry(eq16), _entry(_alpha), f"vector.{reading}", tag,
                    "α_m = exp(e_mᵀYᵀLN(Xᵀb))/𝟏ᵀexp(YᵀLN(Xᵀb)) against softmax(Yᵀf)", ATOL)]


def _objective_displays(reading, tag):
    def eq15(x):
        # as printed: the log-partition term has Yᵀ Xᵀ LN(b_T) (LN of the position weights, not of Xᵀb_T)
        v, b = _v(x), _b(x)
        first = x.Y.T @ (v / np.linalg.norm(v))
        second = x.Y.T @ (_X(x).T @ (b / np.linalg.norm(b)))
        return first[x.n] - np.log(np.sum(np.exp(second)))
    return [Display(f"eq15.{reading}", "Eqn 15", _entry(eq15), _entry(lambda x: x.kernel_gradient()[0]),
                    f"scalar.{reading}", tag, "J(Y, Z) as printed against J₁ (§2.4)", ATOL)]


def _central_differences(ctx, displays) -> dict[str, Any]:
    """Second method: ∂J₁/∂(Y, Z) by central differences (step 1e-6) against the complex step, R8's 1e-7."""
    worst = 0.0
    for reading in Z_READINGS:
        for x in _instances(ctx, reading == "key_query")[:4]:
            theta = x.theta
            cs = np.concatenate([a.ravel() for a in _complex_step(x)])
            fd = np.empty_like(theta)
            for k in range(theta.size):
                step = 1e-6 * max(1.0, abs(theta[k]))
                up, down = theta.copy(), theta.copy()
                up[k] += step
                down[k] -= step
                fd[k] = (loss_analytic(up, x.M, x.counts, x.m, x.n, x.key_query).real
                         - loss_analytic(down, x.M, x.counts, x.m, x.n, x.key_query).real) / (2 * step)
            worst = max(worst, float(np.max(np.abs(fd - cs)) / max(1.0, np.max(np.abs(cs)))))
    return {"central_differences": {"max_relative": worst}, "disagrees": ["central differences"] if worst > 1e-7
            else [], "summary": f"central differences (step 1e-6) within {worst:.1e} of the complex step"}



# --- the standard parameterisation (Eqns 1–2, Sec. 3.2) ---------------------------------------------------
D_EMBED = 4  # d of the random embedding (the full budget adds 16 through the instances' seeds)


def _standard(x: Instance) -> dict[str, np.ndarray]:
    """Random U (M × d), W_Q, W_K, W_V (d × d), i.i.d. 𝒩(0, 1/d), drawn from the instance's own stream."""
    def compute():
        d = D_EMBED if x.M <= 7 else 16
        rng = np.random.default_rng(np.random.SeedSequence([x.M, x.T, int(x.Y[0, 0] * 1e9) & 0xFFFF, 77]))
        U = rng.standard_normal((x.M, d)) / np.sqrt(d)
        WQ, WK, WV = (rng.standard_normal((d, d)) / np.sqrt(d) for _ in range(3))
        return {"U": U, "WQ": WQ, "WK": WK, "WV": WV, "d": d}
    return x.cached("standard", compute)


def _b_standard(x: Instance) -> np.ndarray:
    """Eqn 1: b_tT ∝ exp(u_{x_t}ᵀW_QW_Kᵀu_{x_T}/√d) over the contextual positions."""
    s = _standard(x)
    U = s["U"]
    a = U[x.tokens] @ s["WQ"] @ s["WK"].T @ U[x.m] / np.sqrt(s["d"])
    b = np.exp(a - a.max())
    return b / b.sum()


def _u_tilde_sum(x: Instance) -> np.ndarray:
    """Eqn 1: ũ_T = Σ_t b_tT u_{x_t}."""
    b, U = _b_standard(x), _standard(x)["U"]
    return np.sum(b[:, None] * U[x.tokens], axis=0)


def _Y_Z_of_standard(x: Instance) -> tuple[np.ndarray, np.ndarray]:
    """Sec. 3.2: Y := UW_VᵀUᵀ, Z := UW_QW_KᵀUᵀ/√d."""
    s = _standard(x)
    U = s["U"]
    return U @ s["WV"].T @ U.T, U @ s["WQ"] @ s["WK"].T @ U.T / np.sqrt(s["d"])


def _b_reparam(x: Instance) -> np.ndarray:
    """b_t of the Y, Z model at Z of Sec. 3.2, logits z_{m x_t} (query_key) or z_{x_t m} (key_query)."""
    _, Z = _Y_Z_of_standard(x)
    a = Z[x.tokens, x.m] if x.key_query else Z[x.m, x.tokens]
    b = np.exp(a - a.max())
    return b / b.sum()


def _logits_standard(x: Instance) -> np.ndarray:
    """u_lᵀW_Vũ_T with ũ_T = UᵀLN(Xᵀb_T) (normalised model, L53), for every l."""
    s = _standard(x)
    v = _X(x).T @ _b_standard(x)
    return s["U"] @ s["WV"] @ s["U"].T @ (v / np.linalg.norm(v))


def _logits_reparam(x: Instance) -> np.ndarray:
    """Yᵀf of the Y, Z model at the Y, Z of Sec. 3.2 (its own attention)."""
    Y, _ = _Y_Z_of_standard(x)
    v = _X(x).T @ _b_reparam(x)
    return Y.T @ (v / np.linalg.norm(v))


def _log_softmax_at(o: np.ndarray, n: int) -> float:
    return float(o[n] - (o.max() + np.log(np.sum(np.exp(o - o.max())))))


def _attention_displays(reading, tag):
    if reading != "query_key":
        return []
    return [
        Display("sum_form", "Eqn 1", _entry(_u_tilde_sum), _entry(lambda x: _standard(x)["U"].T @ _X(x).T
                                                                    @ _b_standard(x)),
                "embedding.query_key", {}, "Σ_t b_tT u_{x_t} against UᵀXᵀb_T", ATOL),
        Display("normalised", "L51", _entry(lambda x: np.sum(_b_standard(x))), _entry(lambda x: 1.0),
                "scalar.query_key", {}, "b_Tᵀ𝟏 = 1", ATOL),
    ]


def _reparam_displays(reading, tag):
    return [
        Display(f"attention.{reading}", "Sec. 3.2", _entry(_b_reparam), _entry(_b_standard), f"positions.{reading}",
                tag, "b_t of the Y, Z model at Z = UW_QW_KᵀUᵀ/√d against Eqn 1's b_tT", ATOL),
        Display(f"logits.{reading}", "Sec. 3.2", _entry(_logits_reparam), _entry(_logits_standard),
                f"vector.{reading}", tag, "Yᵀf at Y = UW_VᵀUᵀ against u_lᵀW_Vũ_T", ATOL),
        Display(f"J.{reading}", "Sec. 3.2", _entry(lambda x: _log_softmax_at(_logits_reparam(x), x.n)),
                _entry(lambda x: _log_softmax_at(_logits_standard(x), x.n)), f"scalar.{reading}", tag,
                "J₁ of the Y, Z model against the standard model", ATOL),
    ]


def _objective2_displays(reading, tag):
    if reading != "query_key":
        return []

    def printed(x, WV=None):
        s = _standard(x)
        WV = s["WV"] if WV is None else WV
        u_tilde = s["U"].T @ _X(x).T @ _b_standard(x)  # Eqn 1 (no normalisation)
        o = s["U"] @ WV @ u_tilde
        return o[x.n] - np.log(np.sum(np.exp(o)))

    def log_softmax(x):
        s = _standard(x)
        o = s["U"] @ s["WV"] @ (s["U"].T @ _X(x).T @ _b_standard(x))
        return _log_softmax_at(o, x.n)

    return [
        Display("log_softmax", "Eqn 2", _entry(printed), _entry(log_softmax), "scalar.query_key", {},
                "Eqn 2's summand against log softmax(·)_{x_{T+1}}", ATOL),
        Display("at_WV_zero", "Eqn 2 (W_V = 0)", _entry(lambda x: printed(x, np.zeros_like(_standard(x)["WV"]))),
                _entry(lambda x: -np.log(x.M)), "scalar.query_key", {}, "J at W_V = 0 against −ln M", ATOL),
    ]


def _alpha_def_displays(reading, tag):
    return [Display(f"lemma1.{reading}", "Lemma 1 (L85)", _entry(lambda x: np.exp(
        x.Y.T @ (_v(x) / np.linalg.norm(_v(x)))) / np.sum(np.exp(x.Y.T @ (_v(x) / np.linalg.norm(_v(x)))))),
        _entry(_alpha), f"vector.{reading}", tag,
        "the vector exp(YᵀLN(Xᵀb))/𝟏ᵀexp(YᵀLN(Xᵀb)) (the shape-consistent reading) against softmax(Yᵀf)", ATOL)]


def _direction(x: Instance) -> np.ndarray:
    rng = np.random.default_rng(np.random.SeedSequence([x.M, x.T, 5]))
    return rng.standard_normal(2 * x.M * x.M)


def _directional(x: Instance, function) -> np.ndarray:
    """d/dε function(θ + ε·direction) at 0 by complex step (function of a complex θ)."""
    h = 1e-30
    return np.imag(function(x.theta + 1j * h * _direction(x))) / h


def _pieces(theta, x: Instance):
    """(Y, Z, b, v, f) at a (possibly complex) θ, the analytic forms of Eqn 1 in the Y, Z model."""
    Y = theta[: x.M**2].reshape(x.M, x.M)
    Z = theta[x.M**2:].reshape(x.M, x.M)
    a = _X(x) @ (Z[:, x.m] if x.key_query else Z[x.m, :])
    b = np.exp(a - a.real.max())
    b = b / b.sum()
    v = _X(x).T @ b
    f = v / np.sqrt(np.sum(v * v))
    return Y, Z, b, v, f


def _dJ(x):
    return x.cached("dJ", lambda: float(_directional(x, lambda th: loss_analytic(th, x.M, x.counts, x.m, x.n,
                                                                                      x.key_query))))


def _differential_lines(x: Instance) -> dict[str, float]:
    def compute():
        dY = _direction(x)[: x.M**2].reshape(x.M, x.M)
        dZ = _direction(x)[x.M**2:].reshape(x.M, x.M)
        d = _d(x)
        v = _v(x)
        norm = np.linalg.norm(v)
        f = v / norm
        P = np.eye(x.M) - np.outer(v, v) / norm**2
        b = _b(x)
        X = _X(x)
        L = np.diag(b) - np.outer(b, b)
        db = _directional(x, lambda th: _pieces(th, x)[2])
        dYf = _directional(x, lambda th: _pieces(th, x)[0].T @ _pieces(th, x)[4])
        da = X @ dZ.T @ np.eye(x.M)[x.m]  # d(XZᵀx_T) as printed (a := XZᵀx_T)
        return {
            "eq17_first": float(d @ dYf),
            "eq17_second": float(d @ (dY.T @ f + x.Y.T @ P / norm @ X.T @ db)),
            "eq18": float(d @ (dY.T @ f + x.Y.T @ P / norm @ X.T @ L @ da)),
            "eq19": float(d @ (dY.T @ f + x.Y.T @ P / norm @ X.T @ L @ X @ dZ.T @ np.eye(x.M)[x.m])),
        }
    return x.cached("differential", compute)


def _differential_displays(reading, tag):
    out = [Display(f"{name}.{reading}", f"Eqn {name[2:4]}", _entry(lambda x, name=name: _differential_lines(x)[name]),
                   _entry(_dJ), f"scalar.{reading}", tag, f"{name} along a random (dY, dZ) against dJ (complex step)",
                   ATOL) for name in ("eq17_first", "eq17_second", "eq18", "eq19")]

    def projector(x, with_L: bool):
        v = _v(x)
        P = np.eye(x.M) - np.outer(v, v) / (v @ v)
        b = _b(x)
        inner = np.diag(b) - np.outer(b, b) if with_L else np.diag(b)
        return P @ _X(x).T @ inner

    out.append(Display(f"projector.{reading}", "L372", _entry(lambda x: projector(x, True)),
                       _entry(lambda x: projector(x, False)), f"matrix_positions.{reading}", tag,
                       "P^⊥_{Xᵀb}XᵀL against P^⊥_{Xᵀb}XᵀDiag(b)", ATOL))
    return out


def _row_sum_displays(reading, tag):
    def projector_rows(x):
        v = _v(x)
        P = np.eye(x.M) - np.outer(v, v) / (v @ v)
        return P @ _X(x).T @ np.diag(_b(x)) @ _X(x) @ np.ones(x.M)

    return [
        Display(f"residual_sum.{reading}", "L87", _entry(lambda x: _d(x) @ np.ones(x.M)), _entry(lambda x: 0.0),
                f"scalar.{reading}", tag, "(x_{T+1} − α)ᵀ𝟏 = 0", ATOL),
        Display(f"projector_rows.{reading}", "L87", _entry(projector_rows), _entry(lambda x: np.zeros(x.M)),
                f"vector.{reading}", tag, "P^⊥XᵀDiag(b)X𝟏 = 0", ATOL),
        Display(f"Ydot_rows.{reading}", "L87", _entry(lambda x: _printed_Ydot(x) @ np.ones(x.M)),
                _entry(lambda x: np.zeros(x.M)), f"vector.{reading}", tag, "Ẏ𝟏 = 0 (Eqn 3)", ATOL),
        Display(f"Zdot_rows.{reading}", "L87", _entry(lambda x: _printed_Zdot(x) @ np.ones(x.M)),
                _entry(lambda x: np.zeros(x.M)), f"vector.{reading}", tag, "Ż𝟏 = 0 (Eqn 3)", ATOL),
    ]


def _fast_decoder_displays(reading, tag):
    def printed(x):
        """Eqn 7: Ẏ/η_Y = f_n(e_n − α_n)ᵀ, f_n = c_n/‖c_n‖, α_n = softmax(Yᵀf_n) (T = ∞: counts → ℙ)."""
        z = x.Z[:, x.m] if x.key_query else x.Z[x.m, :]
        c = x.P * np.exp(z - z.max())
        f = c / np.linalg.norm(c)
        o = x.Y.T @ f
        alpha = np.exp(o - o.max())
        alpha /= alpha.sum()
        return np.outer(f, np.eye(x.M)[x.n] - alpha)

    def derived(x):
        """∂J₁/∂Y at T = ∞ by complex step of the analytic loss with the counts replaced by ℙ (Lemma 2)."""
        def compute():
            g = complex_step_gradient(lambda th: loss_analytic(th, x.M, x.P, x.m, x.n, x.key_query), x.theta)
            return g[: x.M**2].reshape(x.M, x.M)
        return x.cached("complex_step_T_inf", compute)

    return [Display(f"eq7.{reading}", "Eqn 7", _entry(printed), _entry(derived), f"matrix.{reading}", tag,
                    "Eqn 7's Ẏ/η_Y against ∂J/∂Y of Eqn 2 at T = ∞, Z frozen (complex step)", ATOL)]


ITEMS = {
    "ss.lemma1.gradient": ("Lemma 1, Eqn 3 (L83; L350)", _gradient_displays,
                           "Ẏ = η_Y LN(Xᵀb_T)(x_{T+1} − α)ᵀ, Ż = η_Z x_T(x_{T+1} − α)ᵀYᵀ P^⊥_{Xᵀb_T}/‖Xᵀb_T‖ "
                           "XᵀDiag(b_T)X: the gradient dynamics of Eqn 2 with batch size 1.", _central_differences),
    "ss.eq4.row_update": ("Eqn 4 (L89)", _row_update_displays,
                          "ż_m = η_Z Xᵀ[i]Diag(b_T[i])X[i] P^⊥/‖Xᵀ[i]b_T[i]‖ Y(x_{T+1}[i] − α[i]), m = x_T[i]; "
                          "ż_{m'} = 0 for m' ≠ m.", _central_differences),
    "ss.eq7.fast_decoder": ("Eqn 7 (L126), L128", _fast_decoder_displays,
                            "Ẏ = η_Y f_n(e_n − α_n)ᵀ, α_n = exp(Yᵀf_n)/𝟏ᵀexp(Yᵀf_n), f_n := Xᵀb_T/‖Xᵀb_T‖ → c_n/‖c_n‖.",
                            None),
    "ss.eq16.alpha": ("Eqn 16 (L360)", _alpha_displays,
                      "α_m = exp(e_mᵀYᵀLN(Xᵀb_T))/𝟏ᵀexp(YᵀLN(Xᵀb_T)).", None),
    "ss.eq15.objective_yz": ("Eqn 15 (L356)", _objective_displays,
                             "J(Y, Z) = E[x_{T+1}ᵀYᵀLN(Xᵀb_T) − log(𝟏ᵀexp(YᵀXᵀLN(b_T)))].", None),
    "ss.eq1.attention": ("Eqn 1 (L49), L51", _attention_displays,
                         "ũ_T = Σ_t b_tT u_{x_t}, b_tT = softmax_t(u_{x_t}ᵀW_QW_Kᵀu_{x_T}/√d); b_Tᵀ𝟏 = 1 and "
                         "ũ_T = UᵀXᵀb_T.", None),
    "ss.eq2.objective": ("Eqn 2 (L57)", _objective2_displays,
                         "max J := E_D[u_{x_{T+1}}ᵀW_Vũ_T − log Σ_l exp(u_lᵀW_Vũ_T)].", None),
    "ss.sec3_2.reparam": ("Sec. 3.2 (L77)", _reparam_displays,
                          "Y := UW_VᵀUᵀ ∈ ℝ^{M×M} and Z := UW_QW_KᵀUᵀ/√d ∈ ℝ^{M×M} (the normalised model, LN(Xᵀb_T)).",
                          None),
    "ss.lemma1.alpha_def": ("Lemma 1 (L85, L352)", _alpha_def_displays,
                            "α := [α₁, …, α_M]ᵀ and α_m := exp(YᵀLN(Xᵀb_T))/𝟏ᵀexp(YᵀLN(Xᵀb_T)).", None),
    "ss.eq17_19.differential": ("Eqns 17–19 (L364–L372)", _differential_displays,
                                "dJ = (x_{T+1} − α)ᵀ(dYᵀLN(Xᵀb) + YᵀP^⊥/‖Xᵀb‖ XᵀLXdZᵀx_T), L = Diag(b) − bbᵀ, "
                                "a := XZᵀx_T; P^⊥XᵀL = P^⊥XᵀDiag(b).", None),
    "ss.sec3_2.row_sum": ("L87", _row_sum_displays,
                          "(x_{T+1} − α)ᵀ𝟏 = 0 and P^⊥XᵀDiag(b_T)X𝟏 = 0, so Ẏ𝟏 = Ż𝟏 = 0 and the row sums of Y(t), "
                          "Z(t) stay zero.", None),
    "ss.dv.counts_sufficiency": ("derived (Assumption 1(a))", _counts_displays,
                                 "Without positional encoding J, ∂J/∂Y, ∂J/∂Z depend on X only through the counts N: "
                                 "the counts kernel equals the sequence form on identical sequences.", None),
    "ss.dv.gauge": ("derived (L87)", _gauge_displays,
                    "z_m → z_m + c𝟏 leaves b_T unchanged; Y → Y + u𝟏ᵀ leaves α unchanged; Ẏ𝟏 = 0, ż_mᵀ𝟏 = 0.", None),
    "ss.dv.diag_identity": ("derived (Eqn 6)", _diag_displays,
                            "Every row of X is one-hot, so XᵀDiag(b_T)X = Diag(Xᵀb_T) at every finite T.", None),
    "ss.dv.row_form": ("derived (Eqn 4)", _row_form_displays,
                       "ż_m = η_Z‖v‖^{-1} v∘(g − f(fᵀg)), g = Y(e_n − α).", _central_differences),
}

NOTES = {
    "ss.lemma1.alpha_def": ("R2: Lemma 1 assigns the M-vector exp(YᵀLN(Xᵀb))/𝟏ᵀexp(·) to the scalar α_m; the "
                            "shape-consistent reading α := that vector is compared",),
    "ss.sec3_2.row_sum": ("the statement about trajectories (row sums stay zero under SGD, momentum, Adam) "
                          "needs the SGD runs of part 2; here the per-sample identities are compared",),
}

for _id, (_label, _builder, _doc, _extra) in ITEMS.items():
    _check = IdentityItemCheck(displays=(lambda b=_builder: _displays_for(b)), families=_families,
                               default_readings=dict(DEFAULT_READINGS), extra=_extra, dps=15, slack=3,
                               notes=NOTES.get(_id, ()))
    register(Claim(_id, PAPER, _label, "derive" if _id.startswith("ss.dv.") else "formula", _check,
                   statement=_doc, doc=_doc,
                   params=reading_params((d.reading for d in _displays_for(_builder)), DEFAULT_READINGS)))
