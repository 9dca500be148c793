"""A small standard transformer with learnable ALiBi slopes, forward and backward by hand in NumPy.

Used for the CPU proxy of the induction-head paper's Fig. 2 ([W] App. B §1; spec §2.9, §6 ih.fig2):
a two-layer, two-head decoder "without any simplification" — token embedding, pre-LayerNorm
blocks (causal self-attention with ALiBi bias −m_h·(i−j), one learnable slope m_h per head,
then a ReLU FFN, both with residual connections), a final LayerNorm and an untied output
projection, trained with cross-entropy on next-token prediction. No dropout. Every weight entry
starts iid N(0, init²); ALiBi slopes start at ``slope_init`` (spec flags ``fig2_*``).

Shapes: a batch of token ids ``tokens`` (B, T+1); inputs tokens[:, :T], targets tokens[:, 1:].
Parameters live in one flat float64 vector (so :func:`numerics.train.train` steps them) with named
views (:class:`ParamLayout`). ``loss_and_grad`` returns the mean cross-entropy over the chosen
positions and its exact gradient (checked against finite differences in the tests).

``repeat_corpus`` draws the synthetic proxy data: sequences of ``2K`` uniformly random tokens
whose second half repeats the first half; next-token prediction in the second half is possible
only by an induction head (find the earlier occurrence of the current token, copy its successor).
"""

from __future__ import annotations

import contextlib
import ctypes
import math
from collections.abc import Callable
from dataclasses import asdict, dataclass

import numpy as np

from derivations.errors import InvalidArgument
from numerics.blocks import BlockLayout
from numerics.optim import optimizer_named
from numerics.train import LogSchedule, ParamGroup, train
from numerics.trajectory import Trajectory


@dataclass(frozen=True)
class TransformerConfig:
    """Sizes and initialisation of the model (spec §2.9 names: D, W (ffn), d (vocab), L (context))."""

    vocab: int = 16
    d_model: int = 32
    n_heads: int = 2
    n_layers: int = 2
    ffn: int = 64
    context: int = 24
    init: float = 0.01
    slope_init: float = 0.01

    def __post_init__(self):
        for name in ("vocab", "d_model", "n_heads", "n_layers", "ffn", "context"):
            value = getattr(self, name)
            if int(value) != value or value < 1:
                raise InvalidArgument(f"{name}={value} must be a positive integer")
        if self.d_model % self.n_heads:
            raise InvalidArgument(f"d_model={self.d_model} must be divisible by n_heads={self.n_heads}")
        if not self.init > 0:
            raise InvalidArgument(f"init={self.init} must be > 0")


class ParamLayout(BlockLayout):
    """Named views into one flat parameter vector (:class:`numerics.blocks.BlockLayout`) for ``config``."""

    def __init__(self, config: TransformerConfig):
        D, F, V, H = config.d_model, config.ffn, config.vocab, config.n_heads
        shapes = {"embed": (V, D)}
        for layer in range(config.n_layers):
            shapes.update(
                {
                    f"{layer}.ln1_g": (D,),
                    f"{layer}.ln1_b": (D,),
                    f"{layer}.wq": (D, D),
                    f"{layer}.wk": (D, D),
                    f"{layer}.wv": (D, D),
                    f"{layer}.wo": (D, D),
                    f"{layer}.slopes": (H,),
                    f"{layer}.ln2_g": (D,),
                    f"{layer}.ln2_b": (D,),
                    f"{layer}.w1": (D, F),
                    f"{layer}.b1": (F,),
                    f"{layer}.w2": (F, D),
                    f"{layer}.b2": (D,),
                }
            )
        shapes.update({"lnf_g": (D,), "lnf_b": (D,), "unembed": (D, V)})
        super().__init__(shapes)

    def names(self, suffix: str) -> list[str]:
        """Parameter names ending in ``suffix`` (e.g. ".slopes", ".wq")."""
        return [n for n in self.shapes if n.endswith(suffix)]


