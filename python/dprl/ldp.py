"""practical-ldp's user-side randomiser, in Python.

This is a port of dprl's Go ``GaussianRandomizer`` (``agents/tabular/practical.go``): it runs on
the user's side, turns her episode into her contribution vector, adds Gaussian noise she draws
herself, and returns the report as a ``protocol.Privatized`` message (:mod:`dprl.protocol`),
whose JSON and binary encodings are byte for byte the Go ones. The shared test vectors
``agents/tabular/testdata/ldp_vectors.json`` pin every step to the Go code.

Contribution (``contribution.add``). With ``G = 1`` when pooled (else ``H`` groups), the vector
has ``G·S·A·(S+1)`` entries: first the transition-count block ``NT`` (``G·S·A·S``), then the
reward block ``R`` (``G·S·A``) — no reward block (``G·S·A·S`` entries) when the environment's
reward function is public (``public_rewards``: the rewards are then neither checked nor read).
For each step ``h`` played, in order — ``L ≤ H`` steps: an episode that ended in a terminal
state after ``L < H`` steps has ``L + 1`` states, ``L`` actions and ``L`` rewards, and
contributes those steps only, with the same σ — with ``i = s_h·A + a_h`` (plus ``h·S·A`` when
not pooled): ``x[i·S + s_{h+1}] += 1`` and ``x[G·S·A·S + i] += w·clip(r_h)``,
``clip(r) = min(max(r, 0), 1)`` (±inf clip to 1 / 0; NaN is refused), ``w`` the reward weight.
Pooled, only the first ``m`` visits of each ``(s, a)`` count (both blocks), ``m`` the visit cap
(``0`` or more than ``H`` means ``H``); and a visit counts only if the kept counts ``c`` keep
``Σ c² ≤ B`` after counting it (the norm budget ``B``, ``0`` means 80): a pair whose kept count
goes from ``k`` to ``k + 1`` adds ``2k + 1``, a step-dependent cell ``1``; when the budget binds
(``B < M₂``, the largest ``Σ c²`` without it) a repeat visit (``k ≥ 1``) must keep
``Σ c² ≤ ⌊B/2⌋``. States, actions and
rewards are checked first, with the Go error messages (an inconsistent trajectory of fewer than
``H`` actions gets a message of its own, which the shared vectors do not pin).

Public support (``public_support`` in the model, Go ``agents/tabular/support.go``). When the
environment's model declares the support of its transitions public, the transition block has
one coordinate per ``(g, s, a, s')`` with ``s'`` a possible next state of ``(s, a)`` — ``G·E``
entries, ``E`` the support's size without the rows of terminal states, in the order of
``(s, a)`` then increasing ``s'`` — and noise is drawn only there. The kept counts are the same,
so Δ₂ and σ are unchanged. :func:`support_of` computes the support from the model file; a
transition outside it is refused (the Go message) before anything is counted.

Noise. Every coordinate, zero or not, becomes ``x_i + σ·z_i`` with ``z_i`` a standard normal
draw: the product rounded to a double, then the sum (two IEEE-754 roundings, as Go's
``noise.Seeded`` computes ``x + σ·NormFloat64()``). ``σ`` is public and fixed before any data.

The user, not the server, decides her noise: :func:`calibrate` computes σ and every calibration
parameter from public parameters she knows and consents to — the agent, the public (S, A, H),
whether the environment is time-homogeneous, whether its reward function is public, and her
own (ε, δ) — with the Go accountant's
arithmetic (``σ = Δ₂/μ``, ``μ`` the largest Gaussian-DP parameter within (ε, δ),
:func:`practical_sensitivity` gives ``Δ₂``; the shared vectors
``agents/tabular/testdata/ldp_calibration_vectors.json`` pin it to Go bit for bit). The
parameters a server publishes with its policy (``user_side``) are only checked
(:func:`check_published`): another layout, another visit cap, norm budget or reward weight, or a σ below
her own (σ = 0 included) raises :class:`UserSideError` naming the parameter, and she sends
nothing. :meth:`GaussianRandomizer.for_user` does both. A σ of 0 is accepted only with a
test-only source (``ReplayNormal``): it then adds nothing and draws nothing.

Noise sources.

* :class:`SecureNormal` (the default): Box–Muller on uniforms built from ``os.urandom`` (the
  operating system's CSPRNG), see its docstring for the exact construction. It is a
  floating-point Gaussian: unlike Go's ``noise.Secure`` (a discrete Gaussian on a power-of-two
  grid, with the statistic rounded to that grid) it is *not* hardened against floating-point
  attacks on the noise's low-order bits (Mironov 2012) nor against timing side channels.
* :class:`ReplayNormal`: **TEST ONLY** — replays a given list of standard normal draws so that
  the output is reproducible (the shared test vectors). Never use it for real reports: noise
  known to anyone but the user gives no privacy.
"""

