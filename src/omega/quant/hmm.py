"""Regime detection: a 3-state hidden Markov model over 5 discrete return observations.

States, in canonical order: 0 = Bull, 1 = Bear, 2 = Lateral. After training, states are
re-ordered by the mean of their emission distribution over the observation scores -2..+2
(highest = Bull, lowest = Bear, the other = Lateral), so labels stay meaningful.

Observations: a bar's log return r_t standardised by the EWMA volatility known *before* the
bar (z = r_t / sigma_{t-1}, no look-ahead), then binned:

    0 strong down  z < -1.5
    1 down        -1.5 <= z < -0.5
    2 flat        -0.5 <= z <= 0.5
    3 up           0.5 < z <= 1.5
    4 strong up    z > 1.5

Training is Baum-Welch with the scaled forward-backward recursions (Rabiner 1989): alpha_t is
normalised each step by c_t and the log-likelihood is sum(log c_t), so nothing underflows on
long histories. Per bar, the belief is updated with one scaled forward step.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

REGIMES = ("Bull", "Bear", "Lateral")
N_STATES = 3
N_OBS = 5
EDGES = (-1.5, -0.5, 0.5, 1.5)

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


def discretise(z: float) -> int:
    """The observation symbol (0..4) of a standardised return z (see the module docstring)."""
    if z < -1.5:
        return 0
    if z < -0.5:
        return 1
    if z <= 0.5:
        return 2
    if z <= 1.5:
        return 3
    return 4


@dataclass
class HmmParams:
    """Initial distribution pi (K), transitions A (K x K, rows sum to 1), emissions B (K x M)."""

    pi: FloatArray
    a: FloatArray
    b: FloatArray

    @classmethod
    def default(cls) -> HmmParams:
        """A sticky prior: Bull leans up, Bear leans down, Lateral peaks at flat."""
        return cls(
            pi=np.full(N_STATES, 1.0 / N_STATES),
            a=np.array([[0.96, 0.02, 0.02], [0.02, 0.96, 0.02], [0.02, 0.02, 0.96]]),
            b=np.array(
                [
                    [0.05, 0.15, 0.35, 0.28, 0.17],
                    [0.17, 0.28, 0.35, 0.15, 0.05],
                    [0.05, 0.20, 0.50, 0.20, 0.05],
                ]
            ),
        )

    def to_state(self) -> dict[str, list[float] | list[list[float]]]:
        """JSON-able lists."""
        return {"pi": self.pi.tolist(), "a": self.a.tolist(), "b": self.b.tolist()}

    @classmethod
    def from_state(cls, state: dict[str, list[float] | list[list[float]]]) -> HmmParams:
        """Rebuild from `to_state()`."""
        return cls(
            pi=np.array(state["pi"], dtype=np.float64),
            a=np.array(state["a"], dtype=np.float64),
            b=np.array(state["b"], dtype=np.float64),
        )


def forward_update(
    belief: list[float], a: list[list[float]], b_col: list[float]
) -> tuple[list[float], float]:
    """One scaled forward step: alpha_t ∝ (alpha_{t-1} A) * B[:, o_t].

    `b_col` is B[:, o_t]. Returns the normalised belief and log c_t (the log of the
    one-step predictive likelihood of o_t). Plain floats: this runs once per bar."""
    k = len(belief)
    pred = [sum(belief[i] * a[i][j] for i in range(k)) * b_col[j] for j in range(k)]
    c = sum(pred)
    if not c > 0 or not math.isfinite(c):  # an impossible observation: fall back to the prior
        return [1.0 / k] * k, -math.inf
    return [p / c for p in pred], math.log(c)


def _forward3(obs: IntArray, params: HmmParams) -> tuple[FloatArray, FloatArray]:
    """`forward` written out for 3 states in plain floats (several times faster than numpy
    on 3-vectors; the same arithmetic)."""
    (a00, a01, a02), (a10, a11, a12), (a20, a21, a22) = params.a.tolist()
    cols = params.b.T.tolist()
    p0, p1, p2 = params.pi.tolist()
    alpha: list[float] = []  # flat, 3 per step: one np.array call at the end
    cs: list[float] = []
    first = True
    x0 = x1 = x2 = 0.0
    for o in obs.tolist():
        e0, e1, e2 = cols[o]
        if first:
            y0, y1, y2 = p0 * e0, p1 * e1, p2 * e2
            first = False
        else:
            y0 = (x0 * a00 + x1 * a10 + x2 * a20) * e0
            y1 = (x0 * a01 + x1 * a11 + x2 * a21) * e1
            y2 = (x0 * a02 + x1 * a12 + x2 * a22) * e2
        c = y0 + y1 + y2
        x0, x1, x2 = y0 / c, y1 / c, y2 / c
        alpha += (x0, x1, x2)
        cs.append(c)
    return np.array(alpha, dtype=np.float64).reshape(-1, 3), np.array(cs, dtype=np.float64)


def _backward3(obs: IntArray, params: HmmParams, c: FloatArray) -> FloatArray:
    """`backward` written out for 3 states in plain floats."""
    (a00, a01, a02), (a10, a11, a12), (a20, a21, a22) = params.a.tolist()
    cols = params.b.T.tolist()
    symbols = obs.tolist()
    scale = c.tolist()
    t_len = len(symbols)
    if not t_len:
        return np.empty((0, 3), dtype=np.float64)
    rev = [1.0, 1.0, 1.0]  # flat and backwards in time (appending is cheap), reversed below
    z0 = z1 = z2 = 1.0
    for t in range(t_len - 2, -1, -1):
        e0, e1, e2 = cols[symbols[t + 1]]
        inv = 1.0 / scale[t + 1]
        w0, w1, w2 = e0 * z0, e1 * z1, e2 * z2
        z0 = (a00 * w0 + a01 * w1 + a02 * w2) * inv
        z1 = (a10 * w0 + a11 * w1 + a12 * w2) * inv
        z2 = (a20 * w0 + a21 * w1 + a22 * w2) * inv
        rev += (z2, z1, z0)
    rev.reverse()
    return np.array(rev, dtype=np.float64).reshape(-1, 3)


def forward(obs: IntArray, params: HmmParams) -> tuple[FloatArray, FloatArray]:
    """Scaled forward pass: (alpha, c) with alpha[t] = P(state_t | o_0..o_t) and
    log P(o_0..o_T-1) = sum(log c)."""
    if params.pi.size == 3:
        return _forward3(obs, params)
    t_len = len(obs)
    emit = params.b[:, obs].T  # T x K
    alpha = np.empty((t_len, params.pi.size))
    c = np.empty(t_len)
    a = params.a
    cur = params.pi * emit[0]
    for t in range(t_len):
        if t:
            cur = (cur @ a) * emit[t]
        s = cur.sum()
        c[t] = s
        cur = cur / s
        alpha[t] = cur
    return alpha, c


def backward(obs: IntArray, params: HmmParams, c: FloatArray) -> FloatArray:
    """Scaled backward pass using the forward pass's scaling factors c."""
    if params.pi.size == 3:
        return _backward3(obs, params, c)
    t_len = len(obs)
    emit = params.b[:, obs].T
    beta = np.empty((t_len, params.pi.size))
    cur = np.ones(params.pi.size)
    beta[-1] = cur
    a = params.a
    for t in range(t_len - 2, -1, -1):
        cur = (a @ (emit[t + 1] * cur)) / c[t + 1]
        beta[t] = cur
    return beta


