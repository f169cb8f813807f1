"""Export Gymnasium toy-text environments to dprl's tabular MDP file format.

    python -m dprl.gym_export FrozenLake-v1 frozenlake4x4.json
    python -m dprl.gym_export FrozenLake-v1 frozenlake8x8.json --map-name 8x8
    python -m dprl.gym_export CliffWalking-v1 cliff.json
    python -m dprl.gym_export Taxi-v4 taxi.json          # Taxi-v3 with gymnasium < 1.3
    python -m dprl.gym_export FrozenLake-v1 old.json --absorbing   # the format before issue 26
    dprl run --family tabular --env file --env-file frozenlake4x4.json --agent practical-jdp ...

Supported releases: the pinned gymnasium 1.2.3 (``python/pyproject.toml``) and the current
1.4.0, both tested. Ids: ``FrozenLake-v1``, ``FrozenLake8x8-v1``, ``CliffWalking-v1`` (and
``CliffWalkingSlippery-v1``), and Taxi as the installed release registers it: ``Taxi-v3`` up to
1.2.x, ``Taxi-v4`` from 1.3.0 (where ``Taxi-v3`` is deprecated and ``gym.make`` refuses it).
Taxi-v4 (gymnasium 1.3.0) fixed the ``is_rainy`` transitions (their sideways moves and walls)
and the fickle passenger, and added ``rainy_probability`` and ``fickle_probability``; the
default (dry) Taxi-v4 has the same ``P`` table, initial distribution and time limit as
Taxi-v3 and exports to the same file but for its name. The exporter reads whatever ``P`` the
environment has, so either release's rainy Taxi (``--rainy``) exports as that release plays it.

The file (``model/tabular/load.go``: ``File``) is time-homogeneous, with deterministic rewards
(the expected reward ``r(s,a)``; ``--rewards bernoulli`` realises 1 with that probability),
and reads back in dprl with exact ``V*`` and regret. The environment's table
``env.unwrapped.P[s][a]`` (a list of ``(prob, next_state, reward, terminated)``) becomes:

* transitions ``P(s'|s,a)``: the probabilities of the entries with the same next state summed
  (Gymnasium lists a next state once per way of reaching it), written sparsely as
  ``transitions_sparse``: one ``[s, a, s', p]`` entry per next state of positive probability,
  the entries of a row sorted by ``s'``;
* terminal states (``terminal``): the states that some transition enters with
  ``terminated = True``. Entering one ends the episode, as in Gymnasium; their rows are
  omitted from ``transitions_sparse`` (Gymnasium never steps from a terminal state, and dprl
  never uses them). A terminal state that a state reachable from the initial distribution
  enters *without* ``terminated`` is refused (Gymnasium would go on where dprl stops), and so
  is an initial distribution with mass on a terminal state. Rows of unreachable states (Taxi's
  delivered-passenger states with the taxi elsewhere, CliffWalking's cliff cells) are exported
  as Gymnasium has them and never matter;
* ``terminal_reward``: the image of an original reward 0 under the map below (``offset``).
  dprl values a terminal state reached at step h as ``terminal_reward·(H − h)``, the value it
  would have if it were absorbing with that reward, so an episode that terminates after L steps
  is worth ``Σ_{h<L} r'_h + (H − L)·offset = scale·(Gymnasium return) + H·offset``: exactly
  what the absorbing export (below) gave it. The exported MDP orders policies exactly as the
  Gymnasium episode truncated at H does, and its V*, V^π and regret are those of the absorbing
  export;
* rewards: mapped affinely into [0, 1], ``r' = scale·r + offset`` with ``scale = 1/(hi − lo)``
  and ``offset = −lo/(hi − lo)``, where ``[lo, hi]`` is the range of the table's rewards
  (entries of positive probability, rows of non-terminal states) *extended to contain 0*
  when the table has terminal states. Including 0 makes the terminal reward (the image of 0,
  i.e. ``offset``) a value of the same map, so an H-step return is exactly
  ``scale·(Gymnasium return) + H·offset``. (Mapping the terminal reward to 0 instead would
  make, e.g., CliffWalking's goal the worst place to be.) The map and the table's original min
  and max are recorded in the file's ``reward_map``. The file's reward is
  ``Σ p·r'`` over the entries of ``(s, a)`` (clamped into [0, 1] against rounding); a terminal
  state's row of ``reward`` is ``offset`` (never used).
  FrozenLake [0, 1] → identity (terminal reward 0); CliffWalking [−100, −1] ∪ {0} →
  ``(r + 100)/100`` (a step −1 → 0.99, the cliff −100 → 0, terminal reward after the goal 1);
  Taxi [−10, 20] → ``(r + 10)/30`` (a step → 0.3, an illegal pick-up/drop-off → 0, the
  drop-off +20 → 1, terminal reward 1/3);
* a public reward table (unless ``--private-rewards``): a simulator publishes its reward
  function, so the file declares ``public_rewards: true`` when the table's rewards have the
  form ``r(s, a, s') = base(s, a) + entry(s')`` (:func:`decompose_rewards`): every live
  ``(s, a)`` pays one reward whatever its next state (Taxi, CliffWalking: ``reward`` is
  ``scale·base + offset``), or the reward depends on the next state only (FrozenLake's goal:
  ``reward`` is ``offset`` and ``entry_reward[s'] = scale·entry(s')``, a reward earned on
  entering s'). dprl's practical agents then read the rewards instead of learning them and
  spend no privacy budget on them; values and regret are unchanged (the mean reward of
  ``(s, a)`` is ``reward + Σ P(s'|s,a)·entry_reward[s']``);
* a public transition support (unless ``--private-support``): Gymnasium publishes the whole
  table ``P``, so the rules of the environment — which next states each ``(s, a)`` can reach,
  e.g. FrozenLake's slip to the three neighbours — are public, and the file declares
  ``public_support: true``: the support is the non-zero pattern of ``transitions_sparse``
  (the probabilities stay what the agents learn). dprl's practical agents then release
  transition counts only inside it and estimate ``P = 0`` outside it. On a deterministic
  environment (Taxi, CliffWalking) the support is the whole transition function. Not with
  ``--absorbing`` (the format before terminal states);
* the initial distribution: ``env.unwrapped.initial_state_distrib`` when present (all four),
  else the state of ``env.reset(seed=0)``;
* the horizon H: ``--horizon``, else the default of the environment (:data:`DEFAULT_HORIZONS`):
  Gymnasium's own ``TimeLimit`` (``max_episode_steps``) — FrozenLake 4×4 100, FrozenLake 8×8
  200 (the limit of ``FrozenLake8x8-v1``; note that ``gym.make("FrozenLake-v1",
  map_name="8x8")`` keeps the 4×4 limit, 100, while the 8×8 default here is 200 either way),
  Taxi 200; CliffWalking has no TimeLimit: 50 (the shortest path is 13 steps, the safe one
  17, the slippery variant needs more). With the TimeLimit as H, the exported finite-horizon
  MDP is the ``gym.make`` episode: it ends at ``terminated`` or is truncated at H.

Size: dprl bounds each of S, A, H by 2^16 and a sparse file by 2^24 entries; every supported
environment is far below (Taxi: 2 976 entries at any H; rainy 5 682 with gymnasium 1.2.3,
5 623 with 1.4.0).

``--absorbing`` writes the format of the exporter before terminal states existed (issue 26),
byte for byte as it did for the same arguments: dense ``transitions`` (``[s][a][s']``), no
``terminal``, every terminal state absorbing (``P(s|s,a) = 1`` for every action) with reward
``offset`` — the same MDP values as the sparse file, but an episode always lasts H steps. Its
size is bounded by dprl's dense limit H·S·A·S ≤ 2^24, so its default Taxi horizon is 11
(:data:`ABSORBING_DEFAULT_HORIZONS`; Taxi has S·A·S = 1.5·10⁶; 11 steps do not suffice to
deliver every passenger) and larger horizons are refused.

Taxi's ``fickle_passenger`` changes the state outside ``P`` (in both releases) and is refused.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "ABSORBING_DEFAULT_HORIZONS",
    "DEFAULT_HORIZONS",
    "MAX_ENTRIES",
    "SUPPORTED",
    "RewardMap",
    "Table",
    "check_size",
    "check_sparse_size",
    "default_horizon",
    "table_from_p",
    "to_file",
    "export_env",
    "make_env",
    "export",
    "write_json",
    "main",
]

MAX_ENTRIES = 1 << 24
"""dprl's bound on H·S·A·S of a dense file and on the entries of a sparse one
(model/tabular.MaxEntries)."""
MAX_DIM = 1 << 16
"""dprl's bound on each of S, A, H."""

