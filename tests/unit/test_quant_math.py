"""The quant engine's math, proved against reference implementations and closed forms."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest
from filterpy.kalman import KalmanFilter
from hmmlearn.hmm import CategoricalHMM
from hypothesis import given, settings
from hypothesis import strategies as st

from omega.quant.engine import Bar, QuantEngine, QuantParams
from omega.quant.execution import plan_execution
from omega.quant.hmm import (
    HmmParams,
    backward,
    baum_welch,
    canonical_order,
    discretise,
    forward,
    forward_update,
    log_likelihood,
    permute,
)
from omega.quant.kalman import KalmanTrend
from omega.quant.sizing import full_kelly, kelly_fraction, merton_fraction
from omega.quant.stats import ewma_variance, expected_rs, hurst_rs

# Opens no store: left out of the PostgreSQL run (tests/engine_split.py).
pytestmark = pytest.mark.no_store

# ---- Kalman vs filterpy ------------------------------------------------------------------


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_kalman_matches_filterpy_on_the_same_model(seed: int) -> None:
    rng = np.random.default_rng(seed)
    path = 100 + np.cumsum(rng.normal(0.01, 0.3, 2000))
    q_price, q_trend, r = 0.02, 1e-4, 0.5
    ours = KalmanTrend(q_price=q_price, q_trend=q_trend, r=r)
    ref = KalmanFilter(dim_x=2, dim_z=1)
    ref.F = np.array([[1.0, 1.0], [0.0, 1.0]])
    ref.H = np.array([[1.0, 0.0]])
    ref.Q = np.diag([q_price, q_trend])
    ref.R = np.array([[r]])
    ours.step(float(path[0]))
    ref.x = np.array([[path[0]], [0.0]])
    ref.P = np.diag([r, r])
    states, ref_states, covs, ref_covs = [], [], [], []
    for z in path[1:]:
        states.append(ours.step(float(z)))
        ref.predict()
        ref.update(np.array([[z]]))
        ref_states.append((ref.x[0, 0], ref.x[1, 0]))
        covs.append((ours.p00, ours.p01, ours.p11))
        ref_covs.append((ref.P[0, 0], ref.P[0, 1], ref.P[1, 1]))
        assert ref.P[0, 1] == pytest.approx(ref.P[1, 0])
    np.testing.assert_allclose(states, ref_states, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(covs, ref_covs, rtol=1e-9, atol=1e-12)


def test_kalman_follows_a_linear_trend() -> None:
    k = KalmanTrend(q_price=1e-6, q_trend=1e-8, r=1e-4)
    for t in range(500):
        price, trend = k.step(50.0 + 0.1 * t)
    assert trend == pytest.approx(0.1, rel=1e-3)
    assert price == pytest.approx(50.0 + 0.1 * 499, rel=1e-6)


# ---- HMM vs hmmlearn ---------------------------------------------------------------------


def _sample_obs(seed: int, n: int) -> np.ndarray:
    """Observations from a known 3-regime model (so training has something to find)."""
    rng = np.random.default_rng(seed)
    true = HmmParams(
        pi=np.array([0.5, 0.3, 0.2]),
        a=np.array([[0.9, 0.05, 0.05], [0.1, 0.85, 0.05], [0.05, 0.05, 0.9]]),
        b=np.array(
            [
                [0.02, 0.08, 0.3, 0.35, 0.25],
                [0.3, 0.35, 0.25, 0.08, 0.02],
                [0.05, 0.15, 0.6, 0.15, 0.05],
            ]
        ),
    )
    state = rng.choice(3, p=true.pi)
    out = []
    for _ in range(n):
        out.append(rng.choice(5, p=true.b[state]))
        state = rng.choice(3, p=true.a[state])
    return np.array(out, dtype=np.int64)


def _reference(params: HmmParams, n_iter: int) -> CategoricalHMM:
    model = CategoricalHMM(
        n_components=3, n_features=5, n_iter=n_iter, tol=-np.inf, init_params="", params="ste"
    )
    model.startprob_ = params.pi.copy()
    model.transmat_ = params.a.copy()
    model.emissionprob_ = params.b.copy()
    return model


@pytest.mark.parametrize("seed", [3, 4])
def test_forward_pass_matches_hmmlearn(seed: int) -> None:
    obs = _sample_obs(seed, 3000)
    params = HmmParams.default()
    ref = _reference(params, 1)
    x = obs.reshape(-1, 1)
    assert log_likelihood(obs, params) == pytest.approx(ref.score(x), rel=1e-10)
    # Smoothed posteriors from our scaled forward-backward equal hmmlearn's.
    alpha, c = forward(obs, params)
    gamma = alpha * backward(obs, params, c)
    np.testing.assert_allclose(gamma, ref.predict_proba(x), atol=1e-9)
    # The per-bar update reproduces the same filtered beliefs and log-likelihood.
    belief = list(params.pi)
    total = 0.0
    for t, o in enumerate(obs.tolist()):
        if t == 0:
            pred = [params.pi[j] * params.b[j, o] for j in range(3)]
            total += math.log(sum(pred))
            belief = [p / sum(pred) for p in pred]
        else:
            belief, log_c = forward_update(belief, params.a.tolist(), params.b[:, o].tolist())
            total += log_c
        np.testing.assert_allclose(belief, alpha[t], atol=1e-12)
    assert total == pytest.approx(ref.score(x), rel=1e-10)


def test_generic_numpy_forward_agrees_with_the_3_state_fast_path() -> None:
    obs = _sample_obs(5, 500)
    params = HmmParams.default()
    fast_alpha, fast_c = forward(obs, params)
    # Embed in 4 states with an unreachable one: the generic path runs, the answer is equal.
    pi = np.append(params.pi, 0.0)
    a = np.zeros((4, 4))
    a[:3, :3] = params.a
    a[3, 3] = 1.0
    b = np.vstack([params.b, np.full(5, 0.2)])
    alpha, c = forward(obs, HmmParams(pi=pi, a=a, b=b))
    np.testing.assert_allclose(alpha[:, :3], fast_alpha, atol=1e-12)
    np.testing.assert_allclose(c, fast_c, rtol=1e-12)
    beta = backward(obs, HmmParams(pi=pi, a=a, b=b), c)
    np.testing.assert_allclose(beta[:, :3], backward(obs, params, fast_c), rtol=1e-9)


@pytest.mark.parametrize(("seed", "n_iter"), [(6, 1), (7, 10), (8, 25)])
def test_baum_welch_matches_hmmlearn_from_the_same_start(seed: int, n_iter: int) -> None:
    obs = _sample_obs(seed, 2500)
    start = HmmParams.default()
    ours, history = baum_welch(obs, start, n_iter)
    ref = _reference(start, n_iter)
    ref.fit(obs.reshape(-1, 1))
    np.testing.assert_allclose(ours.pi, ref.startprob_, atol=1e-7)
    np.testing.assert_allclose(ours.a, ref.transmat_, atol=1e-7)
    np.testing.assert_allclose(ours.b, ref.emissionprob_, atol=1e-7)
    np.testing.assert_allclose(history, list(ref.monitor_.history), rtol=1e-9)
    # EM never decreases the likelihood.
    assert all(b >= a - 1e-7 for a, b in itertools.pairwise(history))


def test_map_baum_welch_matches_hmmlearn_with_the_same_dirichlet_prior() -> None:
    obs = _sample_obs(13, 2000)
    start = HmmParams.default()
    prior = 1.0 + 300.0 * start.b
    ours, history = baum_welch(obs, start, 8, prior)
    ref = _reference(start, 8)
    ref.emissionprob_prior = prior
    ref.fit(obs.reshape(-1, 1))
    np.testing.assert_allclose(ours.a, ref.transmat_, atol=1e-7)
    np.testing.assert_allclose(ours.b, ref.emissionprob_, atol=1e-7)
    np.testing.assert_allclose(history, list(ref.monitor_.history), rtol=1e-9)


def test_baum_welch_is_stable_on_long_histories() -> None:
    obs = _sample_obs(9, 50_000)  # unscaled probabilities would underflow to 0 here
    params, history = baum_welch(obs, HmmParams.default(), 3)
    assert all(math.isfinite(x) for x in history)
    assert np.isfinite(params.a).all() and np.isfinite(params.b).all()
    np.testing.assert_allclose(params.a.sum(axis=1), 1.0)
    np.testing.assert_allclose(params.b.sum(axis=1), 1.0)


def test_training_recovers_and_labels_the_regimes() -> None:
    obs = _sample_obs(10, 20_000)
    params, _ = baum_welch(obs, HmmParams.default(), 60)
    ordered = permute(params, canonical_order(params))
    means = ordered.b @ np.arange(-2.0, 3.0)
    assert means[0] > means[2] > means[1]  # Bull, Lateral, Bear
    assert ordered.b[0, 3] + ordered.b[0, 4] > 0.45  # Bull mostly up
    assert ordered.b[1, 0] + ordered.b[1, 1] > 0.45  # Bear mostly down
    assert ordered.b[2, 2] > 0.45  # Lateral mostly flat


def test_permute_keeps_the_likelihood() -> None:
    obs = _sample_obs(11, 800)
    params = HmmParams.default()
    assert log_likelihood(obs, permute(params, [2, 0, 1])) == pytest.approx(
        log_likelihood(obs, params), rel=1e-12
    )


def test_discretisation_bins() -> None:
    cases = {-3.0: 0, -1.5: 1, -1.0: 1, -0.5: 2, 0.0: 2, 0.5: 2, 0.51: 3, 1.5: 3, 1.6: 4}
    for z, symbol in cases.items():
        assert discretise(z) == symbol, z


# ---- EWMA and Hurst ----------------------------------------------------------------------


def test_ewma_variance_recursion() -> None:
    assert ewma_variance(4.0, 1.0, 0.9) == pytest.approx(0.9 * 4.0 + 0.1 * 1.0)


def _fgn(n: int, hurst: float, rng: np.random.Generator) -> np.ndarray:
    """Fractional Gaussian noise by Davies-Harte (exact circulant embedding)."""
    k = np.arange(n + 1, dtype=np.float64)
    acov = 0.5 * (np.abs(k - 1) ** (2 * hurst) - 2 * k ** (2 * hurst) + (k + 1) ** (2 * hurst))
    row = np.concatenate([acov, acov[-2:0:-1]])
    eig = np.fft.fft(row).real
    assert (eig >= -1e-9).all()
    m = len(row)
    z = rng.normal(size=m) + 1j * rng.normal(size=m)
    return np.fft.fft(np.sqrt(np.maximum(eig, 0) / m) * z)[:n].real


def test_expected_rs_matches_its_closed_form_for_a_small_n() -> None:
    n = 4
    gamma_ratio = math.gamma(1.5) / (math.sqrt(math.pi) * math.gamma(2.0))
    total = math.sqrt(3) + math.sqrt(2 / 2) + math.sqrt(1 / 3)
    assert expected_rs(n) == pytest.approx((3.5 / 4) * gamma_ratio * total)


def test_hurst_of_a_random_walk_is_about_one_half() -> None:
    estimates = []
    for seed in range(20):
        steps = np.random.default_rng(seed).normal(size=4096)
        walk = np.cumsum(steps)
        estimates.append(hurst_rs(np.diff(walk)))
    assert np.mean(estimates) == pytest.approx(0.5, abs=0.04)
    assert all(0.35 < h < 0.65 for h in estimates)


def test_uncorrected_rs_is_biased_up_and_the_correction_removes_it() -> None:
    steps = np.random.default_rng(42).normal(size=4096)
    assert hurst_rs(steps, corrected=False) > hurst_rs(steps) + 0.03


@pytest.mark.parametrize("true_h", [0.7, 0.8])
def test_hurst_of_a_trending_series_is_above_one_half(true_h: float) -> None:
    estimates = [hurst_rs(_fgn(4096, true_h, np.random.default_rng(s))) for s in range(10)]
    assert min(estimates) > 0.55
    assert np.mean(estimates) == pytest.approx(true_h, abs=0.1)


@pytest.mark.parametrize("true_h", [0.2, 0.3])
def test_hurst_of_a_mean_reverting_series_is_below_one_half(true_h: float) -> None:
    estimates = [hurst_rs(_fgn(4096, true_h, np.random.default_rng(s))) for s in range(10)]
    assert max(estimates) < 0.45
    assert np.mean(estimates) == pytest.approx(true_h, abs=0.1)


def test_hurst_of_an_ornstein_uhlenbeck_price_is_mean_reverting() -> None:
    rng = np.random.default_rng(7)
    x = np.zeros(4097)
    for t in range(1, len(x)):
        x[t] = 0.7 * x[t - 1] + rng.normal()  # the price reverts to its mean
    assert hurst_rs(np.diff(x)) < 0.4


def test_hurst_degenerate_inputs() -> None:
    assert hurst_rs(np.zeros(512)) == 0.5
    assert hurst_rs(np.ones(10)) == 0.5
    assert 0.0 <= hurst_rs(np.arange(512, dtype=float) ** 3) <= 1.0


# ---- Merton, Kelly, execution ------------------------------------------------------------


def test_merton_closed_form_and_clamp() -> None:
    assert merton_fraction(0.08, 0.02, 3.0, 0.2) == pytest.approx(0.06 / (3 * 0.04))
    assert merton_fraction(0.5, 0.0, 1.0, 0.1) == 1.5
    assert merton_fraction(-0.5, 0.0, 1.0, 0.1) == -0.5
    assert merton_fraction(0.01, 0.0, 2.0, 0.0) == 1.5
    assert merton_fraction(0.0, 0.0, 2.0, 0.0) == 0.0


def test_kelly_closed_form() -> None:
    assert full_kelly(0.6) == pytest.approx(0.2)
    assert full_kelly(0.6, 2.0) == pytest.approx(0.6 - 0.4 / 2)
    assert kelly_fraction(0.6) == pytest.approx(0.25 * 0.2)
    assert kelly_fraction(0.56, 1.5) == pytest.approx(0.25 * (0.56 - 0.44 / 1.5))
    assert kelly_fraction(0.9) == 0.10  # 25% of 0.8 = 0.2, capped at 10%
    assert kelly_fraction(0.5499) == 0.0  # below 55% confidence
    assert kelly_fraction(0.55, 0.5) == 0.0  # confident but no edge: never negative


def test_execution_plan_thresholds() -> None:
    assert plan_execution(99, 100_000).strategy == "Immediate"
    twap_low = plan_execution(100, 100_000)
    assert (twap_low.strategy, twap_low.slices) == ("TWAP", 3)
    twap_high = plan_execution(1000, 100_000)
    assert (twap_high.strategy, twap_high.slices) == ("TWAP", 20)
    assert 3 < plan_execution(500, 100_000).slices < 20
    assert plan_execution(1001, 100_000).strategy == "NoTrade"
    assert plan_execution(0, 100_000).strategy == "NoTrade"
    assert plan_execution(10, 0).strategy == "NoTrade"


# ---- the engine: properties over random price paths --------------------------------------

SMALL = QuantParams(
    hurst_window=64,
    hurst_every=5,
    hmm_window=120,
    hmm_min_train=60,
    hmm_retrain_every=50,
    hmm_iter=3,
    warmup_bars=20,
)


def _bars(closes: list[float], volumes: list[float] | None = None) -> list[Bar]:
    vols = volumes or [1000.0] * len(closes)
    return [Bar(str(i), c, c, c, c, v) for i, (c, v) in enumerate(zip(closes, vols, strict=True))]


paths = st.lists(
    st.floats(min_value=-0.05, max_value=0.05, allow_nan=False), min_size=1, max_size=400
).map(lambda rs: (100.0 * np.exp(np.cumsum(rs))).tolist())


@settings(max_examples=40, deadline=None)
@given(paths, st.integers(min_value=0, max_value=10**9))
def test_signals_are_finite_and_within_bounds(closes: list[float], seed: int) -> None:
    rng = np.random.default_rng(seed)
    volumes = rng.integers(0, 10_000, len(closes)).astype(float).tolist()
    engine = QuantEngine(SMALL)
    for bar in _bars(closes, volumes):
        sig = engine.process(bar)
        numbers = [sig.kalman_price, sig.kalman_trend, sig.ewma_vol, sig.hurst, sig.merton]
        numbers += [sig.kelly, sig.confidence, sig.execution.participation]
        numbers += list(sig.regime_probs.values())
        assert all(math.isfinite(x) for x in numbers)
        assert -0.5 <= sig.merton <= 1.5
        assert 0.0 <= sig.kelly <= 0.10
        assert sig.kelly == 0.0 or sig.confidence >= 0.55
        assert 0.0 <= sig.hurst <= 1.0
        assert sum(sig.regime_probs.values()) == pytest.approx(1.0)
        assert max(sig.regime_probs.values()) == sig.confidence
        assert sig.regime == max(sig.regime_probs, key=sig.regime_probs.__getitem__)
        assert sig.ewma_vol >= 0
        if sig.execution.strategy == "TWAP":
            assert 3 <= sig.execution.slices <= 20
        if sig.action == "Hold":
            assert sig.quantity == 0
        assert (sig.action == "Buy") == (sig.direction == "Long" and sig.quantity > 0)
        assert (sig.action == "Sell") == (sig.direction == "Short" and sig.quantity > 0)
        json.dumps(sig.as_dict(), allow_nan=False)


@settings(max_examples=25, deadline=None)
@given(paths, st.data())
def test_state_round_trips_through_json_and_continues_identically(
    closes: list[float], data: st.DataObject
) -> None:
    bars = _bars(closes)
    cut = data.draw(st.integers(min_value=0, max_value=len(bars)))
    straight = QuantEngine(SMALL)
    expected = [straight.process(b).as_dict() for b in bars]
    first = QuantEngine(SMALL)
    got = [first.process(b).as_dict() for b in bars[:cut]]
    restored = QuantEngine.from_state(json.loads(json.dumps(first.to_state(), allow_nan=False)))
    got += [restored.process(b).as_dict() for b in bars[cut:]]
    assert got == expected


@settings(max_examples=20, deadline=None)
@given(paths, paths)
def test_no_look_ahead(prefix: list[float], future: list[float]) -> None:
    """The signals of a prefix do not depend on what comes after it."""
    scale = prefix[-1] / future[0]
    alone = [s.as_dict() for s in map(QuantEngine(SMALL).process, _bars(prefix))]
    engine = QuantEngine(SMALL)
    longer = [engine.process(b).as_dict() for b in _bars(prefix + [x * scale for x in future])]
    assert longer[: len(prefix)] == alone


@pytest.mark.parametrize(
    ("seed", "drift", "regime", "direction", "action"),
    [
        (12, 4e-4, "Bull", "Long", "Buy"),
        (13, -4e-4, "Bear", "Short", "Sell"),
        (14, 0.0, "Lateral", "Flat", "Hold"),
    ],
)
def test_engine_is_deterministic_and_reads_the_regime(
    seed: int, drift: float, regime: str, direction: str, action: str
) -> None:
    rng = np.random.default_rng(seed)
    path = 100 * np.exp(np.cumsum(rng.normal(drift, 2e-4, 3000)))
    params = QuantParams(hmm_min_train=500, hmm_retrain_every=1000, portfolio=1_000_000)
    runs = []
    for _ in range(2):
        engine = QuantEngine(params)
        runs.append([engine.process(b).as_dict() for b in _bars(path.tolist())])
    assert runs[0] == runs[1]
    late = runs[0][1000:]
    share = sum(s["regime"] == regime for s in late) / len(late)
    assert share > 0.85
    last = runs[0][-1]
    assert (last["regime"], last["direction"], last["action"]) == (regime, direction, action)
    if direction != "Flat":
        assert last["kelly"] > 0 and last["quantity"] > 0
        assert math.copysign(1, last["kalman_trend"]) == math.copysign(1, drift)
        assert math.copysign(1, last["merton"]) == math.copysign(1, drift)


def test_bad_close_is_refused() -> None:
    with pytest.raises(ValueError, match="close"):
        QuantEngine().process(Bar("t", 1, 1, 1, 0.0, 1))
    with pytest.raises(ValueError, match="invalid quant parameters"):
        QuantParams(ewma_lambda=1.5)
