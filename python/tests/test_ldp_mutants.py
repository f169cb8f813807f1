"""Mutation check: the shared-vector check must FAIL on deliberately broken randomisers, so a
passing test_ldp_vectors.py means something. Each mutant is applied by monkeypatching one
internal step of dprl.ldp."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from dprl import ldp
from ldp_vector_check import check_vector, load_vectors

MUTANTS: dict[str, tuple[str, Callable[..., float], str]] = {
    # BROKEN: the noise is a quarter of what σ promises (4× weaker privacy than claimed).
    # Name of the vector that must catch it, among others.
    "noise-div4": ("_noisy", lambda v, sigma, z: v + (sigma * z) / 4, "riverswim-defaults"),
    # BROKEN: rewards enter unclipped (the sensitivity bound no longer holds).
    "no-clip": ("_clip_reward", lambda r: r, "clip-out-of-range-rewards"),
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
