"""A client of ``dprl serve``'s HTTP/JSON API (v1; ``docs/serve.md``, ``service/openapi.json``).

    from dprl.client import Client, APIError
    with Client("http://127.0.0.1:8080", admin_token=A, client_token=C) as c:
        exp = c.create(family="tabular", agent="practical-jdp", env={"name": "riverswim"},
                       epsilon=1, delta=1e-5, capacity=10_000)
        creds = c.credentials(exp["experiment"], ["u1", "u2"])
        pol = c.policy(exp["experiment"])            # cached by ETag (If-None-Match → 304)
        ack = c.submit(exp["experiment"], "u1", creds["u1"], report, idempotency_key="u1")
        res = c.submit_batch(exp["experiment"], [BatchItem(...), ...])   # ≤ 256, in order
        c.ledger(exp["experiment"])

Transport: one persistent keep-alive ``http.client`` connection per :class:`Client` (not
thread-safe: use one client per thread). A request on a reused connection that the server closed
while it was idle (``RemoteDisconnected``, a reset or a broken pipe before any response) is sent
again once on a new connection — as browsers do; a report carries its idempotency key, so a
resent report is never counted twice.

Errors: every 4xx/5xx answer raises :class:`APIError` with the server's ``status``, ``code``,
``field`` and ``message``; a refused item of a batch is a :class:`BatchResult` with ``error`` set
(:meth:`BatchResult.raise_for_error` raises it).
"""

from __future__ import annotations

import http.client
import json
import math
import socket
import urllib.parse
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Union

from .protocol import Privatized, encode_json

__all__ = [
    "APIError",
    "Policy",
    "BatchItem",
    "BatchResult",
    "Client",
    "MAX_BATCH",
    "MAX_CREDENTIAL_USERS",
    "report_json",
]

MAX_BATCH = 256
"""The largest number of reports in one batch (service.MaxBatch)."""
MAX_CREDENTIAL_USERS = 10_000
"""The largest number of users in one credentials request (service.MaxCredentialUsers)."""

Report = Union[Mapping[str, Any], Privatized, bytes, str]
"""A report: a JSON object (``{"header", "states", "actions", "rewards"}`` or ``{"header",
"blocks"}``), a :class:`~dprl.protocol.Privatized` message, or its encoded bytes/text (JSON,
or for :meth:`Client.submit` only, dprl's binary encoding)."""


class APIError(Exception):
    """An error answer of the server: ``{"error": {"code", "field", "message"}}`` with its
    HTTP status (``status`` 0 and ``code`` ``"transport"`` for a connection failure)."""

    def __init__(self, status: int, code: str, field: str, message: str) -> None:
        self.status = status
        self.code = code
        self.field = field
        self.message = message
        where = f" [{field}]" if field else ""
        super().__init__(f"{status} {code}{where}: {message}")

    @classmethod
    def from_body(cls, status: int, body: bytes) -> APIError:
        try:
            e = json.loads(body)["error"]
            return cls(status, str(e.get("code", "")), str(e.get("field", "") or ""), str(e.get("message", "")))
        except (ValueError, KeyError, TypeError, AttributeError):
            text = body[:500].decode("utf-8", "replace").strip()
            return cls(status, "http_error", "", text or http.client.responses.get(status, "error"))


@dataclass(frozen=True)
class Policy:
    """A published policy: ``GET /v1/experiments/{id}/policy``.

    ``header`` is the report header to copy into every report; ``rule`` the family's decision
    rule (tabular: ``{"Act": [[a for s] for h], "Prob": None}``); ``user_side`` the randomiser
    parameters the server says it calibrated (practical-ldp: states, actions, horizon, pool,
    public_rewards, visit_cap, norm_budget, reward_weight, sigma), else None — the server's claim: a locally private user
    computes her own (:func:`dprl.ldp.calibrate`) and only checks these against them
    (:func:`dprl.ldp.check_published`), never builds her noise from them."""

    experiment: str
    version: int
    header: dict[str, Any]
    rule: Any
    user_side: dict[str, Any] | None
    etag: str

    @classmethod
    def from_obj(cls, o: Mapping[str, Any], etag: str) -> Policy:
        us = o.get("user_side")
        return cls(
            experiment=str(o["experiment"]),
            version=int(o["version"]),
            header=dict(o["header"]),
            rule=o.get("rule"),
            user_side=dict(us) if us is not None else None,
            etag=etag,
        )


