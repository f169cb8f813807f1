"""dprl.gym_export: the exported tables reproduce Gymnasium's own step() statistics and
returns, and dprl's Go loader accepts them (``dprl run`` on FrozenLake 4x4 exits 0).

Every statistical bound is 6 standard errors with fixed seeds: the outcome is deterministic,
and a correct exporter would fail a bound with probability < 1e-8 per bound over the seeds."""

from __future__ import annotations

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

ENVS: dict[str, dict[str, Any]] = {
    "frozenlake4x4": {"env_id": "FrozenLake-v1"},
    "frozenlake8x8": {"env_id": "FrozenLake-v1", "map_name": "8x8"},
    "cliffwalking": {"env_id": "CliffWalking-v1"},
    "cliffwalking-slippery": {"env_id": "CliffWalking-v1", "is_slippery": True},
    "taxi": {"env_id": "Taxi-v3"},
}


def _gym() -> Any:
    return pytest.importorskip("gymnasium", reason="the gym extra (gymnasium) is not installed")


_CACHE: dict[str, dict[str, Any]] = {}


def exported(key: str) -> dict[str, Any]:
    _gym()
    if key not in _CACHE:
        _CACHE[key] = gx.export(**ENVS[key])
    return _CACHE[key]


def arrays(f: dict[str, Any]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return np.array(f["transitions"]), np.array(f["reward"]), np.array(f["init"])


def v_star(f: dict[str, Any]) -> tuple[float, list[np.ndarray]]:
    """V*_1(init) of the exported model and the optimal (step-dependent) policy."""
    P, R, init = arrays(f)
    V = np.zeros(len(R))
    pol: list[np.ndarray] = []
    for _ in range(f["horizon"]):
        Q = R + P @ V
        pol.append(Q.argmax(1))
        V = Q.max(1)
    pol.reverse()
    return float(init @ V), pol


# ---------------------------------------------------------------- tables without Gymnasium


def test_table_aggregates_duplicates_and_absorbs_terminals() -> None:
    # 3 states; state 2 is entered by terminating transitions only.
    P = {
        0: {0: [(0.5, 1, -1.0, False), (0.25, 1, -1.0, False), (0.25, 2, 4.0, True)], 1: [(1.0, 0, -2.0, False)]},
        1: {0: [(1.0, 2, 4.0, True)], 1: [(1.0, 0, -1.0, False)]},
        2: {0: [(1.0, 0, 9.0, False)], 1: [(1.0, 1, 9.0, False)]},  # ignored: terminal
    }
    t = gx.table_from_p(P, 3, 2, [1, 0, 0])
    assert t.terminal == frozenset({2})
    assert t.trans[0][0] == [0.0, 0.75, 0.25] and t.trans[2][1] == [0.0, 0.0, 1.0]
    assert (t.reward_min, t.reward_max) == (-2.0, 4.0)
    f = gx.to_file(t, [1, 0, 0], 5, "toy")
    m = f["reward_map"]
    assert m == {"scale": 1 / 6, "offset": 2 / 6, "min": -2.0, "max": 4.0}
    assert f["reward"][2] == [m["offset"], m["offset"]]  # absorbing: the image of 0
    assert f["reward"][0][0] == pytest.approx((0.75 * -1 + 0.25 * 4 + 2) / 6)


def test_zero_is_in_the_range_only_with_terminal_states() -> None:
    P = {0: {0: [(1.0, 1, 2.0, False)]}, 1: {0: [(1.0, 0, 3.0, False)]}}
    m = gx.to_file(gx.table_from_p(P, 2, 1, [1, 0]), [1, 0], 3, "loop")["reward_map"]
    assert m == {"scale": 1.0, "offset": -2.0, "min": 2.0, "max": 3.0}


def test_terminal_entered_without_termination_is_refused() -> None:
    P = {0: {0: [(0.5, 1, 0.0, True), (0.5, 2, 0.0, False)]}, 1: {0: [(1.0, 1, 0.0, True)]}, 2: {0: [(1.0, 1, 0.0, False)]}}
    with pytest.raises(ValueError, match="without terminating"):
        gx.table_from_p(P, 3, 1, [1, 0, 0])
    # The same row is harmless when its state cannot be reached.
    P[0][0] = [(1.0, 1, 0.0, True)]
    assert gx.table_from_p(P, 3, 1, [1, 0, 0]).terminal == frozenset({1})


def test_size_limit() -> None:
    gx.check_size(500, 6, 11)
    with pytest.raises(ValueError, match="largest horizon for this environment is 11"):
        gx.check_size(500, 6, 12)


# ---------------------------------------------------------------- Gymnasium environments


@pytest.mark.parametrize("key", sorted(ENVS))
def test_file_is_valid(key: str) -> None:
    f = exported(key)
    P, R, init = arrays(f)
    S, A, H = f["states"], f["actions"], f["horizon"]
    assert P.shape == (S, A, S) and R.shape == (S, A) and init.shape == (S,)
    assert f["homogeneous"] is True and f["rewards"] == "deterministic"
    assert H == gx.default_horizon(ENVS[key]["env_id"], ENVS[key].get("map_name"))
    assert np.all(P >= 0) and np.allclose(P.sum(2), 1, atol=1e-12)
    assert np.all((R >= 0) & (R <= 1))
    assert init.sum() == pytest.approx(1, abs=1e-12)
    m = f["reward_map"]
    lo, hi = min(m["min"], 0.0), max(m["max"], 0.0)
    assert m["scale"] * lo + m["offset"] == pytest.approx(0, abs=1e-12)
    assert m["scale"] * hi + m["offset"] == pytest.approx(1, abs=1e-12)
    env = gx.make_env(ENVS[key]["env_id"], ENVS[key].get("map_name"), ENVS[key].get("is_slippery"))
    u = env.unwrapped
    np.testing.assert_array_equal(init, np.asarray(u.initial_state_distrib, dtype=float))
    terminal = {int(s2) for s in u.P for a in u.P[s] for p, s2, _, t in u.P[s][a] if t and p > 0}
    assert terminal, key
    for s in terminal:  # absorbing, earning the image of reward 0
        assert np.all(P[s, :, s] == 1) and np.all(R[s] == m["offset"])
    env.close()


# (s, a) pairs whose step() statistics are checked: starts, cliffs, holes, goals, pick-ups,
# drop-offs; slippery ones have several outcomes.
def _pairs(key: str, u: Any) -> list[tuple[int, int]]:
    if key == "frozenlake4x4":
        return [(0, 0), (0, 2), (6, 1), (10, 1), (14, 2), (13, 3)]
    if key == "frozenlake8x8":
        return [(0, 1), (62, 2), (55, 1), (41, 0)]
    if key.startswith("cliffwalking"):
        return [(36, 1), (36, 0), (35, 2), (24, 2), (47 - 12, 1)]
    # Taxi (row, col, passenger, destination); actions 0-3 move, 4 pick up, 5 drop off.
    return [
        (u.encode(0, 0, 0, 1), 4),  # legal pick-up
        (u.encode(0, 1, 0, 1), 4),  # illegal pick-up (-10)
        (u.encode(0, 4, 4, 1), 5),  # delivery (+20, terminates)
        (u.encode(2, 2, 4, 3), 5),  # illegal drop-off
        (u.encode(3, 1, 2, 0), 1),  # a move
    ]


@pytest.mark.parametrize("key", sorted(ENVS))
def test_step_statistics_match_the_table(key: str) -> None:
    f = exported(key)
    P, R, _ = arrays(f)
    m = f["reward_map"]
    env = gx.make_env(ENVS[key]["env_id"], ENVS[key].get("map_name"), ENVS[key].get("is_slippery"))
    u = env.unwrapped
    u.reset(seed=20240611)
    n = 20000
    for s, a in _pairs(key, u):
        counts = np.zeros(f["states"])
        mapped = np.empty(n)
        for i in range(n):
            u.s = s
            s2, r, _term, _trunc, _ = u.step(a)
            counts[s2] += 1
            mapped[i] = m["scale"] * r + m["offset"]
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


@pytest.mark.parametrize("key", ["frozenlake4x4", "cliffwalking", "taxi"])
def test_gym_returns_match_v_star(key: str) -> None:
    """Gymnasium episodes (truncated at H) under the exported model's optimal policy: their
    mapped return, with the absorbing reward after termination, averages V*_1(init)."""
    f = exported(key)
    m = f["reward_map"]
    H = f["horizon"]
    v, pol = v_star(f)
    env = gx.make_env(ENVS[key]["env_id"], ENVS[key].get("map_name"), ENVS[key].get("is_slippery"))
    u = env.unwrapped
    n = 4000
    rets = np.empty(n)
    for i in range(n):
        s, _ = u.reset(seed=1000 + i)
        ret = 0.0
        for h in range(H):
            s, r, term, _, _ = u.step(int(pol[h][s]))
            ret += m["scale"] * r + m["offset"]
            if term:
                ret += (H - h - 1) * m["offset"]
                break
        rets[i] = ret
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
    r = _cli("Taxi-v3", str(tmp_path / "t.json"), "--horizon", "12")
    assert r.returncode == 2 and "largest horizon for this environment is 11" in r.stderr
    assert not (tmp_path / "t.json").exists()


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


def test_dprl_runs_on_exported_frozenlake(dprl_binary: Path, tmp_path: Path) -> None:
    env_file = tmp_path / "frozenlake4x4.json"
    gx.write_json(exported("frozenlake4x4"), str(env_file))
    r = _run(dprl_binary, env_file, tmp_path / "run")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "run" / "manifest.json").exists()
    # The last line of the regret curve: episode K, a finite cumulative regret.
    last = (tmp_path / "run" / "regret_long.csv").read_text().strip().splitlines()[-1].split(",")
    assert last[-2] == "2000" and math.isfinite(float(last[-1]))


def test_dprl_refuses_a_bad_reward_map(dprl_binary: Path, tmp_path: Path) -> None:
    f = json.loads(json.dumps(exported("frozenlake4x4")))
    f["reward_map"]["note"] = "unknown field"
    env_file = tmp_path / "bad.json"
    env_file.write_text(json.dumps(f))
    r = _run(dprl_binary, env_file, tmp_path / "run", episodes=10)
    assert r.returncode == 2 and 'unknown field "note"' in r.stderr, r.stderr
