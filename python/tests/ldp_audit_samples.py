"""TEST ONLY: samples of the Python practical-ldp randomiser for dprl's Go auditor.

Reads a JSON spec on stdin — {"params": {states, actions, horizon, pool, visit_cap,
reward_weight}, "sigma": σ, "trajectories": [[states, actions, rewards], [...]], "n": N,
"variant": "ok" | "noise-div4" | "no-clip"} — and writes N reports of trajectory 0 then N of
trajectory 1 to stdout, each as little-endian float64s (the noisy contribution vector). The
noise comes from the randomiser's default secure source (os.urandom). The broken variants are
the mutants the auditor must flag: the randomiser built with σ/4 while the claim is for σ, and
rewards entering unclipped. The Go test agents/tabular TestPythonRandomizerAudit runs this.
"""

from __future__ import annotations

import json
import struct
import sys

from dprl import ldp


def main() -> None:
    spec = json.load(sys.stdin)
    p = spec["params"]
    params = ldp.LDPParams(states=p["states"], actions=p["actions"], horizon=p["horizon"], pool=p["pool"],
                           visit_cap=p["visit_cap"], reward_weight=p["reward_weight"])
    sigma = float(spec["sigma"])
    variant = spec["variant"]
    if variant == "noise-div4":  # BROKEN: a quarter of the noise the claim needs
        sigma /= 4
    elif variant == "no-clip":  # BROKEN: rewards enter unclipped
        ldp._clip_reward = lambda r: r
    elif variant != "ok":
        raise SystemExit(f"variant: unknown {variant!r}")
    z = ldp.GaussianRandomizer(params, sigma)
    out = sys.stdout.buffer
    for states, actions, rewards in spec["trajectories"]:
        for _ in range(int(spec["n"])):
            v = z.noisy_values(states, actions, rewards)
            out.write(struct.pack(f"<{len(v)}d", *v))
    out.flush()


if __name__ == "__main__":
    main()
