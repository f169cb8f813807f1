"""dprl.client against a live local ``dprl serve`` (dprl.server): creation, the policy's ETag,
batches with a refused item, single participation, capacity, typed errors, and a locally
private report built from the policy's ``user_side``."""

from __future__ import annotations

import json
from typing import Any

import pytest

from dprl import ldp, protocol
from dprl.client import APIError, BatchItem, Client
from dprl.server import LocalServer, find_repo


def _model(H: int = 3) -> dict[str, Any]:
    """A 3-state, 2-action chain (no Gymnasium needed)."""
    S, A = 3, 2
    trans = [[[0.0] * S for _ in range(A)] for _ in range(S)]
    for s in range(S):
        trans[s][0][max(s - 1, 0)] = 1.0
        trans[s][1][min(s + 1, S - 1)] = 0.7
        trans[s][1][s] += 0.3
    reward = [[0.1, 0.0], [0.0, 0.0], [0.0, 1.0]]
    return {"name": "chain", "states": S, "actions": A, "horizon": H, "rewards": "deterministic",
            "homogeneous": True, "init": [1.0, 0.0, 0.0], "transitions": trans, "reward": reward}


def _trajectory(header: dict[str, Any], H: int = 3, bad_state: int | None = None) -> dict[str, Any]:
    states = [0, 1, 2, 2][: H + 1]
    if bad_state is not None:
        states[2] = bad_state
    return {"header": header, "states": states, "actions": [1] * H, "rewards": [0.0, 0.25, 1.0][:H]}


def _create(c: Client, agent: str = "practical-jdp", capacity: int = 50) -> dict[str, Any]:
    return c.create("tabular", agent, {"name": "file", "model": _model()}, capacity=capacity, epsilon=1, delta=1e-5, simulation=True)


def test_find_repo_is_this_checkout() -> None:
    repo = find_repo()
    assert repo is not None and (repo / "go.mod").read_text().startswith("module github.com/dprl/dprl")


def test_create_and_policy_etag(dprl_server: LocalServer) -> None:
    with dprl_server.client() as c:
        led = _create(c, capacity=50)
        exp = led["experiment"]
        assert led["episodes"] == 50 and led["capacity"] in (49, 50) and led["kind"] == "trajectory"
        assert led["agent"] == "practical-jdp" and led["users_served"] == 0
        p = c.policy(exp)
        assert p.experiment == exp and p.etag == f'"{p.version}"' and p.user_side is None
        assert p.header["kind"] == "trajectory" and p.header["dims"]["horizon"] == 3
        act = p.rule["Act"]
        assert len(act) == 3 and all(len(row) == 3 for row in act) and p.rule["Prob"] is None
        # The ETag revalidates: 304 without a body, and policy() returns the cached object.
        status, hdrs, body = c.request("GET", f"/v1/experiments/{exp}/policy", headers={"If-None-Match": p.etag}, ok=(200, 304))
        assert status == 304 and body == b"" and hdrs["etag"] == p.etag
        n = c.requests
        assert c.policy(exp) is p and c.requests == n + 1
        assert c.policy(exp, refresh=False) is p and c.requests == n + 1
        # The connection is kept alive across requests.
        conn = c._conn
        c.ledger(exp)
        assert c._conn is conn and conn is not None


