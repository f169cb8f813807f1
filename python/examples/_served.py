"""Shared by the linmdp, linmix and lq examples: create an experiment with a family's built-in
environment through dprl.client, play its users with ``dprl client simulate`` (Go simulated
users), then read the ledger and the per-user regret CSV."""

from __future__ import annotations

import argparse
import csv
import os
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from dprl.client import Client
from dprl.server import LocalServer, simulate


def parse(description: str, default_users: int) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--users", type=int, default=int(os.environ.get("DPRL_EXAMPLE_USERS", default_users)),
                    help=f"users K (default {default_users}, or $DPRL_EXAMPLE_USERS)")
    ap.add_argument("--server", default=os.environ.get("DPRL_SERVER"),
                    help="a running dprl serve (tokens from $DPRL_ADMIN_TOKEN, $DPRL_CLIENT_TOKEN); default: start a local one")
    ap.add_argument("--out", default=None, help="the per-user regret CSV (default: a temporary file, removed at the end)")
    return ap.parse_args()


def run_family(args: argparse.Namespace, family: str, agent: str, env: dict[str, Any],
               epsilon: float = 1.0, delta: float = 1e-5) -> dict[str, Any]:
    srv = None
    tmp = None  # the temporary directory of the CSV when --out is not given: removed at the end
    if args.server:
        url, admin, client = args.server, os.environ.get("DPRL_ADMIN_TOKEN"), os.environ.get("DPRL_CLIENT_TOKEN")
    else:
        srv = LocalServer().start()
        url, admin, client = srv.url, srv.admin_token, srv.client_token
    try:
        with Client(url, admin_token=admin, client_token=client) as c:
            led = c.create(family, agent, env, capacity=args.users, epsilon=epsilon, delta=delta, simulation=True)
            exp = led["experiment"]
            print(f"experiment {exp}: {family} {agent} on {env['name']}, K = {led['episodes']} "
                  f"(capacity {led['capacity']})\n  guarantee: {led['statement']}")
            out = args.out
            if out is None:
                tmp = tempfile.TemporaryDirectory(prefix="dprl-example-")
                out = os.path.join(tmp.name, f"{family}.csv")
            p = simulate(url, exp, args.users, out, admin, client, srv.binary if srv else None)
            print("  " + p.stdout.strip().replace("\n", "\n  "))
            led = c.ledger(exp)
        with open(out, newline="") as f:
            rows = list(csv.DictReader(f))
        regret = np.array([float(r["regret"]) for r in rows])
        tail = max(len(regret) // 10, 1)
        summary = {
            "experiment": exp, "users": len(regret), "users_served": led["users_served"],
            "policy_version": led["policy_version"], "cumulative_regret": float(regret.sum()),
            "first_decile": float(regret[:tail].mean()), "last_decile": float(regret[-tail:].mean()),
            "ledger_cumulative": (led.get("simulated_regret") or [{}])[-1].get("cumulative_regret"),
            "csv": str(Path(out)) if tmp is None else None,
        }
        print(f"  ledger: {led['users_served']} users served of capacity {led['capacity']}, policy version "
              f"{led['policy_version']}, simulated cumulative regret {summary['ledger_cumulative']}")
        where = out if tmp is None else "(temporary, removed; --out keeps it)"
        print(f"  CSV {where}: {len(regret)} users, R(K) = {summary['cumulative_regret']:.4g}, regret/episode "
              f"first decile {summary['first_decile']:.4g}, last decile {summary['last_decile']:.4g}")
        return summary
    finally:
        if tmp is not None:
            tmp.cleanup()
        if srv is not None:
            srv.stop()
