"""Long check (marker ``long``), issue 26 item 6: Gymnasium Taxi played from Python through
``dprl serve`` learns like ``dprl run`` on its export.

Taxi (Taxi-v3 of the pinned gymnasium, Taxi-v4 from 1.3.0) at Gymnasium's own time limit
H = 200, S = 500, A = 6, with its terminal states; Gymnasium users played by :func:`dprl.gym.run`
against a ``dprl serve --seeded`` (test mode: experiment seed s for Python seed s, so the
curator draws its noise and tie-breaks as ``dprl run --seeds s`` does), seeds 1–3, compared
with ``dprl run --env file --env-file <the run's env.json>`` on the same seeds. Two settings:

* **practical-jdp** at (ε, δ) = (1, 1e-5) on the default export — byte for byte the embedded
  ``model/tabular/gymenvs/taxi.json`` (``dprl run --env taxi``): terminal states, public reward
  table and public support — K = 500;
* **practical-ucbvi**, its non-private twin (the same agent on exact counts), on the export
  with a private support (``public_support=False``: Taxi is deterministic, so its support *is*
  its transition function and, with the public rewards, would make the whole model public:
  nothing left to learn from the users), K = 4 000, where it learns Taxi's dynamics from the
  users (``dprl run``, seeds 1–6: regret per episode from ≈ 6.4, 25 % of the uniform policy's,
  in the first decile to 0.01–0.04 in the last).

What is exact, and asserted so:

* the model the Python run serves is the embedded file (every field but its name), so ``dprl
  run`` on the run's ``env.json`` is ``dprl run --env taxi``;
* the uniform policy's regret per episode, evaluated by Python (numpy backward induction on
  the sparse tables, :class:`dprl.gym.Tables`) and by Go, agree to 1e-9;
* the served curator is ``dprl run``'s given the same users: the Go long check
  ``TestServeSameAsRunBenchmarks`` (cmd/dprl) shows it bit for bit on this Taxi, for both
  agents, with dprl's own simulated users.

What is statistical: the users. Taxi's only randomness is a user's initial state (300 equally
likely); Gymnasium draws it with its own generator, reset with :func:`dprl.gym.user_seed` (s,
k), ``dprl run``'s simulator from its stream of seed s. Different users visit different
states, so the counts, the policies and the moment the twin learns differ; the two R(K) have
the same distribution, not the same value. Asserted: the mean R(K) over seeds 1–3 of the
Python runs and of ``dprl run`` are equal by a two-sample Welch test at 95 %
(:func:`agreement.assert_same_mean`). The Python users are played one per batch (``batch=1``):
each user then plays the policy published after her predecessor's report, as ``dprl run``'s
user k does, so the users' draws are the only difference. With the runner's default batches
of 256, all users of a batch play the policy cached when it starts; on the twin that lowered
R(K) by ≈ 9 % (measured, seeds 1–3: mean 16 561 against 18 130 for ``dprl run``; batches of 32:
18 469; one at a time: 19 081), a systematic difference this check would otherwise have to
tolerate.

For practical-jdp at this K the comparison is exact in effect: its policies all have the
initial policy's regret (6.1977 per episode, 23.9 % of the uniform policy's, on every seed and
both sides), the two sides have no spread and the Welch check asks for equality. That is not
learning: with Taxi's support and rewards public its model is public, and the policy is that
good from the first user; within minutes practical-jdp does not learn Taxi at ε = 1
(``dprl run``: regret per episode 6.2 until ≈ 5 000 users, 6.7 by 2·10⁴; docs/benchmarks.md:
17.9 % of uniform at 10⁵). Asserted for the twin: it learns through the service — last-decile
regret per episode (mean over seeds) ≤ 5 % of the uniform policy's and ≤ a quarter of the
first decile's. The figures are printed at the end (``test_print_taxi_table``).

Power: with three seeds a side, the Welch half-width on the twin is ≈ 3 300 (measured R(K):
Python 19 081 [18 135, 20 026], ``dprl run`` 18 130 [14 992, 21 269]), so a shift of ≈ 17 % is
caught (users playing another environment than the exported one, or reports the curator
cannot learn from: the twin then learns late or never), not the default batches' ≈ 9 %. Duration: ≈ 3.7 min on the 2 shared cores
at a load average of 12 (the Python users are played at 30–80 episodes/s one request each,
bound by Gymnasium's Taxi ``step`` and the server's commit per request)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from dprl import gym as dg
from dprl.server import LocalServer

from agreement import assert_same_mean, dprl_run

pytestmark = pytest.mark.long
gym = pytest.importorskip("gymnasium", reason="the gym extra (gymnasium) is not installed")

SEEDS = (1, 2, 3)
SETTINGS: dict[str, dict[str, Any]] = {
    "practical-jdp eps=1, public support (the embedded taxi)": {"agent": "practical-jdp", "epsilon": 1.0, "K": 500, "kw": {}},
    "practical-ucbvi (non-private twin), private support": {"agent": "practical-ucbvi", "epsilon": 0.0, "K": 4000,
                                                            "kw": {"public_support": False}},
}
TWIN = "practical-ucbvi (non-private twin), private support"

_RESULTS: dict[str, dict[str, Any]] = {}


def _taxi() -> str:
    from gymnasium.envs.registration import registry

    return "Taxi-v4" if "Taxi-v4" in registry else "Taxi-v3"


@pytest.fixture(scope="module")
def seeded_server() -> Iterator[LocalServer]:
    with LocalServer(seeded=True) as srv:
        yield srv


@pytest.fixture(scope="module")
def results(seeded_server: LocalServer, tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    if _RESULTS:
        return _RESULTS
    for name, st in SETTINGS.items():
        d = tmp_path_factory.mktemp("taxi")
        runs = [dg.run(seeded_server, _taxi(), agent=st["agent"], epsilon=st["epsilon"], delta=1e-5, users=st["K"], seed=s,
                       experiment_seed=s, batch=1, **st["kw"]) for s in SEEDS]
        dg.write_run_dir(d / "py", runs, binary=seeded_server.binary)
        go = dprl_run(seeded_server.binary, d / "py" / "env.json", d / "go", st["agent"], st["epsilon"], st["K"], SEEDS)
        _RESULTS[name] = {"runs": runs, "go": go, "K": st["K"], "dir": d}
    return _RESULTS


def test_taxi_serves_the_embedded_model(results: dict[str, dict[str, Any]]) -> None:
    """The default export the Python run serves is model/tabular/gymenvs/taxi.json (but for its
    name: Taxi-v4's file is Taxi-v3's), at H = 200 with its terminal states."""
    repo = Path(__file__).resolve().parents[2]
    embedded = json.loads((repo / "model" / "tabular" / "gymenvs" / "taxi.json").read_text())
    model = json.loads((results[next(iter(SETTINGS))]["dir"] / "py" / "env.json").read_text())
    assert model["horizon"] == 200 and model["terminal"] == [0, 85, 410, 475]
    assert {k: v for k, v in model.items() if k != "name"} == {k: v for k, v in embedded.items() if k != "name"}
    twin = results[TWIN]["runs"][0].model
    assert twin.get("public_support", False) is False and "transitions_sparse" in twin


@pytest.mark.parametrize("name", list(SETTINGS))
def test_taxi_exact_values_agree(results: dict[str, dict[str, Any]], name: str) -> None:
    res = results[name]
    for r in res["runs"]:
        assert r.horizon == 200 and r.accepted == r.ledger["capacity"]
        assert r.uniform_regret == pytest.approx(res["go"]["uniform"], rel=1e-9)


@pytest.mark.parametrize("name", list(SETTINGS))
def test_taxi_agrees_with_dprl_run(results: dict[str, dict[str, Any]], name: str) -> None:
    res = results[name]
    assert_same_mean([r.final for r in res["runs"]], res["go"]["finals"], f"Taxi, {name}")


def _decile(regret: np.ndarray, first: bool) -> float:
    n = len(regret) // 10
    return float(regret[:n].mean() if first else regret[len(regret) - n:].mean())


def test_taxi_twin_learns_through_the_service(results: dict[str, dict[str, Any]]) -> None:
    runs = results[TWIN]["runs"]
    u = runs[0].uniform_regret
    first = float(np.mean([_decile(r.regret, True) for r in runs]))
    last = float(np.mean([r.last_decile for r in runs]))
    assert last <= 0.05 * u, f"last-decile regret {last:.4f} per episode, {last / u:.1%} of the uniform policy's"
    assert last <= first / 4, f"last decile {last:.4f} against the first decile's {first:.4f}: not learning"


def _go_decile(curve: dict[int, float], K: int) -> float:
    """dprl run's mean regret per episode over the first tenth of the users (its checkpoints)."""
    e = max(k for k in curve if k <= K // 10)
    return curve[e] / e


def test_print_taxi_table(results: dict[str, dict[str, Any]], capsys: pytest.CaptureFixture[str]) -> None:
    u = results[next(iter(SETTINGS))]["runs"][0].uniform_regret
    lines = [
        f"Taxi (H=200) through dprl serve --seeded (batch 1) vs dprl run, seeds 1-3; uniform policy {u:.4f} regret/ep; "
        "R(K) mean [t-based 95% CI over seeds]",
        "",
        "| setting | K | first decile/ep: py | dprl run | last decile/ep: py | dprl run | R(K): py | dprl run | episodes/s (py) |",
        "| --- | ---: | ---: | ---: | ---: | ---: | --- | --- | --- |",
    ]

    def ci(x: list[float]) -> str:
        m, lo, hi = dg.mean_ci(x)
        return f"{m:.0f} [{lo:.0f}, {hi:.0f}]"

    def per(x: float) -> str:
        return f"{x:.4f} ({x / u:.1%})"

    for name, res in results.items():
        runs, go, K = res["runs"], res["go"], res["K"]
        lines.append(
            f"| {name} | {K} | {per(float(np.mean([_decile(r.regret, True) for r in runs])))} "
            f"| {per(float(np.mean([_go_decile(c, K) for c in go['curves']])))} "
            f"| {per(float(np.mean([r.last_decile for r in runs])))} | {per(float(np.mean(go['last_decile'])))} "
            f"| {ci([r.final for r in runs])} | {ci(go['finals'])} | {', '.join(f'{r.episodes_per_second:.0f}' for r in runs)} |")
    lines.append("")
    for name, res in results.items():
        lines.append(f"R(K) per seed 1, 2, 3 — {name}: py {', '.join(f'{r.final:.1f}' for r in res['runs'])}; "
                     f"dprl run {', '.join(f'{x:.1f}' for x in res['go']['finals'])}")
    table = "\n".join(lines)
    with capsys.disabled():
        print("\n" + table + "\n")
    (Path(results[next(iter(SETTINGS))]["dir"]).parent / "taxi-table.md").write_text(table + "\n")