def test_batch_with_a_bad_item_and_single_participation(dprl_server: LocalServer) -> None:
    with dprl_server.client() as c:
        exp = _create(c)["experiment"]
        p = c.policy(exp)
        cr = c.credentials(exp, ["u1", "u2", "u3", "u4"])
        assert set(cr) == {"u1", "u2", "u3", "u4"}
        items = [
            BatchItem("u1", cr["u1"], "k1", _trajectory(p.header), 0.5),
            BatchItem("u2", cr["u2"], "k2", _trajectory(p.header, bad_state=7)),
            BatchItem("u3", cr["u3"], "k3", json.dumps(_trajectory(p.header)), 0.25),
            BatchItem("u4", "not-a-credential", "k4", _trajectory(p.header)),
        ]
        res = c.submit_batch(exp, items)
        assert [r.status for r in res] == [201, 400, 201, 403]
        assert res[0].ok and res[0].ack is not None and res[0].ack["sequence"] == 1
        assert res[2].ack is not None and res[2].ack["sequence"] == 2
        e = res[1].error
        assert e is not None and e.code == "invalid_report" and e.field == "reports[1].report.states[2]"
        e3 = res[3].error
        assert e3 is not None and e3.status == 403 and e3.field == "reports[3].Dprl-User-Credential"
        with pytest.raises(APIError) as ei:
            res[1].raise_for_error()
        assert ei.value.status == 400
        # A refused item changed nothing: u2 may still contribute.
        ack = c.submit(exp, "u2", cr["u2"], _trajectory(p.header), "k2")
        assert ack["sequence"] == 3
        # A user contributes once: another key is a 409, the same key the original ack (200).
        with pytest.raises(APIError) as ei:
            c.submit(exp, "u1", cr["u1"], _trajectory(p.header), "another-key")
        assert (ei.value.status, ei.value.code) == (409, "already_contributed")
        again = c.submit(exp, "u1", cr["u1"], _trajectory(p.header), "k1")
        assert again["sequence"] == 1 and again.get("replayed") is True
        led = c.ledger(exp)
        assert led["users_served"] == 3
        assert led["simulated_regret"][-1]["cumulative_regret"] == pytest.approx(0.75)


def test_labels(dprl_server: LocalServer) -> None:
    """No false labels: a non-private agent with an ε is refused; a non-private baseline is
    created only with non_private and says NON-PRIVATE; δ = 0 is refused, never defaulted; a
    simulated regret is refused by an experiment not created as a simulation."""
    env = {"name": "file", "model": _model()}
    with dprl_server.client() as c:
        with pytest.raises(APIError) as ei:
            c.create("tabular", "practical-ucbvi", env, capacity=10, epsilon=1)
        assert (ei.value.status, ei.value.field) == (400, "epsilon")
        with pytest.raises(APIError) as ei:
            c.create("tabular", "practical-jdp", env, capacity=10, epsilon=1, delta=0)
        assert (ei.value.status, ei.value.field) == (400, "delta")
        base = c.create("tabular", "practical-ucbvi", env, capacity=10, non_private=True)
        assert base["private"] is False and base["statement"].startswith("NON-PRIVATE")
        assert base["epsilon"] == 0 and base["delta"] == 0
        real = c.create("tabular", "practical-jdp", env, capacity=10, epsilon=1)
        assert real["private"] is True and real["simulation"] is False and real["delta"] == 1e-5
        exp = real["experiment"]
        p = c.policy(exp)
        cr = c.credentials(exp, ["u1", "u2"])
        with pytest.raises(APIError) as ei:
            c.submit(exp, "u1", cr["u1"], _trajectory(p.header), "k1", simulated_regret=0.5)
        assert (ei.value.status, ei.value.field) == (400, "Dprl-Simulated-Regret")
        res = c.submit_batch(exp, [BatchItem("u2", cr["u2"], "k2", _trajectory(p.header), simulated_regret=0.5)])
        assert res[0].status == 400 and res[0].error is not None and res[0].error.field == "reports[0].simulated_regret"
        assert c.ledger(exp)["users_served"] == 0


def test_capacity_and_typed_errors(dprl_server: LocalServer) -> None:
    with dprl_server.client() as c:
        led = _create(c, capacity=10)
        exp, cap = led["experiment"], led["capacity"]
        p = c.policy(exp)
        users = [f"c{i}" for i in range(cap + 1)]
        cr = c.credentials(exp, users)
        res = c.submit_batch(exp, [BatchItem(u, cr[u], "k-" + u, _trajectory(p.header)) for u in users])
        assert [r.status for r in res] == [201] * cap + [409]
        assert res[-1].error is not None and res[-1].error.code == "capacity_exhausted"
        with pytest.raises(APIError) as ei:
            c.policy("no-such-experiment")
        assert (ei.value.status, ei.value.code, ei.value.field) == (404, "not_found", "id")
        with pytest.raises(APIError) as ei:
            c.create("tabular", "practical-jdp", {"name": "file", "model": _model()}, capacity=0, epsilon=1, delta=1e-5)
        assert ei.value.status == 400 and ei.value.field == "capacity"
    with Client(dprl_server.url, admin_token="x" * 20, client_token="y" * 20) as bad:
        with pytest.raises(APIError) as ei:
            _create(bad)
        assert (ei.value.status, ei.value.code, ei.value.field) == (401, "unauthorized", "Authorization")
        assert bad.ledger(exp)["experiment"] == exp  # public
    with pytest.raises(ValueError):
        Client(dprl_server.url).credentials(exp, ["a"])  # no admin token: refused locally
    with pytest.raises(APIError) as ei:
        Client("http://127.0.0.1:1", timeout=2).ledger(exp)
    assert ei.value.status == 0 and ei.value.code == "transport"


