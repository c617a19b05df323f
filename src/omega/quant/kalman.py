"""A 2-state Kalman filter for price and trend (local linear trend model).

State x = [price, trend]; transition F = [[1, 1], [0, 1]] (the price moves by the trend every
bar, the trend persists); measurement H = [1, 0] (we observe the close); process noise
Q = diag(q_price, q_trend); measurement noise R = r. The 2x2 algebra is written out in plain
floats: for a 2x2 system that is several times faster per bar than numpy, and the covariance
update uses the Joseph form so P stays symmetric positive semi-definite.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class KalmanTrend:
    """Filter state: x = [price, trend], P = [[p00, p01], [p01, p11]] (symmetric)."""

    q_price: float = 1e-4
    q_trend: float = 1e-6
    r: float = 1e-2
    price: float = 0.0
    trend: float = 0.0
    p00: float = 1.0
    p01: float = 0.0
    p11: float = 1.0
    initialised: bool = False

    def step(self, z: float) -> tuple[float, float]:
        """Predict one bar ahead, then correct with measurement `z`; returns (price, trend).

        The first measurement initialises the state at [z, 0] with covariance diag(r, r) and
        does no update (there is nothing to predict from yet)."""
        if not self.initialised:
            self.price, self.trend = z, 0.0
            self.p00, self.p01, self.p11 = self.r, 0.0, self.r
            self.initialised = True
            return self.price, self.trend
        # Predict: x = F x, P = F P F^T + Q.
        x0 = self.price + self.trend
        x1 = self.trend
        p00 = self.p00 + 2.0 * self.p01 + self.p11 + self.q_price
        p01 = self.p01 + self.p11
        p11 = self.p11 + self.q_trend
        # Update: y = z - H x, S = H P H^T + R, K = P H^T / S.
        s = p00 + self.r
        k0 = p00 / s
        k1 = p01 / s
        y = z - x0
        self.price = x0 + k0 * y
        self.trend = x1 + k1 * y
        # Joseph form: P = (I - K H) P (I - K H)^T + K R K^T.
        a = 1.0 - k0
        n00 = a * a * p00 + k0 * k0 * self.r
        n01 = a * (p01 - k1 * p00) + k0 * k1 * self.r
        n11 = p11 - 2.0 * k1 * p01 + k1 * k1 * p00 + k1 * k1 * self.r
        self.p00, self.p01, self.p11 = n00, n01, n11
        return self.price, self.trend

    def to_state(self) -> dict[str, float | bool]:
        """The filter as a JSON-able dict."""
        return {
            "q_price": self.q_price,
            "q_trend": self.q_trend,
            "r": self.r,
            "price": self.price,
            "trend": self.trend,
            "p00": self.p00,
            "p01": self.p01,
            "p11": self.p11,
            "initialised": self.initialised,
        }

    @classmethod
    def from_state(cls, state: dict[str, float | bool]) -> KalmanTrend:
        """Rebuild a filter from `to_state()`'s dict."""
        return cls(
            q_price=float(state["q_price"]),
            q_trend=float(state["q_trend"]),
            r=float(state["r"]),
            price=float(state["price"]),
            trend=float(state["trend"]),
            p00=float(state["p00"]),
            p01=float(state["p01"]),
            p11=float(state["p11"]),
            initialised=bool(state["initialised"]),
        )