def init_params(config: TransformerConfig, rng: np.random.Generator) -> np.ndarray:
    """Weights iid N(0, init²); LayerNorm gains 1 and biases 0; FFN biases 0; slopes at slope_init."""
    layout = ParamLayout(config)
    flat = np.zeros(layout.size)
    views = layout.views(flat)
    for name, view in views.items():
        kind = name.split(".")[-1]
        if kind.endswith("_g"):
            view[...] = 1.0
        elif kind == "slopes":
            view[...] = config.slope_init
        elif kind.endswith("_b") or kind in ("b1", "b2"):
            continue
        else:
            view[...] = config.init * rng.standard_normal(view.shape)
    return flat


def _layernorm(x, g, b, eps=1e-5):
    mu = x.mean(-1, keepdims=True)
    inv = 1.0 / np.sqrt(x.var(-1, keepdims=True) + eps)
    xhat = (x - mu) * inv
    return xhat * g + b, (xhat, inv)


def _layernorm_back(dy, g, cache):
    xhat, inv = cache
    dg = (dy * xhat).sum(axis=(0, 1))
    db = dy.sum(axis=(0, 1))
    dxhat = dy * g
    dx = inv * (dxhat - dxhat.mean(-1, keepdims=True) - xhat * (dxhat * xhat).mean(-1, keepdims=True))
    return dx, dg, db


def _lags(T):
    i = np.arange(T)
    lag = (i[:, None] - i[None, :]).astype(float)
    return lag, lag < 0  # lag i−j and the causal mask (j > i)


