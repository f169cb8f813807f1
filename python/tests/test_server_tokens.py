"""LocalServer never puts a token on the server's command line: the tokens go through its
environment, and neither the argv it builds nor the child's /proc/PID/cmdline holds them."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from dprl.server import LocalServer


def test_tokens_not_in_argv(dprl_server: LocalServer) -> None:
    srv = dprl_server
    argv = srv.command()
    for tok in (srv.admin_token, srv.client_token):
        assert all(tok not in a for a in argv), "a token in the argv LocalServer builds"
    assert not any(a in ("--admin-token", "--client-token") for a in argv)
    env = srv.environment()
    assert env["DPRL_ADMIN_TOKEN"] == srv.admin_token and env["DPRL_CLIENT_TOKEN"] == srv.client_token
    # The server took the tokens from its environment: both work.
    with srv.client() as c:
        led = c.create("tabular", "practical-jdp", {"name": "riverswim"}, capacity=10, epsilon=1, delta=1e-5)
        assert c.credentials(led["experiment"], ["u"])


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc/PID/cmdline is Linux's")
def test_tokens_not_in_proc_cmdline(dprl_server: LocalServer) -> None:
    srv = dprl_server
    assert srv.proc is not None
    cmdline = Path(f"/proc/{srv.proc.pid}/cmdline").read_bytes()
    assert b"serve" in cmdline, cmdline  # the server's own process
    for tok in (srv.admin_token, srv.client_token):
        assert tok.encode() not in cmdline, "a token visible in /proc/PID/cmdline (ps)"
    environ = Path(f"/proc/{srv.proc.pid}/environ").read_bytes().split(b"\0")
    assert f"DPRL_ADMIN_TOKEN={srv.admin_token}".encode() in environ
