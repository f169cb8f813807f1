#!/usr/bin/env bash
# Throughput of a Gymnasium-driven run through dprl serve (issue 20): FrozenLake-v1 4x4 slippery
# at H = 20, practical-jdp at (1, 1e-5), USERS users (default 20000) per run, RUNS runs (default
# 3), one local server with durable commits; prints episodes/s of each run and the best. Needs
# `pip install "./python[test]"` (gymnasium).
set -euo pipefail
cd "$(dirname "$0")/.."
USERS=${USERS:-20000} RUNS=${RUNS:-3} python3 - <<'PY'
import os
from dprl import gym as dg
from dprl.server import LocalServer

users, runs = int(os.environ["USERS"]), int(os.environ["RUNS"])
with LocalServer() as srv:
    rates = [dg.run(srv, "FrozenLake-v1", users=users, seed=100 + i, horizon=20).episodes_per_second for i in range(runs)]
print(f"Gymnasium-driven FrozenLake-v1 (H = 20, practical-jdp, {users} users a run): "
      + ", ".join(f"{r:.0f}" for r in rates) + f" episodes/s; best {max(rates):.0f}")
PY
