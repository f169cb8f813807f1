"""What the long checks share: ``dprl run`` on an exported file, read back per seed, and the
two-sample test that the Python runs' R(K) and ``dprl run``'s have the same mean."""

from __future__ import annotations

import csv
import json
import math
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from dprl import gym as dg


def dprl_run(binary: Path, env_file: Path, out: Path, agent: str, epsilon: float, K: int, seeds: Sequence[int]) -> dict[str, Any]:
    """``dprl run --family tabular --env file --env-file ENV_FILE --agent AGENT --episodes K
    --seeds …`` (with ``--epsilon ε --delta 1e-5`` when ε > 0, else the non-private agent): per
    seed (in the order of ``seeds``) R(K), the last-decile regret per episode and the cumulative
    regret at every checkpoint; the uniform policy's regret per episode."""
    cmd = [str(binary), "run", "--family", "tabular", "--env", "file", "--env-file", str(env_file), "--agent", agent,
           "--episodes", str(K), "--seeds", ",".join(map(str, seeds)), "--quiet", "--out", str(out)]
    if epsilon > 0:
        cmd += ["--epsilon", dg.go_format_g(epsilon), "--delta", "1e-5"]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
    assert p.returncode == 0, p.stderr
    curves: dict[int, dict[int, float]] = {s: {} for s in seeds}
    with (out / "regret_long.csv").open() as f:
        for row in csv.DictReader(f):
            curves[int(row["seed"])][int(row["episode"])] = float(row["regret"])
    man = json.loads((out / "manifest.json").read_text())
    c = man["curves"][0]
    last = {int(r["seed"]): float(r["last_decile_regret"]) for r in c["extras"]["practical"]["runs"]}
    return {
        "finals": [curves[s][K] for s in seeds],
        "last_decile": [last[s] for s in seeds],
        "curves": [curves[s] for s in seeds],
        "uniform": float(c["reference"]["regret_per_episode"]),
    }


def assert_same_mean(py: Sequence[float], go: Sequence[float], name: str) -> None:
    """Two-sample (Welch) 95 % test of equal means of the Python runs' R(K) and ``dprl run``'s.
    Each mean inside the other's CI would be degenerate when one side has no spread over seeds
    (a deterministic environment whose model is public can give the same R(K) on every seed, a
    CI of width 0, and any difference on the other side then failed however small). Means equal
    to a relative 1e-9 agree (the same R(K) summed in another order differs in its last bits);
    when neither side has any spread, they must be."""
    a, b = np.asarray(py, dtype=np.float64), np.asarray(go, dtype=np.float64)
    py_m, py_lo, py_hi = dg.mean_ci(list(a))
    go_m, go_lo, go_hi = dg.mean_ci(list(b))
    if math.isclose(py_m, go_m, rel_tol=1e-9):
        return  # equal but for rounding (a spread of rounding alone would make the test below fail)
    v1, v2 = a.var(ddof=1) / len(a), b.var(ddof=1) / len(b)
    assert v1 + v2 > 0, f"{name}: Python R(K) {py_m} against dprl run's {go_m}, no spread on either side"
    df = (v1 + v2) ** 2 / (v1**2 / (len(a) - 1) + v2**2 / (len(b) - 1))
    half = dg.t_quantile_975(max(1, int(df))) * math.sqrt(v1 + v2)
    assert abs(py_m - go_m) <= half, (
        f"{name}: Python R(K) {py_m:.0f} [{py_lo:.0f}, {py_hi:.0f}] and dprl run's {go_m:.0f} [{go_lo:.0f}, {go_hi:.0f}] "
        f"differ by {abs(py_m - go_m):.0f} > {half:.0f} (Welch 95 %)")
