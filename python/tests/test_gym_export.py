"""dprl.gym_export: the exported tables reproduce Gymnasium's own step() statistics and
returns, the sparse file with terminal states is the same MDP as the absorbing dense one
(``--absorbing``, byte for byte the exporter's output before issue 26), and dprl's Go loader
accepts them (``dprl run`` on FrozenLake 4x4 and on Taxi at H = 200 exits 0).

The Gymnasium tests run under whichever release is installed: the pinned 1.2.3 (the package's
test extra) and, in .ci/run, the current 1.4.0 in a venv of its own; with
``DPRL_EXPECT_GYMNASIUM=<version>`` set, :func:`test_gymnasium_release` fails unless that
release is the one imported. Taxi is ``Taxi-v3`` or ``Taxi-v4``, whichever the release registers.

Every statistical bound is 6 standard errors with fixed seeds: the outcome is deterministic,
and a correct exporter would fail a bound with probability < 1e-8 per bound over the seeds."""

from __future__ import annotations

import hashlib
import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import dprl
from dprl import gym_export as gx

REPO = Path(__file__).resolve().parents[2]

TAXI = "taxi"  # the id is the installed release's (taxi_id())

ENVS: dict[str, dict[str, Any]] = {
    "frozenlake4x4": {"env_id": "FrozenLake-v1"},
    "frozenlake8x8": {"env_id": "FrozenLake-v1", "map_name": "8x8"},
    "cliffwalking": {"env_id": "CliffWalking-v1"},
    "cliffwalking-slippery": {"env_id": "CliffWalking-v1", "is_slippery": True},
    "taxi": {"env_id": TAXI},
    "taxi-rainy": {"env_id": TAXI, "is_rainy": True},
}

# Written down from the maps, not computed by the exporter: holes and goals, CliffWalking's
# goal (its cliff sends back to the start without terminating), Taxi's four delivered states
# encode(row, col, d, d) with (row, col) the location of d.
TERMINAL: dict[str, list[int]] = {
    "frozenlake4x4": [5, 7, 11, 12, 15],
    "frozenlake8x8": [19, 29, 35, 41, 42, 46, 49, 52, 54, 59, 63],
    "cliffwalking": [47],
    "cliffwalking-slippery": [47],
    "taxi": [0, 85, 410, 475],
    "taxi-rainy": [0, 85, 410, 475],
}
# The image of reward 0: FrozenLake [0, 1] → 0; CliffWalking [−100, 0] → 1; Taxi [−10, 20] → 1/3.
TERMINAL_REWARD = {"frozenlake4x4": 0.0, "frozenlake8x8": 0.0, "cliffwalking": 1.0, "cliffwalking-slippery": 1.0,
                   "taxi": 10 / 30, "taxi-rainy": 10 / 30}
HORIZON = {"frozenlake4x4": 100, "frozenlake8x8": 200, "cliffwalking": 50, "cliffwalking-slippery": 50,
           "taxi": 200, "taxi-rainy": 200}

# SHA-256 of the --absorbing files, written by the exporter before issue 26 (same arguments).
ABSORBING_SHA256 = {
    ("FrozenLake-v1",): "84f5c6b7afbe38ca4bf1e82fd8bcec81226f13d274fa5c82c501ad48fecfd02f",
    ("FrozenLake-v1", "--map-name", "8x8"): "ce195e9054f5f76e03bd94dac8141cd8073b705ba3b22411d7c4baea53137e35",
    ("CliffWalking-v1",): "6663d3f6e0c8eaaa976025c4312c350c8188cba5b33c7dc65cc8f3bc2fdc068d",
    ("CliffWalking-v1", "--slippery"): "f0ff73d60e80b8cff0cc1676a39ac89b1dbd89588e491609b656e0dfc16bfb1a",
    ("FrozenLake-v1", "--no-slippery", "--horizon", "7", "--rewards", "bernoulli"):
        "4946c4e81408a26e8ecabf008c1fa45cf23270594e6d4c5ecabdf9ce093b3564",
}
# Taxi-v3's (gymnasium 1.2.3), default horizon 11; Taxi-v4's file differs only in its name.
TAXI_V3_ABSORBING_SHA256 = "3da49071a41f11f2e7cb4accad28e2acae4a2c5fad80df1092ca1dfcc9de82fd"