def test_ldp_report_from_user_side(dprl_server: LocalServer) -> None:
    with dprl_server.client() as c:
        exp = _create(c, agent="practical-ldp")["experiment"]
        p = c.policy(exp)
        assert p.header["kind"] == "privatized" and p.user_side is not None
        us = p.user_side
        params = ldp.LDPParams(us["states"], us["actions"], us["horizon"], us["pool"], us["visit_cap"], us["reward_weight"],
                               us["norm_budget"], us["public_rewards"])
        # The user computes her own σ from public parameters and her own (ε, δ); the server's
        # user_side is only checked (it is the secure curator's σ, a little above hers).
        led = c.ledger(exp)
        dims = p.header["dims"]
        z = ldp.GaussianRandomizer.for_user("practical-ldp", dims["states"], dims["actions"], dims["horizon"], True,
                                            1.0, 1e-5, published=us)  # SecureNormal
        assert z.calibration is not None and z.calibration.sigma <= us["sigma"] == z.sigma
        assert (led["epsilon"], led["delta"]) == (1.0, 1e-5)
        assert json.loads(z.header.to_json()) == p.header
        # σ = Δ₂/μ (the server's Δ₂ allows for rounding: a relative 1e-7 above the exact one).
        assert us["sigma"] == pytest.approx(ldp.practical_sensitivity(params) / c.ledger(exp)["mu"], rel=1e-6)
        cr = c.credentials(exp, ["l1", "l2", "l3"])
        t = _trajectory(p.header)
        rep = z.randomize(t["states"], t["actions"], t["rewards"])
        assert c.submit(exp, "l1", cr["l1"], rep, "k1")["sequence"] == 1  # Go's exact JSON
        rep2 = z.randomize(t["states"], t["actions"], t["rewards"])
        assert c.submit(exp, "l2", cr["l2"], protocol.encode_binary(rep2), "k2")["sequence"] == 2  # binary
        # As dprl.gym sends it: the policy's header and one block.
        vals = z.noisy_values(t["states"], t["actions"], t["rewards"])
        res = c.submit_batch(exp, [BatchItem("l3", cr["l3"], "k3", {"header": p.header, "blocks": [vals]})])
        assert res[0].status == 201
        # A trajectory is refused by an LDP curator.
        cr4 = c.credentials(exp, ["l4"])
        with pytest.raises(APIError) as ei:
            c.submit(exp, "l4", cr4["l4"], {**t, "header": {**p.header, "kind": "trajectory"}}, "k4")
        assert ei.value.status == 400
        assert c.ledger(exp)["users_served"] == 3


def test_secure_normals_vectorised() -> None:
    """SecureNormal.standard_normals (the vectorised path of GaussianRandomizer) mixes with the
    scalar draws (spare kept) and is N(0, 1): 6-sigma bounds on n = 200 001 draws."""
    import numpy as np

    src = ldp.SecureNormal()
    first = src.standard_normal()  # leaves a spare
    z = np.concatenate([[first], src.standard_normals(100_000), src.standard_normals(100_000)])
    spare = src._spare  # each call used the pending spare and 99 999 fresh draws: one left over
    assert spare is not None and src.standard_normal() == spare and src._spare is None
    n = len(z)
    assert abs(z.mean()) < 6 / np.sqrt(n)
    assert abs(z.var() - 1) < 6 * np.sqrt(2 / n)
    assert abs(np.mean(z**4) - 3) < 6 * np.sqrt(96 / n)
    assert len(set(z.tolist())) == n