DEFAULT_HORIZONS: dict[str, int] = {
    "FrozenLake-v1/4x4": 100,
    "FrozenLake-v1/8x8": 200,
    "CliffWalking": 50,
    "Taxi": 200,
}
"""Default horizons of the sparse export: Gymnasium's time limits (CliffWalking has none: 50)."""

ABSORBING_DEFAULT_HORIZONS: dict[str, int] = {**DEFAULT_HORIZONS, "Taxi": 11}
"""Default horizons of ``--absorbing``: Taxi 11, the largest within the dense limit H·S·A·S ≤ 2^24."""

SUPPORTED = ("FrozenLake-v1", "FrozenLake8x8-v1", "CliffWalking-v1", "Taxi-v3", "Taxi-v4")
"""The supported ids (Taxi-v3 with gymnasium 1.2.x, Taxi-v4 from 1.3.0; CliffWalking-v0 of older
releases exports the same way)."""


@dataclass(frozen=True)
class RewardMap:
    """r' = scale·r + offset; min and max are the original table's extreme rewards."""

    scale: float
    offset: float
    min: float
    max: float

    def __call__(self, r: float) -> float:
        return self.scale * r + self.offset

    def to_obj(self) -> dict[str, float]:
        return {"scale": self.scale, "offset": self.offset, "min": self.min, "max": self.max}


