"""The quant engine: one bar in, one advisory signal out.

    close -> Kalman [price, trend] -> EWMA volatility, Hurst (R/S) -> HMM regime belief
          -> Merton allocation -> fractional Kelly -> direction, action, execution plan

`QuantEngine.process(bar)` is deterministic and uses only that bar and earlier ones (no
look-ahead): the return of bar t is standardised by the volatility known at t-1, the HMM is
retrained only on observations already seen, and Hurst is recomputed every `hurst_every` bars
over the window ending at the current bar.

When the HMM retrains (Baum-Welch on the last `hmm_window` observations, MAP with Dirichlet
priors on emissions and transitions): once `hmm_min_train` observations are in; then every
`hmm_retrain_every` bars (a rolling window); and sooner when the model stops explaining the
bars. That last one is a CUSUM on the one-step predictive log-likelihood log c_t: each bar adds
how far log c_t fell below the training window's average (less `hmm_surprise_slack` nats), the
sum never goes below 0, and once it passes `hmm_surprise_threshold` nats (a run of surprising
bars, e.g. a rally turning into a sell-off) the model retrains, at most once per
`hmm_min_gap` bars. The whole state round-trips through a JSON-able
dict (`to_state` / `from_state`), and a restored engine continues bit-for-bit identically.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import asdict, dataclass, field, fields
from typing import Any, Literal

import numpy as np

from omega.quant.execution import ExecutionPlan, plan_execution
from omega.quant.hmm import (
    REGIMES,
    HmmParams,
    baum_welch,
    canonical_order,
    discretise,
    forward,
    permute,
    smooth,
    sticky_prior,
)
from omega.quant.kalman import KalmanTrend
from omega.quant.sizing import kelly_fraction, merton_fraction
from omega.quant.stats import ewma_variance, hurst_rs

Direction = Literal["Long", "Short", "Flat"]
Action = Literal["Buy", "Sell", "Hold"]
VAR_FLOOR = 1e-14
STATE_VERSION = 2


@dataclass(frozen=True)
class Bar:
    """One OHLCV bar; `time` is whatever the source gives (epoch seconds or ISO text)."""

    time: str
    open: float
    high: float
    low: float
    close: float
    volume: float


@dataclass(frozen=True)
class QuantParams:
    """Engine settings. Kalman noises are relative: multiplied by the first price squared."""

    q_price_rel: float = 1e-8
    q_trend_rel: float = 1e-12
    r_rel: float = 1e-7
    ewma_lambda: float = 0.97
    hurst_window: int = 256
    hurst_every: int = 60
    hurst_min_scale: int = 8
    hmm_window: int = 2000
    hmm_min_train: int = 500
    hmm_retrain_every: int = 2000
    hmm_iter: int = 5
    hmm_prior_strength: float = 500.0
    hmm_transition_prior_strength: float = 20.0
    hmm_surprise_slack: float = 0.25
    hmm_surprise_threshold: float = 8.0
    hmm_min_gap: int = 100
    warmup_bars: int = 100
    gamma: float = 2.0
    risk_free_annual: float = 0.0
    bars_per_year: float = 252 * 6.5 * 720
    bars_per_day: float = 6.5 * 720
    kelly_payoff: float = 1.0
    portfolio: float = 100_000.0

    def __post_init__(self) -> None:
        checks = {
            "ewma_lambda": 0 < self.ewma_lambda < 1,
            "hurst_window": self.hurst_window >= 4 * self.hurst_min_scale,
            "hurst_every": self.hurst_every >= 1,
            "hmm_window": self.hmm_window >= 2,
            "hmm_min_train": 2 <= self.hmm_min_train <= self.hmm_window,
            "hmm_retrain_every": self.hmm_retrain_every >= 1,
            "hmm_iter": self.hmm_iter >= 0,
            "hmm_prior_strength": self.hmm_prior_strength >= 0,
            "hmm_transition_prior_strength": self.hmm_transition_prior_strength >= 0,
            "hmm_surprise_slack": self.hmm_surprise_slack >= 0,
            "hmm_surprise_threshold": self.hmm_surprise_threshold > 0,
            "hmm_min_gap": self.hmm_min_gap >= 1,
            "gamma": self.gamma > 0,
            "kelly_payoff": self.kelly_payoff > 0,
            "portfolio": self.portfolio >= 0,
            "noise": min(self.q_price_rel, self.q_trend_rel, self.r_rel) > 0,
        }
        bad = [name for name, ok in checks.items() if not ok]
        if bad:
            raise ValueError(f"invalid quant parameters: {', '.join(bad)}")


@dataclass(frozen=True)
class QuantSignal:
    """What the engine says about one bar. Advisory only."""

    time: str
    price: float
    kalman_price: float
    kalman_trend: float
    ewma_vol: float
    hurst: float
    regime: str
    regime_probs: dict[str, float]
    merton: float
    kelly: float
    direction: Direction
    action: Action
    confidence: float
    quantity: int
    execution: ExecutionPlan
    warm: bool

    def as_dict(self) -> dict[str, Any]:
        """JSON-able form (the replay CLI prints this)."""
        out = asdict(self)
        out["execution"] = self.execution.as_dict()
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> QuantSignal:
        """Rebuild from `as_dict()`."""
        values = dict(data)
        values["execution"] = ExecutionPlan(**values["execution"])
        return cls(**{f.name: values[f.name] for f in fields(cls)})

    def advisory(self) -> str:
        """The one line put in the owner's context."""
        return (
            f"ADVISORY (NOT FINANCIAL ADVICE): regime={self.regime}, "
            f"direction={self.direction}, confidence={self.confidence:.0%}, "
            f"action={self.action}, kelly={self.kelly:.1%} of portfolio, "
            f"merton={self.merton:.2f}, hurst={self.hurst:.2f}, "
            f"vol={self.ewma_vol:.3%}/bar, price={self.price:g} (bar {self.time})"
        )


