"""ih.fig2 — [W] Fig. 2 (App. B §1): a standard two-layer two-head ALiBi transformer, as a CPU proxy.

The paper trains it on wikitext-2.

The paper's run (wikitext-2, vocabulary 33,278, D = 128, FFN 512, L = 200, B = 32, SGD 0.1,
initialisation 0.01, 1,500 epochs on one H100/A100; ≈10¹⁷ flop, spec §7) cannot run here: there is
no GPU and no data set can be downloaded (so neither can the spec's CPU proxy on the 5,000 most
frequent wikitext-2 tokens). This check runs a proxy of a different data set instead:

* model: ``numerics.models.transformer`` — the same architecture family (two layers, two heads,
  pre-LayerNorm, learnable ALiBi slope per head initialised at 0.01, ReLU FFN, untied output
  projection, weights iid N(0, init²)), small sizes (defaults below);
* data: synthetic "repeated random tokens" — each sequence is K iid uniform tokens followed by the
  same K tokens again; the loss (cross-entropy, averaged over all next-token positions, spec flag
  fig2_loss_positions = all) can fall below log(vocab) on the second half only through an
  induction head, which is the mechanism the paper's figure is about;
* optimiser: online SGD, fresh batches every step; learning rate 0.5 and initialisation 0.03 by
  default (the paper: 0.1 and 0.01; see ``PARAMS``), both overridable with ``--param``.

It evaluates the spec's qualitative acceptance criteria on the proxy run:

1. ‖p‖ saturates (first reaches 90 % of its maximum over the run) before ‖(W_K, W_Q)‖ has grown
   tenfold from its initial value;
2. the loss plateau ends within ±10 % of the step of the steepest increase of log‖(W_K, W_Q)‖
   (plateau: the detector of ``checks.phases`` on the held-out loss against step; its end is the
   end of the last plateau before the loss has fallen by 10 % of log(vocab));
3. the linearity (R²) of log‖(W_K, W_Q)‖ against step on the pre-escape window (reported).

Status rule: the status is always ``inconclusive`` — the proxy runs on different data, so
meeting the criteria does not reproduce the paper's figure and missing them does not refute it;
the summary starts "proxy only:" and states which criteria the proxy met.
"""

from __future__ import annotations

import math

import numpy as np

from checks.claim import Claim, Context, Outcome, Param
from checks.registry import register
from derivations.errors import InvalidArgument

PAPER_SETTING = {
    "data": "wikitext-2",
    "vocab": 33278,
    "d_model": 128,
    "ffn": 512,
    "context": 200,
    "batch": 32,
    "lr": 0.1,
    "init": 0.01,
    "epochs": 1500,
    "hardware": "1 H100 (App. B §1) / 1 A100 (App. B.1)",
}
#: the proxy's parameters. lr 0.5 and init 0.03 instead of the paper's 0.1 and 0.01: with the paper's
#: values the tiny proxy stays on its plateau for thousands of steps (measured: no escape within 3,000
#: steps even at lr 1.0, init 0.01), beyond the CPU budget; ``--param lr=0.1 --param init=0.01`` runs
#: the paper's values.
PARAMS = (
    Param("vocab", 8, doc="proxy vocabulary size"),
    Param("d_model", 16, doc="proxy width"),
    Param("ffn", 32, doc="proxy FFN width"),
    Param("half", 8, doc="tokens repeated: each sequence is `half` iid tokens, then the same again"),
    Param("steps", 1200, full=(8000,), doc="SGD steps (the budget's: 1200 quick, 8000 full)"),
    Param("lr", 0.5, doc="SGD learning rate (paper: 0.1)"),
    Param("init", 0.03, doc="weight initialisation scale (paper: 0.01)"),
    Param("slope_init", 0.01, doc="initial ALiBi slope of every head"),
    Param("batch", 32, doc="minibatch size"),
    Param("positions", "all", choices=("all", "last"),
          doc="flag fig2_loss_positions: the loss over every next-token position, or the last only"),
)


def _settings(ctx: Context) -> dict:
    # steps is the budget's one value (its grid per budget), the others their pinned or declared value
    chosen = {p.name: ctx.value(p.name) for p in PARAMS}
    chosen["steps"] = ctx.grid("steps")[0]
    for name in ("vocab", "d_model", "ffn", "half", "steps", "batch"):
        if int(chosen[name]) != chosen[name] or chosen[name] < 1:
            raise InvalidArgument(f"{name}={chosen[name]} must be a positive integer")
        chosen[name] = int(chosen[name])
    for name in ("lr", "init", "slope_init"):
        if not (math.isfinite(float(chosen[name])) and float(chosen[name]) > 0):
            raise InvalidArgument(f"{name}={chosen[name]} must be a finite positive number")
    return chosen