@dataclass
class Table:
    """A tabular model extracted from a Gymnasium ``P`` table (rewards not yet mapped)."""

    n_states: int
    n_actions: int
    next: list[list[dict[int, float]]]
    """[s][a]: {s': P(s'|s,a)} of positive probability, summed over Gymnasium's entries in their
    order; a terminal state's rows are {s: 1.0} (absorbing)."""
    raw_reward: list[list[float]]  # expected original reward of (s, a); 0 for terminal s
    terminal: frozenset[int]
    reward_min: float  # original table's min / max reward (non-terminal rows, p > 0)
    reward_max: float

    def row(self, s: int, a: int) -> list[tuple[int, float]]:
        """The (s', p) of (s, a), sorted by s'."""
        return sorted(self.next[s][a].items())

    @property
    def trans(self) -> list[list[list[float]]]:
        """The dense table [s][a][s'] (terminal states absorbing); S·A·S numbers."""
        out: list[list[list[float]]] = []
        for rows in self.next:
            dense: list[list[float]] = []
            for d in rows:
                row = [0.0] * self.n_states
                for s2, p in d.items():
                    row[s2] = p
                dense.append(row)
            out.append(dense)
        return out

    def entries(self) -> int:
        """The number of entries of the sparse file (rows of terminal states left out)."""
        return sum(len(d) for s, rows in enumerate(self.next) if s not in self.terminal for d in rows)