def _gym() -> Any:
    return pytest.importorskip("gymnasium", reason="the gym extra (gymnasium) is not installed")


def taxi_id() -> str:
    """Taxi-v4 when the installed release registers it (1.3.0 and later), else Taxi-v3."""
    _gym()
    from gymnasium.envs.registration import registry

    return "Taxi-v4" if "Taxi-v4" in registry else "Taxi-v3"


def kwargs_of(key: str) -> dict[str, Any]:
    kw = dict(ENVS[key])
    if kw["env_id"] == TAXI:
        kw["env_id"] = taxi_id()
    return kw


def make(key: str) -> Any:
    kw = kwargs_of(key)
    return gx.make_env(kw["env_id"], kw.get("map_name"), kw.get("is_slippery"), kw.get("is_rainy"))


_CACHE: dict[tuple[str, bool], dict[str, Any]] = {}


def exported(key: str, absorbing: bool = False) -> dict[str, Any]:
    _gym()
    if (key, absorbing) not in _CACHE:
        _CACHE[(key, absorbing)] = gx.export(**kwargs_of(key), absorbing=absorbing)
    return _CACHE[(key, absorbing)]


def dense_of_sparse(f: dict[str, Any]) -> np.ndarray:
    """P[s, a, s'] of a sparse file (rows of terminal states left at 0)."""
    S, A = f["states"], f["actions"]
    P = np.zeros((S, A, S))
    for s, a, s2, p in f["transitions_sparse"]:
        P[s, a, s2] += p
    return P


