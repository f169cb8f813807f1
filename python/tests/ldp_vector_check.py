"""Checks one shared LDP test vector (agents/tabular/testdata/ldp_vectors.json) against the
Python randomiser; used by test_ldp_vectors.py and by the mutation check test_ldp_mutants.py."""

from __future__ import annotations

import json
import math
import struct
from pathlib import Path
from typing import Any

from dprl import ldp, protocol

VECTORS = Path(__file__).resolve().parents[2] / "agents" / "tabular" / "testdata" / "ldp_vectors.json"

_SPECIAL = {"NaN": math.nan, "+Inf": math.inf, "-Inf": -math.inf, "-0": -0.0}


def load_vectors() -> list[dict[str, Any]]:
    with open(VECTORS, encoding="utf-8") as f:
        return list(json.load(f)["vectors"])


def reward(v: Any) -> float:
    return _SPECIAL[v] if isinstance(v, str) else float(v)


def bits(x: float) -> str:
    return struct.pack(">d", x).hex()


def same_bits(a: list[float], b: list[float]) -> bool:
    return len(a) == len(b) and all(bits(x) == bits(y) for x, y in zip(a, b))


def params_of(v: dict[str, Any]) -> ldp.LDPParams:
    p = v["params"]
    return ldp.LDPParams(
        states=p["states"],
        actions=p["actions"],
        horizon=p["horizon"],
        pool=p["pool"],
        visit_cap=p["visit_cap"],
        reward_weight=p["reward_weight"],
        norm_budget=p.get("norm_budget", 0),
        public_rewards=p.get("public_rewards", False),
        support=tuple(tuple(r) for r in p["support"]) if "support" in p else None,
    )


def check_vector(v: dict[str, Any]) -> None:
    """Raise AssertionError if the Python randomiser does not reproduce vector v exactly."""
    name = v["name"]
    p = params_of(v)
    t = v["trajectory"]
    states, actions = t["states"], t["actions"]
    rewards = [reward(r) for r in t["rewards"]]
    assert ldp.practical_sensitivity(p) == v["sensitivity"], f"{name}: sensitivity"
    header = p.header(v["agent"])
    assert header == protocol.Header.from_obj(v["header"]), f"{name}: header"
    src = ldp.ReplayNormal(v["noise"])
    z = ldp.GaussianRandomizer(p, v["sigma"], source=src, agent=v["agent"])
    if v.get("error"):
        try:
            z.randomize(states, actions, rewards)
        except ldp.TrajectoryError as e:
            assert str(e) == v["error"], f"{name}: error {str(e)!r}, want {v['error']!r}"
            assert src.used == 0, f"{name}: a refused trajectory used {src.used} draws"
            return
        raise AssertionError(f"{name}: accepted a trajectory Go refuses ({v['error']})")
    x = ldp.contribution(p, states, actions, rewards)
    assert same_bits(x, [float(c) for c in v["contribution"]]), f"{name}: contribution"
    rep = z.randomize(states, actions, rewards)
    assert src.used == len(v["noise"]), f"{name}: used {src.used} draws of {len(v['noise'])}"
    assert same_bits(list(rep.blocks[0]), [float(c) for c in v["report_values"]]), f"{name}: report values"
    assert protocol.encode_json(rep) == v["report_json"].encode("utf-8"), f"{name}: report JSON"
    assert protocol.encode_binary(rep).hex() == v["report_binary_hex"], f"{name}: binary report"