def table_from_p(
    P: Mapping[int, Mapping[int, Sequence[Sequence[Any]]]],
    n_states: int,
    n_actions: int,
    init: Sequence[float],
) -> Table:
    """Aggregate a Gymnasium ``P`` table; terminal states get absorbing rows with reward 0.

    A state is terminal when a transition enters it with ``terminated = True``. A state that
    can be reached from the initial distribution must never be entered without terminating
    from a reachable live state (else the episode would go on in Gymnasium where it ends in
    dprl, and the state could not be made absorbing either: ValueError is raised).
    Rows of states that cannot be reached (Taxi's states with the passenger already delivered
    and the taxi elsewhere, CliffWalking's cliff cells) are exported as Gymnasium has them;
    they never matter for values or regret.
    """
    terminal: set[int] = set()
    for s in range(n_states):
        for a in range(n_actions):
            for prob, s2, _r, term in P[s][a]:
                s2 = int(s2)
                if not 0 <= s2 < n_states:
                    raise ValueError(f"P[{s}][{a}]: next state {s2} outside [0, {n_states - 1}]")
                if float(prob) > 0 and term:
                    terminal.add(s2)
    nxt: list[list[dict[int, float]]] = []
    raw: list[list[float]] = []
    rmin, rmax = math.inf, -math.inf
    for s in range(n_states):
        rows: list[dict[int, float]] = []
        rs: list[float] = []
        for a in range(n_actions):
            if s in terminal:
                rows.append({s: 1.0})
                rs.append(0.0)
                continue
            d: dict[int, float] = {}
            mean = 0.0
            for prob, s2, r, term in P[s][a]:
                prob, s2, r = float(prob), int(s2), float(r)
                if prob < 0 or not math.isfinite(prob) or not math.isfinite(r):
                    raise ValueError(f"P[{s}][{a}]: bad entry ({prob}, {s2}, {r}, {term})")
                if prob == 0:
                    continue
                d[s2] = d.get(s2, 0.0) + prob
                mean += prob * r
                rmin, rmax = min(rmin, r), max(rmax, r)
            total = math.fsum(d.values())
            if abs(total - 1) > 1e-9:
                raise ValueError(f"P[{s}][{a}]: probabilities sum to {total!r}, not 1")
            rows.append(d)
            rs.append(mean)
        nxt.append(rows)
        raw.append(rs)
    # Reachable live states must enter terminal states only by terminating.
    if len(init) != n_states:
        raise ValueError(f"init: has {len(init)} entries, want {n_states}")
    seen = {s for s in range(n_states) if float(init[s]) > 0}
    stack = [s for s in seen if s not in terminal]
    while stack:
        s = stack.pop()
        for a in range(n_actions):
            for prob, s2, _r, term in P[s][a]:
                s2 = int(s2)
                if float(prob) <= 0:
                    continue
                if s2 in terminal and not term:
                    raise ValueError(
                        f"P[{s}][{a}] enters state {s2} without terminating, but other transitions "
                        f"terminate there: it cannot be made terminal"
                    )
                if s2 not in seen:
                    seen.add(s2)
                    if s2 not in terminal:
                        stack.append(s2)
    if rmin > rmax:  # every state terminal
        rmin = rmax = 0.0
    return Table(n_states, n_actions, nxt, raw, frozenset(terminal), rmin, rmax)


def reward_map_for(table: Table) -> RewardMap:
    """The affine map into [0, 1]: [lo, hi] = the table's reward range, extended to contain 0
    when there are terminal states (their terminal reward is the image of 0)."""
    lo, hi = table.reward_min, table.reward_max
    if table.terminal:
        lo, hi = min(lo, 0.0), max(hi, 0.0)
    if hi == lo:
        # Constant rewards: map them to 0 if they are 0, else to 1 (any increasing map works).
        return RewardMap(scale=1.0, offset=-lo if lo == 0 else 1.0 - lo, min=table.reward_min, max=table.reward_max)
    # + 0.0 turns -0.0 (lo = 0) into 0.0.
    return RewardMap(scale=1.0 / (hi - lo), offset=-lo / (hi - lo) + 0.0, min=table.reward_min, max=table.reward_max)


def _clamp01(x: float, where: str) -> float:
    if x < -1e-12 or x > 1 + 1e-12:
        raise ValueError(f"{where}: mapped reward {x!r} outside [0, 1]")
    return min(max(x, 0.0), 1.0)


def _check_dims(n_states: int, n_actions: int, horizon: int) -> None:
    for name, v in (("states", n_states), ("actions", n_actions), ("horizon", horizon)):
        if not 1 <= v <= MAX_DIM:
            raise ValueError(f"{name}: must be in [1, {MAX_DIM}], got {v}")


