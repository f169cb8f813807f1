"""The Python randomiser reproduces every shared LDP test vector exactly (Go generated them:
agents/tabular/ldp_vectors_test.go), plus properties of the encoders and of the secure source."""

from __future__ import annotations

import math
import random
import struct
from typing import Any

import pytest

from dprl import ldp, protocol
from ldp_vector_check import VECTORS, check_vector, load_vectors, params_of, reward

VECTOR_LIST = load_vectors()


def test_vector_file_has_every_kind_of_case() -> None:
    names = [v["name"] for v in VECTOR_LIST]
    assert len(names) == len(set(names)) >= 10, VECTORS
    assert any(v.get("error") for v in VECTOR_LIST)
    assert any(v["sigma_from"] == "given" for v in VECTOR_LIST)
    # Rewards outside [0, 1] (clipping) and not-pooled / capped layouts are exercised.
    rewards = [reward(r) for v in VECTOR_LIST if not v.get("error") for r in v["trajectory"]["rewards"]]
    assert min(rewards) < 0 and max(rewards) > 1 and math.inf in rewards and -math.inf in rewards
    assert any(not v["params"]["pool"] for v in VECTOR_LIST)


@pytest.mark.parametrize("vector", VECTOR_LIST, ids=[v["name"] for v in VECTOR_LIST])
def test_vector(vector: dict[str, Any]) -> None:
    check_vector(vector)


@pytest.mark.parametrize("vector", [v for v in VECTOR_LIST if not v.get("error")], ids=lambda v: v["name"])
def test_reports_decode_back(vector: dict[str, Any]) -> None:
    js = vector["report_json"].encode("utf-8")
    bn = bytes.fromhex(vector["report_binary_hex"])
    for rep in (protocol.decode_json(js), protocol.decode_binary(bn)):
        assert protocol.encode_json(rep) == js
        assert protocol.encode_binary(rep) == bn
        assert rep.header == params_of(vector).header(vector["agent"])


def test_go_json_float_round_trips() -> None:
    rng = random.Random(12345)
    for _ in range(20000):
        x = struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))[0]
        if math.isnan(x) or math.isinf(x):
            continue
        s = protocol.go_json_float(x)
        assert float(s) == x and ("e" in s) == (x != 0 and (abs(x) < 1e-6 or abs(x) >= 1e21)), s
    assert protocol.go_json_float(1e-7) == "1e-7"
    assert protocol.go_json_float(1e21) == "1e+21"
    assert protocol.go_json_float(1e20) == "100000000000000000000"
    assert protocol.go_json_float(0.000001) == "0.000001"
    assert protocol.go_json_float(-0.0) == "-0"
    with pytest.raises(ValueError):
        protocol.go_json_float(math.nan)


def test_sigma_zero_adds_nothing_and_draws_nothing() -> None:
    p = ldp.LDPParams(3, 2, 4)
    src = ldp.ReplayNormal([])
    z = ldp.GaussianRandomizer(p, 0.0, source=src)
    traj = ([0, 1, 2, 1, 0], [0, 1, 1, 0], [0.5, 2.0, -1.0, 0.25])
    assert list(z.randomize(*traj).blocks[0]) == ldp.contribution(p, *traj)
    assert src.used == 0


def test_default_source_is_secure() -> None:
    z = ldp.GaussianRandomizer(ldp.LDPParams(2, 2, 2), 1.0)
    assert isinstance(z.source, ldp.SecureNormal) and z.source.secure
    assert not ldp.ReplayNormal([]).secure


def test_secure_noise_std_matches_sigma() -> None:
    """With the secure source, the added noise has mean 0 and std σ. n = 240 000 draws; each
    bound is 6 standard errors (a false failure has probability < 1e-8 per bound)."""
    p = ldp.LDPParams(6, 2, 4)  # dim 84
    sigma = 23.59458615419182
    z = ldp.GaussianRandomizer(p, sigma)
    traj = ([0, 1, 1, 2, 1], [1, 1, 1, 0], [0.005, 0.0, 0.375, 1.0])
    x = ldp.contribution(p, *traj)
    noise: list[float] = []
    for _ in range(240_000 // p.dim + 1):
        noise.extend(v - c for v, c in zip(z.noisy_values(*traj), x))
    n = len(noise)
    mean = math.fsum(noise) / n
    var = math.fsum((e - mean) ** 2 for e in noise) / (n - 1)
    std = math.sqrt(var)
    assert abs(mean) <= 6 * sigma / math.sqrt(n)
    # The sample std of a normal sample has standard error σ/√(2(n−1)).
    assert abs(std - sigma) <= 6 * sigma / math.sqrt(2 * (n - 1)), (std, sigma)
    # And it is Gaussian-shaped: P(|Z| ≤ 1) = 0.682689…, binomial standard error.
    p1 = 0.6826894921370859
    inside = sum(1 for e in noise if abs(e) <= sigma) / n
    assert abs(inside - p1) <= 6 * math.sqrt(p1 * (1 - p1) / n)


def test_bad_parameters_refused() -> None:
    with pytest.raises(ValueError):
        ldp.LDPParams(0, 1, 1)
    with pytest.raises(ValueError):
        ldp.LDPParams(1, 1, 1, reward_weight=1.5)
    with pytest.raises(ValueError):
        ldp.GaussianRandomizer(ldp.LDPParams(1, 1, 1), math.inf)
    with pytest.raises(ldp.TrajectoryError):
        ldp.contribution(ldp.LDPParams(2, 1, 1), [0, 1.5], [0], [0.0])  # type: ignore[list-item]
