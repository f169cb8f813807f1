#!/usr/bin/env python3
"""Times a peer's tabular JDP agent on RiverSwim (H = 20) for the comparison of docs/privacy.md.

The peer's code is not part of dprl: pass the directory of a module that defines the agent
class (default: module finite_tabular_agents, class UCBVI_JDP, the public Python code base
described in shared/spec/tabular.md §6, constructor (nState, nAction, epLen, nEps, privEps),
methods update_policy(ep), pick_action(s, h), update_obs(s, a, r, s2, pContinue, h)).

Each episode: update_policy(ep), then H steps of pick_action, a RiverSwim transition (variant A,
the same MDP as dprl's model/tabular.RiverSwim) and update_obs — the loop of that code base. The
script prints episodes/s over the whole run (construction included), as
BenchmarkPracticalJDPRun does for dprl. Needs numpy.

    python3 scripts/peer_riverswim.py --peer-dir DIR --episodes 3000
"""
import argparse
import importlib
import sys
import time

import numpy as np


def riverswim():
    S, A = 6, 2
    P = np.zeros((S, A, S))
    R = np.zeros((S, A))
    for s in range(S):
        P[s, 0, max(s - 1, 0)] = 1.0
    P[0, 1, 0], P[0, 1, 1] = 0.4, 0.6
    for s in range(1, S - 1):
        P[s, 1, s - 1], P[s, 1, s], P[s, 1, s + 1] = 0.05, 0.6, 0.35
    P[S - 1, 1, S - 2], P[S - 1, 1, S - 1] = 0.4, 0.6
    R[0, 0], R[S - 1, 1] = 0.005, 1.0
    return S, A, P, R


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--peer-dir", required=True, help="directory holding the peer's module")
    ap.add_argument("--module", default="finite_tabular_agents")
    ap.add_argument("--agent", default="UCBVI_JDP")
    ap.add_argument("--episodes", type=int, default=3000)
    ap.add_argument("--horizon", type=int, default=20)
    ap.add_argument("--epsilon", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    sys.path.insert(0, a.peer_dir)
    cls = getattr(importlib.import_module(a.module), a.agent)
    np.random.seed(a.seed)
    rng = np.random.default_rng(a.seed)
    S, A, P, R = riverswim()
    H, K = a.horizon, a.episodes
    t0 = time.perf_counter()
    agent = cls(S, A, H, K, a.epsilon)
    total = 0.0
    for ep in range(1, K + 1):
        agent.update_policy(ep)
        s = 0
        for h in range(H):
            act = agent.pick_action(s, h)
            s2 = rng.choice(S, p=P[s, act])
            r = R[s, act]
            total += r
            agent.update_obs(s, act, r, s2, 1 if h < H - 1 else 0, h)
            s = s2
    dt = time.perf_counter() - t0
    print(f"peer {a.module}.{a.agent}: RiverSwim H={H}, K={K}, eps={a.epsilon}: {dt:.3f} s, "
          f"{K / dt:.1f} episodes/s, {1e6 * dt / K:.1f} us/episode (mean return {total / K:.3f})")


if __name__ == "__main__":
    main()