@dataclass(frozen=True)
class BatchItem:
    """One report of a batch: the user, her credential, the idempotency key, the report and (for
    simulators) the exact regret of her episode."""

    user: str
    credential: str
    idempotency_key: str
    report: Report
    simulated_regret: float | None = None


@dataclass(frozen=True)
class BatchResult:
    """The answer for one batch item: ``status`` 201 (acknowledged), 200 (an idempotent retry)
    with ``ack`` (``sequence``, ``policy_version``, …), or a 4xx with ``error``."""

    status: int
    ack: dict[str, Any] | None = None
    error: APIError | None = None

    @property
    def ok(self) -> bool:
        return self.error is None and 200 <= self.status < 300

    def raise_for_error(self) -> dict[str, Any]:
        """The acknowledgement, or raise the item's :class:`APIError`."""
        if self.error is not None:
            raise self.error
        if self.ack is None:
            raise APIError(self.status, "no_ack", "", "the server answered without an acknowledgement")
        return self.ack


def _fast_dumps(o: Any) -> str:
    return json.dumps(o, separators=(",", ":"), allow_nan=False)


def report_json(report: Report) -> str:
    """A report's JSON text (a Privatized message in Go's exact encoding; a mapping compactly)."""
    if isinstance(report, Privatized):
        return encode_json(report).decode("utf-8")
    if isinstance(report, bytes):
        if report.startswith(b"DPRL"):
            raise ValueError("report: a batch item holds a JSON report, not the binary encoding")
        return report.decode("utf-8")
    if isinstance(report, str):
        return report
    return _fast_dumps(report)


def _check_regret(x: float | None) -> float | None:
    if x is None:
        return None
    x = float(x)
    if not math.isfinite(x):
        raise ValueError(f"simulated_regret: must be finite, got {x!r}")
    return min(max(x, 0.0), 1e9)  # the server takes [0, 1e9]; rounding may give −1e−17


