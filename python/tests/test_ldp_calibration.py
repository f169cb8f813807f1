"""The user, not the server, decides her noise (issue 25 item 4).

* The user's own calibration (``dprl.ldp.calibrate``) reproduces the Go accountant's bit for
  bit: the shared vectors ``agents/tabular/testdata/ldp_calibration_vectors.json`` (written by
  Go's TestUserSideVectors) give, for public parameters, Δ₂, μ, σ and the layout; and for a few
  published ``user_side``s whether the check accepts them or which field it names.
* A fake server that publishes less noise (σ/10, σ = 0, a larger visit cap, …) makes the Python
  user (``dprl.gym.run``) refuse with ``UserSideError`` and send nothing.
* Her noise comes from the operating system's CSPRNG: two fresh sources differ, seeding
  ``random`` and numpy's global generator does not make it reproducible, and a constant
  ``os.urandom`` makes it constant (the draws come from it).
"""

from __future__ import annotations

import json
import math
import os
import random
import struct
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from dprl import gym as dg
from dprl import ldp
from dprl.client import BatchResult, Policy

VECTORS = Path(__file__).resolve().parents[2] / "agents" / "tabular" / "testdata" / "ldp_calibration_vectors.json"


def load_calibration_vectors() -> list[dict[str, Any]]:
    with open(VECTORS, encoding="utf-8") as f:
        return list(json.load(f))


def bits(x: float) -> str:
    return struct.pack(">d", x).hex()


def check_calibration_vector(v: dict[str, Any]) -> None:
    """Raise AssertionError unless the Python calibration and check reproduce vector v exactly."""
    name = v["name"]
    c = ldp.calibrate(v["agent"], v["states"], v["actions"], v["horizon"], v["homogeneous"], v["epsilon"], v["delta"],
                      v["public_rewards"])
    assert bits(c.sensitivity) == bits(v["sensitivity"]), f"{name}: sensitivity {c.sensitivity!r} != {v['sensitivity']!r}"
    assert bits(c.mu) == bits(v["mu"]), f"{name}: mu {c.mu!r} != {v['mu']!r}"
    assert bits(c.sigma) == bits(v["own"]["sigma"]), f"{name}: sigma {c.sigma!r} != {v['own']['sigma']!r}"
    assert c.params.dim == v["dim"], f"{name}: dim"
    assert c.user_side() == v["own"], f"{name}: user_side {c.user_side()} != {v['own']}"
    for case in v["checks"]:
        want = case["refused"]
        try:
            ldp.check_published(c, case["published"])
        except ldp.UserSideError as e:
            assert want, f"{name}/{case['name']}: refused ({e}), Go accepts"
            assert e.field == want and str(e).startswith(f"user_side.{want}:"), f"{name}/{case['name']}: {e}, want {want}"
        else:
            assert not want, f"{name}/{case['name']}: accepted, Go refuses naming {want}"


def test_calibration_vector_file_covers_the_cases() -> None:
    vs = load_calibration_vectors()
    assert {v["agent"] for v in vs} == set(ldp.AGENT_DEFAULTS)
    assert any(not v["homogeneous"] for v in vs)
    assert any(v["public_rewards"] for v in vs)
    # The norm budget binds (min(B, M₂) = B < M₂) in some vectors, with and without public rewards.
    binds = [v for v in vs if v["own"]["norm_budget"] == ldp.DEFAULT_NORM_BUDGET and v["horizon"] > 20]
    assert {v["public_rewards"] for v in binds} == {False, True}
    refused = {c["refused"] for v in vs for c in v["checks"]}
    assert {"", "sigma", "states", "actions", "horizon", "pool", "public_rewards", "visit_cap", "norm_budget",
            "reward_weight"} <= refused


@pytest.mark.parametrize("v", load_calibration_vectors(), ids=lambda v: v["name"])
def test_calibration_vector(v: dict[str, Any]) -> None:
    check_calibration_vector(v)


def test_sigma_zero_refused_for_a_real_report() -> None:
    with pytest.raises(ValueError, match="sigma"):
        ldp.GaussianRandomizer(ldp.LDPParams(2, 2, 2), 0.0)
    c = ldp.calibrate("practical-ldp", 3, 2, 5, True, 1, 1e-5)
    for bad in (0, 0.0, c.sigma / 10, -c.sigma, math.inf, math.nan, None, "52", True):
        us = dict(c.user_side(), sigma=bad)
        with pytest.raises(ldp.UserSideError) as e:
            ldp.GaussianRandomizer.for_user("practical-ldp", 3, 2, 5, True, 1, 1e-5, published=us)
        assert e.value.field == "sigma"
    with pytest.raises(ldp.UserSideError) as e:
        ldp.check_published(c, None)
    with pytest.raises(ldp.UserSideError) as e:
        ldp.check_published(c, {k: w for k, w in c.user_side().items() if k != "visit_cap"})
    assert e.value.field == "visit_cap"