def check_size(n_states: int, n_actions: int, horizon: int) -> None:
    """dprl's bounds on a dense file (model/tabular.CheckSize): each of S, A, H in [1, 2^16],
    H·S·A·S ≤ 2^24 (the ``--absorbing`` export)."""
    _check_dims(n_states, n_actions, horizon)
    n = n_states * n_actions * n_states * horizon
    if n > MAX_ENTRIES:
        hmax = MAX_ENTRIES // (n_states * n_actions * n_states)
        raise ValueError(
            f"horizon: H·S·A·S = {n} exceeds dprl's limit 2^24 (S = {n_states}, A = {n_actions}); "
            f"the largest horizon for this environment is {hmax}"
        )


def check_sparse_size(n_states: int, n_actions: int, horizon: int, entries: int) -> None:
    """dprl's bounds on a homogeneous sparse file: each of S, A, H in [1, 2^16], at most 2^24
    entries (the horizon does not multiply them)."""
    _check_dims(n_states, n_actions, horizon)
    if entries > MAX_ENTRIES:
        raise ValueError(f"transitions_sparse: {entries} entries exceed dprl's limit 2^24")


def to_file(
    table: Table,
    init: Sequence[float],
    horizon: int,
    name: str,
    rewards: str = "deterministic",
    absorbing: bool = False,
    P_entries: Mapping[int, Mapping[int, Sequence[Sequence[Any]]]] | None = None,
    public_rewards: bool = True,
    public_support: bool = True,
) -> dict[str, Any]:
    """The dprl MDP file (a dict in the File schema) of a table: sparse with terminal states,
    or with ``absorbing`` the dense file with absorbing terminal states (module docstring).
    With ``P_entries`` (the Gymnasium ``P`` table) and ``public_rewards``, the reward table is
    declared public (``public_rewards: true``) when it has the form base(s, a) + entry(s')
    (:func:`decompose_rewards`; entry rewards need deterministic rewards). With
    ``public_support`` the sparse file declares its transitions' support public
    (``public_support: true``)."""
    if absorbing:
        check_size(table.n_states, table.n_actions, horizon)
    else:
        check_sparse_size(table.n_states, table.n_actions, horizon, table.entries())
    if rewards not in ("deterministic", "bernoulli"):
        raise ValueError(f"rewards: want deterministic or bernoulli, got {rewards!r}")
    if len(init) != table.n_states:
        raise ValueError(f"init: has {len(init)} entries, want {table.n_states}")
    init = [float(p) for p in init]
    if any(p < 0 or not math.isfinite(p) for p in init) or abs(math.fsum(init) - 1) > 1e-9:
        raise ValueError("init: must be a probability distribution")
    m = reward_map_for(table)
    reward = []
    for s in range(table.n_states):
        row = []
        for a in range(table.n_actions):
            if s in table.terminal:
                r = m.offset  # absorbing (or never used): the image of reward 0
            else:
                r = m.scale * table.raw_reward[s][a] + m.offset * math.fsum(table.next[s][a].values())
            row.append(_clamp01(r, f"reward[{s}][{a}]"))
        reward.append(row)
    f: dict[str, Any] = {
        "name": name,
        "states": table.n_states,
        "actions": table.n_actions,
        "horizon": horizon,
        "rewards": rewards,
        "homogeneous": True,
    }
    if absorbing:
        f.update({"init": init, "transitions": table.trans, "reward": reward, "reward_map": m.to_obj()})
        return f
    public = False
    if public_rewards:
        dec = decompose_rewards(P_entries, table) if P_entries is not None else None
        if dec is not None and (dec[1] is None or rewards == "deterministic"):
            base, entry = dec
            public = True
            reward = [
                [m.offset if s in table.terminal else _clamp01(m.scale * base[s][a] + m.offset, f"reward[{s}][{a}]")
                 for a in range(table.n_actions)]
                for s in range(table.n_states)
            ]
    for s in sorted(table.terminal):
        if init[s] > 0:
            raise ValueError(f"init: puts probability {init[s]!r} on terminal state {s} (an episode cannot start ended)")
    sparse: list[list[float]] = []
    for s in range(table.n_states):
        if s in table.terminal:
            continue
        for a in range(table.n_actions):
            sparse.extend([s, a, s2, p] for s2, p in table.row(s, a))
    if table.terminal:
        f["terminal"] = sorted(table.terminal)
        f["terminal_reward"] = _clamp01(m.offset, "terminal_reward")
    f.update({"init": init, "transitions_sparse": sparse, "reward": reward, "reward_map": m.to_obj()})
    if public:
        if entry is not None:
            f["entry_reward"] = [_clamp01(m.scale * x, f"entry_reward[{s2}]") for s2, x in enumerate(entry)]
        f["public_rewards"] = True
    if public_support:
        f["public_support"] = True
    return f


