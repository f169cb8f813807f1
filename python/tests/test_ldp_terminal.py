"""dprl.ldp with episodes that ended in a terminal state (issue 26): a trajectory of L < H steps
contributes exactly the L steps played, with the same layout and σ, and its vector stays within
the sensitivity bound the calibration assumes."""

from __future__ import annotations

import math
import random

import pytest

from dprl import ldp


def _traj(rng: random.Random, S: int, A: int, L: int) -> tuple[list[int], list[int], list[float]]:
    return ([rng.randrange(S) for _ in range(L + 1)], [rng.randrange(A) for _ in range(L)],
            [rng.uniform(-0.5, 1.5) for _ in range(L)])


def _by_hand(p: ldp.LDPParams, st: list[int], ac: list[int], rw: list[float]) -> list[float]:
    """The layout of the module docstring, step by step, for the steps given."""
    S, A = p.states, p.actions
    x = [0.0] * p.dim
    nt = p.groups * S * A * S
    seen: dict[int, int] = {}
    for h in range(len(ac)):
        i = st[h] * A + ac[h]
        if p.pool:
            if seen.get(i, 0) >= p.cap:
                continue
            seen[i] = seen.get(i, 0) + 1
        else:
            i += h * S * A
        x[i * S + st[h + 1]] += 1.0
        x[nt + i] += p.weight * min(max(rw[h], 0.0), 1.0)
    return x


@pytest.mark.parametrize("pool,cap", [(True, 4), (True, 0), (False, 4)])
def test_short_trajectories_contribute_the_steps_played(pool: bool, cap: int) -> None:
    rng = random.Random(26)
    p = ldp.LDPParams(5, 3, 12, pool=pool, visit_cap=cap)
    for _ in range(200):
        L = rng.randrange(0, 13)
        st, ac, rw = _traj(rng, 5, 3, L)
        x = ldp.contribution(p, st, ac, rw)
        assert len(x) == p.dim and x == _by_hand(p, st, ac, rw)
        # Any continuation to H steps only adds (entries ≥ 0): the short vector is below it.
        more = _traj(rng, 5, 3, 12 - L)
        full = ldp.contribution(p, st + more[0][1:], ac + more[1], rw + more[2])
        assert all(0 <= a <= b for a, b in zip(x, full))


def test_short_vectors_are_within_the_sensitivity() -> None:
    """‖x‖² ≤ Δ₂²/2 for every L ≤ H (Δ₂ = √(2(1+w²)M₂) bounds ‖x − x'‖ for x, x' ≥ 0), checked
    on the worst short episodes: one (s, a) repeated, and m visits of each (s, a) in turn."""
    rng = random.Random(7)
    for pool, cap in ((True, 4), (True, 0), (False, 0)):
        p = ldp.LDPParams(4, 2, 10, pool=pool, visit_cap=cap)
        bound = ldp.practical_sensitivity(p) ** 2 / 2
        for L in range(11):
            for st, ac in (([0] * (L + 1), [0] * L), ([h // max(p.cap, 1) % 4 for h in range(L + 1)], [h % 2 for h in range(L)])):
                x = ldp.contribution(p, st, ac, [1.0] * L)
                assert math.fsum(v * v for v in x) <= bound + 1e-9, (pool, cap, L)
            st, ac, rw = _traj(rng, 4, 2, L)
            assert math.fsum(v * v for v in ldp.contribution(p, st, ac, rw)) <= bound + 1e-9


def test_short_report_has_the_same_layout_and_noise() -> None:
    p = ldp.LDPParams(3, 2, 6)
    draws = [0.1 * i for i in range(p.dim)]
    st, ac, rw = [0, 1, 2], [1, 0], [0.5, 1.0]  # L = 2 of H = 6
    src = ldp.ReplayNormal(draws)
    rep = ldp.GaussianRandomizer(p, 2.0, source=src).randomize(st, ac, rw)
    assert src.used == p.dim and len(rep.blocks) == 1
    x = ldp.contribution(p, st, ac, rw)
    assert list(rep.blocks[0]) == [v + 2.0 * z for v, z in zip(x, draws)]
    assert rep.header == p.header()
    # σ is calibrated from (S, A, H, ε, δ): the user's episode length plays no part.
    a = ldp.GaussianRandomizer.for_user("practical-ldp", 3, 2, 6, True, 1.0, 1e-5)
    b = ldp.GaussianRandomizer.for_user("practical-ldp", 3, 2, 6, True, 1.0, 1e-5)
    assert a.sigma == b.sigma > 0 and len(a.noisy_values(st, ac, rw)) == p.dim


@pytest.mark.parametrize("st,ac,rw,msg", [
    ([0, 1, 2], [1, 0], [0.5], "trajectory: want L+1 states, L actions and L rewards with L <= 6, got 3, 2 and 1"),
    ([0, 1], [1, 0], [0.5, 0.5], "trajectory: want L+1 states, L actions and L rewards with L <= 6, got 2, 2 and 2"),
    ([0] * 8, [0] * 7, [0.0] * 7, "trajectory: want 7 states, 6 actions and 6 rewards"),
    ([0] * 7, [0] * 6, [0.0] * 5, "trajectory: want 7 states, 6 actions and 6 rewards"),
    ([0, 3, 1], [1, 0], [0.5, 0.5], "trajectory.S[1]: state must be in [0, 2], got 3"),
    ([0, 1, 1], [1, 2], [0.5, 0.5], "trajectory.A[1]: action must be in [0, 1], got 2"),
    ([0, 1, 1], [1, 1], [0.5, math.nan], "trajectory.R[1]: reward is NaN"),
])
def test_bad_short_trajectories_are_refused(st: list[int], ac: list[int], rw: list[float], msg: str) -> None:
    p = ldp.LDPParams(3, 2, 6)
    src = ldp.ReplayNormal([0.0] * p.dim)
    with pytest.raises(ldp.TrajectoryError) as e:
        ldp.GaussianRandomizer(p, 1.0, source=src).randomize(st, ac, rw)
    assert str(e.value) == msg and src.used == 0