def forward_backward(
    flat: np.ndarray, tokens: np.ndarray, config: TransformerConfig, *, positions=None, want_grad: bool = True
):
    """Mean cross-entropy of next-token prediction and (if ``want_grad``) its gradient, flat.

    ``positions``: indices t (0-based, of the T predictions) entering the mean; None = all.
    Returns (loss, grad or None, per-position mean losses of shape (T,)).
    """
    layout = ParamLayout(config)
    P = layout.views(flat)
    B, T1 = tokens.shape
    T = T1 - 1
    if T > config.context:
        raise InvalidArgument(f"sequence length T={T} exceeds context={config.context}")
    H, D = config.n_heads, config.d_model
    dh = D // H
    scale = 1.0 / math.sqrt(dh)
    inputs, targets = tokens[:, :T], tokens[:, 1:]
    lag, masked = _lags(T)
    x = P["embed"][inputs]
    caches = []
    for layer in range(config.n_layers):
        pre = f"{layer}."
        a, ln1 = _layernorm(x, P[pre + "ln1_g"], P[pre + "ln1_b"])
        q, k, v = ((a @ P[pre + m]).reshape(B, T, H, dh).transpose(0, 2, 1, 3) for m in ("wq", "wk", "wv"))
        scores = scale * q @ k.transpose(0, 1, 3, 2) - P[pre + "slopes"][None, :, None, None] * lag
        scores = np.where(masked, -np.inf, scores)
        scores -= scores.max(-1, keepdims=True)
        att = np.exp(scores)
        att /= att.sum(-1, keepdims=True)
        heads = (att @ v).transpose(0, 2, 1, 3).reshape(B, T, D)
        x = x + heads @ P[pre + "wo"]
        f, ln2 = _layernorm(x, P[pre + "ln2_g"], P[pre + "ln2_b"])
        z = f @ P[pre + "w1"] + P[pre + "b1"]
        r = np.maximum(z, 0.0)
        x = x + r @ P[pre + "w2"] + P[pre + "b2"]
        caches.append((a, ln1, q, k, v, att, heads, f, ln2, z, r))
    out, lnf = _layernorm(x, P["lnf_g"], P["lnf_b"])
    logits = out @ P["unembed"]
    logits -= logits.max(-1, keepdims=True)
    logp = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    nll = -np.take_along_axis(logp, targets[..., None], axis=-1)[..., 0]  # (B, T)
    weight = np.zeros(T)
    weight[np.arange(T) if positions is None else positions] = 1.0
    weight /= weight.sum() * B
    loss = float((nll * weight).sum())
    per_position = nll.mean(axis=0)
    if not want_grad:
        return loss, None, per_position
    grad = np.zeros_like(flat)
    G = layout.views(grad)
    dlogits = np.exp(logp)
    np.put_along_axis(
        dlogits, targets[..., None], np.take_along_axis(dlogits, targets[..., None], -1) - 1.0, -1
    )
    dlogits *= weight[None, :, None]
    G["unembed"][...] = out.reshape(-1, D).T @ dlogits.reshape(-1, config.vocab)
    dx, G["lnf_g"][...], G["lnf_b"][...] = _layernorm_back(dlogits @ P["unembed"].T, P["lnf_g"], lnf)
    for layer in reversed(range(config.n_layers)):
        pre = f"{layer}."
        a, ln1, q, k, v, att, heads, f, ln2, z, r = caches[layer]
        # FFN
        G[pre + "b2"][...] = dx.sum(axis=(0, 1))
        G[pre + "w2"][...] = r.reshape(-1, config.ffn).T @ dx.reshape(-1, D)
        dz = (dx @ P[pre + "w2"].T) * (z > 0)
        G[pre + "b1"][...] = dz.sum(axis=(0, 1))
        G[pre + "w1"][...] = f.reshape(-1, D).T @ dz.reshape(-1, config.ffn)
        df, G[pre + "ln2_g"][...], G[pre + "ln2_b"][...] = _layernorm_back(
            dz @ P[pre + "w1"].T, P[pre + "ln2_g"], ln2
        )
        dx = dx + df
        # attention
        G[pre + "wo"][...] = heads.reshape(-1, D).T @ dx.reshape(-1, D)
        dheads = (dx @ P[pre + "wo"].T).reshape(B, T, H, dh).transpose(0, 2, 1, 3)
        datt = dheads @ v.transpose(0, 1, 3, 2)
        dv = att.transpose(0, 1, 3, 2) @ dheads
        dscores = att * (datt - (datt * att).sum(-1, keepdims=True))
        G[pre + "slopes"][...] = -(dscores * lag).sum(axis=(0, 2, 3))
        dq = scale * dscores @ k
        dk = scale * dscores.transpose(0, 1, 3, 2) @ q
        merge = lambda t: t.transpose(0, 2, 1, 3).reshape(-1, D)  # noqa: E731
        a2 = a.reshape(-1, D)
        G[pre + "wq"][...] = a2.T @ merge(dq)
        G[pre + "wk"][...] = a2.T @ merge(dk)
        G[pre + "wv"][...] = a2.T @ merge(dv)
        da = merge(dq) @ P[pre + "wq"].T + merge(dk) @ P[pre + "wk"].T + merge(dv) @ P[pre + "wv"].T
        dpre, G[pre + "ln1_g"][...], G[pre + "ln1_b"][...] = _layernorm_back(
            da.reshape(B, T, D), P[pre + "ln1_g"], ln1
        )
        dx = dx + dpre
    np.add.at(G["embed"], inputs, dx)
    return loss, grad, per_position


@contextlib.contextmanager
def single_threaded_blas():
    """Run the block with OpenBLAS on one thread (restored afterwards; a no-op without OpenBLAS).

    The matrices here are tiny (B·T × D with D ≲ 64); a multi-threaded BLAS spends more on
    waking threads than on the products — 8× slower per step on a loaded 2-core machine.
    """
    calls = []
    with open("/proc/self/maps") as maps:
        paths = {line.split()[-1] for line in maps if "openblas" in line.split()[-1].lower()}
    for path in paths:
        with contextlib.suppress(OSError):
            lib = ctypes.CDLL(path)
            for suffix in ("64_", ""):
                for prefix in ("scipy_openblas", "openblas"):
                    get, put = f"{prefix}_get_num_threads{suffix}", f"{prefix}_set_num_threads{suffix}"
                    if hasattr(lib, get) and hasattr(lib, put):
                        calls.append((getattr(lib, put), getattr(lib, get)()))
    for put, _ in calls:
        put(1)
    try:
        yield
    finally:
        for put, before in calls:
            put(before)


