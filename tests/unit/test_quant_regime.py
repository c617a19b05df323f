"""The regime must be able to change: the transition prior (MAP Baum-Welch, checked against
hmmlearn's transmat_prior), the retrain schedule (rolling window and the CUSUM of surprising
bars), and engine states saved before either."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest
from hmmlearn.hmm import CategoricalHMM

from omega.quant.engine import Bar, QuantEngine, QuantParams
from omega.quant.hmm import HmmParams, baum_welch, sticky_prior

# Opens no store: left out of the PostgreSQL run (tests/engine_split.py).
pytestmark = pytest.mark.no_store


def _turning_bars(up: int, down: int, seed: int = 1, sign: float = 1.0) -> list[Bar]:
    rng = np.random.default_rng(seed)
    returns = np.concatenate([rng.normal(4e-4, 2e-4, up), rng.normal(-4e-4, 2e-4, down)])
    closes = (100 * np.exp(np.cumsum(sign * returns))).tolist()
    return [Bar(str(i), c, c, c, c, 1000.0) for i, c in enumerate(closes)]


def _one_sided_obs(n: int, seed: int = 2) -> np.ndarray:
    """Symbols of a steady rally: mostly up and flat, a few downs."""
    rng = np.random.default_rng(seed)
    return rng.choice(5, size=n, p=[0.02, 0.08, 0.3, 0.4, 0.2]).astype(np.int64)


def test_map_baum_welch_matches_hmmlearn_with_transition_and_emission_priors() -> None:
    obs = _one_sided_obs(1500, seed=3)
    start = HmmParams.default()
    b_prior = 1.0 + 300.0 * start.b
    a_prior = sticky_prior(200.0)
    ours, history = baum_welch(obs, start, 8, b_prior, a_prior)
    ref = CategoricalHMM(
        n_components=3, n_features=5, n_iter=8, tol=-np.inf, init_params="", params="ste"
    )
    ref.startprob_, ref.transmat_, ref.emissionprob_ = start.pi, start.a, start.b
    ref.emissionprob_prior = b_prior
    ref.transmat_prior = a_prior
    ref.fit(obs.reshape(-1, 1))
    np.testing.assert_allclose(ours.pi, ref.startprob_, atol=1e-7)
    np.testing.assert_allclose(ours.a, ref.transmat_, atol=1e-7)
    np.testing.assert_allclose(ours.b, ref.emissionprob_, atol=1e-7)
    np.testing.assert_allclose(history, list(ref.monitor_.history), rtol=1e-9)


def test_sticky_prior_is_centred_on_the_default_transitions() -> None:
    prior = sticky_prior(100.0)
    np.testing.assert_allclose((prior - 1.0) / 100.0, HmmParams.default().a)
    assert sticky_prior(0.0).tolist() == np.ones((3, 3)).tolist()  # 1: no prior at all


def test_the_transition_prior_keeps_a_barely_visited_state_able_to_hold() -> None:
    """On one-regime history the Bear and Lateral states are barely visited: without a prior
    their rows are decided by a few stray counts and stop holding (Bear's self-transition
    falls below one half after 5 iterations, and lower at each retrain), so the belief can
    never settle in Bear when the market turns."""
    obs = _one_sided_obs(2000)
    start = HmmParams.default()
    b_prior = 1.0 + 500.0 * start.b
    plain, _ = baum_welch(obs, start, 5, b_prior)
    assert plain.a[1, 1] < 0.5  # collapsed
    strength = QuantParams().hmm_transition_prior_strength
    kept, _ = baum_welch(obs, start, 5, b_prior, sticky_prior(strength))
    assert kept.a[1, 1] > 0.9 and kept.a[2, 2] > 0.9  # barely-visited states still hold
    assert kept.a[0, 0] > 0.99  # the visited row follows its data
    assert kept.a[0, 1] > 1e-4  # and Bear can still be entered from Bull
    np.testing.assert_allclose(kept.a.sum(axis=1), 1.0)


def _run(params: QuantParams, bars: list[Bar]) -> tuple[list[str], list[int]]:
    engine = QuantEngine(params)
    regimes, retrained_at = [], []
    for i, bar in enumerate(bars):
        before = engine.to_state()["state"]["retrains"]
        regimes.append(engine.process(bar).regime)
        if engine.to_state()["state"]["retrains"] != before:
            retrained_at.append(i)
    return regimes, retrained_at


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_a_run_of_surprising_bars_retrains_before_the_schedule(sign: float) -> None:
    """Even without the transition prior, the CUSUM of log c_t notices the turn and retrains
    long before the rolling schedule (every 2000 bars) would."""
    bars = _turning_bars(800, 600, sign=sign)
    then = "Bear" if sign > 0 else "Bull"
    regimes, retrained_at = _run(QuantParams(hmm_transition_prior_strength=0.0), bars)
    assert retrained_at[0] == 501  # the first training, at hmm_min_train observations
    surprise = [i for i in retrained_at if i > 800]
    assert surprise and surprise[0] < 900  # noticed within 100 bars of the turn
    assert all(b - a >= 100 for a, b in itertools.pairwise(retrained_at))
    assert regimes[-1] == then
    # With neither the prior nor the surprise retrain, the regime stays stuck (the bug).
    stuck, _ = _run(
        QuantParams(hmm_transition_prior_strength=0.0, hmm_surprise_threshold=1e12), bars
    )
    assert stuck[800:].count(then) == 0


def test_the_rolling_schedule_retrains_every_hmm_retrain_every_bars() -> None:
    rng = np.random.default_rng(5)
    closes = (100 * np.exp(np.cumsum(rng.normal(0.0, 2e-4, 5200)))).tolist()
    bars = [Bar(str(i), c, c, c, c, 1000.0) for i, c in enumerate(closes)]
    _, retrained_at = _run(QuantParams(hmm_surprise_threshold=1e12), bars)
    assert retrained_at == [501, 2501, 4501]


def test_a_version_1_state_takes_the_new_schedule_and_retrains_at_the_next_bar() -> None:
    bars = _turning_bars(800, 50)
    engine = QuantEngine()
    for bar in bars[:700]:
        engine.process(bar)
    old = json.loads(json.dumps(engine.to_state()))
    old["version"] = 1
    old["params"]["hmm_retrain_every"] = 5000
    for key in ("hmm_transition_prior_strength", "hmm_surprise_slack"):
        del old["params"][key]
    for key in ("fit_ll", "surprise", "retrains"):
        del old["state"][key]
    restored = QuantEngine.from_state(old)
    assert restored.params.hmm_retrain_every == QuantParams().hmm_retrain_every
    restored.process(bars[700])
    state = restored.to_state()
    assert state["version"] == 2
    assert state["state"]["trained_at"] == 700 and state["state"]["retrains"] == 1
    with pytest.raises(ValueError, match="version"):
        QuantEngine.from_state({**old, "version": 3})
