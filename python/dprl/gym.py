"""Gymnasium users of a served dprl experiment: ``dprl.gym.run``.

    from dprl.gym import run
    res = run(None, "FrozenLake-v1", agent="practical-jdp", epsilon=1, delta=1e-5,
              users=20_000, seed=1, horizon=20, out="runs/frozenlake")
    res.cumulative[-1], res.last_decile, res.episodes_per_second, res.ledger["statement"]

What :func:`run` does:

1. exports the environment's model with :mod:`dprl.gym_export` (``horizon`` as given, else the
   exporter's default: Gymnasium's time limit — CliffWalking, which has none, 50): sparse
   transitions with terminal states, or with ``absorbing=True`` the dense file whose terminal
   states are absorbing (the format before issue 26, for a server that does not read terminal
   states; its Taxi default is H = 11);
2. creates a tabular experiment on the server with that model inline and ``capacity = users``
   (K; the ledger's ``capacity`` is the number of reports the calibration covers, K or K − 1:
   the users beyond it play but do not report, as in ``dprl run``), and mints the users'
   credentials in chunks of 10 000;
3. plays the users in order, in batches of ``batch`` (≤ 256): every user of a batch plays the
   policy cached when the batch starts. User k (1-based) resets the environment with the seed
   :func:`user_seed` (seed, k), then for h = 0 … H−1 takes the rule's action ``Act[h][s]``
   (a stochastic rule ``Prob[h][s·A+a]`` is sampled from a generator seeded the same way) and
   steps ``env.unwrapped`` (no ``TimeLimit``: H is the episode's time limit, the normal end of
   an episode Gymnasium would truncate). Her episode ends when Gymnasium says ``terminated``:
   she played L ≤ H steps (L < H only when she entered a terminal state) and reports exactly
   those — S[0..L], A[0..L−1], R[0..L−1]; the model values the rest of the horizon at the
   terminal reward. (With ``absorbing=True`` she stays in the terminal state — absorbing in that
   model — for the remaining steps, with its reward, the image of 0 under the reward map,
   without stepping Gymnasium, and reports H steps.) Her rewards are Gymnasium's mapped by the
   exported ``reward_map`` (r' = scale·r + offset, clipped into [0, 1]);
4. reports: under a trajectory agent (``practical-jdp``, ``ucbvi``, …) her report is
   ``{"header": <policy header>, "states", "actions", "rewards"}`` (arrays of L + 1, L and L
   numbers); under ``practical-ldp`` she privatises it herself (her contribution counts the L
   steps she played; σ is the same for every L ≤ H) with
   :meth:`dprl.ldp.GaussianRandomizer.for_user`: σ and every calibration parameter computed
   from the public (S, A, H) and the run's own ``epsilon`` and ``delta`` (the guarantee the
   app promised), the policy's ``user_side`` only checked against
   them — a server publishing less noise (σ below hers, σ = 0, a larger visit cap or reward
   weight, another layout) gets :class:`dprl.ldp.UserSideError` and no report — with noise from
   :class:`dprl.ldp.SecureNormal` (the OS CSPRNG), and sends
   ``{"header": <policy header>, "blocks": [[…]]}``. A batch is one request (committed in order,
   each item with its user, credential and idempotency key ``k<k>``; a transport error or a
   5xx is retried with the same keys, so nothing is counted twice). The policy is fetched again
   (``If-None-Match``) only when an acknowledgement names a policy version other than the
   cached one;
5. evaluates exactly: V*₁ and V^π₁ by backward induction on the exported tables (numpy; a
   terminal state is worth terminal_reward·(H − h), :class:`Tables`), in expectation over the
   initial distribution, once per policy version; user k's regret is that
   of the policy she played, sent along as ``simulated_regret`` (the ledger's curve).

:func:`write_run_dir` writes the run directory of one or several seeds of the same
configuration in dprl's one run-directory schema (``dprl.run/v1``), through ``dprl report``:
the same files, figures and manifest as ``dprl run``, so ``dprl compare`` takes both side by
side.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Union

import numpy as np

from . import __version__
from .client import MAX_BATCH, MAX_CREDENTIAL_USERS, APIError, BatchItem, BatchResult, Client, Policy
from .ldp import GaussianRandomizer, SecureNormal, UserSideError
from .ldp import support_of as ldp_support_of
from .server import LocalServer, find_binary

__all__ = [
    "RunResult",
    "Tables",
    "run",
    "user_seed",
    "checkpoints",
    "write_run_dir",
    "t_quantile_975",
    "mean_ci",
    "go_format_g",
]

Server = Union[LocalServer, Client, None]

POINTS = 500
"""experiment/tabular/practical.Points: the checkpoints stored per run."""


def checkpoints(K: int) -> list[int]:
    """experiment/tabular/practical.Checkpoints: min(500, K) episodes (i+1)·K/n, i = 0 … n−1."""
    n = min(POINTS, K)
    return [(i + 1) * K // n for i in range(n)]


_M64 = (1 << 64) - 1


def _splitmix64(x: int) -> int:
    x = (x + 0x9E3779B97F4A7C15) & _M64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _M64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _M64
    return x ^ (x >> 31)


def user_seed(seed: int, k: int) -> int:
    """The seed user k (1-based) resets the environment with: splitmix64(splitmix64(seed) ⊕ k)
    reduced to 63 bits (distinct users and seeds give unrelated seeds)."""
    return _splitmix64(_splitmix64(seed & _M64) ^ (k & _M64)) >> 1


# ---------------------------------------------------------------- exact evaluation


class Tables:
    """The exported model's tables as numpy arrays, with exact backward induction.

    Both file shapes of :mod:`dprl.gym_export` are read: dense ``transitions`` (the
    ``--absorbing`` export, terminal states absorbing) and ``transitions_sparse`` with
    ``terminal`` states. A terminal state is evaluated as its absorbing equivalent — a self-loop
    earning ``terminal_reward`` for every action, whatever its rows in the file — which gives
    dprl's value ``terminal_reward·(H − h)`` at step h: V*, V^π and regret are those of the
    model (model/tabular ``MDP.Absorbing``)."""

    def __init__(self, model: Mapping[str, Any]) -> None:
        self.S = int(model["states"])
        self.A = int(model["actions"])
        self.H = int(model["horizon"])
        S, A = self.S, self.A
        if model.get("homogeneous", True) is not True:
            raise ValueError("model: want a time-homogeneous tabular model (an exported Gymnasium model)")
        self.R = np.array(model["reward"], dtype=np.float64)  # (S, A)
        self.init = np.asarray(model["init"], dtype=np.float64)  # (S,)
        if self.R.shape != (S, A) or self.init.shape != (S,):
            raise ValueError(f"model: reward must be {S}×{A} and init {S} numbers")
        term = np.asarray(model.get("terminal") or [], dtype=np.int64)
        if term.size and (term.min() < 0 or term.max() >= S):
            raise ValueError(f"model.terminal: states must be in [0, {S - 1}]")
        self.terminal = np.zeros(S, dtype=bool)
        self.terminal[term] = True
        self.terminal_reward = float(model.get("terminal_reward", 0.0))
        # The reward function is public structure (model/tabular MDP.PublicRewards): the
        # practical agents then release no reward statistics, and the user's contribution has
        # no reward block.
        self.public_rewards = model.get("public_rewards", False) is True
        # Likewise the support of its transitions (MDP.PublicSupport): the user's contribution
        # then has coordinates only inside it (dprl.ldp.support_of).
        self.support = ldp_support_of(model) if model.get("public_support", False) is True else None
        ts = np.flatnonzero(self.terminal)
        self.R[ts] = self.terminal_reward
        self.P: np.ndarray | None = None  # (S, A, S), dense files only
        if "transitions_sparse" in model:
            e = np.asarray(model["transitions_sparse"], dtype=np.float64).reshape(-1, 4)
            s, a, s2 = (e[:, i].astype(np.int64) for i in range(3))
            if e.size and (s.min() < 0 or s.max() >= S or a.min() < 0 or a.max() >= A or s2.min() < 0 or s2.max() >= S):
                raise ValueError("model.transitions_sparse: an index is out of range")
            live = ~self.terminal[s]
            loop_s = np.repeat(ts, A)
            loop_a = np.tile(np.arange(A, dtype=np.int64), len(ts))
            self._row = np.concatenate([s[live] * A + a[live], loop_s * A + loop_a])
            self._next = np.concatenate([s2[live], loop_s])
            self._prob = np.concatenate([e[live, 3], np.ones(len(loop_s))])
        else:
            P = np.array(model["transitions"], dtype=np.float64)
            if P.shape != (S, A, S):
                raise ValueError("model: want a time-homogeneous tabular model (an exported Gymnasium model)")
            for t in ts:
                P[t] = 0.0
                P[t, :, t] = 1.0
            self.P = P
        if model.get("entry_reward") is not None:
            # A reward earned on entering s' (model/tabular MDP.EntryReward): folded into the
            # mean reward of the live rows; a terminal self-loop never re-earns it.
            e = np.asarray(model["entry_reward"], dtype=np.float64)
            if e.ndim != 1 or e.shape[0] != S:
                raise ValueError(f"model.entry_reward: want {S} numbers")
            self.R = self.R + self.expect(e)
            self.R[ts] = self.terminal_reward
        V = np.zeros(S)
        for _ in range(self.H):
            V = (self.R + self.expect(V)).max(axis=1)
        self.v_star = float(self.init @ V)

    def expect(self, V: np.ndarray) -> np.ndarray:
        """Σ_{s'} P(s'|s,a)·V[s'] for every (s, a): an S×A array."""
        if self.P is not None:
            out: np.ndarray = self.P @ V
            return out
        q = np.bincount(self._row, weights=self._prob * V[self._next], minlength=self.S * self.A)
        return q.reshape(self.S, self.A)

    def value(self, rule: Mapping[str, Any]) -> float:
        """V^π₁ (expected over the initial distribution) of a tabular rule: deterministic
        ``Act[h][s]`` or stochastic ``Prob[h][s·A+a]``."""
        S, A, H = self.S, self.A, self.H
        V = np.zeros(S)
        act, prob = rule.get("Act"), rule.get("Prob")
        idx = np.arange(S)
        if act is not None:
            act_a = np.asarray(act, dtype=np.int64)
            if act_a.shape != (H, S):
                raise ValueError(f"rule.Act: shape {act_a.shape}, want ({H}, {S})")
            for h in range(H - 1, -1, -1):
                a = act_a[h]
                if self.P is not None:
                    V = self.R[idx, a] + self.P[idx, a] @ V
                else:
                    V = (self.R + self.expect(V))[idx, a]
        elif prob is not None:
            pr = np.asarray(prob, dtype=np.float64).reshape(H, S, A)
            for h in range(H - 1, -1, -1):
                V = ((self.R + self.expect(V)) * pr[h]).sum(axis=1)
        else:
            raise ValueError("rule: neither Act nor Prob")
        return float(self.init @ V)

    def regret(self, rule: Mapping[str, Any]) -> float:
        """V*₁ − V^π₁ (≥ 0; rounding below 0 is clamped)."""
        return max(self.v_star - self.value(rule), 0.0)

    def uniform_regret(self) -> float:
        """The per-episode regret of the uniform random policy."""
        V = np.zeros(self.S)
        for _ in range(self.H):
            V = (self.R + self.expect(V)).mean(axis=1)
        return max(self.v_star - float(self.init @ V), 0.0)


# ---------------------------------------------------------------- the result


@dataclass
class RunResult:
    """What :func:`run` measured: one seed of one (environment, agent, ε, δ, K)."""

    env_id: str
    env_kwargs: dict[str, Any]
    agent: str
    epsilon: float
    delta: float
    seed: int
    horizon: int
    users: int
    experiment: str
    server: str
    regret: np.ndarray
    """Exact regret of each user's episode (user k at index k − 1)."""
    seconds: float
    """Wall time of playing and reporting (credentials included; creation excluded)."""
    ledger: dict[str, Any]
    model: dict[str, Any]
    v_star: float
    uniform_regret: float
    """The uniform policy's exact per-episode regret."""
    accepted: int
    skipped: int
    policy_fetches: int
    policy_versions: int
    out: Path | None = None
    experiment_seed: int | None = None
    """The curator's seed on a seeded (test-mode) server, else None (secure noise)."""

    @property
    def cumulative(self) -> np.ndarray:
        """Cumulative regret after each user."""
        return np.cumsum(self.regret)

    @property
    def final(self) -> float:
        """R(K): the cumulative regret after the last user."""
        return float(self.regret.sum())

    @property
    def last_decile(self) -> float:
        """Mean per-episode regret over the last K/10 users (dprl run's last_decile_regret)."""
        K = len(self.regret)
        n = K // 10
        return float(self.regret[K - n :].sum() / n) if n > 0 else float("nan")

    @property
    def episodes_per_second(self) -> float:
        return len(self.regret) / self.seconds if self.seconds > 0 else float("inf")

    @property
    def label(self) -> str:
        """dprl run's curve label: ``agent eps=ε`` (the agent alone when ε = 0)."""
        return f"{self.agent} eps={go_format_g(self.epsilon)}" if self.epsilon > 0 else self.agent

    def checkpoint_regret(self) -> list[tuple[int, float]]:
        """(episode, cumulative regret) at dprl run's checkpoints."""
        cum = self.cumulative
        return [(k, float(cum[k - 1])) for k in checkpoints(len(self.regret))]


# ---------------------------------------------------------------- playing


def _episode(
    u: Any, choose: Callable[[int, int], int], H: int, seed: int, absorb: list[list[float]], scale: float, offset: float,
    terminal: frozenset[int] | None = None,
) -> tuple[list[int], list[int], list[float]]:
    """One user's episode: choose(h, s) is her action.

    With ``terminal`` (the model's terminal states: a sparse export), the episode ends when
    Gymnasium says ``terminated`` — after L ≤ H steps, L < H only in a terminal state — and
    the trajectory holds L + 1 states, L actions and L rewards. Without (an ``--absorbing``
    export), it lasts H steps: after ``terminated`` she stays in the absorbing terminal state
    with its exported reward ``absorb[s][a]`` (no step is called)."""
    s, _ = u.reset(seed=seed)
    s = int(s)
    states = [s]
    actions: list[int] = []
    rewards: list[float] = []
    done = False
    for h in range(H):
        a = choose(h, s)
        if done:
            actions.append(a)
            rewards.append(absorb[s][a])
            states.append(s)
            continue
        s2, r, term, _trunc, _info = u.step(a)
        s = int(s2)
        x = scale * float(r) + offset
        actions.append(a)
        rewards.append(0.0 if x < 0 else 1.0 if x > 1 else x)
        states.append(s)
        if terminal is not None:
            if bool(term) != (s in terminal):
                raise RuntimeError(
                    f"Gymnasium's terminated = {bool(term)} entering state {s} disagrees with the exported "
                    f"terminal states (step {h})")
            if term:
                break
        elif term:
            done = True
    return states, actions, rewards


def _episode_det(
    u: Any, act: list[list[int]], H: int, seed: int, absorb: list[list[float]], scale: float, offset: float,
    terminal: frozenset[int] | None = None,
) -> tuple[list[int], list[int], list[float]]:
    return _episode(u, lambda h, s: act[h][s], H, seed, absorb, scale, offset, terminal)


def _episode_prob(
    u: Any, prob: np.ndarray, H: int, seed: int, absorb: list[list[float]], scale: float, offset: float,
    terminal: frozenset[int] | None = None,
) -> tuple[list[int], list[int], list[float]]:
    A = prob.shape[2]
    draws = np.random.default_rng(seed).random(H)

    def choose(h: int, s: int) -> int:
        cdf = np.cumsum(prob[h, s])
        return int(min(np.searchsorted(cdf, draws[h] * cdf[-1], side="right"), A - 1))

    return _episode(u, choose, H, seed, absorb, scale, offset, terminal)


def _trajectory_json(header_json: str, states: list[int], actions: list[int], rewards: list[float]) -> str:
    return (
        '{"header":' + header_json + ',"states":[' + ",".join(map(str, states)) + '],"actions":['
        + ",".join(map(str, actions)) + '],"rewards":[' + ",".join(map(repr, rewards)) + "]}"
    )


def _privatized_json(header_json: str, values: Sequence[float]) -> str:
    # repr is the shortest round-trip form (valid JSON; Go reads back the same doubles).
    return '{"header":' + header_json + ',"blocks":[[' + ",".join(map(repr, values)) + "]]}"


class _Retry:
    """Go's client retry: transport errors, 5xx and in_progress back off 50 ms … 6.4 s, 8 tries."""

    @staticmethod
    def call(f: Callable[[], Any]) -> Any:
        for attempt in range(8):
            try:
                return f()
            except APIError as e:
                if attempt == 7 or not (e.status == 0 or e.status >= 500 or e.code == "in_progress"):
                    raise
                time.sleep(0.05 * (1 << attempt))
        raise AssertionError("unreachable")


def _in_progress(r: BatchResult) -> bool:
    """Whether a batch item was answered 409 in_progress (retry to get its acknowledgement)."""
    return r.status == 409 and r.error is not None and r.error.code == "in_progress"


class _Player:
    """The users' side of :func:`run`: the cached policy, credentials, episodes, reports."""

    def __init__(
        self, c: Client, exp: str, capacity: int, tables: Tables, u: Any, seed: int, prefix: str,
        scale: float, offset: float, absorb: list[list[float]], terminal: frozenset[int] | None = None,
    ) -> None:
        self.c, self.exp, self.capacity, self.tables, self.u = c, exp, capacity, tables, u
        self.seed, self.prefix, self.scale, self.offset, self.absorb = seed, prefix, scale, offset, absorb
        self.terminal = terminal  # the model's terminal states (None: an absorbing model)
        self.creds: dict[str, str] = {}
        self.minted = 0  # credentials minted for users 1 … minted
        self.regret_of: dict[int, float] = {}
        self.pol: Policy | None = None
        self.acked: int | None = None
        self.fetches = 0
        self.accepted = 0
        self.noise = SecureNormal()
        self.rand: GaussianRandomizer | None = None
        # The user's own guarantee (the run's ε, δ), set by run(): her noise is computed from it.
        self.epsilon, self.delta = 0.0, 0.0
        self.header_json = ""

    def refresh(self) -> None:
        """Fetch the policy when none is cached or the last acknowledgement names another."""
        if self.pol is not None and self.acked == self.pol.version:
            return
        pol: Policy = _Retry.call(lambda: self.c.policy(self.exp))
        self.fetches += 1
        if self.pol is None or pol.version != self.pol.version:
            self.header_json = json.dumps(pol.header, separators=(",", ":"))
            if pol.version not in self.regret_of:
                self.regret_of[pol.version] = self.tables.regret(pol.rule)
            self.rand = (_randomizer(pol, self.noise, self.tables, self.epsilon, self.delta)
                         if pol.header.get("kind") == "privatized" else None)
        self.pol = pol

    def ensure_credentials(self, upto: int) -> None:
        """Mint the credentials of users up to ``upto`` (within the capacity), 10 000 at a time."""
        upto = min(upto, self.capacity)
        while self.minted < upto:
            lo, hi = self.minted + 1, min(self.minted + MAX_CREDENTIAL_USERS, self.capacity)
            ids = [f"{self.prefix}{j}" for j in range(lo, hi + 1)]
            self.creds.update(_Retry.call(lambda: self.c.credentials(self.exp, ids)))
            self.minted = hi

    def play(self, k: int, last: int, regret: np.ndarray) -> list[BatchItem]:
        """Play users k … last with the cached policy; their reports (users within capacity)."""
        pol = self.pol
        assert pol is not None
        t = self.tables
        r_pol = self.regret_of[pol.version]
        act = pol.rule.get("Act")
        prob = None if act is not None else np.asarray(pol.rule["Prob"], dtype=np.float64).reshape(t.H, t.S, t.A)
        items: list[BatchItem] = []
        for j in range(k, last + 1):
            sj = user_seed(self.seed, j)
            if act is not None:
                st, ac, rw = _episode_det(self.u, act, t.H, sj, self.absorb, self.scale, self.offset, self.terminal)
            else:
                assert prob is not None
                st, ac, rw = _episode_prob(self.u, prob, t.H, sj, self.absorb, self.scale, self.offset, self.terminal)
            regret[j - 1] = r_pol
            if j > self.capacity:
                continue  # beyond the calibrated capacity: plays, does not report (as in dprl run)
            if self.rand is not None:
                rep = _privatized_json(self.header_json, self.rand.noisy_values(st, ac, rw))
            else:
                rep = _trajectory_json(self.header_json, st, ac, rw)
            uid = f"{self.prefix}{j}"
            items.append(BatchItem(uid, self.creds[uid], f"k{j}", rep, r_pol))
        return items

    def submit(self, items: list[BatchItem]) -> list[BatchResult]:
        """Submit the batch; items answered 409 in_progress (a retried batch whose first
        attempt is still being committed: a busy server) are resubmitted alone, with the same
        idempotency keys, backing off like :class:`_Retry`, until acknowledged."""
        out: list[BatchResult] = _Retry.call(lambda: self.c.submit_batch(self.exp, items))
        for attempt in range(8):
            pending = [i for i, r in enumerate(out) if _in_progress(r)]
            if not pending:
                break
            time.sleep(0.05 * (1 << attempt))
            again: list[BatchResult] = _Retry.call(
                lambda: self.c.submit_batch(self.exp, [items[i] for i in pending]))
            for i, r in zip(pending, again):
                out[i] = r
        return out

    def handle(self, items: list[BatchItem], results: list[BatchResult]) -> None:
        """Check every item was acknowledged; note the policy version of the last ack."""
        for it, res in zip(items, results):
            if not res.ok:
                e = res.error
                if e is None:
                    raise APIError(res.status, "no_ack", "", f"user {it.user}: no acknowledgement")
                raise APIError(e.status, e.code, e.field, f"user {it.user}: {e.message}")
            self.accepted += 1
        ack = results[-1].ack
        assert ack is not None
        self.acked = int(ack["policy_version"])


def _client_of(server: LocalServer | Client) -> Client:
    if isinstance(server, LocalServer):
        return server.client()
    return server


def run(
    server: Server,
    env_id: str,
    agent: str = "practical-jdp",
    epsilon: float = 1.0,
    delta: float = 1e-5,
    users: int = 20_000,
    seed: int = 1,
    horizon: int | None = None,
    out: str | os.PathLike[str] | None = None,
    batch: int = MAX_BATCH,
    progress: Callable[[int, int], None] | None = None,
    user_prefix: str = "gym-",
    experiment_seed: int | None = None,
    absorbing: bool = False,
    public_rewards: bool = True,
    public_support: bool = True,
    **env_kwargs: Any,
) -> RunResult:
    """Play ``users`` Gymnasium users of ``env_id`` against a new experiment (module docstring).

    ``server``: a :class:`~dprl.server.LocalServer`, a :class:`~dprl.client.Client` (with both
    tokens), or None to start a local server for this run and stop it after. ``env_kwargs`` go
    to ``gym.make`` (e.g. ``map_name="8x8"``, ``is_slippery=False``). ``progress(done, total)``
    is called after each batch. With ``out``, the run directory is written there
    (:func:`write_run_dir`). ``experiment_seed`` (only against ``dprl serve --seeded``, the test
    mode) makes the curator draw its noise and tie-breaks from that seed exactly as ``dprl run
    --seeds experiment_seed`` does — never for real users. The experiment is created as a
    simulation (the users' regrets go on its public curve); ``epsilon`` ≤ 0 creates a non-private
    baseline (``non_private``, without ε or δ; labelled NON-PRIVATE). ``absorbing=True`` exports
    and plays the absorbing model (episodes of H steps; module docstring). ``public_rewards=False``
    exports the model without declaring its reward table public (the exporter declares it by
    default): the practical agents then learn the rewards from the users' privatised reports;
    ``public_support=False`` likewise without declaring the transitions' support public (then
    every next state's count is released, with noise)."""
    import gymnasium as gym  # the 'gym' extra

    from . import gym_export as gx

    if not 1 <= batch <= MAX_BATCH:
        raise ValueError(f"batch: 1 to {MAX_BATCH}, got {batch}")
    if users < 1:
        raise ValueError(f"users: at least 1, got {users}")
    if server is None:
        with LocalServer() as srv:
            return run(srv, env_id, agent, epsilon, delta, users, seed, horizon, out, batch, progress, user_prefix,
                       experiment_seed, absorbing, public_rewards, public_support, **env_kwargs)

    env = gym.make(env_id, **env_kwargs)
    c = _client_of(server)
    try:
        u = env.unwrapped
        H = horizon if horizon is not None else gx.default_horizon(env_id, env_kwargs.get("map_name"), absorbing)
        model = gx.export_env(env, H, gx._file_name(env_id, env, env_kwargs.get("map_name")), absorbing=absorbing,
                              public_rewards=public_rewards, public_support=public_support)
        tables = Tables(model)
        rm = model["reward_map"]
        scale, offset = float(rm["scale"]), float(rm["offset"])
        absorb: list[list[float]] = [list(map(float, row)) for row in model["reward"]]

        # The users are simulated (their regrets go on the experiment's curve); ε ≤ 0 asks for
        # a non-private baseline, which takes neither ε nor δ.
        private = epsilon > 0
        created = c.create("tabular", agent, {"name": "file", "model": model}, capacity=users,
                           epsilon=epsilon if private else None, delta=delta if private else None,
                           non_private=not private, simulation=True, seed=experiment_seed)
        exp = str(created["experiment"])
        terminal = frozenset(int(x) for x in model.get("terminal", [])) if "transitions_sparse" in model else None
        pl = _Player(c, exp, int(created["capacity"]), tables, u, seed, user_prefix, scale, offset, absorb, terminal)
        pl.epsilon, pl.delta = float(epsilon), float(delta)
        start = time.perf_counter()
        regret = np.empty(users)
        pl.ensure_credentials(min(batch, users))
        pl.refresh()
        k = 1
        while k <= users:
            last = min(k + batch - 1, users)
            items = pl.play(k, last, regret)
            if items:
                pl.handle(items, pl.submit(items))
            pl.refresh()
            pl.ensure_credentials(min(last + batch, users))
            if progress is not None:
                progress(last, users)
            k = last + 1
        seconds = time.perf_counter() - start
        ledger = c.ledger(exp)
    finally:
        env.close()
        if c is not server:
            c.close()
    res = RunResult(
        env_id=env_id, env_kwargs=dict(env_kwargs), agent=agent, epsilon=float(epsilon), delta=float(delta),
        seed=seed, horizon=H, users=users, experiment=exp, server=c.base_url, regret=regret, seconds=seconds,
        ledger=ledger, model=model, v_star=tables.v_star, uniform_regret=tables.uniform_regret(),
        accepted=pl.accepted, skipped=users - pl.accepted, policy_fetches=pl.fetches, policy_versions=len(pl.regret_of),
        experiment_seed=experiment_seed,
    )
    if out is not None:
        write_run_dir(out, [res], binary=getattr(server, "binary", None))
        res.out = Path(out)
    return res


def _randomizer(pol: Policy, noise: SecureNormal, tables: Tables, epsilon: float, delta: float) -> GaussianRandomizer:
    """The user's randomiser for an LDP policy: everything computed from public parameters she
    knows (the agent, the exported model's S, A, H — time-homogeneous, so pooled —, whether it
    declares its reward table public, and her own ε, δ); the server's ``user_side`` and header
    are only checked (UserSideError, ValueError)."""
    if pol.user_side is None:
        raise UserSideError("sigma", f"the policy of {pol.experiment} is privatized but the server published no randomiser parameters: refusing to report")
    rz = GaussianRandomizer.for_user(str(pol.header["agent"]), tables.S, tables.A, tables.H, True,
                                     epsilon, delta, published=pol.user_side, source=noise,
                                     public_rewards=tables.public_rewards, support=tables.support)
    want = json.loads(rz.header.to_json())
    if want != pol.header:
        raise ValueError(f"the randomiser's header {want} differs from the policy's {pol.header}")
    return rz


# ---------------------------------------------------------------- statistics and the run dir

_T975 = [
    12.706204736174705, 4.302652729749464, 3.1824463052837095, 2.7764451051977943, 2.5705818356363155,
    2.44691185114497, 2.3646242515927853, 2.3060041352041667, 2.2621571627982053, 2.228138851986275,
    2.2009851600916397, 2.178812829667229, 2.1603686564627926, 2.144786687917804, 2.1314495455597755,
    2.1199052992212546, 2.109815577833317, 2.1009220402410387, 2.0930240544083096, 2.085963447265865,
    2.0796138447276804, 2.0738730679040263, 2.0686576104190486, 2.063898561628026, 2.0595385527532977,
    2.055529438642873, 2.0518305164802855, 2.048407141795245, 2.0452296421327043, 2.042272456301238,
]


def t_quantile_975(df: int) -> float:
    """The 0.975 quantile of Student's t with df degrees of freedom (a table for df ≤ 30,
    computed with 30-digit arithmetic; beyond, a Cornish–Fisher expansion, error < 2e-6)."""
    if df < 1:
        raise ValueError("df: at least 1")
    if df <= len(_T975):
        return _T975[df - 1]
    z = 1.959963984540054
    n = float(df)
    return (
        z + (z**3 + z) / (4 * n) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * n**2)
        + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * n**3)
    )


