"""Mutation check: the shared-vector check must FAIL on deliberately broken randomisers, so a
passing test_ldp_vectors.py means something. Each mutant is applied by monkeypatching one
internal step of dprl.ldp."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from dprl import ldp
from ldp_vector_check import check_vector, load_vectors

MUTANTS: dict[str, tuple[str, Any, str]] = {
    # BROKEN: the noise is a quarter of what σ promises (4× weaker privacy than claimed).
    # Name of the vector that must catch it, among others.
    "noise-div4": ("_noisy", lambda v, sigma, z: v + (sigma * z) / 4, "riverswim-defaults"),
    # BROKEN: rewards enter unclipped (the sensitivity bound no longer holds).
    "no-clip": ("_clip_reward", lambda r: r, "clip-out-of-range-rewards"),
    # BROKEN: the user side ignores the norm budget (every visit within the cap is kept): her
    # contribution exceeds the Δ₂ = √(2(1+w²)·min(M₂, B)) σ is calibrated for.
    "norm-budget-ignored": ("DEFAULT_NORM_BUDGET", 1 << 30, "norm-budget-default-binds"),
}


@pytest.mark.parametrize("mutant", sorted(MUTANTS))
def test_vectors_catch_mutant(mutant: str, monkeypatch: pytest.MonkeyPatch) -> None:
    attr, broken, must_catch = MUTANTS[mutant]
    monkeypatch.setattr(ldp, attr, broken)
    failed = []
    for v in load_vectors():
        try:
            check_vector(v)
        except AssertionError:
            failed.append(v["name"])
    assert failed, f"mutant {mutant}: every vector still passes"
    assert must_catch in failed, f"mutant {mutant}: vector {must_catch} did not catch it (failed: {failed})"


def test_unmutated_passes() -> None:
    for v in load_vectors():
        check_vector(v)


# ---- user-side noise (issue 25 item 4): the user's own calibration, the check of what the
# server publishes, and the CSPRNG. Each mutant breaks one of them; the named checks of
# test_ldp_calibration.py must fail on it.

import random  # noqa: E402
import types  # noqa: E402

import test_ldp_calibration as cal  # noqa: E402


def _all_calibration_vectors() -> None:
    for v in cal.load_calibration_vectors():
        cal.check_calibration_vector(v)


def _fake_server_sigma_div_10() -> None:
    cal.test_fake_server_publishing_less_noise_is_refused("sigma-div-10")


def _fake_server_sigma_zero() -> None:
    cal.test_fake_server_publishing_less_noise_is_refused("sigma-zero")


def _fake_server_norm_budget_smaller() -> None:
    cal.test_fake_server_publishing_less_noise_is_refused("norm-budget-smaller")


def _fake_server_reward_block_dropped() -> None:
    cal.test_fake_server_publishing_less_noise_is_refused("reward-block-dropped")


def _fake_server_support_dropped() -> None:
    cal.test_fake_server_publishing_less_noise_is_refused("support-dropped")


def _overriding_check(field: str) -> Callable[[ldp.Calibration, Any], float]:
    """check_published that takes the user's own value of field instead of the server's."""
    check = ldp.check_published

    def broken(own: ldp.Calibration, pub: Any) -> float:
        return check(own, dict(pub, **{field: own.user_side()[field]}) if pub else pub)

    return broken


USER_SIDE_MUTANTS: dict[str, tuple[str, Callable[[], object], list[Callable[[], None]]]] = {
    # BROKEN: the user trusts the server's σ (no check: σ/10 or 0 from the server is used).
    "trust-server-sigma": ("check_published", lambda: (lambda own, pub: float(pub["sigma"]) if pub else own.sigma),
                           [_all_calibration_vectors, _fake_server_sigma_div_10, _fake_server_sigma_zero]),
    # BROKEN: σ is checked only for being positive (σ/10 passes).
    "sigma-positive-only": ("check_published", lambda: (lambda own, pub: float(pub["sigma"]) if pub and pub["sigma"] > 0 else (_ for _ in ()).throw(ldp.UserSideError("sigma", "zero"))),
                            [_all_calibration_vectors, _fake_server_sigma_div_10]),
    # BROKEN: the user does not check the published norm budget (a larger one raises her
    # contribution's sensitivity above what σ was calibrated for).
    "norm-budget-unchecked": ("check_published", lambda: _overriding_check("norm_budget"),
                              [_all_calibration_vectors, _fake_server_norm_budget_smaller]),
    # BROKEN: the user does not check whether the server's layout has a reward block.
    "public-rewards-unchecked": ("check_published", lambda: _overriding_check("public_rewards"),
                                 [_all_calibration_vectors, _fake_server_reward_block_dropped]),
    # BROKEN: the user does not check whether the server's layout has the public support (her
    # report, one coordinate per possible next state, would be read in another layout).
    "public-support-unchecked": ("check_published", lambda: _overriding_check("public_support"),
                                 [_fake_server_support_dropped]),
    # BROKEN: the user's own μ is 10 % larger than the accountant's (10 % less noise).
    "mu-10pc-larger": ("gdp_for", lambda: (lambda eps, delta, f=ldp.gdp_for: 1.1 * f(eps, delta)), [_all_calibration_vectors]),
    # BROKEN: the noise comes from a fixed-seed generator, not the OS CSPRNG.
    "fixed-seed-urandom": ("os", lambda: types.SimpleNamespace(urandom=lambda n: random.Random(1).randbytes(n)),
                           [cal.test_two_fresh_sources_differ, cal.test_seeding_random_and_numpy_does_not_reproduce_the_noise]),
    # BROKEN: the noise comes from Python's global (seedable, non-cryptographic) `random`.
    "global-random-urandom": ("os", lambda: types.SimpleNamespace(urandom=random.randbytes),
                              [cal.test_seeding_random_and_numpy_does_not_reproduce_the_noise]),
}


@pytest.mark.parametrize("mutant", sorted(USER_SIDE_MUTANTS))
def test_user_side_checks_catch_mutant(mutant: str, monkeypatch: pytest.MonkeyPatch) -> None:
    attr, broken, checks = USER_SIDE_MUTANTS[mutant]
    monkeypatch.setattr(ldp, attr, broken())
    for check in checks:
        # A failed assert, or pytest.raises' "DID NOT RAISE".
        with pytest.raises((AssertionError, pytest.fail.Exception)):
            check()


def test_user_side_checks_pass_unmutated() -> None:
    _all_calibration_vectors()
    _fake_server_sigma_div_10()
    _fake_server_sigma_zero()
    _fake_server_norm_budget_smaller()
    _fake_server_reward_block_dropped()
    _fake_server_support_dropped()
    cal.test_two_fresh_sources_differ()
    cal.test_seeding_random_and_numpy_does_not_reproduce_the_noise()
