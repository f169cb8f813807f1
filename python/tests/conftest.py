"""Shared fixtures: one local ``dprl serve`` per test session (skipped when neither a dprl
binary nor a Go toolchain with the dprl checkout is available)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from dprl.server import LocalServer, ServerError, find_binary


@pytest.fixture(scope="session")
def dprl_server() -> Iterator[LocalServer]:
    try:
        find_binary()
    except ServerError as e:
        pytest.skip(f"no dprl binary: {e}")
    srv = LocalServer()
    srv.start()
    try:
        yield srv
    finally:
        code = srv.stop()
        assert code == 0, f"dprl serve exited {code} after SIGTERM"