def mean_ci(x: Sequence[float]) -> tuple[float, float, float]:
    """Mean and t-based 95 % CI over seeds (report.MeanBand: one value per seed; a single
    seed gives [m, m])."""
    a = np.asarray(x, dtype=np.float64)
    m = float(a.mean())
    if len(a) < 2:
        return m, m, m
    h = t_quantile_975(len(a) - 1) * float(a.std(ddof=1)) / math.sqrt(len(a))
    return m, m - h, m + h


def go_format_g(x: float) -> str:
    """strconv.FormatFloat(x, 'g', -1, 64): shortest round-trip digits, e notation (exponent
    of at least two digits) when the decimal exponent is < −4 or ≥ 6, else plain."""
    x = float(x)
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "+Inf" if x > 0 else "-Inf"
    if x == 0:
        return "-0" if math.copysign(1.0, x) < 0 else "0"
    r = repr(abs(x))
    mant, _, e = r.partition("e")
    exp10 = int(e) if e else 0
    ip, _, fp = mant.partition(".")
    digits = (ip + fp).lstrip("0")
    # decimal point position dp: value = 0.digits × 10^dp
    if ip != "0":
        dp = len(ip) + exp10
    else:
        dp = -(len(fp) - len(fp.lstrip("0"))) + exp10
    digits = digits.rstrip("0") or "0"
    sign = "-" if x < 0 else ""
    e1 = dp - 1
    if e1 < -4 or e1 >= 6:
        m = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{sign}{m}e{'-' if e1 < 0 else '+'}{abs(e1):02d}"
    if dp <= 0:
        return sign + "0." + "0" * (-dp) + digits
    if dp >= len(digits):
        return sign + digits + "0" * (dp - len(digits))
    return sign + digits[:dp] + "." + digits[dp:]


