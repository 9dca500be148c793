r"""Decoder-only dynamics of App. B (spec §3.5): F frozen, Y trained, classes visited by a schedule.

* original (Eqn 7):  Y ← Y + η_Y f_n(e_n − α_n)ᵀ, α_n = softmax(Yᵀf_n);
* modified (Eqn 26): Y ← Y + η_Y(f_n − FE'e_n)(e_n − α_n)ᵀ with E' = I − (I + E)^{-1} (``lemma14``) or
  (I + E)^{-1} − I (``appB1``), E = FᵀF − I.

Schedules (option ``class_schedule``): ``round_robin`` (classes 0, 1, …, K−1, 0, …), ``iid_uniform`` (i.i.d.
uniform classes from ``numpy.random.default_rng(SeedSequence([seed, 17]))``), ``single_class`` (class 0).
A run keeps W = FᵀY after every step (steps × K × M) and Y itself at the steps asked for (``keep``; Y is
M × M, too large to keep at every step when M = 200).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from derivations.errors import InvalidArgument

SCHEDULES = ("iid_uniform", "round_robin", "single_class")
UPDATES = ("gradient", "modified")


def eprime(E: np.ndarray, reading: str = "lemma14") -> np.ndarray:
    """E' of ``reading`` (``lemma14``: I − (I + E)^{-1}; ``appB1``: (I + E)^{-1} − I)."""
    inverse = np.linalg.inv(np.eye(len(E)) + E)
    return np.eye(len(E)) - inverse if reading == "lemma14" else inverse - np.eye(len(E))


def class_sequence(schedule: str, K: int, steps: int, seed: int) -> np.ndarray:
    """The class visited at each step under ``schedule``."""
    if schedule not in SCHEDULES:
        raise InvalidArgument(f"class_schedule={schedule!r} is not one of {', '.join(SCHEDULES)}")
    if schedule == "round_robin":
        return np.arange(steps) % K
    if schedule == "single_class":
        return np.zeros(steps, dtype=np.int64)
    return np.random.default_rng(np.random.SeedSequence([seed, 17])).integers(0, K, steps)


@dataclass
class DecoderRun:
    """A decoder-only run: features F (M × K), the classes visited, W = FᵀY after each step (W_history[0] at
    Y(0)) and Y at the kept steps."""

    F: np.ndarray
    eta: float
    update: str
    eprime_reading: str
    classes: np.ndarray
    W_history: np.ndarray
    Y: dict[int, np.ndarray]
    label: str = ""
    #: GᵀY after every step for each basis G passed as ``observe`` (e.g. a completion F° of F)
    observed: dict[str, np.ndarray] = field(default_factory=dict)
    meta: dict = field(default_factory=dict)

    @property
    def K(self) -> int:
        return self.F.shape[1]

    @property
    def E(self) -> np.ndarray:
        return self.F.T @ self.F - np.eye(self.K)

    def W(self, step: int) -> np.ndarray:
        """W = FᵀY after ``step`` steps (K × M)."""
        return self.W_history[step]

    def visits(self, step: int) -> np.ndarray:
        """N_n: visits of each class in the first ``step`` steps."""
        return np.bincount(self.classes[:step], minlength=self.K)


def run_decoder(F: np.ndarray, eta: float, steps: int, *, update: str = "gradient", schedule: str = "round_robin",
                eprime_reading: str = "lemma14", seed: int = 0, Y0: np.ndarray | None = None,
                keep: tuple[int, ...] = (), observe: dict[str, np.ndarray] | None = None,
                label: str = "", live_rows: bool = False) -> DecoderRun:
    """Run Eqn 7 (``update="gradient"``) or Eqn 26 (``"modified"``) from Y0 (0 by default) for ``steps`` steps,
    keeping Y after the steps in ``keep`` (and always after the last).

    ``live_rows``: from Y0 = 0, only the rows of Y on the union of the supports of the f_n ever change (every
    update is f_n(…)ᵀ or (f_n − FE'e_n)(…)ᵀ), so Y is kept as those R rows (R × M, ``meta["rows"]``) — exact,
    and what M = 10⁴ needs (Y would be 800 MB)."""
    if update not in UPDATES:
        raise InvalidArgument(f"decoder_update={update!r} is not one of {', '.join(UPDATES)}")
    if not (np.isfinite(eta) and eta > 0):
        raise InvalidArgument(f"etaY={eta!r} must be a finite positive learning rate")
    M, K = F.shape
    rows = np.arange(M)
    if live_rows:
        if Y0 is not None or observe:
            raise InvalidArgument("live_rows needs Y0 = 0 and no observed bases (the other rows must stay 0)")
        rows = np.flatnonzero(np.any(F != 0, axis=1))
    full_F, F = F, F[rows]
    classes = class_sequence(schedule, K, steps, seed)
    Y = np.zeros((rows.size, M)) if Y0 is None else np.array(Y0, dtype=float)
    W = np.empty((steps + 1, K, M))
    W[0] = F.T @ Y
    kept = {0: Y.copy()} if 0 in keep else {}
    observe = dict(observe or {})
    observed = {name: np.empty((steps + 1, G.shape[1], M)) for name, G in observe.items()}
    for name, G in observe.items():
        observed[name][0] = G.T @ Y
    Ep = eprime(F.T @ F - np.eye(K), eprime_reading)
    direction = F - F @ Ep  # column n: f_n − FE'e_n
    for s, n in enumerate(classes):
        o = Y.T @ F[:, n]
        alpha = np.exp(o - o.max())
        alpha /= alpha.sum()
        d = -alpha
        d[n] += 1.0
        left = F[:, n] if update == "gradient" else direction[:, n]
        Y += eta * np.outer(left, d)
        W[s + 1] = F.T @ Y
        for name, G in observe.items():
            observed[name][s + 1] = G.T @ Y
        if s + 1 in keep or s + 1 == steps:
            kept[s + 1] = Y.copy()
    return DecoderRun(full_F, eta, update, eprime_reading, classes, W, kept,
                      label or f"{update}, {schedule}, η_Y={eta}", observed,
                      meta={"rows": rows} if live_rows else {})


def theorem1_coefficients(Ep: np.ndarray, reading: str, M: int) -> tuple[np.ndarray, np.ndarray]:
    """(ι (K,), β (K × K, zero diagonal)) of Theorem 1 under ``ss.opt.beta``: ``leading`` β_nn' = E'_nn',
    ι_n = 1 − E'_nn (Eqns 87, 89); ``eq88`` Eqns 86, 88 as printed with θ = σ = 0; ``derived`` the expansion of
    Eqn 83 (``ss.dv.thm1_coefficients``: the sign of q₀'s lone term flips). q₁ = 1 + 1/(M−1), q₀ = −M/(M−1)²."""
    Ep = np.asarray(Ep, dtype=float)
    K = Ep.shape[0]
    if reading == "leading":
        beta = Ep.copy()
        iota = 1 - np.diag(Ep)
    elif reading in ("eq88", "derived"):
        q1, q0 = 1 + 1 / (M - 1), -M / (M - 1) ** 2
        column = Ep.sum(axis=0)  # Σ_k E'_kn'
        sign = 1.0 if reading == "eq88" else -1.0
        # Σ_{k≠n} E'_kn' = column_n' − E'_nn'
        beta = q1 * Ep + q0 * (sign + column[None, :] - Ep)
        iota = q1 * (1 - np.diag(Ep)) - q0 * (column - np.diag(Ep))
    else:
        raise InvalidArgument(f"reading={reading!r} is not a value of ss.opt.beta; choose leading, eq88 or derived")
    np.fill_diagonal(beta, 0.0)
    return iota, beta