from __future__ import annotations

import math
import operator
import os
import struct
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np

from .protocol import FAMILY_TABULAR, KIND_PRIVATIZED, Dims, Header, Privatized

__all__ = [
    "AGENT",
    "LDPParams",
    "TrajectoryError",
    "NormalSource",
    "SecureNormal",
    "ReplayNormal",
    "GaussianRandomizer",
    "contribution",
    "practical_sensitivity",
    "support_of",
    "AGENT_DEFAULTS",
    "Calibration",
    "UserSideError",
    "calibrate",
    "check_published",
    "gdp_for",
    "gaussian_exact_delta",
    "gaussian_sigma",
]

AGENT = "practical-ldp"
"""The registry name of dprl's practical LDP tabular agent (the reports' header.agent)."""

DEFAULT_VISIT_CAP = 4
DEFAULT_REWARD_WEIGHT = 0.5
DEFAULT_NORM_BUDGET = 80  # the per-user budget B on Σ c² of the kept visit counts (Go DefaultNormBudget)


class TrajectoryError(ValueError):
    """A trajectory the randomiser refuses; the message is the Go randomiser's."""


@dataclass(frozen=True)
class LDPParams:
    """The public parameters of the contribution (Go ``PracticalPrivacy`` with S, A, H).

    ``visit_cap`` 0 keeps every visit; ``reward_weight`` 0 means 1; ``norm_budget`` 0 means
    :data:`DEFAULT_NORM_BUDGET`; ``public_rewards`` drops the reward block. The defaults are
    practical-ldp's (pooled, m = 4, w = 0.5, B = 80, rewards private).
    """

    states: int
    actions: int
    horizon: int
    pool: bool = True
    visit_cap: int = DEFAULT_VISIT_CAP
    reward_weight: float = DEFAULT_REWARD_WEIGHT
    norm_budget: int = 0
    public_rewards: bool = False
    #: The public transition support (None: not public): row ``s·A + a`` lists the next states
    #: of ``(s, a)``, increasing, empty for a terminal state (:func:`support_of`).
    support: tuple[tuple[int, ...], ...] | None = None

    def __post_init__(self) -> None:
        for name in ("states", "actions", "horizon"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{name}: must be an int >= 1, got {v!r}")
        if isinstance(self.visit_cap, bool) or not isinstance(self.visit_cap, int) or self.visit_cap < 0:
            raise ValueError(f"privacy.visit_cap: must be >= 0 (0 = no cap), got {self.visit_cap!r}")
        w = float(self.reward_weight)
        if not (0 <= w <= 1):
            raise ValueError(f"privacy.reward_weight: must be in (0, 1] (0 = 1), got {self.reward_weight!r}")
        if isinstance(self.norm_budget, bool) or not isinstance(self.norm_budget, int) or self.norm_budget < 0:
            raise ValueError(f"privacy.norm_budget: must be >= 0 (0 = {DEFAULT_NORM_BUDGET}), got {self.norm_budget!r}")
        if not isinstance(self.public_rewards, bool):
            raise ValueError(f"privacy.public_rewards: must be a bool, got {self.public_rewards!r}")
        if self.support is not None:
            S, A = self.states, self.actions
            if len(self.support) != S * A:
                raise ValueError(f"support: want one row per (s, a), {S * A}, got {len(self.support)}")
            for c, row in enumerate(self.support):
                for k, s2 in enumerate(row):
                    if isinstance(s2, bool) or not isinstance(s2, int) or not 0 <= s2 < S or (k > 0 and s2 <= row[k - 1]):
                        raise ValueError(f"support[{c // A}][{c % A}][{k}]: next states must be increasing ints in [0, {S - 1}], got {s2!r}")

    @property
    def entries(self) -> int:
        """The number of (s, a, s') of the public support (0 without one)."""
        return sum(len(r) for r in self.support) if self.support is not None else 0

    @property
    def nt_dim(self) -> int:
        """Length of the transition block: G·S·A·S, or G·E with a public support."""
        if self.support is not None:
            return self.groups * self.entries
        return self.groups * self.states * self.actions * self.states

    @property
    def cap(self) -> int:
        """The effective per-episode visit cap m in [1, H] (pooled)."""
        if self.visit_cap == 0 or self.visit_cap > self.horizon:
            return self.horizon
        return self.visit_cap

    @property
    def weight(self) -> float:
        """The effective reward weight w in (0, 1]."""
        return 1.0 if self.reward_weight == 0 else float(self.reward_weight)

    @property
    def budget(self) -> int:
        """The norm budget B the contribution enforces (0 means :data:`DEFAULT_NORM_BUDGET`)."""
        return DEFAULT_NORM_BUDGET if self.norm_budget == 0 else self.norm_budget

    @property
    def max_squares(self) -> float:
        """M₂, the largest Σ c² of the kept counts without a budget (Go ``maxKeptSquares``)."""
        if self.pool:
            return _max_sum_squares(self.horizon, self.cap, self.states * self.actions)
        return float(self.horizon)

    @property
    def effective_budget(self) -> int:
        """min(B, M₂): a budget above M₂ never binds (the published form, Go ``effective``)."""
        return int(min(float(self.budget), self.max_squares))

    @property
    def groups(self) -> int:
        return 1 if self.pool else self.horizon

    @property
    def dim(self) -> int:
        """Length of the contribution vector, G·S·A·(S+1) (G·S·A·S with public rewards; the
        transition block G·E with a public support)."""
        if self.public_rewards:
            return self.nt_dim
        return self.nt_dim + self.groups * self.states * self.actions

    def header(self, agent: str = AGENT) -> Header:
        """The header of this agent's privatised reports (one block of length dim)."""
        return Header(
            agent=agent,
            kind=KIND_PRIVATIZED,
            family=FAMILY_TABULAR,
            dims=Dims(horizon=self.horizon, states=self.states, actions=self.actions, blocks=(self.dim,)),
        )


def support_of(model: Mapping[str, Any]) -> tuple[tuple[int, ...], ...]:
    """The public transition support of a model file (a dict in dprl's File schema,
    homogeneous or not): for every ``(s, a)`` the increasing next states of positive probability
    at some step, empty for a terminal state (Go ``SupportOf`` without the terminal rows)."""
    S, A = int(model["states"]), int(model["actions"])
    rows: list[set[int]] = [set() for _ in range(S * A)]
    homogeneous = model.get("homogeneous") is True
    if "transitions_sparse" in model:
        for e in model["transitions_sparse"]:
            s, a, s2, pr = (e[0], e[1], e[2], e[3]) if homogeneous else (e[1], e[2], e[3], e[4])
            if float(pr) > 0:
                rows[int(s) * A + int(a)].add(int(s2))
    else:
        steps = [model["transitions"]] if homogeneous else model["transitions"]
        for step in steps:
            for s in range(S):
                for a in range(A):
                    for s2, pr in enumerate(step[s][a]):
                        if float(pr) > 0:
                            rows[s * A + a].add(s2)
    terminal = {int(x) for x in model.get("terminal") or []}
    return tuple(() if c // A in terminal else tuple(sorted(r)) for c, r in enumerate(rows))


def _max_sum_squares(H: int, m: int, n: int) -> float:
    full = min(H // m, n)
    s = float(full) * float(m) * float(m)
    if full < n:
        r = H - full * m
        s += float(r) * float(r)
    return s


def practical_sensitivity(p: LDPParams) -> float:
    """Δ₂ of one user's contribution, Go ``PracticalSensitivity``: √(2(1+w²)·min(M₂, B)), or
    √(2·min(M₂, B)) with public rewards (no reward block)."""
    m2 = min(p.max_squares, float(p.budget))
    if p.public_rewards:
        return math.sqrt(2 * m2)
    w = p.weight
    return math.sqrt(2 * (1 + w * w) * m2)


def _clip_reward(r: float) -> float:
    """The clipping the sensitivity proof assumes: min(max(r, 0), 1) (r is not NaN)."""
    if r <= 0:
        return 0.0
    if r >= 1:
        return 1.0
    return r


def _noisy(v: float, sigma: float, z: float) -> float:
    """One noisy coordinate: v + σ·z, the product and the sum each rounded to a double."""
    return v + sigma * z


def _index(field: str, h: int, v: object) -> int:
    if isinstance(v, bool):
        raise TrajectoryError(f"trajectory.{field}[{h}]: want an integer, got {v!r}")
    try:
        return operator.index(v)  # type: ignore[arg-type]
    except TypeError:
        raise TrajectoryError(f"trajectory.{field}[{h}]: want an integer, got {v!r}") from None


def contribution(
    p: LDPParams, states: Sequence[int], actions: Sequence[int], rewards: Sequence[float]
) -> list[float]:
    """The user's contribution vector x (Go ``contribution.add`` into a zero vector).

    The trajectory holds L + 1 states, L actions and L rewards with L ≤ H: an episode that
    ended in a terminal state after L < H steps contributes exactly the L steps played (its
    vector is that of any H-step episode beginning with them, less the later steps, so its norm
    is within the same sensitivity bound and σ does not depend on L). Whether S[L] is terminal
    is the model's business (the server checks it); the randomiser only counts steps.

    Raises :class:`TrajectoryError` (the Go message) for a trajectory of inconsistent or
    excessive length, a state or action out of range, or a NaN reward.
    """
    S, A, H = p.states, p.actions, p.horizon
    L = len(actions)
    if len(states) != L + 1 or len(rewards) != L or L > H:
        if L >= H:
            raise TrajectoryError(f"trajectory: want {H + 1} states, {H} actions and {H} rewards")
        raise TrajectoryError(
            f"trajectory: want L+1 states, L actions and L rewards with L <= {H}, "
            f"got {len(states)}, {len(actions)} and {len(rewards)}")
    states = [_index("S", h, s) for h, s in enumerate(states)]
    actions = [_index("A", h, a) for h, a in enumerate(actions)]
    for h, s in enumerate(states):
        if s < 0 or s >= S:
            raise TrajectoryError(f"trajectory.S[{h}]: state must be in [0, {S - 1}], got {s}")
    public = p.public_rewards
    sup = p.support
    pos: dict[tuple[int, int], int] = {}
    if sup is not None:
        for c, row in enumerate(sup):
            for s2 in row:
                pos[(c, s2)] = len(pos)
    for h in range(L):
        a = actions[h]
        if a < 0 or a >= A:
            raise TrajectoryError(f"trajectory.A[{h}]: action must be in [0, {A - 1}], got {a}")
        if not public and math.isnan(float(rewards[h])):
            raise TrajectoryError(f"trajectory.R[{h}]: reward is NaN")
        if sup is not None and (states[h] * A + a, states[h + 1]) not in pos:
            raise TrajectoryError(f"trajectory.S[{h + 1}]: state {states[h + 1]} is not a possible next state of "
                                  f"(s={states[h]}, a={a}) (outside the public support)")
    x = [0.0] * p.dim
    nt = p.nt_dim
    w = p.weight
    cap, budget = p.cap, p.budget
    # When the budget binds (B < M₂) repeat visits may use only half of it (Go contribution.repeat).
    repeat = budget // 2 if float(budget) < p.max_squares else budget
    seen = [0] * (S * A)
    sq = 0  # Σ c² of the visits kept so far
    for h in range(L):
        i = states[h] * A + actions[h]
        if p.pool:
            k = seen[i]
            if k >= cap or sq + 2 * k + 1 > (repeat if k > 0 else budget):
                continue  # only the first m visits of (s,a), within the norm budget, are kept
            seen[i] = k + 1
            sq += 2 * k + 1
        else:
            if sq + 1 > budget:
                break  # the budget is spent: no later step is kept
            sq += 1
            i += h * S * A
        if sup is not None:
            x[(i // (S * A)) * len(pos) + pos[(i % (S * A), states[h + 1])]] += 1.0
        else:
            x[i * S + states[h + 1]] += 1.0
        if not public:
            x[nt + i] += w * _clip_reward(float(rewards[h]))
    return x


@runtime_checkable
class NormalSource(Protocol):
    """A source of independent standard normal draws."""

    secure: bool

    def standard_normal(self) -> float: ...


class SecureNormal:
    """Standard normal draws from the operating system's CSPRNG (``os.urandom``), by Box–Muller.

    Construction: 64-bit words are read from ``os.urandom`` (in buffered chunks) and their top 53
    bits ``k`` give uniforms ``u1 = (k1 + 1)/2^53`` in (0, 1] and ``u2 = k2/2^53`` in [0, 1);
    then ``ρ = √(−2 ln u1)`` and the pair ``ρ·cos(2π u2)``, ``ρ·sin(2π u2)`` are two independent
    N(0, 1) draws (the second is kept for the next call, never reused). Floating-point
    arithmetic; the largest attainable |z| is √(2·53·ln 2) ≈ 8.57 (a tail of probability
    ≈ 1e-17 is cut). This is a cryptographically seeded *continuous* sampler, not Go's granular
    discrete Gaussian (``noise.Secure``): it does not defend against floating-point attacks on
    the low-order bits of the output.
    """

    secure = True

    def __init__(self, chunk: int = 4096) -> None:
        self._chunk = max(8, chunk - chunk % 8)
        self._buf = b""
        self._pos = 0
        self._spare: float | None = None

    def _word(self) -> int:
        if self._pos + 8 > len(self._buf):
            self._buf = os.urandom(self._chunk)
            self._pos = 0
        (w,) = struct.unpack_from("<Q", self._buf, self._pos)
        self._pos += 8
        return int(w)

    def standard_normal(self) -> float:
        if self._spare is not None:
            z, self._spare = self._spare, None
            return z
        u1 = ((self._word() >> 11) + 1) / 9007199254740992.0  # (0, 1]
        u2 = (self._word() >> 11) / 9007199254740992.0  # [0, 1)
        rho = math.sqrt(-2.0 * math.log(u1))
        t = 2.0 * math.pi * u2
        self._spare = rho * math.sin(t)
        return rho * math.cos(t)


    def standard_normals(self, n: int) -> np.ndarray:
        """n draws at once (numpy; the same construction, vectorised): a pending spare first,
        then ⌈·/2⌉ Box–Muller pairs from one ``os.urandom`` read, the last sine kept as the
        spare when the count is odd."""
        out = np.empty(n)
        i = 0
        if n > 0 and self._spare is not None:
            out[0], self._spare = self._spare, None
            i = 1
        m = n - i
        if m > 0:
            pairs = (m + 1) // 2
            w = np.frombuffer(os.urandom(16 * pairs), dtype="<u8")
            u1 = ((w[0::2] >> np.uint64(11)) + np.uint64(1)).astype(np.float64) / 9007199254740992.0  # (0, 1]
            u2 = (w[1::2] >> np.uint64(11)).astype(np.float64) / 9007199254740992.0  # [0, 1)
            rho = np.sqrt(-2.0 * np.log(u1))
            t = 2.0 * math.pi * u2
            z = np.empty(2 * pairs)
            z[0::2] = rho * np.cos(t)
            z[1::2] = rho * np.sin(t)
            out[i:] = z[:m]
            if 2 * pairs > m:
                self._spare = float(z[m])
        return out


class ReplayNormal:
    """TEST ONLY: replays the given standard normal draws, in order (the shared test vectors).

    Noise that anyone but the user knows gives no privacy: never use this for a real report.
    Asking for more draws than were given raises ``IndexError``.
    """

    secure = False

    def __init__(self, draws: Iterable[float]) -> None:
        self.draws = [float(z) for z in draws]
        self.used = 0

    def standard_normal(self) -> float:
        if self.used >= len(self.draws):
            raise IndexError(f"ReplayNormal: all {len(self.draws)} draws were used")
        z = self.draws[self.used]
        self.used += 1
        return z


# ---------------------------------------------------------------- the user's own calibration

AGENT_DEFAULTS: dict[str, tuple[int, float]] = {
    "practical-ldp": (DEFAULT_VISIT_CAP, DEFAULT_REWARD_WEIGHT),
    "practical-ldp-plugin": (DEFAULT_VISIT_CAP, DEFAULT_REWARD_WEIGHT),
}
"""The served practical LDP agents and their public clipping (visit cap m, reward weight w):
Go ``DefaultPracticalConfig`` (both use the default norm budget :data:`DEFAULT_NORM_BUDGET`)."""


class UserSideError(ValueError):
    """The server's published randomiser parameters would give the user less noise (or another
    layout) than her own computation; ``field`` names the parameter. She sends nothing."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"user_side.{field}: {message}")
        self.field = field


def _log_phi(x: float) -> float:
    """ln Φ(x), Go ``accounting.logPhi``: erfc where it is accurate, the asymptotic series in the
    far left tail."""
    if math.isnan(x):
        return math.nan
    if x > 0:
        return math.log1p(-0.5 * math.erfc(x / math.sqrt(2)))
    if x > -30:
        return math.log(0.5 * math.erfc(-x / math.sqrt(2)))
    if math.isinf(x):
        return -math.inf
    z = 1 / (x * x)
    total, term = 1.0, 1.0
    for k in range(1, 9):
        term *= -float(2 * k - 1) * z
        total += term
    return -x * x / 2 - math.log(-x) - 0.5 * math.log(2 * math.pi) + math.log(total)


def gaussian_exact_delta(mu: float, eps: float) -> float:
    """δ_μ(ε) of μ-GDP, Go ``accounting.GaussianExactDelta``: Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2)."""
    if not (mu > 0) or math.isinf(mu) or not (eps >= 0) or math.isinf(eps):
        return math.nan
    la = _log_phi(-eps / mu + mu / 2)
    if math.isinf(la) and la < 0:
        return 0.0
    lb = _log_phi(-eps / mu - mu / 2)
    r = eps + lb - la
    if r > 0 or math.isnan(r):
        r = 0.0
    d = math.exp(la) * -math.expm1(r)
    return max(d, 0.0)


def gdp_for(epsilon: float, delta: float) -> float:
    """The largest μ with δ_μ(ε) ≤ δ, Go ``accounting.GDPFor`` (the same bisection)."""
    eps, dl = float(epsilon), float(delta)
    if not (eps > 0) or math.isinf(eps):
        raise ValueError(f"epsilon: must be finite and > 0, got {epsilon!r}")
    if not (0 < dl < 1):
        raise ValueError(f"delta: must be in (0, 1), got {delta!r}")

    def ok(mu: float) -> bool:
        return gaussian_exact_delta(mu, eps) <= dl

    lo, hi = 0.0, 1.0
    while ok(hi):
        lo, hi = hi, 2 * hi
        if math.isinf(hi):
            raise ValueError(f"no largest mu for ({eps}, {dl})")
    for _ in range(4096):
        mid = lo + (hi - lo) / 2
        if mid <= lo or mid >= hi:
            break
        if ok(mid):
            lo = mid
        else:
            hi = mid
    if not (lo > 0):
        raise ValueError(f"target ({eps}, {dl}) is too strict: mu underflows to 0")
    return lo


def gaussian_sigma(mu: float, sensitivity: float) -> float:
    """The least σ with Δ₂/σ ≤ μ in float64, Go ``ledger.GaussianSigma`` for one continuous
    Gaussian report (factor 1, no grid, no slack): σ = Δ₂/μ raised to the first float that
    meets it."""
    sigma = sensitivity / mu
    for _ in range(1 << 10):
        if sensitivity / sigma <= mu:
            return sigma
        nxt = sensitivity / mu
        if nxt <= sigma:
            nxt = math.nextafter(sigma, math.inf)
        sigma = nxt
        if math.isinf(sigma):
            break
    raise ValueError(f"no sigma for mu = {mu}, sensitivity {sensitivity}")


@dataclass(frozen=True)
class Calibration:
    """What a user computes herself (Go ``tabular.PracticalUserSideFor``): her contribution's
    layout and clipping ``params``, its sensitivity Δ₂, the GDP parameter μ of her (ε, δ) and
    the least σ = Δ₂/μ (a continuous Gaussian, as :class:`SecureNormal` draws)."""

    agent: str
    params: LDPParams
    epsilon: float
    delta: float
    sensitivity: float
    mu: float
    sigma: float

    def user_side(self) -> dict[str, Any]:
        """The parameters in the form a server publishes them (``user_side``), effective cap,
        norm budget (min(B, M₂)) and weight."""
        p = self.params
        out = {"states": p.states, "actions": p.actions, "horizon": p.horizon, "pool": p.pool,
               "public_rewards": p.public_rewards, "visit_cap": p.cap, "norm_budget": p.effective_budget,
               "reward_weight": p.weight, "sigma": self.sigma}
        if p.support is not None:
            out["public_support"] = True  # omitted when false, as Go writes it
        return out


def calibrate(
    agent: str, states: int, actions: int, horizon: int, homogeneous: bool, epsilon: float, delta: float,
    public_rewards: bool = False,
    support: Sequence[Sequence[int]] | None = None,
) -> Calibration:
    """The user's own calibration from public parameters: the served agent (``practical-ldp``
    or ``practical-ldp-plugin``: its visit cap and reward weight, :data:`AGENT_DEFAULTS`, and
    the norm budget :data:`DEFAULT_NORM_BUDGET`), the public (S, A, H), whether the
    environment's model is time-homogeneous (then the statistics are pooled, as the curator
    decides), whether its reward function is public (``public_rewards`` in the model: then
    there is no reward block), its public transition support if the model declares one
    (``support``, :func:`support_of`: the transition block then has the support's coordinates
    only; Δ₂ and σ are unchanged) and her own (ε, δ). Bit for bit the Go accountant's."""
    if agent not in AGENT_DEFAULTS:
        raise ValueError(f"agent: no user-side calibration for {agent!r} (known: {', '.join(sorted(AGENT_DEFAULTS))})")
    cap, w = AGENT_DEFAULTS[agent]
    params = LDPParams(states=states, actions=actions, horizon=horizon, pool=bool(homogeneous),
                       visit_cap=cap, reward_weight=w, public_rewards=bool(public_rewards),
                       support=None if support is None else tuple(tuple(int(x) for x in r) for r in support))
    mu = gdp_for(epsilon, delta)
    sens = practical_sensitivity(params)
    return Calibration(agent=agent, params=params, epsilon=float(epsilon), delta=float(delta),
                       sensitivity=sens, mu=mu, sigma=gaussian_sigma(mu, sens))


def check_published(own: Calibration, published: Mapping[str, Any] | None) -> float:
    """Check the server's published ``user_side`` against the user's own calibration (Go
    ``RandomizerParams.CheckPublished``) and return the published σ. Raises
    :class:`UserSideError` naming the parameter when it is missing or malformed, when the layout
    (states, actions, horizon, pool, public rewards) or the clipping (visit cap, norm budget,
    reward weight — the weight only when there is a reward block) differs from hers, or when σ
    is not finite or below hers (σ = 0 included)."""
    if published is None:
        raise UserSideError("sigma", "the server published no randomiser parameters: refusing to report")
    want = own.user_side()

    def get(field: str) -> Any:
        if field not in published:
            raise UserSideError(field, "missing from the server's parameters: refusing to report")
        return published[field]

    def refuse(field: str, got: Any, mine: Any) -> UserSideError:
        return UserSideError(field, f"the server published {got!r}, the user's own computation gives {mine!r}: refusing to report")

    for field in ("states", "actions", "horizon"):
        v = get(field)
        if isinstance(v, bool) or not isinstance(v, (int, float)) or v != want[field]:
            raise refuse(field, v, want[field])
    pool = get("pool")
    if pool is not want["pool"]:
        raise refuse("pool", pool, want["pool"])
    public = get("public_rewards")
    if public is not want["public_rewards"]:
        raise refuse("public_rewards", public, want["public_rewards"])
    ps = published.get("public_support", False)
    if ps is not want.get("public_support", False):
        raise refuse("public_support", ps, want.get("public_support", False))
    cap = get("visit_cap")
    if pool:
        eff = want["horizon"] if isinstance(cap, (int, float)) and (cap == 0 or cap > want["horizon"]) else cap
        if isinstance(cap, bool) or not isinstance(cap, (int, float)) or eff != want["visit_cap"]:
            raise refuse("visit_cap", cap, want["visit_cap"])
    budget = get("norm_budget")
    if isinstance(budget, bool) or not isinstance(budget, (int, float)):
        raise refuse("norm_budget", budget, want["norm_budget"])
    eff_b = min(float(DEFAULT_NORM_BUDGET if budget == 0 else budget), own.params.max_squares)
    if eff_b != want["norm_budget"]:
        raise refuse("norm_budget", budget, want["norm_budget"])
    w = get("reward_weight")
    if not public and (isinstance(w, bool) or not isinstance(w, (int, float)) or (1.0 if w == 0 else float(w)) != want["reward_weight"]):
        raise refuse("reward_weight", w, want["reward_weight"])
    sigma = get("sigma")
    if isinstance(sigma, bool) or not isinstance(sigma, (int, float)) or not (float(sigma) >= own.sigma) or math.isinf(float(sigma)):
        raise refuse("sigma", sigma, f"at least {own.sigma!r}")
    return float(sigma)


class GaussianRandomizer:
    """practical-ldp's user-side randomiser (Go ``GaussianRandomizer``).

    ``sigma`` is the noise standard deviation (finite and > 0; 0 only with a test-only source,
    where it adds nothing). A real user builds it with :meth:`for_user`, which computes σ
    herself and only checks the server's. ``source`` defaults to a fresh :class:`SecureNormal`
    (the OS CSPRNG); pass a :class:`ReplayNormal` in tests only. ``agent`` is the header's
    agent name (``practical-ldp``, or a registered twin).
    """

    @classmethod
    def for_user(
        cls,
        agent: str,
        states: int,
        actions: int,
        horizon: int,
        homogeneous: bool,
        epsilon: float,
        delta: float,
        published: Mapping[str, Any] | None = None,
        source: NormalSource | None = None,
        public_rewards: bool = False,
        support: Sequence[Sequence[int]] | None = None,
    ) -> GaussianRandomizer:
        """The randomiser of a user who promised (``epsilon``, ``delta``): σ and every parameter
        from :func:`calibrate` (``public_rewards``: the environment's model declares its reward
        function public; ``support``: its public transition support, :func:`support_of`); with ``published`` (the server's ``user_side``), it is checked
        (:func:`check_published`, raising :class:`UserSideError`) and the larger of the two σ
        is used (the server's estimator assumes its σ; more noise never weakens her
        guarantee)."""
        own = calibrate(agent, states, actions, horizon, homogeneous, epsilon, delta, public_rewards, support)
        sigma = own.sigma
        if published is not None:
            sigma = max(sigma, check_published(own, published))
        rz = cls(own.params, sigma, source, agent=agent)
        rz.calibration = own
        return rz


    def __init__(
        self,
        params: LDPParams,
        sigma: float,
        source: NormalSource | None = None,
        agent: str = AGENT,
    ) -> None:
        sigma = float(sigma)
        if not (sigma >= 0) or math.isinf(sigma):
            raise ValueError(f"sigma: must be finite and >= 0, got {sigma!r}")
        src: NormalSource = source if source is not None else SecureNormal()
        if sigma == 0 and src.secure:
            raise ValueError("sigma: must be > 0 for a real report (0 adds no noise; only a test-only source accepts it)")
        self.params = params
        self.sigma = sigma
        self.source = src
        self.header = params.header(agent)
        self.calibration: Calibration | None = None

    def noisy_values(
        self, states: Sequence[int], actions: Sequence[int], rewards: Sequence[float]
    ) -> list[float]:
        """The noisy contribution vector x + σ·z (one draw per coordinate, in order)."""
        x = contribution(self.params, states, actions, rewards)
        if self.sigma == 0:
            return x
        src, sigma = self.source, self.sigma
        if isinstance(src, SecureNormal):
            # Vectorised (numpy): the same x + σ·z, product and sum each rounded to a double.
            z = src.standard_normals(len(x))
            out: list[float] = (np.asarray(x, dtype=np.float64) + sigma * z).tolist()
            return out
        return [_noisy(v, sigma, src.standard_normal()) for v in x]

    def randomize(
        self, states: Sequence[int], actions: Sequence[int], rewards: Sequence[float]
    ) -> Privatized:
        """The user's report: a Privatized message with one block, the noisy vector."""
        return Privatized(header=self.header, blocks=(tuple(self.noisy_values(states, actions, rewards)),))
