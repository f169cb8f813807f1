"""Each example of python/examples runs with a small number of users: tabular (Gymnasium
FrozenLake through dprl.gym.run, its own local server), linmdp, linmix and lq (experiments
created through dprl.client on the session's server, played by `dprl client simulate`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dprl.server import LocalServer

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
PKG = Path(__file__).resolve().parents[1]


def _run(script: str, args: list[str], env: dict[str, str]) -> str:
    e = {**os.environ, **env, "PYTHONPATH": os.pathsep.join([str(PKG), os.environ.get("PYTHONPATH", "")])}
    p = subprocess.run([sys.executable, str(EXAMPLES / script), *args], capture_output=True, text=True, env=e, timeout=300)
    assert p.returncode == 0, f"{script}: exit {p.returncode}\n{p.stdout}\n{p.stderr}"
    return p.stdout


def test_tabular_example(dprl_server: LocalServer, tmp_path: Path) -> None:
    pytest.importorskip("gymnasium", reason="the gym extra (gymnasium) is not installed")
    out = _run("tabular_frozenlake.py", ["--users", "300", "--out", str(tmp_path / "run")],
               {"DPRL_BINARY": str(dprl_server.binary)})
    assert "300 users (299 reports accepted)" in out
    man = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert man["config"]["episodes"] == 300


@pytest.mark.parametrize("script,family", [("linmdp_riverswim.py", "linmdp"), ("linmix_two_state_hard.py", "linmix"), ("lq_e1.py", "lq")])
def test_family_example(dprl_server: LocalServer, tmp_path: Path, script: str, family: str) -> None:
    csv_path = tmp_path / f"{family}.csv"
    out = _run(script, ["--users", "40", "--out", str(csv_path)], {
        "DPRL_SERVER": dprl_server.url, "DPRL_ADMIN_TOKEN": dprl_server.admin_token,
        "DPRL_CLIENT_TOKEN": dprl_server.client_token, "DPRL_BINARY": str(dprl_server.binary)})
    assert f"{family} " in out and "CSV" in out and "40 users" in out
    lines = csv_path.read_text().splitlines()
    assert lines[0] == "user,regret,cumulative_regret" and len(lines) == 41