def repeat_corpus(rng: np.random.Generator, size: int, half: int, vocab: int) -> np.ndarray:
    """``size`` sequences of 2·half tokens: ``half`` iid uniform tokens, then the same ``half`` again."""
    first = rng.integers(0, vocab, size=(size, half))
    return np.concatenate([first, first], axis=1)


def norms(flat: np.ndarray, config: TransformerConfig) -> tuple[float, float]:
    """(‖p‖, ‖(W_K, W_Q)‖): Frobenius norms of all ALiBi slopes and of all W_K, W_Q (spec §2.9)."""
    views = ParamLayout(config).views(flat)
    slopes = np.concatenate([views[n].ravel() for n in views if n.endswith(".slopes")])
    qk = np.concatenate([views[n].ravel() for n in views if n.endswith((".wq", ".wk"))])
    return float(np.linalg.norm(slopes)), float(np.linalg.norm(qk))


def train_repeat_task(
    config: TransformerConfig,
    *,
    half: int | None = None,
    lr: float = 0.1,
    batch: int = 32,
    steps: int = 2000,
    seed: int = 0,
    log_every: int = 20,
    eval_size: int = 256,
    optimizer: str = "sgd",
    positions: str = "all",
    progress: Callable[[float, str], None] | None = None,
) -> Trajectory:
    """Online SGD on fresh repeated-random-token batches; held-out loss and norms every ``log_every`` steps.

    ``positions``: "all" (every next-token position, spec default fig2_loss_positions) or "last".
    Runs through :func:`numerics.train.train` (one group per named parameter, all at ``lr``;
    t = lr × step). Observables: "loss" (held out), "copy_loss" (the held-out loss on the
    predictions an induction head makes possible: targets in the second half), "slope_norm" and
    "wqk_norm" (:func:`norms`); states: the ALiBi slopes of each layer ("0.slopes", ...);
    the final parameters in ``meta["theta"]``, the settings in ``meta["settings"]``.
    """
    half = half or (config.context + 1) // 2
    if 2 * half - 1 > config.context:
        raise InvalidArgument(f"half={half} needs context >= {2 * half - 1}, got {config.context}")
    if positions not in ("all", "last"):
        raise InvalidArgument(f"positions={positions!r} is not one of all, last")
    init_seq, data_seq, eval_seq = np.random.SeedSequence(seed).spawn(3)
    flat = init_params(config, np.random.default_rng(init_seq))
    held_out = repeat_corpus(np.random.default_rng(eval_seq), eval_size, half, config.vocab)
    T = 2 * half - 1
    train_positions = None if positions == "all" else [T - 1]
    copy_positions = np.arange(half - 1, T)  # predictions of tokens half..2half-1 (0-based targets)
    layout = ParamLayout(config)

    def gradient(flat, batch_tokens):
        loss, grad, _ = forward_backward(flat, batch_tokens, config, positions=train_positions)
        return loss, grad

    def held_out_losses(flat):
        loss, _, per_position = forward_backward(flat, held_out, config, positions=train_positions,
                                                 want_grad=False)
        return {"loss": loss, "copy_loss": per_position[copy_positions].mean()}

    def norm_columns(flat):
        p_norm, qk_norm = norms(flat, config)
        return {"slope_norm": p_norm, "wqk_norm": qk_norm}

    settings = {"half": half, "lr": lr, "batch": batch, "steps": steps, "seed": seed, "eval_size": eval_size,
                "optimizer": optimizer, "positions": positions}
    with single_threaded_blas():
        return train(
            flat,
            gradient,
            groups=[ParamGroup(name, slice(a, b), lr) for name, (a, b) in layout.offsets.items()],
            optimizer=optimizer_named(optimizer),
            steps=steps,
            data=lambda rng, step: repeat_corpus(rng, batch, half, config.vocab),
            log=LogSchedule(every=log_every),
            observers={"held_out": held_out_losses, "norms": norm_columns},
            states={n: (slice(*layout.offsets[n]), layout.shapes[n]) for n in layout.names(".slopes")},
            progress=progress,
            seed=data_seq,
            meta={"config": asdict(config), "settings": settings, "seed": seed},
        )