def test_for_user_uses_her_own_sigma_or_more() -> None:
    c = ldp.calibrate("practical-ldp", 6, 2, 20, True, 1, 1e-5)
    assert ldp.GaussianRandomizer.for_user("practical-ldp", 6, 2, 20, True, 1, 1e-5).sigma == c.sigma
    more = dict(c.user_side(), sigma=2 * c.sigma)
    assert ldp.GaussianRandomizer.for_user("practical-ldp", 6, 2, 20, True, 1, 1e-5, published=more).sigma == 2 * c.sigma
    # A server whose ε is larger than hers publishes a smaller σ: refused.
    weaker = ldp.calibrate("practical-ldp", 6, 2, 20, True, 2, 1e-5).user_side()
    with pytest.raises(ldp.UserSideError, match="sigma"):
        ldp.GaussianRandomizer.for_user("practical-ldp", 6, 2, 20, True, 1, 1e-5, published=weaker)
    with pytest.raises(ValueError, match="agent"):
        ldp.calibrate("dp-ucbvi-ldp", 6, 2, 20, True, 1, 1e-5)


# ---------------------------------------------------------------- a fake (malicious) server


class FakeServer:
    """Duck-typed dprl.client.Client: one practical-ldp experiment whose published user_side is
    the honest one passed through tamper; records every batch submitted."""

    base_url = "http://fake"

    def __init__(self, tamper: Any) -> None:
        self.tamper = tamper
        self.batches: list[Any] = []
        self.model: dict[str, Any] | None = None

    def create(self, family: str, agent: str, env: dict[str, Any], **kw: Any) -> dict[str, Any]:
        self.agent, self.model, self.capacity = agent, env["model"], int(kw["capacity"])
        self.eps, self.delta = float(kw["epsilon"]), float(kw["delta"])
        return {"experiment": "fake-1", "capacity": self.capacity}

    def credentials(self, exp: str, users: Any) -> dict[str, str]:
        return {str(u): "cred" for u in users}

    def policy(self, exp: str, refresh: bool = True) -> Policy:
        assert self.model is not None
        S, A, H = int(self.model["states"]), int(self.model["actions"]), int(self.model["horizon"])
        support = ldp.support_of(self.model) if self.model.get("public_support", False) is True else None
        honest = ldp.calibrate(self.agent, S, A, H, True, self.eps, self.delta, self.model.get("public_rewards", False) is True,
                               support)
        header = json.loads(honest.params.header(self.agent).to_json())
        return Policy(experiment=exp, version=1, header=header, rule={"Act": [[0] * S for _ in range(H)], "Prob": None},
                      user_side=self.tamper(honest.user_side()), etag='"1"')

    def submit_batch(self, exp: str, items: Any) -> list[BatchResult]:
        self.batches.append(items)
        return [BatchResult(201, ack={"policy_version": 1}) for _ in items]

    def ledger(self, exp: str) -> dict[str, Any]:
        return {}

    def close(self) -> None:
        pass


TAMPER = {
    "sigma-div-10": (lambda us: dict(us, sigma=us["sigma"] / 10), "sigma"),
    "sigma-zero": (lambda us: dict(us, sigma=0), "sigma"),
    "visit-cap-larger": (lambda us: dict(us, visit_cap=us["visit_cap"] + 1), "visit_cap"),
    "norm-budget-smaller": (lambda us: dict(us, norm_budget=us["norm_budget"] - 1), "norm_budget"),
    "reward-block-dropped": (lambda us: dict(us, public_rewards=True), "public_rewards"),
    "reward-weight-1": (lambda us: dict(us, reward_weight=1), "reward_weight"),
    "no-pooling": (lambda us: dict(us, pool=False), "pool"),
    "support-dropped": (lambda us: {k: v for k, v in us.items() if k != "public_support"}, "public_support"),
    "no-user-side": (lambda us: None, "sigma"),
}
# The fake server's model declares its reward table public (the exporter's default) for these:
PUBLIC = {"sigma-div-10", "norm-budget-smaller"}