def _first(mask: np.ndarray) -> int | None:
    idx = np.flatnonzero(mask)
    return int(idx[0]) if idx.size else None


def _r_squared(x: np.ndarray, y: np.ndarray) -> float:
    if x.size < 3 or np.ptp(x) == 0:
        return float("nan")
    slope, intercept = np.polyfit(x, y, 1)
    residual = y - (slope * x + intercept)
    total = ((y - y.mean()) ** 2).sum()
    return float(1 - (residual**2).sum() / total) if total > 0 else float("nan")


def criteria(steps: np.ndarray, loss: np.ndarray, p_norm: np.ndarray, w_norm: np.ndarray, vocab: int) -> dict:
    """The spec's three qualitative measurements on one logged run (indices refer to the log)."""
    from checks.phases import plateaus

    t = steps.astype(float)
    out: dict = {}
    i_p = _first(p_norm >= 0.9 * p_norm.max())
    i_w10 = _first(w_norm >= 10 * w_norm[0])
    out["p_saturation_step"] = None if i_p is None else int(steps[i_p])
    out["w_tenfold_step"] = None if i_w10 is None else int(steps[i_w10])
    out["p_before_w_tenfold"] = None if i_w10 is None else bool(i_p < i_w10)
    # escape: the loss has fallen by 10 % of log(vocab) below its initial level
    i_escape = _first(loss <= loss[0] - 0.1 * math.log(vocab))
    out["escape_step"] = None if i_escape is None else int(steps[i_escape])
    found = [iv for iv in plateaus(t[1:], loss[1:]) if i_escape is None or iv.start < t[i_escape]]
    out["plateaus"] = [(iv.start, iv.end, iv.level) for iv in found]
    plateau_end = found[-1].end if found else None
    out["plateau_end_step"] = plateau_end
    log_w = np.log(w_norm)
    # smoothed over ~5 % of the log so that SGD noise does not pick the steepest point
    width = max(1, len(t) // 20)
    smooth = np.convolve(np.pad(log_w, width // 2, mode="edge"), np.ones(width) / width, mode="valid")[
        : len(t)
    ]
    slope = np.gradient(smooth, t)
    i_steep = int(np.argmax(slope))
    out["smoothing_window_logs"] = width
    out["steepest_log_w_step"] = int(steps[i_steep])
    out["steepest_log_w_rate"] = float(slope[i_steep])
    if plateau_end is not None and i_escape is not None:
        out["plateau_end_within_10pct"] = bool(abs(plateau_end - steps[i_steep]) <= 0.1 * steps[i_steep])
    else:
        out["plateau_end_within_10pct"] = None
    end = plateau_end if plateau_end is not None else (t[i_escape] if i_escape is not None else t[-1])
    window = t <= end
    out["pre_escape_window"] = (0.0, float(end))
    out["r2_log_w_pre_escape"] = _r_squared(t[window], log_w[window])
    out["log_w_growth_rate_pre_escape"] = (
        float(np.polyfit(t[window], log_w[window], 1)[0]) if window.sum() >= 2 else None
    )
    return out


def _figure(ctx: Context, run, found: dict) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(13, 3.6))
    axes[0].plot(run.steps, run["loss"], label="held-out loss (all positions)")
    axes[0].plot(run.steps, run["copy_loss"], label="second half (induction-only) positions", alpha=0.8)
    axes[0].axhline(math.log(run.meta["config"]["vocab"]), color="grey", lw=0.7, ls=":", label="log(vocab)")
    axes[1].plot(run.steps, run["slope_norm"], color="C2")
    axes[2].semilogy(run.steps, run["wqk_norm"], color="C3")
    marks = {
        "plateau end": (found["plateau_end_step"], "k"),
        "‖p‖ at 90% of max": (found["p_saturation_step"], "C2"),
        "steepest log‖W‖": (found["steepest_log_w_step"], "C3"),
    }
    for ax in axes:
        for label, (where, color) in marks.items():
            if where is not None:
                ax.axvline(where, color=color, ls="--", lw=0.8, label=label if ax is axes[0] else None)
        ax.set_xlabel("SGD step")
    axes[0].set_title("loss")
    axes[1].set_title("‖p‖ (all ALiBi slopes)")
    axes[2].set_title("‖(W_K, W_Q)‖ (all layers, heads)")
    axes[0].legend(fontsize=7)
    fig.suptitle("ih.fig2 CPU proxy: repeated random tokens (NOT wikitext-2)", fontsize=10)
    fig.tight_layout()
    path = ctx.figure_path("fig2_proxy.png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return str(path)


def check_fig2(ctx: Context) -> Outcome:
    """Run the CPU proxy and measure the spec's qualitative acceptance criteria (status: proxy only)."""
    from numerics.models.transformer import TransformerConfig, train_repeat_task

    s = _settings(ctx)
    config = TransformerConfig(
        vocab=s["vocab"],
        d_model=s["d_model"],
        n_heads=2,
        n_layers=2,
        ffn=s["ffn"],
        context=2 * s["half"] - 1,
        init=float(s["init"]),
        slope_init=float(s["slope_init"]),
    )
    run = train_repeat_task(
        config,
        half=s["half"],
        lr=float(s["lr"]),
        batch=s["batch"],
        steps=s["steps"],
        seed=ctx.seed,
        log_every=max(1, s["steps"] // 150),
        positions=s["positions"],
        progress=ctx.report_progress,
    )
    found = criteria(run.steps, run["loss"], run["slope_norm"], run["wqk_norm"], config.vocab)
    figure = _figure(ctx, run, found)
    met = {
        "p_before_w_tenfold": found["p_before_w_tenfold"],
        "plateau_end_within_10pct": found["plateau_end_within_10pct"],
    }
    words = [
        f"{name}={'untestable' if value is None else ('met' if value else 'not met')}"
        for name, value in met.items()
    ]
    escaped = found["escape_step"] is not None
    escape_words = (
        f"loss escaped its plateau at step {found['escape_step']}"
        if escaped
        else f"no escape in {s['steps']} steps"
    )
    summary = (
        f"proxy only: synthetic repeated-token data, not wikitext-2 (no GPU, no download); "
        f"{escape_words}; "
        f"{', '.join(words)}; R²(log‖W‖, pre-escape) = {found['r2_log_w_pre_escape']:.3f}"
    )
    evidence = {
        "paper_setting": PAPER_SETTING,
        "deviations_from_paper": {
            "lr": (0.1, s["lr"]),
            "init": (0.01, s["init"]),
            "data": "synthetic",
            "sizes": "tiny (see proxy.model)",
        },
        "not_run_here": "the paper's setting and the spec's wikitext-2 CPU proxy (no GPU; no data download)",
        "proxy": {
            "data": f"repeated random tokens: {s['half']} iid uniform tokens then the same {s['half']} again",
            "model": {
                "n_layers": 2,
                "n_heads": 2,
                "pre_layernorm": True,
                "ffn": "ReLU",
                "alibi": "learnable",
                **{k: s[k] for k in ("vocab", "d_model", "ffn")},
                "context": config.context,
            },
            **{k: s[k] for k in ("lr", "init", "slope_init", "batch", "steps", "positions")},
            "optimizer": "sgd (online)",
            "seed": ctx.seed,
            "wall_time_s": run.meta["wall_time_s"],
        },
        "readings": {
            "fig2_loss_positions": s["positions"],
            "fig2_norm_layernorm": "pre-LN",
            "fig2_embedding": "learned, untied output projection",
        },
        "criteria": found,
        "status_rule": "always inconclusive: a proxy on other data can neither reproduce nor refute Fig. 2",
        "curves": {
            "step": run.steps,
            "loss": run["loss"],
            "copy_loss": run["copy_loss"],
            "p_norm": run["slope_norm"],
            "wqk_norm": run["wqk_norm"],
        },
    }
    return Outcome("inconclusive", summary, evidence, [figure])


register(
    Claim(
        "ih.fig2",
        "ih",
        "[W] Fig. 2 (App. B §1)",
        "figure",
        check_fig2,
        statement=(
            "the loss exhibits a clear plateau; position encoding p's are learned first; and the dot-product "
            "structure W_K, W_Q are learned slowly at the beginning, resembling an exponential increase; "
            "additionally, as W_K, W_Q are learned, the loss escapes that plateau."
        ),
        label_alt="[F] — (wikitext-2 experiment)",
        params=PARAMS,
        cost=15,
        doc=__doc__ or "",
    )
)
