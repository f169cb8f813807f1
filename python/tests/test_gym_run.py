"""dprl.gym: the exact evaluation, the played episodes, a short run through a live server and
the run directory it writes (quick; the learning checks are in test_long.py, marker long)."""

from __future__ import annotations

import csv
import hashlib
import json
import math
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from dprl import gym as dg
from dprl.server import LocalServer

gym = pytest.importorskip("gymnasium", reason="the gym extra (gymnasium) is not installed")


def test_checkpoints_mirror_dprl_run() -> None:
    assert dg.checkpoints(2000)[:3] == [4, 8, 12] and len(dg.checkpoints(2000)) == 500
    assert dg.checkpoints(300) == list(range(1, 301))
    cps = dg.checkpoints(50_000)
    assert len(cps) == 500 and cps[0] == 100 and cps[-1] == 50_000
    cps = dg.checkpoints(1234)
    assert cps[-1] == 1234 and all(b > a for a, b in zip(cps, cps[1:]))


def test_go_format_g() -> None:
    # strconv.FormatFloat(x, 'g', -1, 64), printed by Go 1.26.
    want = {0.0: "0", 1.0: "1", 123456.0: "123456", 1234567.0: "1.234567e+06", 100000.0: "100000",
            1e6: "1e+06", 0.0001: "0.0001", 0.00001: "1e-05", 1.5e-7: "1.5e-07",
            3229.778669827093: "3229.778669827093", 1e21: "1e+21", 12345678.9: "1.23456789e+07",
            5e-324: "5e-324", 1.7976931348623157e308: "1.7976931348623157e+308", 2500.5: "2500.5",
            0.000123: "0.000123", -2.5: "-2.5"}
    for x, s in want.items():
        assert dg.go_format_g(x) == s, x


def test_t_quantiles_and_ci() -> None:
    assert dg.t_quantile_975(2) == pytest.approx(4.302652729749464, abs=1e-12)
    assert dg.t_quantile_975(100) == pytest.approx(1.9839715185235522, abs=1e-6)
    m, lo, hi = dg.mean_ci([1.0, 2.0, 3.0])
    assert m == 2 and hi - m == pytest.approx(4.302652729749464 / math.sqrt(3), rel=1e-12)
    assert dg.mean_ci([5.0]) == (5.0, 5.0, 5.0)


def test_user_seeds_are_distinct() -> None:
    seeds = {dg.user_seed(s, k) for s in (1, 2, 3) for k in range(1, 20_001)}
    assert len(seeds) == 60_000 and all(0 <= x < 2**63 for x in seeds)


def _setup(env_id: str, H: int, absorbing: bool = False, **kw: Any) -> tuple[Any, dg.Tables, dict[str, Any]]:
    from dprl import gym_export as gx

    env = gym.make(env_id, **kw)
    model = gx.export_env(env, H, "t", absorbing=absorbing)
    return env, dg.Tables(model), model


def _taxi() -> str:
    from gymnasium.envs.registration import registry

    return "Taxi-v4" if "Taxi-v4" in registry else "Taxi-v3"