def _sha256(p: Path) -> str:
    h = hashlib.sha256()
    with p.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _safe(label: str) -> str:
    """rundir.FileName: every character outside [A-Za-z0-9._-] becomes _."""
    return "".join(ch if (ch.isascii() and (ch.isalnum() or ch in "-._")) else "_" for ch in label)


def _write(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def _versions() -> dict[str, str]:
    out = {"dprl_python": __version__, "python": platform.python_version(), "numpy": np.__version__}
    try:
        import gymnasium

        out["gymnasium"] = gymnasium.__version__
    except ImportError:  # pragma: no cover
        pass
    return out


def write_run_dir(
    out: str | os.PathLike[str],
    results: Sequence[RunResult],
    command: Sequence[str] | None = None,
    binary: str | os.PathLike[str] | None = None,
) -> Path:
    """Write the run directory of one configuration's seeds in dprl's one run-directory schema
    (``dprl.run/v1``, docs/run-directory.md), with the same writer as ``dprl run``: this
    function writes its own two files and hands the curves to ``dprl report`` (the binary:
    ``binary``, else :func:`dprl.server.find_binary`), which writes the rest.

    * ``env.json`` — the exported model the experiment was created with; ``ledger.json`` —
      the experiments' ledgers (written here);
    * ``curves/file/<label>.csv`` — ``episode,seed_<s>…,mean[,ci95_lo,ci95_hi]`` at dprl run's
      checkpoints (:func:`checkpoints`); ``regret-file.png``/``.svg`` — the regret figure with
      the uniform policy's line; ``regret_long.csv`` — ``family,curve,seed,episode,regret``,
      curve ``file/<label>`` (dprl run's name for a model given with ``--env file``);
      ``config.resolved.yaml`` — the curve's cell as ``dprl run`` records it (so ``dprl
      compare`` checks that two runs share the environment: env_sha256 of env.json);
      ``meta.json``;
    * ``summary.md`` — this run's text, then the table every run directory has (R(K) mean with
      its t-based 95 % CI over seeds, last-decile regret per episode, the ledger's guarantee);
    * ``manifest.json`` (written last) — the one manifest: provenance, the curve's record
      (agent, environment, ε, δ, K, seeds, R(K) with CI, last decile, the uniform policy's
      regret, episodes/s, the privacy ledger's report as the server publishes it) and this
      package's own section under ``extras.python``.

    The directory may hold an earlier run written this way (``dprl report --force`` replaces
    the files dprl wrote); a file dprl did not write is never removed or overwritten.
    """
    if not results:
        raise ValueError("results: at least one run")
    r0 = results[0]
    for r in results[1:]:
        same = (r.env_id, r.env_kwargs, r.agent, r.epsilon, r.delta, r.horizon, r.users, r.experiment_seed is None) == (
            r0.env_id, r0.env_kwargs, r0.agent, r0.epsilon, r0.delta, r0.horizon, r0.users, r0.experiment_seed is None)
        if not same or r.model != r0.model:
            raise ValueError("results: every run must have the same configuration (only the seed differs)")
    if len({r.seed for r in results}) != len(results):
        raise ValueError("results: seeds must differ")
    guarantee = r0.ledger.get("guarantee")
    if not isinstance(guarantee, dict):
        raise ValueError("results: the ledger has no guarantee object (a server older than this package?)")
    results = sorted(results, key=lambda r: r.seed)
    d = Path(out)
    d.mkdir(parents=True, exist_ok=True)
    group, label = "file", r0.label
    K = r0.users
    cps = checkpoints(K)

    _write(d / "env.json", json.dumps(r0.model, separators=(",", ":")) + "\n")
    _write(d / "ledger.json", json.dumps([r.ledger for r in results], indent=2, ensure_ascii=False) + "\n")
    env_sha = _sha256(d / "env.json")

    statement = str(r0.ledger.get("statement", ""))
    kw = ", ".join(f"{k}={v!r}" for k, v in sorted(r0.env_kwargs.items()))
    if r0.experiment_seed is None:
        noise = "noise secure (the server's)"
    else:
        noise = f"noise seeded (dprl serve --seeded, TEST MODE: curator seeds {[r.experiment_seed for r in results]})"
    finals = [r.final for r in results]
    m, lo, hi = mean_ci(finals)
    tail = float(np.mean([r.last_decile for r in results]))
    speed = float(np.mean([r.episodes_per_second for r in results]))
    summary = "\n".join([
        "# run: Gymnasium users through dprl serve (dprl.gym)",
        "",
        f"{r0.env_id}{' (' + kw + ')' if kw else ''} exported as `{r0.model.get('name', '')}` "
        f"(S={r0.model['states']}, A={r0.model['actions']}), H={r0.horizon}, K={K}, seeds "
        f"{[r.seed for r in results]}, δ={go_format_g(r0.delta)}, "
        f"{noise}, "
        f"rewards mapped r' = {go_format_g(r0.model['reward_map']['scale'])}·r + {go_format_g(r0.model['reward_map']['offset'])}. "
        "Users are Gymnasium episodes played in batches against the served experiment; regret is "
        "exact (backward induction on the exported tables) for the policy each user played. "
        + ("Episodes end at Gymnasium's `terminated` (terminal states "
           + str(r0.model.get("terminal", [])) + f", terminal reward {go_format_g(float(r0.model.get('terminal_reward', 0.0)))})."
           if "transitions_sparse" in r0.model else "Terminal states are absorbing (episodes of H steps)."),
        "",
        f"## {group} (uniform policy: {r0.uniform_regret:.4f} per episode)",
        "",
        "| curve | R(K) mean | 95% CI | last-decile regret/episode | episodes/s | privacy (accountant) |",
        "| --- | ---: | --- | ---: | ---: | --- |",
        f"| {label} | {m:.0f} | [{lo:.0f}, {hi:.0f}] | {tail:.4f} | {speed:.0f} | {statement} |",
        "",
        "Experiments: " + ", ".join(f"{r.experiment} (seed {r.seed}, {r.accepted} reports accepted, "
                                      f"{r.policy_versions} policy versions played)" for r in results),
        "",
    ])
    private = r0.epsilon > 0 and guarantee.get("model") in ("jdp", "ldp")
    doc: dict[str, Any] = {
        "schema": "dprl.report-input/v1",
        "family": "tabular",
        "experiment": "run",
        "command": list(command) if command is not None else list(sys.argv),
        "config": {
            "family": "tabular", "env": r0.env_id, "env_kwargs": r0.env_kwargs, "horizon": r0.horizon,
            "episodes": K, "seeds": [r.seed for r in results], "delta": r0.delta,
            "curves": [{"env": "file", "file": "env.json", "agent": r0.agent, "epsilon": r0.epsilon}],
        },
        "wall_seconds": float(sum(r.seconds for r in results)),
        "workers": 1,
        "inputs": [{"role": "env", "path": "env.json", "sha256": env_sha}],
        "summary": summary,
        "files": ["env.json", "ledger.json"],
        "extras": {"python": {
            "producer": "dprl.gym (Python)", "versions": _versions(), "server": r0.server, "v_star": r0.v_star,
            "env": r0.env_id, "env_kwargs": r0.env_kwargs,
        }},
        "curves": [{
            "label": label, "agent": r0.agent, "env": group,
            "epsilon": r0.epsilon if private else None,
            "delta": r0.delta if private else None,
            "steps": cps,
            "seeds": [r.seed for r in results],
            "runs": [[float(r.cumulative[k - 1]) for k in cps] for r in results],
            "reference": {"kind": "uniform-policy", "regret_per_episode": r0.uniform_regret},
            "episodes_per_second": speed if math.isfinite(speed) else None,
            "privacy": guarantee,
            "extras": {"python": {
                "statement": statement,
                "runs": [{
                    "seed": r.seed, "final_regret": r.final, "last_decile_regret": r.last_decile,
                    "episodes_per_second": r.episodes_per_second if math.isfinite(r.episodes_per_second) else None,
                    "experiment": r.experiment, "accepted": r.accepted, "skipped": r.skipped,
                    "policy_versions": r.policy_versions, "experiment_seed": r.experiment_seed,
                } for r in results],
            }},
            # The cell as dprl run's practical suite records it (dprl compare reads the
            # environment from it: the exported model's SHA-256).
            "spec": {"group": group, "label": label, "agent": r0.agent, "epsilon": r0.epsilon, "episodes": K,
                     "horizon": r0.horizon, "delta": r0.delta, "env_sha256": env_sha},
        }],
    }
    exe = find_binary(binary)
    with tempfile.TemporaryDirectory(prefix="dprl-report-") as tmp:
        inp = Path(tmp) / "report.json"
        inp.write_text(json.dumps(doc, ensure_ascii=False, allow_nan=False), encoding="utf-8")
        p = subprocess.run([str(exe), "report", "--input", str(inp), "--out", str(d), "--force"],
                           capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        raise RuntimeError(f"dprl report (exit {p.returncode}): {p.stderr.strip()}")
    return d

