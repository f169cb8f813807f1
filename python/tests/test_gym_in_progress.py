"""A retried batch whose first attempt is still being committed gets 409 in_progress for
those items (seen in .ci/run on a machine at load average 20): dprl.gym resubmits exactly
those items, with their idempotency keys, until they are acknowledged."""

from __future__ import annotations

from typing import Any

import pytest

from dprl import gym
from dprl.client import APIError, BatchItem, BatchResult


class _FakeClient:
    def __init__(self, busy_rounds: int) -> None:
        self.busy_rounds = busy_rounds
        self.calls: list[list[str]] = []

    def submit_batch(self, exp: str, items: list[BatchItem]) -> list[BatchResult]:
        self.calls.append([it.idempotency_key for it in items])
        out = []
        for it in items:
            if len(self.calls) <= self.busy_rounds and int(it.idempotency_key[1:]) % 2 == 1:
                out.append(BatchResult(409, None, APIError(409, "in_progress", "", "this report is being committed")))
            else:
                out.append(BatchResult(200 if len(self.calls) > 1 else 201, {"sequence": 1, "policy_version": 3}))
        return out


def _player(c: Any) -> Any:
    p = object.__new__(gym._Player)
    p.c, p.exp = c, "e"
    return p


def _items(n: int) -> list[BatchItem]:
    return [BatchItem(f"u{j}", "cred", f"k{j}", "{}", 0.0) for j in range(n)]


def test_in_progress_items_are_resubmitted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gym.time, "sleep", lambda s: None)
    c = _FakeClient(busy_rounds=2)
    out = _player(c).submit(_items(4))
    assert all(r.ok for r in out), out
    assert c.calls == [["k0", "k1", "k2", "k3"], ["k1", "k3"], ["k1", "k3"]]


def test_in_progress_forever_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gym.time, "sleep", lambda s: None)
    out = _player(_FakeClient(busy_rounds=100)).submit(_items(2))
    assert out[0].ok and not out[1].ok and out[1].error is not None and out[1].error.code == "in_progress"
