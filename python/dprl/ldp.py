"""practical-ldp's user-side randomiser, in Python.

This is a port of dprl's Go ``GaussianRandomizer`` (``agents/tabular/practical.go``): it runs on
the user's side, turns her episode into her contribution vector, adds Gaussian noise she draws
herself, and returns the report as a ``protocol.Privatized`` message (:mod:`dprl.protocol`),
whose JSON and binary encodings are byte for byte the Go ones. The shared test vectors
``agents/tabular/testdata/ldp_vectors.json`` pin every step to the Go code.

Contribution (``contribution.add``). With ``G = 1`` when pooled (else ``H`` groups), the vector
has ``G·S·A·(S+1)`` entries: first the transition-count block ``NT`` (``G·S·A·S``), then the
reward block ``R`` (``G·S·A``). For each step ``h`` in order, with ``i = s_h·A + a_h`` (plus
``h·S·A`` when not pooled): ``x[i·S + s_{h+1}] += 1`` and ``x[G·S·A·S + i] += w·clip(r_h)``,
``clip(r) = min(max(r, 0), 1)`` (±inf clip to 1 / 0; NaN is refused), ``w`` the reward weight.
Pooled, only the first ``m`` visits of each ``(s, a)`` count (both blocks), ``m`` the visit cap
(``0`` or more than ``H`` means ``H``). States, actions and rewards are checked first, with the
Go error messages.

Noise. Every coordinate, zero or not, becomes ``x_i + σ·z_i`` with ``z_i`` a standard normal
draw: the product rounded to a double, then the sum (two IEEE-754 roundings, as Go's
``noise.Seeded`` computes ``x + σ·NormFloat64()``). ``σ`` is public and fixed before any data:
take it from the curator (the Go constructor calibrates ``σ = Δ₂/μ`` with ``μ`` the Gaussian-DP
parameter of the target (ε, δ); :func:`practical_sensitivity` gives ``Δ₂``). ``σ = 0`` adds
nothing and draws nothing.

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
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

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
]

AGENT = "practical-ldp"
"""The registry name of dprl's practical LDP tabular agent (the reports' header.agent)."""

DEFAULT_VISIT_CAP = 4
DEFAULT_REWARD_WEIGHT = 0.5


class TrajectoryError(ValueError):
    """A trajectory the randomiser refuses; the message is the Go randomiser's."""


@dataclass(frozen=True)
class LDPParams:
    """The public parameters of the contribution (Go ``PracticalPrivacy`` with S, A, H).

    ``visit_cap`` 0 keeps every visit; ``reward_weight`` 0 means 1. The defaults are
    practical-ldp's (pooled, m = 4, w = 0.5).
    """

    states: int
    actions: int
    horizon: int
    pool: bool = True
    visit_cap: int = DEFAULT_VISIT_CAP
    reward_weight: float = DEFAULT_REWARD_WEIGHT

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
    def groups(self) -> int:
        return 1 if self.pool else self.horizon

    @property
    def dim(self) -> int:
        """Length of the contribution vector, G·S·A·(S+1)."""
        return self.groups * self.states * self.actions * (self.states + 1)

    def header(self, agent: str = AGENT) -> Header:
        """The header of this agent's privatised reports (one block of length dim)."""
        return Header(
            agent=agent,
            kind=KIND_PRIVATIZED,
            family=FAMILY_TABULAR,
            dims=Dims(horizon=self.horizon, states=self.states, actions=self.actions, blocks=(self.dim,)),
        )


def _max_sum_squares(H: int, m: int, n: int) -> float:
    full = min(H // m, n)
    s = float(full) * float(m) * float(m)
    if full < n:
        r = H - full * m
        s += float(r) * float(r)
    return s


def practical_sensitivity(p: LDPParams) -> float:
    """Δ₂ of one user's contribution, Go ``PracticalSensitivity``: √(2(1+w²)·M₂)."""
    w = p.weight
    m2 = float(p.horizon)
    if p.pool:
        m2 = _max_sum_squares(p.horizon, p.cap, p.states * p.actions)
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

    Raises :class:`TrajectoryError` (the Go message) for a trajectory of the wrong length, a
    state or action out of range, or a NaN reward.
    """
    S, A, H = p.states, p.actions, p.horizon
    if len(states) != H + 1 or len(actions) != H or len(rewards) != H:
        raise TrajectoryError(f"trajectory: want {H + 1} states, {H} actions and {H} rewards")
    states = [_index("S", h, s) for h, s in enumerate(states)]
    actions = [_index("A", h, a) for h, a in enumerate(actions)]
    for h, s in enumerate(states):
        if s < 0 or s >= S:
            raise TrajectoryError(f"trajectory.S[{h}]: state must be in [0, {S - 1}], got {s}")
    for h in range(H):
        a = actions[h]
        if a < 0 or a >= A:
            raise TrajectoryError(f"trajectory.A[{h}]: action must be in [0, {A - 1}], got {a}")
        if math.isnan(float(rewards[h])):
            raise TrajectoryError(f"trajectory.R[{h}]: reward is NaN")
    x = [0.0] * p.dim
    nt = p.groups * S * A * S
    w = p.weight
    seen = [0] * (S * A)
    for h in range(H):
        i = states[h] * A + actions[h]
        if p.pool:
            if seen[i] >= p.cap:
                continue  # only the first m visits of (s,a) are kept
            seen[i] += 1
        else:
            i += h * S * A
        x[i * S + states[h + 1]] += 1.0
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


class GaussianRandomizer:
    """practical-ldp's user-side randomiser (Go ``GaussianRandomizer``).

    ``sigma`` is the public noise standard deviation (from the curator; finite, ≥ 0). ``source``
    defaults to a fresh :class:`SecureNormal`; pass a :class:`ReplayNormal` in tests only.
    ``agent`` is the header's agent name (``practical-ldp``, or a registered twin).
    """

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
        self.params = params
        self.sigma = sigma
        self.source: NormalSource = source if source is not None else SecureNormal()
        self.header = params.header(agent)

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