@dataclass
class _State:
    bars: int = 0
    prev_close: float = 0.0
    var: float = -1.0  # < 0: not known yet (no NaN, so the state is strict JSON)
    hurst: float = 0.5
    volume: float = -1.0
    trained_at: int = -1
    belief: list[float] = field(default_factory=lambda: [1.0 / 3] * 3)
    fit_ll: float = 0.0  # mean log c_t over the last training window
    surprise: float = 0.0  # the CUSUM of log c_t falling below fit_ll (nats)
    retrains: int = 0


class QuantEngine:
    """Kalman -> EWMA vol + Hurst -> HMM regime -> Merton -> Kelly -> execution, per bar."""

    def __init__(self, params: QuantParams | None = None) -> None:
        self.params = params or QuantParams()
        self.kalman = KalmanTrend()
        self.hmm = smooth(HmmParams.default())
        self._s = _State()
        self._returns: deque[float] = deque(maxlen=self.params.hurst_window)
        self._obs: deque[int] = deque(maxlen=self.params.hmm_window)
        self._cache_hmm()

    def _cache_hmm(self) -> None:
        self._a = self.hmm.a.tolist()
        self._b_cols = self.hmm.b.T.tolist()

    @property
    def bars_processed(self) -> int:
        """How many bars this engine (and the state it was restored from) has seen."""
        return self._s.bars

    @property
    def last_close(self) -> float:
        """The close of the last bar processed (0.0 before the first): the price the next bar
        is checked against, independent of that bar (quant/feed.py)."""
        return self._s.prev_close if self._s.bars else 0.0

    # ---- the pipeline -------------------------------------------------------------------

    def process(self, bar: Bar) -> QuantSignal:
        """Run one bar through the pipeline and return its signal."""
        p, s = self.params, self._s
        close = float(bar.close)
        if not (close > 0 and math.isfinite(close)):
            raise ValueError(f"bar {bar.time}: close must be a positive number, got {bar.close}")
        volume = float(bar.volume) if math.isfinite(bar.volume) and bar.volume > 0 else 0.0
        if not self.kalman.initialised:
            scale = close * close
            self.kalman.q_price = p.q_price_rel * scale
            self.kalman.q_trend = p.q_trend_rel * scale
            self.kalman.r = p.r_rel * scale
        k_price, k_trend = self.kalman.step(close)

        if s.bars:
            ret = math.log(close / s.prev_close)
            if s.var < 0:
                s.var = max(ret * ret, VAR_FLOOR)
            else:
                # Observation from the volatility known before this bar: no look-ahead.
                obs = discretise(ret / math.sqrt(s.var))
                self._observe(obs)
                s.var = max(ewma_variance(s.var, ret, p.ewma_lambda), VAR_FLOOR)
            self._returns.append(ret)
        s.volume = volume if s.volume < 0 else s.volume + (volume - s.volume) / p.bars_per_day
        s.prev_close = close
        s.bars += 1
        if s.bars % p.hurst_every == 0 and len(self._returns) == p.hurst_window:
            s.hurst = hurst_rs(np.fromiter(self._returns, np.float64), p.hurst_min_scale)
        return self._signal(bar, close, k_price, k_trend)

    def _observe(self, obs: int) -> None:
        s, p = self._s, self.params
        self._obs.append(obs)
        b_col = self._b_cols[obs]
        belief, a = s.belief, self._a
        pred = [
            (belief[0] * a[0][j] + belief[1] * a[1][j] + belief[2] * a[2][j]) * b_col[j]
            for j in range(3)
        ]
        total = pred[0] + pred[1] + pred[2]  # > 0: the model is smoothed
        s.belief = [pred[0] / total, pred[1] / total, pred[2] / total]
        if s.trained_at < 0:
            due = len(self._obs) >= p.hmm_min_train
        else:
            s.surprise = max(0.0, s.surprise + s.fit_ll - math.log(total) - p.hmm_surprise_slack)
            since = s.bars - s.trained_at
            due = since >= p.hmm_retrain_every or (
                s.surprise > p.hmm_surprise_threshold and since >= p.hmm_min_gap
            )
        if due and p.hmm_iter > 0:
            self._train()

    def _train(self) -> None:
        """Baum-Welch on the observations seen so far (the last `hmm_window`), warm-started
        from the current model; then the belief is the filtered state at the last one."""
        p, s = self.params, self._s
        history = np.fromiter(self._obs, np.int64)
        # A sticky Dirichlet prior on the transitions keeps a state the window barely visited
        # enterable and able to hold (else one-regime history makes the regime stick).
        a_prior = (
            sticky_prior(p.hmm_transition_prior_strength)
            if p.hmm_transition_prior_strength > 0
            else None
        )
        if p.hmm_prior_strength > 0:
            # A Dirichlet prior centred on the default emissions keeps Bull/Bear/Lateral
            # meaning what they say (MAP Baum-Welch).
            b_prior = 1.0 + p.hmm_prior_strength * HmmParams.default().b
            trained, _ = baum_welch(history, self.hmm, p.hmm_iter, b_prior, a_prior)
        else:  # plain maximum likelihood: states are labelled by their emission mean
            trained, _ = baum_welch(history, self.hmm, p.hmm_iter, a_prior=a_prior)
            trained = permute(trained, canonical_order(trained))
        self.hmm = smooth(trained)
        alpha, c = forward(history, self.hmm)
        s.belief = alpha[-1].tolist()
        s.fit_ll = float(np.log(c).mean())
        s.surprise = 0.0
        s.trained_at = s.bars
        s.retrains += 1
        self._cache_hmm()

    def _signal(self, bar: Bar, close: float, k_price: float, k_trend: float) -> QuantSignal:
        p, s = self.params, self._s
        probs = s.belief
        best = max(range(3), key=probs.__getitem__)
        regime = REGIMES[best]
        confidence = probs[best]
        var = max(s.var, 0.0)
        sigma = math.sqrt(var)
        mu = k_trend / k_price if k_price > 0 else 0.0
        merton = merton_fraction(mu, p.risk_free_annual / p.bars_per_year, p.gamma, sigma)
        warm = s.bars >= p.warmup_bars
        direction: Direction = "Flat"
        if warm and regime == "Bull" and k_trend > 0 and merton > 0:
            direction = "Long"
        elif warm and regime == "Bear" and k_trend < 0 and merton < 0:
            direction = "Short"
        kelly = kelly_fraction(confidence, p.kelly_payoff) if direction != "Flat" else 0.0
        quantity = int(kelly * p.portfolio / close)
        action: Action = "Hold"
        if quantity > 0:
            action = "Buy" if direction == "Long" else "Sell"
        daily_volume = s.volume * p.bars_per_day if s.volume > 0 else 0.0
        return QuantSignal(
            time=str(bar.time),
            price=close,
            kalman_price=k_price,
            kalman_trend=k_trend,
            ewma_vol=sigma,
            hurst=s.hurst,
            regime=regime,
            regime_probs=dict(zip(REGIMES, probs, strict=True)),
            merton=merton,
            kelly=kelly,
            direction=direction,
            action=action,
            confidence=confidence,
            quantity=quantity,
            execution=plan_execution(quantity, daily_volume),
            warm=warm,
        )

    # ---- state --------------------------------------------------------------------------

    def to_state(self) -> dict[str, Any]:
        """Everything needed to continue exactly where this engine is, as JSON-able data."""
        return {
            "version": STATE_VERSION,
            "params": asdict(self.params),
            "kalman": self.kalman.to_state(),
            "hmm": self.hmm.to_state(),
            "state": asdict(self._s),
            "returns": list(self._returns),
            "obs": list(self._obs),
        }

    @classmethod
    def from_state(cls, data: dict[str, Any]) -> QuantEngine:
        """Rebuild an engine from `to_state()`'s dict."""
        version = data.get("version")
        if version not in (1, STATE_VERSION):
            raise ValueError(f"unknown quant engine state version: {version!r}")
        params = dict(data["params"])
        state = dict(data["state"])
        if version == 1:
            # Saved before the transition prior and the retrain schedule: its HMM may be the
            # collapsed one that sticks to a regime, so take today's schedule and retrain at
            # the next bar (on the observations kept with the state).
            params["hmm_retrain_every"] = QuantParams.hmm_retrain_every
            state["trained_at"] = -1
        engine = cls(QuantParams(**params))
        engine.kalman = KalmanTrend.from_state(data["kalman"])
        engine.hmm = HmmParams.from_state(data["hmm"])
        engine._s = _State(**state)
        engine._returns.extend(float(x) for x in data["returns"])
        engine._obs.extend(int(x) for x in data["obs"])
        engine._cache_hmm()
        return engine