def decompose_rewards(
    P_entries: Mapping[int, Mapping[int, Sequence[Sequence[Any]]]], table: Table
) -> tuple[list[list[float]], list[float] | None] | None:
    """Write the table's rewards r(s, a, s') as base(s, a) + entry(s'), when they have that form.

    Rule 1: every live (s, a) pays one reward whatever its next state (Taxi, CliffWalking):
    base = that reward, no entry rewards (None). Rule 2: the reward depends on the next state
    only (FrozenLake's goal): base = 0, entry(s') = that reward. Otherwise None: the rewards
    cannot be published in dprl's form and the file keeps the expected reward r(s, a)."""
    S, A = table.n_states, table.n_actions
    base = [[0.0] * A for _ in range(S)]
    rule1 = True
    by_next: dict[int, float] = {}
    rule2 = True
    for s in range(S):
        if s in table.terminal:
            continue
        for a in range(A):
            rs = {float(r) for prob, _s2, r, _t in P_entries[s][a] if float(prob) > 0}
            if len(rs) > 1:
                rule1 = False
            elif rs:
                base[s][a] = rs.pop()
            for prob, s2, r, _t in P_entries[s][a]:
                if float(prob) <= 0:
                    continue
                if by_next.setdefault(int(s2), float(r)) != float(r):
                    rule2 = False
    if rule1:
        return base, None
    if rule2:
        entry = [by_next.get(s2, 0.0) for s2 in range(S)]
        return [[0.0] * A for _ in range(S)], entry
    return None


def _horizon_key(env_id: str, map_name: str | None) -> str:
    base = env_id.split("/")[-1]
    if base.startswith("FrozenLake8x8"):
        return "FrozenLake-v1/8x8"
    if base.startswith("FrozenLake"):
        return "FrozenLake-v1/" + (map_name or "4x4")
    if base.startswith("CliffWalking"):
        return "CliffWalking"
    if base.startswith("Taxi"):
        return "Taxi"
    raise ValueError(f"{env_id}: no default horizon (supported: {', '.join(SUPPORTED)}); give one")


def default_horizon(env_id: str, map_name: str | None = None, absorbing: bool = False) -> int:
    """The default H of a supported environment (module docstring); ``absorbing``: the default
    of the dense ``--absorbing`` export (Taxi 11)."""
    key = _horizon_key(env_id, map_name)
    table = ABSORBING_DEFAULT_HORIZONS if absorbing else DEFAULT_HORIZONS
    if key not in table:
        raise ValueError(f"{env_id}: no default horizon for map {map_name!r}; give one")
    return table[key]


def export_env(
    env: Any,
    horizon: int,
    name: str,
    rewards: str = "deterministic",
    absorbing: bool = False,
    public_rewards: bool = True,
    public_support: bool = True,
) -> dict[str, Any]:
    """The dprl MDP file of a Gymnasium environment with a ``P`` table (``env.unwrapped.P``).
    Its reward table is declared public unless ``public_rewards`` is false, and the support of
    its transitions unless ``public_support`` is false (the environment publishes both: an
    agent then spends no privacy budget on rewards and releases counts only inside the
    support)."""
    u = env.unwrapped
    if getattr(u, "fickle_passenger", False):
        raise ValueError("Taxi with fickle_passenger=True changes the state outside P: not exportable")
    P = getattr(u, "P", None)
    if P is None:
        raise ValueError(f"{name}: the environment has no transition table env.unwrapped.P")
    nS, nA = int(u.observation_space.n), int(u.action_space.n)
    isd = getattr(u, "initial_state_distrib", None)
    if isd is not None:
        init = [float(p) for p in isd]
    else:
        s0, _ = env.reset(seed=0)
        init = [0.0] * nS
        init[int(s0)] = 1.0
    table = table_from_p(P, nS, nA, init)
    return to_file(table, init, horizon, name, rewards, absorbing, P, public_rewards, public_support)


