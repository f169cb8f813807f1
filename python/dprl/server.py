"""Start a local ``dprl serve`` for scripts and tests.

    from dprl.server import LocalServer
    with LocalServer() as srv:                 # temporary data dir, random tokens, a free port
        c = srv.client()                       # a dprl.client.Client with both tokens
        ...
    # stopped with SIGTERM (the server drains: reports in flight are committed), data dir removed

The binary: ``binary=`` if given, else ``$DPRL_BINARY``, else the one a platform wheel carries
(``dprl/bin/dprl`` inside this package, :func:`bundled_binary`; built by scripts/build-wheel.sh),
else ``dprl`` on ``PATH``, else it is built with ``go build ./cmd/dprl`` from the dprl checkout
the package sits in (found by walking up from this file, then from the working directory and the
running script, for a ``go.mod`` declaring ``module github.com/dprl/dprl``; ``$DPRL_REPO`` names
it explicitly) into a cache directory (``$DPRL_CACHE``, else ``$XDG_CACHE_HOME/dprl``, else
``~/.cache/dprl``). The build runs once per process (Go's build cache makes a rebuild of an
unchanged tree quick), so the binary follows the checkout; if it fails, :class:`ServerError` says
why (an earlier build in the cache is never used in its place: it would be stale). Whichever
binary is found, its version (``dprl --version``) must be this package's
(``dprl.__version__``), else :class:`ServerError`; an installed wheel whose bundled binary is
missing its executable bit or of another version raises it too, and never falls back to a binary
on PATH or in the cache.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path

from .client import Client

__all__ = [
    "LocalServer", "ServerError", "find_repo", "find_binary", "bundled_binary", "build_binary", "binary_version",
    "simulate", "MODULE",
]

MODULE = "github.com/dprl/dprl"
_LISTENING = "dprl serve: listening on "


class ServerError(RuntimeError):
    """The server could not be found, built or started."""


def _is_repo(d: Path) -> bool:
    gm = d / "go.mod"
    try:
        with gm.open(encoding="utf-8") as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 2 and parts[0] == "module":
                    return parts[1] == MODULE
    except OSError:
        return False
    return False


def find_repo(start: str | os.PathLike[str] | None = None) -> Path | None:
    """The dprl checkout: ``$DPRL_REPO``, else the first directory above ``start`` (default: this
    package, then the working directory, then the running script's directory) whose go.mod
    declares module github.com/dprl/dprl."""
    env = os.environ.get("DPRL_REPO")
    if env:
        p = Path(env).resolve()
        return p if _is_repo(p) else None
    if start is not None:
        starts = [Path(start)]
    else:
        starts = [Path(__file__).resolve().parent, Path.cwd()]
        if sys.argv and sys.argv[0] and Path(sys.argv[0]).exists():
            starts.append(Path(sys.argv[0]).resolve().parent)  # a script inside the checkout
    for s in starts:
        for d in [s.resolve(), *s.resolve().parents]:
            if _is_repo(d):
                return d
    return None


def _cache_dir() -> Path:
    if os.environ.get("DPRL_CACHE"):
        return Path(os.environ["DPRL_CACHE"])
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "dprl"


_built: dict[Path, Path] = {}
_build_lock = threading.Lock()


def build_binary(repo: Path, out_dir: Path | None = None) -> Path:
    """``go build -o CACHE/bin/<checkout hash>/dprl ./cmd/dprl`` in repo (once per process per repo). When the
    build fails (a checkout being edited) it raises :class:`ServerError`, also when an earlier
    build exists: that one would not be the checkout's code."""
    with _build_lock:
        if repo in _built:
            return _built[repo]
        go = shutil.which("go")
        if go is None:
            raise ServerError("no dprl binary on PATH and no go toolchain to build one (install Go ≥ 1.26 or put dprl on PATH)")
        # One cache directory per checkout: two checkouts (or a CI clone beside a working
        # tree) building at once must not overwrite each other's binary, whose version string
        # is the same. The build goes to a temporary name and is renamed into place, so a
        # process running the previous build is never handed a half-written file.
        d = out_dir or (_cache_dir() / "bin" / hashlib.sha256(str(repo.resolve()).encode()).hexdigest()[:16])
        d.mkdir(parents=True, exist_ok=True)
        out = d / "dprl"
        tmp = d / f".dprl.tmp-{os.getpid()}"
        p = subprocess.run([go, "build", "-o", str(tmp), "./cmd/dprl"], cwd=repo, capture_output=True, text=True)
        if p.returncode != 0:
            tmp.unlink(missing_ok=True)
            stale = f" (the earlier build {out} is not used: it is not this checkout's code)" if out.is_file() else ""
            raise ServerError(f"go build ./cmd/dprl in {repo} failed (exit {p.returncode}){stale}:\n{p.stderr.strip()}")
        os.replace(tmp, out)
        _built[repo] = out
        return out


_VERSION_PREFIX = "dprl version "
_versions: dict[tuple[Path, int, int], str] = {}


def binary_version(binary: str | os.PathLike[str]) -> str:
    """The version a dprl binary reports (``dprl --version``: ``dprl version X``); raises
    :class:`ServerError` when it reports none."""
    p = Path(binary)
    try:
        st = p.stat()
        key = (p.resolve(), st.st_mtime_ns, st.st_size)
        if key in _versions:
            return _versions[key]
        out = subprocess.run([str(p), "--version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError) as e:
        raise ServerError(f"{p}: cannot run it to read its version: {e}") from e
    line = out.stdout.strip().splitlines()[0] if out.stdout.strip() else ""
    if out.returncode != 0 or not line.startswith(_VERSION_PREFIX):
        raise ServerError(f"{p}: not a dprl binary (`{p} --version` printed {line!r}, exit {out.returncode})")
    _versions[key] = line[len(_VERSION_PREFIX):].strip()
    return _versions[key]


def _checked(binary: Path, source: str, remedy: str = "") -> Path:
    """binary when its version is this package's, else :class:`ServerError` naming both."""
    from . import __version__

    v = binary_version(binary)
    if v != __version__:
        remedy = remedy or (
            f"rebuild it, e.g. go build ./cmd/dprl in the checkout, or name a dprl {__version__} with binary= or "
            "$DPRL_BINARY"
        )
        raise ServerError(
            f"{binary} ({source}) is dprl {v}, but this Python package is dprl {__version__}: a stale or "
            f"foreign binary is not used ({remedy})"
        )
    return binary


def bundled_binary() -> Path | None:
    """The dprl binary a platform wheel carries (``bin/dprl`` in this package's directory, put
    there by scripts/build-wheel.sh), or None when there is none (a source install or checkout)."""
    p = Path(__file__).resolve().parent / "bin" / "dprl"
    return p if os.path.lexists(p) else None


_BUNDLED_REMEDY = (
    "the wheel's binary and Python package are built together by scripts/build-wheel.sh: reinstall the wheel, "
    "or name another binary with binary= or $DPRL_BINARY"
)


def find_binary(binary: str | os.PathLike[str] | None = None) -> Path:
    """The dprl binary: ``binary``, ``$DPRL_BINARY``, the one this package carries when it was
    installed from a platform wheel (:func:`bundled_binary`), ``dprl`` on PATH, else built from
    the checkout (:func:`find_repo`, :func:`build_binary`). Its version must be this package's
    (:func:`binary_version`), else :class:`ServerError`; a bundled binary that is not executable
    or of another version raises it too (nothing else is tried in its place), and an earlier
    build in the cache is never used in place of the checkout's."""
    for cand, source in ((binary, "binary="), (os.environ.get("DPRL_BINARY"), "$DPRL_BINARY")):
        if cand:
            p = Path(cand)
            if not p.is_file() or not os.access(p, os.X_OK):
                raise ServerError(f"{p}: not an executable file")
            return _checked(p, source)
    b = bundled_binary()
    if b is not None:
        if not b.is_file() or not os.access(b, os.X_OK):
            raise ServerError(f"{b} (bundled with this package): not an executable file ({_BUNDLED_REMEDY})")
        return _checked(b, "bundled with this package", _BUNDLED_REMEDY)
    w = shutil.which("dprl")
    if w:
        return _checked(Path(w), "dprl on PATH")
    repo = find_repo()
    if repo is None:
        raise ServerError(
            "no dprl binary: not bundled (install the platform wheel built by scripts/build-wheel.sh), not on PATH, "
            f"$DPRL_BINARY unset, and no dprl checkout (go.mod of module {MODULE}) above "
            f"{Path(__file__).resolve().parent} or the working directory (set $DPRL_REPO)"
        )
    return _checked(build_binary(repo), f"built from {repo}")


def simulate(
    server_url: str,
    experiment: str,
    users: int,
    out: str | os.PathLike[str],
    admin_token: str | None = None,
    client_token: str | None = None,
    binary: str | os.PathLike[str] | None = None,
    args: Sequence[str] = (),
    timeout: float | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run ``dprl client simulate --experiment ID --server URL --users N --out CSV`` (the Go
    simulated users of any family: each fetches the policy, plays one episode of the
    experiment's environment, is evaluated exactly and reports); the CSV has the columns
    ``user,regret,cumulative_regret`` (the regrets are sent with the reports only to an
    experiment created as a simulation). Tokens default to ``$DPRL_ADMIN_TOKEN`` /
    ``$DPRL_CLIENT_TOKEN`` (the binary reads them); raises :class:`ServerError` on failure."""
    cmd = [str(find_binary(binary)), "client", "simulate", "--experiment", experiment, "--server", server_url,
           "--users", str(int(users)), "--out", str(out), *args]
    env = dict(os.environ)
    if admin_token:
        env["DPRL_ADMIN_TOKEN"] = admin_token
    if client_token:
        env["DPRL_CLIENT_TOKEN"] = client_token
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
    if p.returncode != 0:
        raise ServerError(f"dprl client simulate exited {p.returncode}:\n{p.stderr.strip()}")
    return p


class LocalServer:
    """A ``dprl serve`` subprocess on ``addr`` (default 127.0.0.1, any free port).

    ``data_dir`` defaults to a directory in a temporary directory (with the server's log,
    ``log_path``) removed on :meth:`stop` (``keep_data=True`` keeps it); the tokens default to random 32-character ones. ``seeded`` starts the test mode
    (``--seeded``). Use it as a context manager, or call :meth:`start` and :meth:`stop`."""

    def __init__(
        self,
        binary: str | os.PathLike[str] | None = None,
        data_dir: str | os.PathLike[str] | None = None,
        admin_token: str | None = None,
        client_token: str | None = None,
        addr: str = "127.0.0.1:0",
        seeded: bool = False,
        extra_args: Sequence[str] = (),
        keep_data: bool = False,
        startup_timeout: float = 120.0,
    ) -> None:
        self.binary = find_binary(binary)
        self._tmp: str | None = tempfile.mkdtemp(prefix="dprl-serve-")
        self.data_dir = Path(data_dir) if data_dir is not None else Path(self._tmp) / "data"
        self.log_path = Path(self._tmp) / "serve.log"
        self.admin_token = admin_token or "adm-" + secrets.token_urlsafe(24)
        self.client_token = client_token or "cli-" + secrets.token_urlsafe(24)
        self.addr = addr
        self.seeded = seeded
        self.extra_args = list(extra_args)
        self.keep_data = keep_data
        self.startup_timeout = startup_timeout
        self.url = ""
        self.proc: subprocess.Popen[str] | None = None
        self._reader: threading.Thread | None = None

    def command(self) -> list[str]:
        """The server's argv: never a token (every local user can read a process's arguments in
        ``ps`` and ``/proc/PID/cmdline``); the tokens go in its environment (:meth:`environment`)."""
        cmd = [str(self.binary), "serve", "--data", str(self.data_dir), "--addr", self.addr]
        if self.seeded:
            cmd.append("--seeded")
        return cmd + self.extra_args

    def environment(self) -> dict[str, str]:
        """The server's environment: this process's, with ``DPRL_ADMIN_TOKEN`` and
        ``DPRL_CLIENT_TOKEN`` set to the tokens (readable only by the same user)."""
        env = dict(os.environ)
        env["DPRL_ADMIN_TOKEN"] = self.admin_token
        env["DPRL_CLIENT_TOKEN"] = self.client_token
        return env

    def start(self) -> LocalServer:
        """Start the server and wait for its ``listening on URL`` line."""
        if self.proc is not None:
            raise ServerError("already started")
        self.data_dir.mkdir(parents=True, exist_ok=True)
        log = self.log_path.open("w", encoding="utf-8")
        self.proc = subprocess.Popen(
            self.command(), stdout=subprocess.PIPE, stderr=log, text=True, bufsize=1, start_new_session=True,
            env=self.environment(),
        )
        log.close()
        ready = threading.Event()
        found: list[str] = []
        proc = self.proc
        assert proc.stdout is not None
        stdout = proc.stdout

        def read() -> None:  # drain stdout into the log; note the URL
            with self.log_path.open("a", encoding="utf-8") as out:
                for line in stdout:
                    out.write(line)
                    out.flush()
                    if not found and line.startswith(_LISTENING):
                        found.append(line[len(_LISTENING) :].split()[0])
                        ready.set()
            ready.set()

        self._reader = threading.Thread(target=read, name="dprl-serve-stdout", daemon=True)
        self._reader.start()
        deadline = time.monotonic() + self.startup_timeout
        while not ready.wait(0.05):
            if proc.poll() is not None or time.monotonic() > deadline:
                break
        if not found:
            code = proc.poll()
            self.stop()
            raise ServerError(f"dprl serve did not start (exit {code}); its output:\n{self.log()}")
        self.url = found[0]
        return self

    def log(self) -> str:
        """The server's output so far (stdout and stderr)."""
        try:
            return self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""

    def client(self, timeout: float = 120.0) -> Client:
        """A :class:`~dprl.client.Client` of this server holding both tokens."""
        if not self.url:
            raise ServerError("not started")
        return Client(self.url, admin_token=self.admin_token, client_token=self.client_token, timeout=timeout)

    def simulate(
        self, experiment: str, users: int, out: str | os.PathLike[str], args: Sequence[str] = ()
    ) -> subprocess.CompletedProcess[str]:
        """:func:`simulate` against this server (its binary and tokens)."""
        return simulate(self.url, experiment, users, out, self.admin_token, self.client_token, self.binary, args)

    def stop(self, timeout: float = 60.0) -> int | None:
        """SIGTERM (the server drains and closes its store), SIGKILL after ``timeout`` s; then
        remove the temporary data directory unless ``keep_data``. Returns the exit status."""
        code: int | None = None
        if self.proc is not None:
            if self.proc.poll() is None:
                self.proc.send_signal(signal.SIGTERM)
                try:
                    self.proc.wait(timeout)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait()
            code = self.proc.returncode
            if self._reader is not None:
                self._reader.join(5)
            if self.proc.stdout is not None:
                self.proc.stdout.close()
            self.proc = None
        if self._tmp is not None and not self.keep_data:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None
        return code

    def __enter__(self) -> LocalServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