class Client:
    """A client of one ``dprl serve`` (see the module docstring).

    ``base_url`` is ``http://HOST:PORT`` or ``https://…``; ``admin_token`` is needed to create
    experiments and mint credentials, ``client_token`` to submit reports; reading policies and
    ledgers needs none."""

    def __init__(
        self,
        base_url: str,
        admin_token: str | None = None,
        client_token: str | None = None,
        timeout: float = 120.0,
    ) -> None:
        u = urllib.parse.urlsplit(base_url)
        if u.scheme not in ("http", "https") or not u.hostname:
            raise ValueError(f"base_url: want http://HOST:PORT or https://HOST:PORT, got {base_url!r}")
        self.base_url = base_url.rstrip("/")
        self._scheme = u.scheme
        self._host = u.hostname
        self._port = u.port
        self._prefix = u.path.rstrip("/")
        self.admin_token = admin_token
        self.client_token = client_token
        self.timeout = timeout
        self._conn: http.client.HTTPConnection | None = None
        self._policies: dict[str, Policy] = {}
        self.requests = 0
        """Requests sent (for tests and benchmarks)."""

    # ---------------------------------------------------------------- transport

    def close(self) -> None:
        """Close the connection (a later request opens a new one)."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _connection(self) -> http.client.HTTPConnection:
        if self._conn is None:
            if self._scheme == "https":
                self._conn = http.client.HTTPSConnection(self._host, self._port, timeout=self.timeout)
            else:
                self._conn = http.client.HTTPConnection(self._host, self._port, timeout=self.timeout)
            self._conn.connect()
            try:
                self._conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            except (OSError, AttributeError):
                pass
        return self._conn

    def request(
        self,
        method: str,
        path: str,
        body: bytes | None = None,
        headers: Mapping[str, str] | None = None,
        token: str | None = None,
        ok: Sequence[int] = (200, 201),
    ) -> tuple[int, dict[str, str], bytes]:
        """Send one request on the persistent connection; return (status, headers, body) or
        raise :class:`APIError` for a status outside ``ok``."""
        h: dict[str, str] = {"Accept": "application/json"}
        if body is not None:
            h["Content-Type"] = "application/json"
        if token is not None:
            h["Authorization"] = "Bearer " + token
        if headers:
            h.update(headers)
        url = self._prefix + path
        for attempt in (0, 1):
            reused = self._conn is not None
            try:
                conn = self._connection()
                conn.request(method, url, body=body, headers=h)
                resp = conn.getresponse()
                data = resp.read()
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError, http.client.CannotSendRequest) as e:
                self.close()
                if reused and attempt == 0:
                    continue  # the server closed the idle connection: send it again, once
                raise APIError(0, "transport", "", f"{method} {path}: {type(e).__name__}: {e}") from e
            except (OSError, http.client.HTTPException) as e:
                self.close()
                raise APIError(0, "transport", "", f"{method} {path}: {type(e).__name__}: {e}") from e
            self.requests += 1
            if resp.will_close:
                self.close()
            hdrs = {k.lower(): v for k, v in resp.getheaders()}
            if resp.status not in ok:
                raise APIError.from_body(resp.status, data)
            return resp.status, hdrs, data
        raise AssertionError("unreachable")

    def _json(
        self, method: str, path: str, obj: Any = None, token: str | None = None
    ) -> Any:
        body = None if obj is None else _fast_dumps(obj).encode("utf-8")
        _, _, data = self.request(method, path, body=body, token=token)
        return json.loads(data)

    def _need(self, token: str | None, which: str) -> str:
        if not token:
            raise ValueError(f"this request needs the {which} token (Client(..., {which}_token=...))")
        return token

    @staticmethod
    def _id(exp: str) -> str:
        return urllib.parse.quote(exp, safe="")

    # ---------------------------------------------------------------- API

    def create(
        self,
        family: str,
        agent: str,
        env: Mapping[str, Any],
        capacity: int,
        epsilon: float | None = None,
        delta: float | None = None,
        seed: int | None = None,
        non_private: bool = False,
        simulation: bool = False,
    ) -> dict[str, Any]:
        """``POST /v1/experiments``: create an experiment; returns its ledger (``experiment`` is
        its ID, ``capacity`` the users whose reports count, ``episodes`` K, ``private`` whether
        the agent's accountant certifies ``epsilon`` and ``delta``). ``env`` is
        ``{"name": NAME, "params": {…}}`` or ``{"name": "file", "model": {…}}``; ``seed`` only
        against ``dprl serve --seeded``.

        A private experiment needs ``epsilon`` (the server refuses one its agent's accountant does
        not certify); ``delta`` must lie in (0, 1) (omitted: the server's default, stated in the
        answer). ``non_private=True`` (with neither ``epsilon`` nor ``delta``) creates a
        non-private baseline, labelled NON-PRIVATE. ``simulation=True`` marks simulated users:
        only then may reports carry a ``simulated_regret``."""
        req: dict[str, Any] = {"family": family, "agent": agent, "env": dict(env), "capacity": int(capacity)}
        if epsilon is not None:
            req["epsilon"] = float(epsilon)
        if delta is not None:
            req["delta"] = float(delta)
        if non_private:
            req["non_private"] = True
        if simulation:
            req["simulation"] = True
        if seed is not None:
            req["seed"] = int(seed)
        out: dict[str, Any] = self._json("POST", "/v1/experiments", req, self._need(self.admin_token, "admin"))
        return out

    def experiments(self) -> list[dict[str, Any]]:
        """``GET /v1/experiments``: every experiment's public state."""
        out: list[dict[str, Any]] = self._json("GET", "/v1/experiments")["experiments"]
        return out

    def ledger(self, exp: str) -> dict[str, Any]:
        """``GET /v1/experiments/{id}/ledger``: the experiment's public state (guarantee,
        accountant, capacity, users served, releases, simulated regret)."""
        out: dict[str, Any] = self._json("GET", f"/v1/experiments/{self._id(exp)}/ledger")
        return out

    def credentials(self, exp: str, users: Iterable[str | int]) -> dict[str, str]:
        """``POST /v1/experiments/{id}/credentials``: mint the users' credentials (requests of at
        most 10 000 users are sent as needed); returns ``{user: credential}``."""
        ids = [str(u) for u in users]
        out: dict[str, str] = {}
        tok = self._need(self.admin_token, "admin")
        for i in range(0, len(ids), MAX_CREDENTIAL_USERS):
            got = self._json("POST", f"/v1/experiments/{self._id(exp)}/credentials", {"users": ids[i : i + MAX_CREDENTIAL_USERS]}, tok)
            out.update(got["credentials"])
        return out

    def policy(self, exp: str, refresh: bool = True) -> Policy:
        """``GET /v1/experiments/{id}/policy`` with ``If-None-Match`` of the cached version: a
        304 answer returns the cached :class:`Policy`. ``refresh=False`` returns the cached one
        without asking, when there is one."""
        cached = self._policies.get(exp)
        if cached is not None and not refresh:
            return cached
        hdr = {"If-None-Match": cached.etag} if cached is not None else None
        status, h, data = self.request("GET", f"/v1/experiments/{self._id(exp)}/policy", headers=hdr, ok=(200, 304))
        if status == 304 and cached is not None:
            return cached
        p = Policy.from_obj(json.loads(data), h.get("etag", ""))
        self._policies[exp] = p
        return p

    def cached_policy(self, exp: str) -> Policy | None:
        """The cached policy of exp, if any (no request)."""
        return self._policies.get(exp)

    def submit(
        self,
        exp: str,
        user: str,
        credential: str,
        report: Report,
        idempotency_key: str,
        simulated_regret: float | None = None,
    ) -> dict[str, Any]:
        """``POST /v1/experiments/{id}/reports``: one user's report (JSON, or the binary
        encoding as bytes); returns the acknowledgement (201, or 200 for an idempotent retry)."""
        if isinstance(report, bytes):
            body = report
        elif isinstance(report, Privatized):
            body = encode_json(report)
        else:
            body = report_json(report).encode("utf-8")
        h = {"Dprl-User": user, "Dprl-User-Credential": credential, "Idempotency-Key": idempotency_key}
        r = _check_regret(simulated_regret)
        if r is not None:
            h["Dprl-Simulated-Regret"] = repr(r)
        if body.startswith(b"DPRL"):
            h["Content-Type"] = "application/octet-stream"
        _, _, data = self.request(
            "POST", f"/v1/experiments/{self._id(exp)}/reports", body=body, headers=h, token=self._need(self.client_token, "client")
        )
        out: dict[str, Any] = json.loads(data)
        return out

    def submit_batch(self, exp: str, items: Sequence[BatchItem]) -> list[BatchResult]:
        """``POST /v1/experiments/{id}/reports/batch``: up to 256 reports, committed in the order
        given; one :class:`BatchResult` per item (a refused item changes nothing; its error
        names ``reports[i].field``)."""
        if not 1 <= len(items) <= MAX_BATCH:
            raise ValueError(f"items: 1 to {MAX_BATCH} reports per batch, got {len(items)}")
        parts = []
        for it in items:
            head: dict[str, Any] = {"user": it.user, "credential": it.credential, "idempotency_key": it.idempotency_key}
            r = _check_regret(it.simulated_regret)
            if r is not None:
                head["simulated_regret"] = r
            parts.append(_fast_dumps(head)[:-1] + ',"report":' + report_json(it.report) + "}")
        body = ('{"reports":[' + ",".join(parts) + "]}").encode("utf-8")
        _, _, data = self.request(
            "POST", f"/v1/experiments/{self._id(exp)}/reports/batch", body=body, token=self._need(self.client_token, "client")
        )
        out = []
        for r in json.loads(data)["results"]:
            e = r.get("error")
            err = None
            if e is not None:
                err = APIError(int(r["status"]), str(e.get("code", "")), str(e.get("field", "") or ""), str(e.get("message", "")))
            out.append(BatchResult(status=int(r["status"]), ack=r.get("ack"), error=err))
        return out

    def health(self) -> bool:
        """``GET /readyz``: True when the server is ready (not draining)."""
        try:
            self.request("GET", "/readyz")
            return True
        except APIError:
            return False