def make_env(
    env_id: str, map_name: str | None = None, is_slippery: bool | None = None, is_rainy: bool | None = None
) -> Any:
    """gym.make with the options that apply (map_name and is_slippery for FrozenLake,
    is_slippery for CliffWalking, is_rainy for Taxi)."""
    import gymnasium as gym  # the 'gym' extra

    kwargs: dict[str, Any] = {}
    if map_name is not None:
        if not env_id.startswith("FrozenLake"):
            raise ValueError("--map-name applies to FrozenLake only")
        kwargs["map_name"] = map_name
    if is_slippery is not None:
        if not (env_id.startswith("FrozenLake") or env_id.startswith("CliffWalking")):
            raise ValueError("--slippery applies to FrozenLake and CliffWalking only")
        kwargs["is_slippery"] = is_slippery
    if is_rainy is not None:
        if not env_id.startswith("Taxi"):
            raise ValueError("--rainy applies to Taxi only")
        kwargs["is_rainy"] = is_rainy
    return gym.make(env_id, **kwargs)


def _file_name(env_id: str, env: Any, map_name: str | None) -> str:
    parts = [env_id]
    u = env.unwrapped
    if env_id.startswith("FrozenLake"):
        parts.append(map_name or ("8x8" if "8x8" in env_id else "4x4"))
    if getattr(u, "is_slippery", False):
        parts.append("slippery")
    if getattr(u, "is_rainy", False):
        parts.append("rainy")
    return "gym-" + "-".join(parts)


def export(
    env_id: str,
    horizon: int | None = None,
    map_name: str | None = None,
    is_slippery: bool | None = None,
    rewards: str = "deterministic",
    absorbing: bool = False,
    is_rainy: bool | None = None,
    public_rewards: bool = True,
    public_support: bool = True,
) -> dict[str, Any]:
    """Make the environment and return its dprl MDP file (a dict)."""
    env = make_env(env_id, map_name, is_slippery, is_rainy)
    try:
        H = horizon if horizon is not None else default_horizon(env_id, map_name, absorbing)
        return export_env(env, H, _file_name(env_id, env, map_name), rewards, absorbing, public_rewards, public_support)
    finally:
        env.close()


def _num(x: float) -> str:
    if x == int(x) and abs(x) < 1e15:
        return str(int(x))
    return repr(float(x))


