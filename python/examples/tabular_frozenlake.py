"""Tabular: Gymnasium FrozenLake-v1 (4x4, slippery) users of dprl's practical-jdp
((1, 1e-5)-JDP) through a local `dprl serve`, with dprl.gym.run; writes a dprl run directory.

    python python/examples/tabular_frozenlake.py --users 20000 --out runs/frozenlake

H = 20 (the RiverSwim horizon of dprl's practical experiments; Gymnasium's own limit, 100, is
--horizon 100 — practical-jdp learns much more slowly there). Needs the gym extra.
"""

from __future__ import annotations

import argparse
import os

from dprl.gym import run

if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--users", type=int, default=int(os.environ.get("DPRL_EXAMPLE_USERS", 20_000)),
                    help="users K (default 20000, or $DPRL_EXAMPLE_USERS)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--horizon", type=int, default=20)
    ap.add_argument("--agent", default="practical-jdp", help="practical-jdp, practical-ldp, ucbvi, …")
    ap.add_argument("--out", default=None, help="write the run directory here")
    args = ap.parse_args()

    def progress(done: int, total: int) -> None:
        if done % 5120 == 0 or done == total:
            print(f"  {done}/{total} users")

    res = run(None, "FrozenLake-v1", agent=args.agent, epsilon=1.0, delta=1e-5, users=args.users,
              seed=args.seed, horizon=args.horizon, out=args.out, progress=progress)
    print(f"experiment {res.experiment}: {res.ledger['statement']}")
    print(f"  {res.users} users ({res.accepted} reports accepted), {res.episodes_per_second:.0f} episodes/s, "
          f"{res.policy_versions} policy versions")
    print(f"  R(K) = {res.final:.1f}; last-decile regret/episode {res.last_decile:.4f} "
          f"(uniform policy {res.uniform_regret:.4f}, V* = {res.v_star:.4f})")
    if res.out is not None:
        print(f"  run directory: {res.out}")
