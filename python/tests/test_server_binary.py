"""The binary LocalServer runs is this package's version, never a stale or foreign one silently;
the examples leave no temporary directory behind."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import dprl
from dprl.server import LocalServer, ServerError, binary_version, build_binary, find_binary

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
PKG = Path(__file__).resolve().parents[1]


def _fake(tmp_path: Path, name: str, script: str) -> Path:
    p = tmp_path / name
    p.write_text("#!/bin/sh\n" + script + "\n")
    p.chmod(p.stat().st_mode | stat.S_IXUSR)
    return p


def test_server_binary_of_another_version_is_refused(tmp_path: Path) -> None:
    old = _fake(tmp_path, "dprl-old", 'echo "dprl version 0.0.1"')
    with pytest.raises(ServerError, match=rf"dprl 0\.0\.1, but this Python package is dprl {dprl.__version__}"):
        find_binary(old)
    with pytest.raises(ServerError, match="0.0.1"):
        LocalServer(binary=old)
    os.environ["DPRL_BINARY"] = str(old)
    try:
        with pytest.raises(ServerError, match=r"\$DPRL_BINARY"):
            find_binary()
    finally:
        del os.environ["DPRL_BINARY"]


def test_server_binary_without_a_version_is_refused(tmp_path: Path) -> None:
    for name, script in [("none", "exit 0"), ("fails", "echo oops; exit 3"), ("other", 'echo "other version 0.1.0"')]:
        with pytest.raises(ServerError, match="not a dprl binary"):
            find_binary(_fake(tmp_path, name, script))


def test_server_binary_version_is_the_package_version(dprl_server: LocalServer) -> None:
    assert binary_version(dprl_server.binary) == dprl.__version__
    assert find_binary(dprl_server.binary) == dprl_server.binary


@pytest.mark.skipif(shutil.which("go") is None, reason="needs the go toolchain (CI has it)")
def test_server_failed_build_does_not_fall_back_to_an_earlier_one(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "cmd" / "dprl").mkdir(parents=True)
    (repo / "go.mod").write_text("module github.com/dprl/dprl\n\ngo 1.22\n")
    (repo / "cmd" / "dprl" / "main.go").write_text("package main\n\nfunc main() { this does not compile }\n")
    bin_dir = tmp_path / "cache"
    bin_dir.mkdir()
    earlier = _fake(bin_dir, "dprl", f'echo "dprl version {dprl.__version__}"')
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ServerError, match="failed") as e:
            build_binary(repo, bin_dir)
    assert str(earlier) in str(e.value) and "not used" in str(e.value)


def test_server_examples_leave_no_temporary_directory(dprl_server: LocalServer, tmp_path: Path) -> None:
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {**os.environ, "TMPDIR": str(tmp), "DPRL_BINARY": str(dprl_server.binary),
           "PYTHONPATH": os.pathsep.join([str(PKG), os.environ.get("PYTHONPATH", "")])}
    for k in ("DPRL_SERVER", "DPRL_ADMIN_TOKEN", "DPRL_CLIENT_TOKEN"):
        env.pop(k, None)
    # No --out and no --server: the example starts its own server and writes a temporary CSV.
    p = subprocess.run([sys.executable, str(EXAMPLES / "lq_e1.py"), "--users", "20"], capture_output=True, text=True,
                       env=env, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "20 users" in p.stdout
    assert sorted(os.listdir(tmp)) == [], f"left behind in TMPDIR: {os.listdir(tmp)}"