def write_json(f: dict[str, Any], path: str) -> None:
    """Write the file: one line per transition row of a dense file, one line per entry of a
    sparse one (exact doubles, shortest round-trip form)."""
    lines = ["{"]
    for key in ("name", "states", "actions", "horizon", "rewards", "homogeneous"):
        lines.append(f"  {json.dumps(key)}: {json.dumps(f[key])},")
    if "terminal" in f:
        lines.append('  "terminal": [' + ", ".join(str(int(s)) for s in f["terminal"]) + "],")
        lines.append(f'  "terminal_reward": {_num(f["terminal_reward"])},')
    lines.append(f'  "reward_map": {json.dumps(f["reward_map"])},')
    lines.append('  "init": [' + ", ".join(_num(p) for p in f["init"]) + "],")
    S = f["states"]
    if "transitions_sparse" in f:
        es = f["transitions_sparse"]
        lines.append('  "transitions_sparse": [')
        for i, (s, a, s2, p) in enumerate(es):
            lines.append(f"    [{int(s)}, {int(a)}, {int(s2)}, {_num(p)}]" + ("," if i < len(es) - 1 else ""))
        lines.append("  ],")
    else:
        lines.append('  "transitions": [')
        for s, rows in enumerate(f["transitions"]):
            inner = ",\n".join("    [" + ",".join(_num(p) for p in row) + "]" for row in rows)
            lines.append("   [\n" + inner + "\n   ]" + ("," if s < S - 1 else ""))
        lines.append("  ],")
    lines.append('  "reward": [')
    for s, row in enumerate(f["reward"]):
        lines.append("    [" + ", ".join(_num(r) for r in row) + "]" + ("," if s < S - 1 else ""))
    tail = []
    if "entry_reward" in f and "public_rewards" in f:
        tail.append('  "entry_reward": [' + ", ".join(_num(x) for x in f["entry_reward"]) + "]")
    for key in ("public_rewards", "public_support"):
        if key in f:
            tail.append(f'  {json.dumps(key)}: {json.dumps(f[key])}')
    lines.append("  ]" + ("," if tail else ""))
    lines.extend(",\n".join(tail).split("\n") if tail else [])
    lines.append("}")
    with open(path, "w", encoding="utf-8") as out:
        out.write("\n".join(lines) + "\n")


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m dprl.gym_export",
        description="Export a Gymnasium toy-text environment to dprl's tabular MDP file format.",
    )
    ap.add_argument("env_id", help=f"Gymnasium id ({', '.join(SUPPORTED)}: Taxi-v3 or -v4 as the installed release has it)")
    ap.add_argument("out", help="output .json file")
    ap.add_argument("--horizon", type=int, default=None,
                    help="horizon H (default: FrozenLake 4x4 100, 8x8 200, CliffWalking 50, Taxi 200; Taxi 11 with --absorbing)")
    ap.add_argument("--map-name", default=None, help="FrozenLake map: 4x4 (default) or 8x8")
    ap.add_argument(
        "--slippery", action=argparse.BooleanOptionalAction, default=None,
        help="FrozenLake / CliffWalking is_slippery (default: Gymnasium's: FrozenLake slippery, CliffWalking not)",
    )
    ap.add_argument("--rainy", action=argparse.BooleanOptionalAction, default=None,
                    help="Taxi is_rainy (default: Gymnasium's, not rainy)")
    ap.add_argument("--rewards", choices=("deterministic", "bernoulli"), default="deterministic",
                    help="reward kind of the file (default deterministic: the expected reward)")
    ap.add_argument("--private-rewards", action="store_true",
                    help="do not declare the reward table public (default: public when it has the form "
                         "base(s, a) + entry(s'), as every toy-text table has; agents then spend no privacy budget on rewards)")
    ap.add_argument("--private-support", action="store_true",
                    help="do not declare the transitions' support public (default: public, since Gymnasium publishes its table P; "
                         "agents then release transition counts only inside it)")
    ap.add_argument("--absorbing", action="store_true",
                    help="the format before terminal states: dense transitions, terminal states absorbing (H·S·A·S ≤ 2^24)")
    args = ap.parse_args(argv)
    try:
        f = export(args.env_id, args.horizon, args.map_name, args.slippery, args.rewards, args.absorbing, args.rainy,
                   not args.private_rewards, not args.private_support)
        write_json(f, args.out)
    except Exception as e:  # gym.make's errors included: report and exit 2, as dprl does
        print(f"dprl.gym_export: {type(e).__name__}: {e}", file=sys.stderr)
        return 2
    m = f["reward_map"]
    if "transitions_sparse" in f:
        kind = f"{len(f['transitions_sparse'])} transition entries, terminal states {f.get('terminal', [])}"
        if f.get("public_rewards"):
            kind += ", public reward table" + (" with entry rewards" if "entry_reward" in f else "")
        if f.get("public_support"):
            kind += ", public support"
    else:
        kind = "dense, terminal states absorbing"
    print(
        f"wrote {args.out}: {f['name']}, S = {f['states']}, A = {f['actions']}, H = {f['horizon']}, {kind}, "
        f"reward' = {m['scale']:.6g}·r + {m['offset']:.6g} (original range [{m['min']:g}, {m['max']:g}])"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