def arrays(f: dict[str, Any]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """P, the mean reward of every (s, a) (entry rewards folded in on live rows) and init."""
    P = dense_of_sparse(f) if "transitions_sparse" in f else np.array(f["transitions"])
    return P, mean_reward(f, P), np.array(f["init"])


def mean_reward(f: dict[str, Any], P: np.ndarray) -> np.ndarray:
    """reward + Σ P(s'|s,a)·entry_reward[s'] on the rows of live states (model/tabular
    MDP.Reward); the file's reward elsewhere."""
    R = np.array(f["reward"], dtype=np.float64)
    if "entry_reward" in f:
        live = np.ones(f["states"], dtype=bool)
        live[f.get("terminal", [])] = False
        R[live] += (P @ np.array(f["entry_reward"]))[live]
    return R


def v_star(f: dict[str, Any], horizon: int | None = None) -> tuple[float, list[np.ndarray]]:
    """V*_1(init) of an exported model and the optimal (step-dependent) policy, by backward
    induction written from the file format's definition: a terminal state entered with k steps
    left is worth terminal_reward·k."""
    P, R, init = arrays(f)
    T = np.array(f.get("terminal", []), dtype=int)
    tr = float(f.get("terminal_reward", 0.0))
    H = f["horizon"] if horizon is None else horizon
    V = np.zeros(len(R))
    pol: list[np.ndarray] = []
    for k in range(1, H + 1):  # k steps left
        Q = R + P @ V
        pol.append(Q.argmax(1))
        V = Q.max(1)
        V[T] = tr * k
    pol.reverse()
    return float(init @ V), pol


# ---------------------------------------------------------------- tables without Gymnasium


def _toy() -> dict[int, dict[int, list[tuple[float, int, float, bool]]]]:
    # 3 states; state 2 is entered by terminating transitions only.
    return {
        0: {0: [(0.5, 1, -1.0, False), (0.25, 2, 4.0, True), (0.25, 1, -1.0, False)], 1: [(1.0, 0, -2.0, False)]},
        1: {0: [(1.0, 2, 4.0, True)], 1: [(1.0, 0, -1.0, False)]},
        2: {0: [(1.0, 0, 9.0, False)], 1: [(1.0, 1, 9.0, False)]},  # ignored: terminal
    }


def test_table_aggregates_duplicates_and_absorbs_terminals() -> None:
    t = gx.table_from_p(_toy(), 3, 2, [1, 0, 0])
    assert t.terminal == frozenset({2})
    assert t.trans[0][0] == [0.0, 0.75, 0.25] and t.trans[2][1] == [0.0, 0.0, 1.0]
    assert t.row(0, 0) == [(1, 0.75), (2, 0.25)]  # merged, sorted by next state
    assert (t.reward_min, t.reward_max) == (-2.0, 4.0)
    f = gx.to_file(t, [1, 0, 0], 5, "toy", absorbing=True)
    m = f["reward_map"]
    assert m == {"scale": 1 / 6, "offset": 2 / 6, "min": -2.0, "max": 4.0}
    assert f["reward"][2] == [m["offset"], m["offset"]]  # absorbing: the image of 0
    assert f["reward"][0][0] == pytest.approx((0.75 * -1 + 0.25 * 4 + 2) / 6)
    assert "terminal" not in f and "transitions_sparse" not in f


def test_sparse_file_of_a_table() -> None:
    t = gx.table_from_p(_toy(), 3, 2, [1, 0, 0])
    f = gx.to_file(t, [1, 0, 0], 5, "toy")
    assert f["terminal"] == [2] and f["terminal_reward"] == 2 / 6 == f["reward_map"]["offset"]
    assert "transitions" not in f and f["homogeneous"] is True
    # Rows of the terminal state 2 are left out; entries merged and sorted by next state.
    assert f["transitions_sparse"] == [[0, 0, 1, 0.75], [0, 0, 2, 0.25], [0, 1, 0, 1.0], [1, 0, 2, 1.0], [1, 1, 0, 1.0]]
    assert f["reward"] == gx.to_file(t, [1, 0, 0], 5, "toy", absorbing=True)["reward"]
    # V* of the sparse model (terminal worth offset per step left) is the absorbing model's.
    for H in (1, 2, 5):
        f["horizon"] = H
        fa = gx.to_file(t, [1, 0, 0], H, "toy", absorbing=True)
        assert v_star(f)[0] == pytest.approx(v_star(fa)[0], abs=1e-12)


def test_zero_is_in_the_range_only_with_terminal_states() -> None:
    P = {0: {0: [(1.0, 1, 2.0, False)]}, 1: {0: [(1.0, 0, 3.0, False)]}}
    t = gx.table_from_p(P, 2, 1, [1, 0])
    m = gx.to_file(t, [1, 0], 3, "loop", absorbing=True)["reward_map"]
    assert m == {"scale": 1.0, "offset": -2.0, "min": 2.0, "max": 3.0}
    f = gx.to_file(t, [1, 0], 3, "loop")  # no terminal state: neither terminal nor terminal_reward
    assert f["reward_map"] == m and "terminal" not in f and "terminal_reward" not in f


def test_terminal_entered_without_termination_is_refused() -> None:
    P = {0: {0: [(0.5, 1, 0.0, True), (0.5, 2, 0.0, False)]}, 1: {0: [(1.0, 1, 0.0, True)]}, 2: {0: [(1.0, 1, 0.0, False)]}}
    with pytest.raises(ValueError, match="without terminating"):
        gx.table_from_p(P, 3, 1, [1, 0, 0])
    # The same row is harmless when its state cannot be reached.
    P[0][0] = [(1.0, 1, 0.0, True)]
    assert gx.table_from_p(P, 3, 1, [1, 0, 0]).terminal == frozenset({1})


def test_init_on_a_terminal_state_is_refused() -> None:
    P = {0: {0: [(1.0, 1, 1.0, True)]}, 1: {0: [(1.0, 1, 0.0, False)]}}
    init = [0.5, 0.5]
    t = gx.table_from_p(P, 2, 1, init)
    with pytest.raises(ValueError, match="terminal state 1"):
        gx.to_file(t, init, 3, "x")
    assert gx.to_file(t, init, 3, "x", absorbing=True)["transitions"][1] == [[0.0, 1.0]]


def test_size_limit() -> None:
    gx.check_size(500, 6, 11)
    with pytest.raises(ValueError, match="largest horizon for this environment is 11"):
        gx.check_size(500, 6, 12)
    # Sparse: the horizon does not multiply the entries.
    gx.check_sparse_size(500, 6, 1 << 16, 2976)
    gx.check_sparse_size(1 << 16, 1, 1, 1 << 24)
    with pytest.raises(ValueError, match="exceed dprl's limit"):
        gx.check_sparse_size(1 << 16, 1, 1, (1 << 24) + 1)
    with pytest.raises(ValueError, match="horizon"):
        gx.check_sparse_size(500, 6, (1 << 16) + 1, 2976)


# ---------------------------------------------------------------- Gymnasium environments


def test_gymnasium_release() -> None:
    """The release under test is the one CI asked for (DPRL_EXPECT_GYMNASIUM), and registers
    the Taxi id the exporter is tested with."""
    gym = _gym()
    want = os.environ.get("DPRL_EXPECT_GYMNASIUM")
    if want:
        assert gym.__version__ == want, f"gymnasium {gym.__version__} imported, {want} expected"
    major, minor = (int(x) for x in gym.__version__.split(".")[:2])
    assert taxi_id() == ("Taxi-v4" if (major, minor) >= (1, 3) else "Taxi-v3")


@pytest.mark.parametrize("key", sorted(ENVS))
def test_file_is_valid(key: str) -> None:
    f = exported(key)
    S, A, H = f["states"], f["actions"], f["horizon"]
    assert f["homogeneous"] is True and f["rewards"] == "deterministic" and "transitions" not in f
    assert H == HORIZON[key] == gx.default_horizon(kwargs_of(key)["env_id"], ENVS[key].get("map_name"))
    assert f["terminal"] == TERMINAL[key]
    assert f["terminal_reward"] == pytest.approx(TERMINAL_REWARD[key], abs=1e-15)
    terminal = set(f["terminal"])
    R, init = np.array(f["reward"]), np.array(f["init"])
    assert R.shape == (S, A) and init.shape == (S,) and np.all((R >= 0) & (R <= 1))
    assert init.sum() == pytest.approx(1, abs=1e-12) and all(init[s] == 0 for s in terminal)
    rows: dict[tuple[int, int], list[tuple[int, float]]] = {}
    for e in f["transitions_sparse"]:
        s, a, s2, p = e
        assert all(isinstance(x, int) for x in (s, a, s2)) and 0 <= s < S and 0 <= a < A and 0 <= s2 < S, e
        assert s not in terminal and 0 < p <= 1, e
        rows.setdefault((s, a), []).append((s2, p))
    # Every live (s, a) has a row; next states strictly increase (merged); rows sum to 1.
    assert set(rows) == {(s, a) for s in range(S) if s not in terminal for a in range(A)}
    for (s, a), row in rows.items():
        nxt = [s2 for s2, _ in row]
        assert nxt == sorted(set(nxt)), (s, a, row)
        assert math.fsum(p for _, p in row) == pytest.approx(1, abs=1e-12), (s, a, row)
    m = f["reward_map"]
    lo, hi = min(m["min"], 0.0), max(m["max"], 0.0)
    assert m["scale"] * lo + m["offset"] == pytest.approx(0, abs=1e-12)
    assert m["scale"] * hi + m["offset"] == pytest.approx(1, abs=1e-12)
    assert f["terminal_reward"] == m["offset"]
    env = make(key)
    u = env.unwrapped
    np.testing.assert_array_equal(init, np.asarray(u.initial_state_distrib, dtype=float))
    assert {int(s2) for s in u.P for a in u.P[s] for p, s2, _, t in u.P[s][a] if t and p > 0} == terminal
    env.close()


@pytest.mark.parametrize("key", sorted(ENVS))
def test_sparse_is_the_absorbing_mdp(key: str) -> None:
    """The sparse file and the --absorbing dense file describe the same MDP: the same
    transitions (bit for bit) on every non-terminal row, absorbing terminal rows earning the
    terminal reward in the dense one, the same rewards, init and map, and the same V*."""
    f, fa = exported(key), exported(key, absorbing=True)
    assert "terminal" not in fa and "transitions_sparse" not in fa and fa["name"] == f["name"]
    assert fa["horizon"] == gx.default_horizon(kwargs_of(key)["env_id"], ENVS[key].get("map_name"), absorbing=True)
    Pa = np.array(fa["transitions"])
    Ps = dense_of_sparse(f)
    S = f["states"]
    T = np.zeros(S, dtype=bool)
    T[f["terminal"]] = True
    assert np.array_equal(Pa[~T], Ps[~T])
    for t in f["terminal"]:
        assert np.all(Pa[t, :, t] == 1) and np.all(Pa[t].sum(1) == 1)
        assert fa["reward"][t] == [f["terminal_reward"]] * f["actions"]
    assert np.array_equal(np.array(fa["reward"])[~T], mean_reward(f, Ps)[~T])
    assert fa["init"] == f["init"] and fa["reward_map"] == f["reward_map"]
    for H in sorted({1, 5, fa["horizon"]}):
        assert v_star(f, H)[0] == pytest.approx(v_star(fa, H)[0], rel=1e-12, abs=1e-12), H


# (s, a) pairs whose step() statistics are checked: starts, cliffs, holes, goals, pick-ups,
# drop-offs; slippery and rainy ones have several outcomes.
def _pairs(key: str, u: Any) -> list[tuple[int, int]]:
    if key == "frozenlake4x4":
        return [(0, 0), (0, 2), (6, 1), (10, 1), (14, 2), (13, 3)]
    if key == "frozenlake8x8":
        return [(0, 1), (62, 2), (55, 1), (41 - 8, 1)]
    if key.startswith("cliffwalking"):
        return [(36, 1), (36, 0), (35, 2), (24, 2), (47 - 12, 1)]
    # Taxi (row, col, passenger, destination); actions 0-3 move, 4 pick up, 5 drop off.
    pairs = [
        (u.encode(0, 0, 0, 1), 4),  # legal pick-up
        (u.encode(0, 1, 0, 1), 4),  # illegal pick-up (-10)
        (u.encode(0, 4, 4, 1), 5),  # delivery (+20, terminates)
        (u.encode(2, 2, 4, 3), 5),  # illegal drop-off
        (u.encode(3, 1, 2, 0), 1),  # a move
    ]
    if key == "taxi-rainy":  # moves beside walls and edges, where v3 and v4 differ
        pairs += [(u.encode(0, 1, 0, 1), 0), (u.encode(0, 0, 0, 1), 2), (u.encode(1, 1, 2, 0), 3), (u.encode(4, 0, 4, 2), 1)]
    return pairs


@pytest.mark.parametrize("key", sorted(ENVS))
def test_step_statistics_match_the_table(key: str) -> None:
    f = exported(key)
    P, R, _ = arrays(f)
    terminal = set(f["terminal"])
    m = f["reward_map"]
    env = make(key)
    u = env.unwrapped
    u.reset(seed=20240611)
    n = 20000
    for s, a in _pairs(key, u):
        assert s not in terminal
        counts = np.zeros(f["states"])
        mapped = np.empty(n)
        for i in range(n):
            u.s = s
            s2, r, term, _trunc, _ = u.step(a)
            counts[s2] += 1
            mapped[i] = m["scale"] * r + m["offset"]
            assert bool(term) == (s2 in terminal), (key, s, a, s2, term)
        p = P[s, a]
        # Next states: each count within 6 binomial standard errors; impossible ones never.
        assert np.all(counts[p == 0] == 0), (key, s, a)
        se = np.sqrt(n * p * (1 - p))
        assert np.all(np.abs(counts - n * p) <= 6 * se + 1e-9), (key, s, a, counts, n * p)
        # Pearson chi-square over the possible next states, far below a 6-sigma bound.
        k = p > 0
        chi2 = float(np.sum((counts[k] - n * p[k]) ** 2 / (n * p[k])))
        df = max(int(k.sum()) - 1, 1)
        assert chi2 <= df + 6 * math.sqrt(2 * df) + 10, (key, s, a, chi2)
        # Mean mapped reward: 6 standard errors (exact when the reward is deterministic).
        sd = float(mapped.std(ddof=1))
        assert abs(float(mapped.mean()) - R[s, a]) <= 6 * sd / math.sqrt(n) + 1e-12, (key, s, a)
    env.close()


@pytest.mark.parametrize("key", ["frozenlake4x4", "cliffwalking", "taxi", "taxi-rainy"])
def test_gym_returns_match_v_star(key: str) -> None:
    """Gymnasium episodes under the exported model's optimal policy, ended at ``terminated``
    (L steps) or truncated at H: their mapped return plus the terminal reward for each of the
    H − L steps left averages V*_1(init); L < H only in a terminal state."""
    f = exported(key)
    m = f["reward_map"]
    H, tr, terminal = f["horizon"], f["terminal_reward"], set(f["terminal"])
    v, pol = v_star(f)
    env = make(key)
    u = env.unwrapped
    n = 4000
    rets = np.empty(n)
    ended = 0
    for i in range(n):
        s, _ = u.reset(seed=1000 + i)
        ret = 0.0
        L = H
        for h in range(H):
            s, r, term, _, _ = u.step(int(pol[h][s]))
            ret += m["scale"] * r + m["offset"]
            if term:
                L = h + 1
                break
        if L < H:
            assert s in terminal
            ended += 1
        rets[i] = ret + (H - L) * tr
    assert ended > 0, key
    sd = float(rets.std(ddof=1))
    assert abs(float(rets.mean()) - v) <= 6 * sd / math.sqrt(n) + 1e-9, (key, rets.mean(), v)
    env.close()


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    # The package as imported here (installed or not) is the one the subprocess runs.
    env = dict(os.environ)
    root = str(Path(dprl.__file__).resolve().parents[1])
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return subprocess.run([sys.executable, "-m", "dprl.gym_export", *args], capture_output=True, text=True, env=env)


def test_cli_writes_a_file_and_refuses_bad_input(tmp_path: Path) -> None:
    _gym()
    out = tmp_path / "fl.json"
    r = _cli("FrozenLake-v1", str(out))
    assert r.returncode == 0, r.stderr
    f = json.loads(out.read_text())
    assert f == json.loads(json.dumps(exported("frozenlake4x4")))
    r = _cli(taxi_id(), str(tmp_path / "taxi.json"))
    assert r.returncode == 0, r.stderr
    assert json.loads((tmp_path / "taxi.json").read_text()) == json.loads(json.dumps(exported("taxi")))
    r = _cli(taxi_id(), str(tmp_path / "t.json"), "--horizon", "12", "--absorbing")
    assert r.returncode == 2 and "largest horizon for this environment is 11" in r.stderr
    assert not (tmp_path / "t.json").exists()
    r = _cli(taxi_id(), str(tmp_path / "t.json"), "--horizon", str((1 << 16) + 1))
    assert r.returncode == 2 and "horizon: must be in [1, 65536]" in r.stderr
    r = _cli("FrozenLake-v1", str(tmp_path / "t.json"), "--rainy")
    assert r.returncode == 2 and "--rainy applies to Taxi only" in r.stderr
    # The Taxi id the installed release does not provide is refused by gym.make (exit 2).
    other = "Taxi-v3" if taxi_id() == "Taxi-v4" else "Taxi-v4"
    r = _cli(other, str(tmp_path / "t.json"))
    assert r.returncode == 2 and "dprl.gym_export:" in r.stderr and not (tmp_path / "t.json").exists()


def test_public_support_is_declared_unless_private(tmp_path: Path) -> None:
    """The exporter declares the transitions' support public by default (Gymnasium publishes P)
    and --private-support writes the same file without it; the support the Python user computes
    (ldp.support_of) is the non-zero pattern of transitions_sparse, terminal rows empty."""
    _gym()
    from dprl import ldp

    on, off = tmp_path / "on.json", tmp_path / "off.json"
    assert _cli("FrozenLake8x8-v1", str(on)).returncode == 0
    r = _cli("FrozenLake8x8-v1", str(off), "--private-support")
    assert r.returncode == 0, r.stderr
    f, g = json.loads(on.read_text()), json.loads(off.read_text())
    assert f.get("public_support") is True and "public_support" not in g
    assert {k: v for k, v in f.items() if k != "public_support"} == g
    assert "public support" in _cli("FrozenLake-v1", str(tmp_path / "x.json")).stdout
    assert gx.export("FrozenLake-v1", absorbing=True).get("public_support") is None
    sup = ldp.support_of(f)
    A = f["actions"]
    for s, a, s2, _p in f["transitions_sparse"]:
        assert s2 in sup[s * A + a]
    assert sum(len(r) for r in sup) == len(f["transitions_sparse"])
    assert all(sup[t * A + a] == () for t in f["terminal"] for a in range(A))
    assert all(3 >= len(r) >= 1 for c, r in enumerate(sup) if c // A not in f["terminal"])


def test_fickle_passenger_is_refused() -> None:
    _gym()
    env = gx.make_env(taxi_id())
    env.close()
    import gymnasium as gym

    env = gym.make(taxi_id(), fickle_passenger=True)
    with pytest.raises(ValueError, match="fickle_passenger"):
        gx.export_env(env, 10, "x")
    env.close()


@pytest.mark.parametrize("args", sorted(ABSORBING_SHA256), ids=lambda a: "-".join(a))
def test_absorbing_files_are_the_old_ones(args: tuple[str, ...], tmp_path: Path) -> None:
    _gym()
    out = tmp_path / "old.json"
    r = _cli(args[0], str(out), *args[1:], "--absorbing")
    assert r.returncode == 0, r.stderr
    assert hashlib.sha256(out.read_bytes()).hexdigest() == ABSORBING_SHA256[args]


def test_absorbing_taxi_is_the_old_one(tmp_path: Path) -> None:
    _gym()
    out = tmp_path / "taxi.json"
    r = _cli(taxi_id(), str(out), "--absorbing")
    assert r.returncode == 0, r.stderr
    data = out.read_bytes()
    if taxi_id() == "Taxi-v4":  # the same file but for its name
        data = data.replace(b'"name": "gym-Taxi-v4"', b'"name": "gym-Taxi-v3"', 1)
    assert hashlib.sha256(data).hexdigest() == TAXI_V3_ABSORBING_SHA256
    assert json.loads(out.read_text())["horizon"] == 11


# ---------------------------------------------------------------- dprl's Go loader


@pytest.fixture(scope="module")
def dprl_binary(tmp_path_factory: pytest.TempPathFactory) -> Path:
    go = shutil.which("go")
    if go is None:
        pytest.skip("`go` is not on PATH: cannot run dprl's Go binary")
    if not (REPO / "go.mod").exists():
        pytest.skip(f"{REPO} is not the dprl Go repository")
    out = tmp_path_factory.mktemp("bin") / "dprl"
    r = subprocess.run([go, "build", "-o", str(out), "./cmd/dprl"], cwd=REPO, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr
    return out


def _run(binary: Path, env_file: Path, out: Path, episodes: int = 2000) -> subprocess.CompletedProcess[str]:
    cmd = [str(binary), "run", "--family", "tabular", "--env", "file", "--env-file", str(env_file),
           "--agent", "practical-jdp", "--epsilon", "1", "--delta", "1e-5", "--episodes", str(episodes),
           "--seeds", "1", "--out", str(out), "--quiet"]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600)


def _check_run(r: subprocess.CompletedProcess[str], out: Path, episodes: int) -> None:
    assert r.returncode == 0, r.stderr
    assert (out / "manifest.json").exists()
    # The last line of the regret curve: episode K, a finite cumulative regret.
    last = (out / "regret_long.csv").read_text().strip().splitlines()[-1].split(",")
    assert last[-2] == str(episodes) and math.isfinite(float(last[-1]))


@pytest.mark.parametrize("absorbing", [False, True], ids=["sparse", "absorbing"])
def test_dprl_runs_on_exported_frozenlake(dprl_binary: Path, tmp_path: Path, absorbing: bool) -> None:
    env_file = tmp_path / "frozenlake4x4.json"
    gx.write_json(exported("frozenlake4x4", absorbing), str(env_file))
    _check_run(_run(dprl_binary, env_file, tmp_path / "run"), tmp_path / "run", 2000)


def test_dprl_runs_on_exported_taxi_h200(dprl_binary: Path, tmp_path: Path) -> None:
    """Issue 26: Taxi at Gymnasium's H = 200 loads, plans and runs."""
    f = exported("taxi")
    assert f["horizon"] == 200
    env_file = tmp_path / "taxi.json"
    gx.write_json(f, str(env_file))
    _check_run(_run(dprl_binary, env_file, tmp_path / "run", episodes=300), tmp_path / "run", 300)


def test_dprl_refuses_a_bad_reward_map(dprl_binary: Path, tmp_path: Path) -> None:
    f = json.loads(json.dumps(exported("frozenlake4x4", absorbing=True)))
    f["reward_map"]["note"] = "unknown field"
    env_file = tmp_path / "bad.json"
    env_file.write_text(json.dumps(f))
    r = _run(dprl_binary, env_file, tmp_path / "run", episodes=10)
    assert r.returncode == 2 and 'unknown field "note"' in r.stderr, r.stderr


@pytest.mark.parametrize("env_id,name", [("FrozenLake-v1", "frozenlake4x4"), ("FrozenLake8x8-v1", "frozenlake8x8"),
                                         ("CliffWalking-v1", "cliffwalking"), ("Taxi-v3", "taxi")])
def test_embedded_benchmark_files_are_the_exporters(env_id: str, name: str, tmp_path: Any) -> None:
    """model/tabular/gymenvs embeds the benchmark environments (dprl run --env taxi, dprl
    reproduce benchmarks): each file is byte for byte what ``python -m dprl.gym_export ENV_ID``
    writes under the pinned gymnasium (Taxi-v3 there; Taxi-v4 of 1.4.0 has the same table)."""
    import gymnasium

    if gymnasium.__version__ != "1.2.3":
        pytest.skip("the embedded files are those of the pinned gymnasium 1.2.3")
    out = tmp_path / f"{name}.json"
    assert gx.main([env_id, str(out)]) == 0
    repo = Path(__file__).resolve().parents[2]
    assert out.read_bytes() == (repo / "model" / "tabular" / "gymenvs" / f"{name}.json").read_bytes()