@pytest.mark.parametrize("absorbing", [False, True], ids=["terminal", "absorbing"])
@pytest.mark.parametrize("env_id,H,kw", [("FrozenLake-v1", 20, {}), ("CliffWalking-v1", 50, {"is_slippery": True}), ("CliffWalking-v1", 30, {})])
def test_played_episodes_have_the_exact_value(env_id: str, H: int, kw: dict[str, Any], absorbing: bool) -> None:
    """The mean mapped return of episodes played as dprl.gym plays them (env.unwrapped, mapped
    rewards; ended at ``terminated`` with the terminal reward for each step left, or absorbing
    after termination) matches V^π₁ of the exported tables: deterministic and stochastic
    rules, n = 3000 episodes each, 6 standard errors."""
    env, t, model = _setup(env_id, H, absorbing, **kw)
    rm = model["reward_map"]
    absorb = model["reward"]
    terminal = None if absorbing else frozenset(model["terminal"])
    tr = 0.0 if absorbing else float(model["terminal_reward"])
    rng = np.random.default_rng(7)
    act = rng.integers(0, t.A, size=(H, t.S))
    # bias the rule towards progress so that terminations and the absorbing tail are exercised
    act[:, : t.S // 2] = rng.integers(1, 3, size=(H, t.S // 2))
    prob = rng.dirichlet(np.ones(t.A), size=(H, t.S))
    rules = [{"Act": act.tolist(), "Prob": None}, {"Act": None, "Prob": prob.reshape(H, t.S * t.A).tolist()}]
    for rule in rules:
        n = 3000
        rets = np.empty(n)
        short = 0
        for k in range(n):
            sd = dg.user_seed(11, k + 1)
            if rule["Act"] is not None:
                st, ac, rw = dg._episode_det(env.unwrapped, rule["Act"], H, sd, absorb, rm["scale"], rm["offset"], terminal)
            else:
                st, ac, rw = dg._episode_prob(env.unwrapped, prob, H, sd, absorb, rm["scale"], rm["offset"], terminal)
            L = len(ac)
            assert len(st) == L + 1 and len(rw) == L and 1 <= L <= H
            assert all(0 <= r <= 1 for r in rw)
            if absorbing:
                assert L == H
            else:
                assert terminal is not None
                assert all(s not in terminal for s in st[:-1])
                assert L == H or st[-1] in terminal
                short += L < H
            rets[k] = sum(rw) + (H - L) * tr
        # Random rules end FrozenLake's episodes early (holes); deterministic CliffWalking's may never.
        assert absorbing or short > 0 or env_id != "FrozenLake-v1"
        v = t.value(rule)
        se = max(rets.std(ddof=1), 1e-3) / math.sqrt(n)
        assert abs(rets.mean() - v) < 6 * se, (rule["Act"] is None, rets.mean(), v, se)
    env.close()
    # The uniform policy's regret equals that of the uniform stochastic rule.
    uni = {"Act": None, "Prob": np.full((H, t.S * t.A), 1 / t.A).tolist()}
    assert t.regret(uni) == pytest.approx(t.uniform_regret(), abs=1e-12)
    assert t.v_star >= t.value(rules[0]) - 1e-12


@pytest.mark.parametrize("env_id,H,kw", [("FrozenLake-v1", 20, {}), ("FrozenLake-v1", 100, {"map_name": "8x8"}),
                                         ("CliffWalking-v1", 50, {"is_slippery": True}), ("taxi", 11, {})])
def test_terminal_and_absorbing_tables_agree(env_id: str, H: int, kw: dict[str, Any]) -> None:
    """Tables of the sparse export (terminal states) and of the absorbing dense one give the
    same V*, V^π of random rules and uniform regret (the same MDP)."""
    env_id = _taxi() if env_id == "taxi" else env_id
    _, ts, ms = _setup(env_id, H, False, **kw)
    _, ta, ma = _setup(env_id, H, True, **kw)
    assert "transitions_sparse" in ms and ts.P is None and ta.P is not None
    assert ts.v_star == pytest.approx(ta.v_star, rel=1e-12, abs=1e-12)
    assert ts.uniform_regret() == pytest.approx(ta.uniform_regret(), rel=1e-12, abs=1e-12)
    rng = np.random.default_rng(3)
    for _ in range(3):
        act = {"Act": rng.integers(0, ts.A, size=(H, ts.S)).tolist()}
        prob = {"Prob": rng.dirichlet(np.ones(ts.A), size=(H, ts.S)).reshape(H, ts.S * ts.A).tolist()}
        for rule in (act, prob):
            assert ts.value(rule) == pytest.approx(ta.value(rule), rel=1e-12, abs=1e-12)


def test_taxi_h200_tables() -> None:
    """Taxi at Gymnasium's H = 200: the sparse tables evaluate (V* of the uniform start over the
    300 initial states; the optimal policy delivers every passenger well within 200 steps)."""
    _, t, model = _setup(_taxi(), 200)
    assert model["horizon"] == 200 and t.P is None
    # Mapped: a step 0.3, delivery 1, then 1/3 per step left. Every optimal episode delivers
    # (≤ 20 steps), so V* lies between 200/3 (immediate) and 200/3 + 20·(0.3 − 1/3) − 1/3 + 1.
    assert 200 / 3 - 20 / 30 - 1e-9 <= t.v_star <= 200 / 3 + 1
    uni = {"Act": None, "Prob": np.full((200, t.S * t.A), 1 / t.A).tolist()}
    assert t.regret(uni) == pytest.approx(t.uniform_regret(), abs=1e-9) and t.uniform_regret() > 1


def test_taxi_played_episodes_return_their_exact_value() -> None:
    """Taxi is deterministic but for its initial state, so every episode dprl.gym plays at
    H = 200 returns exactly V^π₁ of its initial state (its mapped rewards, then the terminal
    reward for each step left after a delivery): the optimal rule (every episode delivers and
    ends early, worth V*) and a random one (episodes of 200 steps, illegal pick-ups and
    drop-offs), 150 users each."""
    H = 200
    env, t, model = _setup(_taxi(), H)
    rm, terminal, tr = model["reward_map"], frozenset(model["terminal"]), float(model["terminal_reward"])
    idx = np.arange(t.S)

    def values(act: np.ndarray) -> np.ndarray:
        V = np.zeros(t.S)
        for h in range(H - 1, -1, -1):
            V = (t.R + t.expect(V))[idx, act[h]]
        return V

    V, best = np.zeros(t.S), np.empty((H, t.S), dtype=np.int64)
    for h in range(H - 1, -1, -1):
        Q = t.R + t.expect(V)
        best[h], V = Q.argmax(axis=1), Q.max(axis=1)
    rng = np.random.default_rng(5)
    for name, act in (("optimal", best), ("random", rng.integers(0, t.A, size=(H, t.S)))):
        Vpi = values(act)
        assert float(t.init @ Vpi) == pytest.approx(t.value({"Act": act.tolist()}), rel=1e-12)
        if name == "optimal":
            assert float(t.init @ Vpi) == pytest.approx(t.v_star, rel=1e-12)
        rule = act.tolist()
        lengths = []
        for k in range(1, 151):
            st, ac, rw = dg._episode_det(env.unwrapped, rule, H, dg.user_seed(5, k), model["reward"], rm["scale"], rm["offset"], terminal)
            L = len(ac)
            lengths.append(L)
            assert sum(rw) + (H - L) * tr == pytest.approx(Vpi[st[0]], abs=1e-9), (name, k, st[0], L)
        if name == "optimal":
            assert max(lengths) <= 20, lengths  # every passenger delivered, the episode ended there
        else:
            assert max(lengths) == H
    env.close()


def _sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def test_run_frozenlake_writes_the_run_dir(dprl_server: LocalServer, tmp_path: Path) -> None:
    seen: list[int] = []
    res = dg.run(dprl_server, "FrozenLake-v1", users=600, seed=3, horizon=20, out=tmp_path / "run",
                 batch=128, progress=lambda done, total: seen.append(done))
    assert res.users == 600 and len(res.regret) == 600 and np.all(res.regret >= 0)
    assert seen[-1] == 600 and len(seen) == 5
    assert res.accepted == res.ledger["users_served"] == res.ledger["capacity"] == 599 and res.skipped == 1
    assert res.policy_fetches == res.policy_versions <= res.ledger["policy_version"]
    assert res.uniform_regret == pytest.approx(0.18668787654257513, rel=1e-9)  # dprl run: 0.1867
    # The ledger's simulated curve is the regret the users sent.
    assert res.ledger["simulated_regret"][-1]["cumulative_regret"] == pytest.approx(res.regret[:599].sum(), rel=1e-9)
    assert res.cumulative[-1] == pytest.approx(res.final) and res.final > 0
    d = tmp_path / "run"
    with (d / "regret_long.csv").open() as f:
        rows = list(csv.reader(f))
    assert rows[0] == ["family", "curve", "seed", "episode", "regret"]
    assert len(rows) == 1 + 500 and rows[1][:4] == ["tabular", "file/practical-jdp_eps_1", "3", "1"]
    want = res.checkpoint_regret()
    assert [int(r[3]) for r in rows[1:]] == [k for k, _ in want]
    assert [float(r[4]) for r in rows[1:]] == [v for _, v in want]  # shortest round-trip form
    man = json.loads((d / "manifest.json").read_text())
    assert man["schema"] == "dprl.run/v1" and man["family"] == "tabular"
    listed = set(man["files"])
    assert {"summary.md", "env.json", "ledger.json", "curves/file/practical-jdp_eps_1.csv", "regret-file.png", "regret-file.svg"} <= listed
    assert (d / "meta.json").exists() and (d / "config.resolved.yaml").exists() and (d / "regret_long.csv").exists()
    cfg = yaml.safe_load((d / "config.resolved.yaml").read_text())
    assert cfg["cells"][0]["spec"]["env_sha256"] == _sha(d / "env.json") and cfg["cells"][0]["cell"] == "file/practical-jdp eps=1"
    for f in man["inputs"]:
        assert _sha(d / f["path"]) == f["sha256"], f["path"]
    c = man["curves"][0]
    assert c["env"] == "file" and c["agent"] == "practical-jdp" and c["epsilon"] == 1 and c["episodes"] == 600
    assert c["final_mean"] == pytest.approx(res.final) and c["csv"] == "curves/file/practical-jdp_eps_1.csv"
    assert c["reference"] == {"kind": "uniform-policy", "regret_per_episode": pytest.approx(res.uniform_regret)}
    assert c["privacy"] == res.ledger["guarantee"] and c["privacy"]["model"] == "jdp"
    assert c["extras"]["python"]["runs"][0]["final_regret"] == pytest.approx(res.final)
    assert json.loads((d / "env.json").read_text()) == res.model
    summary = (d / "summary.md").read_text()
    assert "practical-jdp eps=1" in summary and "uniform policy: 0.1867" in summary


def test_run_dir_is_readable_with_pandas(dprl_server: LocalServer, tmp_path: Path) -> None:
    pd = pytest.importorskip("pandas", reason="pandas is not installed (optional)")
    res = [dg.run(dprl_server, "FrozenLake-v1", users=200, seed=s, horizon=20) for s in (1, 2)]
    dg.write_run_dir(tmp_path, res)
    df = pd.read_csv(tmp_path / "regret_long.csv")
    assert list(df.columns) == ["family", "curve", "seed", "episode", "regret"]
    assert sorted(df["seed"].unique()) == [1, 2] and len(df) == 400
    wide = pd.read_csv(tmp_path / "curves/file/practical-jdp_eps_1.csv")
    assert list(wide.columns) == ["episode", "seed_1", "seed_2", "mean", "ci95_lo", "ci95_hi"]


def test_run_ldp_and_a_server_of_its_own(tmp_path: Path, dprl_server: LocalServer) -> None:
    res = dg.run(dprl_server, "FrozenLake-v1", agent="practical-ldp", users=120, seed=1, horizon=20, batch=50)
    assert res.accepted == 119 and res.ledger["kind"] == "privatized"
    assert res.ledger["statement"].startswith("ldp")
    # server=None: a local server is started for the run and stopped after it.
    res2 = dg.run(None, "CliffWalking-v1", users=40, seed=2, out=tmp_path / "cliff")
    assert res2.horizon == 50 and res2.accepted == res2.ledger["capacity"]
    assert (tmp_path / "cliff" / "manifest.json").exists()


def test_write_run_dir_refuses_mixed_configurations(dprl_server: LocalServer, tmp_path: Path) -> None:
    a = dg.run(dprl_server, "FrozenLake-v1", users=30, seed=1, horizon=20)
    b = dg.run(dprl_server, "FrozenLake-v1", users=30, seed=1, horizon=21)
    with pytest.raises(ValueError):
        dg.write_run_dir(tmp_path, [a, b])
    with pytest.raises(ValueError):
        dg.write_run_dir(tmp_path, [a, a])


def _record_lengths(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    lengths: list[int] = []
    episode = dg._episode

    def recording(*args: Any, **kwargs: Any) -> tuple[list[int], list[int], list[float]]:
        st, ac, rw = episode(*args, **kwargs)
        lengths.append(len(ac))
        return st, ac, rw

    monkeypatch.setattr(dg, "_episode", recording)
    return lengths


@pytest.mark.parametrize("agent", ["practical-jdp", "practical-ldp"])
def test_run_reports_episodes_that_ended(dprl_server: LocalServer, monkeypatch: pytest.MonkeyPatch, agent: str) -> None:
    """Issue 26 (needs the Go side): users whose episode ended in a hole after L < H steps
    report those L steps — trajectories, or privatised contributions — and every report is
    accepted."""
    lengths = _record_lengths(monkeypatch)
    res = dg.run(dprl_server, "FrozenLake-v1", agent=agent, users=150, seed=5, horizon=20, batch=64)
    assert len(lengths) == 150 and min(lengths) < 20 and max(lengths) <= 20
    assert res.accepted == res.ledger["capacity"] == res.ledger["users_served"]
    assert res.model["terminal"] == [5, 7, 11, 12, 15] and "transitions_sparse" in res.model


def test_run_taxi_at_its_time_limit(dprl_server: LocalServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 26 (needs the Go side): Taxi at Gymnasium's H = 200 through the service."""
    lengths = _record_lengths(monkeypatch)
    res = dg.run(dprl_server, _taxi(), users=60, seed=1, batch=30)
    assert res.horizon == 200 and res.model["horizon"] == 200
    assert res.accepted == res.ledger["capacity"] and len(lengths) == 60
    assert np.all(res.regret >= 0) and res.uniform_regret > 0


def test_run_absorbing_model(dprl_server: LocalServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """absorbing=True: the dense file of before issue 26; every user plays and reports H steps."""
    lengths = _record_lengths(monkeypatch)
    res = dg.run(dprl_server, "FrozenLake-v1", users=120, seed=3, horizon=20, batch=64, absorbing=True)
    assert lengths == [20] * 120
    assert "transitions" in res.model and "terminal" not in res.model
    assert res.accepted == res.ledger["capacity"] == 119
    assert res.uniform_regret == pytest.approx(0.18668787654257513, rel=1e-9)  # the same MDP


def test_compare_python_run_beside_dprl_run(dprl_server: LocalServer, tmp_path: Path) -> None:
    """A Python run directory is the one schema: dprl compare takes it beside a dprl run of the
    same agent on the exported model (same environment recognised, both curves compared), and
    both manifests have the same top-level and per-curve keys."""
    res = [dg.run(dprl_server, "FrozenLake-v1", users=200, seed=s, horizon=20) for s in (1, 2)]
    py, go = tmp_path / "py", tmp_path / "go"
    dg.write_run_dir(py, res, binary=dprl_server.binary)
    run = subprocess.run([str(dprl_server.binary), "run", "--env", "file", "--env-file", str(py / "env.json"),
                          "--agent", "practical-jdp", "--epsilon", "1", "--delta", "1e-5", "--episodes", "200",
                          "--seeds", "1-2", "--quiet", "--out", str(go)], capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    cmp = subprocess.run([str(dprl_server.binary), "compare", str(py), str(go), "--json"], capture_output=True, text=True, timeout=600)
    assert cmp.returncode == 0, cmp.stderr
    names = {c["name"] for c in json.loads(cmp.stdout)["curves"]}
    assert names == {"py/file/practical-jdp_eps_1", "go/file/practical-jdp_eps_1"}, names
    mp, mg = (json.loads((d / "manifest.json").read_text()) for d in (py, go))
    assert sorted(mp) == sorted(mg) and sorted(mp["curves"][0]) == sorted(mg["curves"][0])
    assert mp["schema"] == mg["schema"] == "dprl.run/v1"
    assert mp["curves"][0]["privacy"]["model"] == mg["curves"][0]["privacy"]["model"] == "jdp"