@pytest.mark.parametrize("public", [False, True])
def test_fake_server_honest_is_served(public: bool) -> None:
    pytest.importorskip("gymnasium")
    srv = FakeServer(lambda us: us)
    res = dg.run(srv, "FrozenLake-v1", agent="practical-ldp", users=12, seed=1, horizon=8, batch=5,  # type: ignore[arg-type]
                 public_rewards=public)
    assert res.accepted == 12 and sum(len(b) for b in srv.batches) == 12
    assert srv.model is not None and srv.model.get("public_rewards", False) is public


@pytest.mark.parametrize("name", sorted(TAMPER))
def test_fake_server_publishing_less_noise_is_refused(name: str) -> None:
    pytest.importorskip("gymnasium")
    tamper, field = TAMPER[name]
    srv = FakeServer(tamper)
    with pytest.raises(ldp.UserSideError) as e:
        dg.run(srv, "FrozenLake-v1", agent="practical-ldp", users=12, seed=1, horizon=8, batch=5,  # type: ignore[arg-type]
               public_rewards=name in PUBLIC)
    assert e.value.field == field, str(e.value)
    assert srv.batches == [], "a report was sent to a server that published less noise"


def test_fake_server_sigma_of_a_weaker_epsilon_is_refused() -> None:
    """The app promised ε = 1; a server calibrated for ε = 8 (its ledger may still say 1)."""
    pytest.importorskip("gymnasium")

    def weaker(us: dict[str, Any]) -> dict[str, Any]:
        w = ldp.calibrate("practical-ldp", us["states"], us["actions"], us["horizon"], True, 8, 1e-5, us["public_rewards"])
        return dict(us, sigma=w.sigma)  # the layout (public support included) is the honest one

    srv = FakeServer(weaker)
    with pytest.raises(ldp.UserSideError, match="sigma"):
        dg.run(srv, "FrozenLake-v1", agent="practical-ldp", epsilon=1, users=12, seed=1, horizon=8, batch=5)  # type: ignore[arg-type]
    assert srv.batches == []


# ---------------------------------------------------------------- the noise source is the OS CSPRNG


def _draws(n: int = 64) -> list[float]:
    return [float(z) for z in ldp.SecureNormal().standard_normals(n)] + [ldp.SecureNormal().standard_normal() for _ in range(4)]


def test_two_fresh_sources_differ() -> None:
    a, b = ldp.SecureNormal(), ldp.SecureNormal()
    assert [a.standard_normal() for _ in range(8)] != [b.standard_normal() for _ in range(8)]
    assert list(ldp.SecureNormal().standard_normals(64)) != list(ldp.SecureNormal().standard_normals(64))


def test_seeding_random_and_numpy_does_not_reproduce_the_noise() -> None:
    out = []
    for _ in range(2):
        random.seed(1)
        np.random.seed(1)
        out.append(_draws())
    assert out[0] != out[1]
    rz = ldp.GaussianRandomizer.for_user("practical-ldp", 3, 2, 4, True, 1, 1e-5)
    traj = ([0, 1, 2, 1, 0], [0, 1, 1, 0], [0.5, 1.0, 0.0, 0.25])
    reps = []
    for _ in range(2):
        random.seed(7)
        np.random.seed(7)
        reps.append(rz.noisy_values(*traj))
    assert reps[0] != reps[1]


def test_noise_comes_from_os_urandom(monkeypatch: pytest.MonkeyPatch) -> None:
    """With os.urandom constant the draws are constant: they come from it and nothing else."""
    monkeypatch.setattr(os, "urandom", lambda n: b"\x5a" * n)
    a, b = _draws(), _draws()
    assert a == b
    rz = ldp.GaussianRandomizer.for_user("practical-ldp", 3, 2, 4, True, 1, 1e-5)
    assert isinstance(rz.source, ldp.SecureNormal) and rz.source.secure
    traj = ([0, 1, 2, 1, 0], [0, 1, 1, 0], [0.5, 1.0, 0.0, 0.25])
    first = rz.noisy_values(*traj)
    assert ldp.GaussianRandomizer.for_user("practical-ldp", 3, 2, 4, True, 1, 1e-5).noisy_values(*traj) == first


def test_the_gym_user_draws_from_the_csprng() -> None:
    pl = dg._Player.__new__(dg._Player)
    dg._Player.__init__(pl, None, "x", 1, None, None, 1, "p", 1.0, 0.0, [])  # type: ignore[arg-type]
    assert type(pl.noise) is ldp.SecureNormal and pl.noise.secure
