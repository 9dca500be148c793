"""The small ALiBi transformer of the Fig. 2 proxy: exact gradients, data, norms."""

import numpy as np
import pytest

from derivations.errors import InvalidArgument
from numerics.models.transformer import (
    ParamLayout,
    TransformerConfig,
    forward_backward,
    init_params,
    norms,
    repeat_corpus,
    single_threaded_blas,
    train_repeat_task,
)

SMALL = TransformerConfig(vocab=7, d_model=8, n_heads=2, ffn=12, context=9, init=0.3, slope_init=0.2)


@pytest.mark.parametrize("positions", [None, [8], [2, 5]])
def test_gradient_matches_central_differences(positions):
    rng = np.random.default_rng(0)
    flat = init_params(SMALL, rng) + 0.1 * rng.standard_normal(ParamLayout(SMALL).size)
    tokens = repeat_corpus(rng, 3, 5, SMALL.vocab)
    _, grad, _ = forward_backward(flat, tokens, SMALL, positions=positions)
    step = 1e-6
    layout = ParamLayout(SMALL)
    # every ALiBi slope and LayerNorm gain, plus a random sample of the other coordinates
    special = [
        i for name in layout.shapes if name.endswith((".slopes", "_g")) for i in range(*layout.offsets[name])
    ]
    coords = np.unique(np.concatenate([special, rng.choice(flat.size, 60, replace=False)]))
    numeric = np.empty(coords.size)
    for j, i in enumerate(coords):
        up, down = flat.copy(), flat.copy()
        up[i] += step
        down[i] -= step
        numeric[j] = (
            forward_backward(up, tokens, SMALL, positions=positions, want_grad=False)[0]
            - forward_backward(down, tokens, SMALL, positions=positions, want_grad=False)[0]
        ) / (2 * step)
    np.testing.assert_allclose(grad[coords], numeric, atol=1e-8)
    a, b = layout.offsets["0.slopes"]
    assert np.abs(grad[a:b]).max() > 0  # the ALiBi slopes are trained


def test_initial_loss_is_log_vocab_at_tiny_init_and_causality_holds():
    config = TransformerConfig(vocab=11, d_model=8, ffn=8, context=9, init=1e-6)
    rng = np.random.default_rng(1)
    flat = init_params(config, rng)
    tokens = repeat_corpus(rng, 4, 5, config.vocab)
    loss, _, _ = forward_backward(flat, tokens, config, want_grad=False)
    assert loss == pytest.approx(np.log(11), rel=1e-6)
    # changing input token T−1 (the target of prediction T−2) cannot change predictions 0..T−3
    flat = init_params(TransformerConfig(vocab=11, d_model=8, ffn=8, context=9, init=0.5), rng)
    other = tokens.copy()
    other[:, -2] = (other[:, -2] + 1) % 11
    config = TransformerConfig(vocab=11, d_model=8, ffn=8, context=9, init=0.5)
    _, _, before = forward_backward(flat, tokens, config, want_grad=False)
    _, _, after = forward_backward(flat, other, config, want_grad=False)
    np.testing.assert_array_equal(before[:-2], after[:-2])
    assert before[-1] != after[-1]


def test_repeat_corpus_and_norms():
    tokens = repeat_corpus(np.random.default_rng(2), 5, 6, 9)
    assert tokens.shape == (5, 12) and np.array_equal(tokens[:, :6], tokens[:, 6:]) and tokens.max() < 9
    flat = init_params(SMALL, np.random.default_rng(3))
    p_norm, qk_norm = norms(flat, SMALL)
    assert p_norm == pytest.approx(0.2 * np.sqrt(2 * 2))  # two layers × two heads at slope_init
    views = ParamLayout(SMALL).views(flat)
    expected = np.sqrt(sum((views[f"{layer}.{m}"] ** 2).sum() for layer in (0, 1) for m in ("wq", "wk")))
    assert qk_norm == pytest.approx(expected)


def test_training_is_reproducible_and_bad_settings_are_refused():
    config = TransformerConfig(vocab=5, d_model=8, ffn=8, context=7)
    runs = [train_repeat_task(config, lr=0.5, steps=20, log_every=10, eval_size=8, batch=4) for _ in range(2)]
    for name in ("loss", "copy_loss", "wqk_norm", "slope_norm", "0.slopes"):
        assert np.array_equal(runs[0][name], runs[1][name])
    assert runs[0]["0.slopes"].shape == (3, config.n_heads)
    with single_threaded_blas():
        pass
    with pytest.raises(InvalidArgument, match="half"):
        train_repeat_task(config, half=6, steps=1)
    with pytest.raises(InvalidArgument, match="divisible"):
        TransformerConfig(d_model=7, n_heads=2)