def log_likelihood(obs: IntArray, params: HmmParams) -> float:
    """log P(observations | params) by the scaled forward pass."""
    _, c = forward(obs, params)
    return float(np.log(c).sum())


def baum_welch_step(
    obs: IntArray,
    params: HmmParams,
    b_prior: FloatArray | None = None,
    a_prior: FloatArray | None = None,
) -> tuple[HmmParams, float]:
    """One EM iteration. Returns the re-estimated parameters and the log-likelihood of `obs`
    under the *input* parameters (as hmmlearn reports it). A state never visited (and with
    no prior) keeps its previous rows.

    `b_prior` (K x M) and `a_prior` (K x K), Dirichlet concentrations >= 1, make the emission
    and transition updates MAP estimates, B ∝ counts + b_prior - 1 and A ∝ xi + a_prior - 1,
    exactly as hmmlearn's `emissionprob_prior` and `transmat_prior`. The emission prior keeps
    each state's meaning (Bull leans up, Bear down) however one-sided the history is; the
    transition prior keeps a barely-visited state's row sticky instead of letting a handful of
    stray counts decide it (else a state unseen in training can never be entered or held)."""
    alpha, c = forward(obs, params)
    beta = backward(obs, params, c)
    gamma = alpha * beta  # rows sum to 1 with this scaling
    emit = params.b[:, obs].T
    # xi summed over t: sum_t alpha_t(i) A(i,j) B(j, o_t+1) beta_t+1(j) / c_t+1
    right = emit[1:] * beta[1:] / c[1:, None]
    xi = (alpha[:-1].T @ right) * params.a
    if a_prior is not None:
        xi = np.maximum(xi + a_prior - 1.0, 0.0)
    pi = gamma[0] / gamma[0].sum()
    rows = xi.sum(axis=1, keepdims=True)
    a = np.where(rows > 0, xi / np.where(rows > 0, rows, 1.0), params.a)
    counts = np.zeros_like(params.b)
    for symbol in range(params.b.shape[1]):
        counts[:, symbol] = gamma[obs == symbol].sum(axis=0)
    if b_prior is not None:
        counts = np.maximum(counts + b_prior - 1.0, 0.0)
    totals = counts.sum(axis=1, keepdims=True)
    b = np.where(totals > 0, counts / np.where(totals > 0, totals, 1.0), params.b)
    return HmmParams(pi=pi, a=a, b=b), float(np.log(c).sum())


