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


def _installed(tmp_path: Path, bundled: str | None) -> Path:
    """A copy of the package as a platform wheel installs it (site/dprl/…), with bin/dprl the
    shell script ``bundled`` standing in for the binary (None: no bin/dprl, a source install)."""
    site = tmp_path / "site"
    shutil.copytree(PKG / "dprl", site / "dprl", ignore=shutil.ignore_patterns("__pycache__", "bin"))
    if bundled is not None:
        (site / "dprl" / "bin").mkdir()
        _fake(site / "dprl" / "bin", "dprl", bundled)
    return site


def _find_in(site: Path, tmp_path: Path, code: str = "print(find_binary())") -> subprocess.CompletedProcess[str]:
    """Run code importing dprl from site, with a dprl of the package's version first on PATH, the
    real checkout as $DPRL_REPO (Go may be on PATH too) and an empty cache: everything a fallback
    could take."""
    other = tmp_path / "path-bin"
    other.mkdir(exist_ok=True)
    _fake(other, "dprl", f'echo "dprl version {dprl.__version__}"')
    cache = tmp_path / "cache"
    env = {k: v for k, v in os.environ.items() if k not in ("DPRL_BINARY", "PYTHONPATH")}
    env.update(PYTHONPATH=str(site), PATH=os.pathsep.join([str(other), env.get("PATH", "")]),
               DPRL_REPO=str(PKG.parent), DPRL_CACHE=str(cache))
    p = subprocess.run([sys.executable, "-c", "from dprl.server import *\n" + code], capture_output=True,
                       text=True, env=env, cwd=tmp_path, timeout=120)
    assert not cache.exists(), "a build into the cache was attempted"
    return p


def test_server_bundled_binary_comes_first(tmp_path: Path) -> None:
    site = _installed(tmp_path, f'echo "dprl version {dprl.__version__}"')
    p = _find_in(site, tmp_path, "print(find_binary()); print(bundled_binary())")
    assert p.returncode == 0, p.stderr
    want = str((site / "dprl" / "bin" / "dprl").resolve())
    assert p.stdout.split() == [want, want]


def test_server_bundled_binary_of_another_version_is_refused(tmp_path: Path) -> None:
    site = _installed(tmp_path, 'echo "dprl version 0.0.1"')
    for code in ("find_binary()", "LocalServer()", "simulate('http://127.0.0.1:1', 'e', 1, 'o.csv')"):
        p = _find_in(site, tmp_path, code)
        assert p.returncode != 0, p.stdout
        err = p.stderr.strip().splitlines()[-1]
        assert err.startswith("dprl.server.ServerError: "), p.stderr
        assert f"bin/dprl (bundled with this package) is dprl 0.0.1, but this Python package is dprl {dprl.__version__}" in err
        assert "reinstall the wheel" in err


def test_server_bundled_binary_not_executable_is_refused(tmp_path: Path) -> None:
    site = _installed(tmp_path, f'echo "dprl version {dprl.__version__}"')
    (site / "dprl" / "bin" / "dprl").chmod(0o644)
    p = _find_in(site, tmp_path, "LocalServer()")
    assert p.returncode != 0 and "(bundled with this package): not an executable file" in p.stderr, p.stderr


def test_server_source_install_finds_path_binary(tmp_path: Path) -> None:
    # Without bin/dprl (pip install ./python) the order is as before: dprl on PATH.
    site = _installed(tmp_path, None)
    p = _find_in(site, tmp_path, "print(find_binary()); print(bundled_binary())")
    assert p.returncode == 0, p.stderr
    assert p.stdout.split() == [str(tmp_path / "path-bin" / "dprl"), "None"]


def test_builds_of_two_checkouts_do_not_share_a_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two checkouts building at once (a CI clone beside a working tree) used to write the same
    ~/.cache/dprl/bin/dprl: one ran the other's binary, of the same version string but without
    its commands (`dprl report` was "unknown" in .ci/run). Each checkout now has its own path."""
    from dprl import server

    calls: list[list[str]] = []

    def fake_run(cmd: list[str], cwd: Path, **kw: object) -> subprocess.CompletedProcess[str]:
        calls.append(cmd)
        Path(cmd[cmd.index("-o") + 1]).write_text("#!/bin/sh\n")
        return subprocess.CompletedProcess(cmd, 0, "", "")

    monkeypatch.setattr(server.subprocess, "run", fake_run)
    monkeypatch.setattr(server.shutil, "which", lambda name: "/usr/bin/go")
    monkeypatch.setenv("DPRL_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(server, "_built", {})
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir(), b.mkdir()
    pa, pb = server.build_binary(a), server.build_binary(b)
    assert pa != pb and pa.is_file() and pb.is_file()
    assert not list(pa.parent.glob(".dprl.tmp-*"))