def baum_welch(
    obs: IntArray,
    params: HmmParams,
    n_iter: int = 10,
    b_prior: FloatArray | None = None,
    a_prior: FloatArray | None = None,
) -> tuple[HmmParams, list[float]]:
    """`n_iter` EM iterations from `params`; returns the final parameters and the
    log-likelihood before each iteration (non-decreasing without priors, the EM
    guarantee; with `b_prior` / `a_prior` it is the posterior that cannot decrease)."""
    history = []
    for _ in range(n_iter):
        params, ll = baum_welch_step(obs, params, b_prior, a_prior)
        history.append(ll)
    return params, history


def sticky_prior(strength: float, k: int = N_STATES, stay: float = 0.96) -> FloatArray:
    """Dirichlet concentrations for the transitions: 1 + `strength` pseudo-transitions per
    row, spread as a sticky matrix (`stay` on the diagonal, the rest evenly off it)."""
    off = (1.0 - stay) / (k - 1)
    centre = np.full((k, k), off) + np.eye(k) * (stay - off)
    return 1.0 + strength * centre


def canonical_order(params: HmmParams) -> list[int]:
    """The permutation putting states in (Bull, Bear, Lateral) order by emission mean."""
    scores = params.b @ np.arange(-2.0, 3.0)[: params.b.shape[1]]
    order = np.argsort(scores)  # ascending
    bull, bear = int(order[-1]), int(order[0])
    lateral = next(i for i in range(N_STATES) if i not in (bull, bear))
    return [bull, bear, lateral]


def permute(params: HmmParams, order: list[int]) -> HmmParams:
    """The same model with states renumbered so new state i is old state order[i]."""
    idx = np.array(order)
    return HmmParams(pi=params.pi[idx], a=params.a[np.ix_(idx, idx)], b=params.b[idx])


def smooth(params: HmmParams, eps: float = 1e-4) -> HmmParams:
    """Mix every distribution with a little uniform mass so no observation or transition is
    ever impossible (a live feed will eventually show one the history did not)."""
    k, m = params.b.shape
    return HmmParams(
        pi=(1 - eps) * params.pi + eps / k,
        a=(1 - eps) * params.a + eps / k,
        b=(1 - eps) * params.b + eps / m,
    )
