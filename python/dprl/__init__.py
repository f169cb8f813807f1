"""dprl's Python package.

* :mod:`dprl.client` — a client of ``dprl serve``'s HTTP API (create, credentials, policy with
  an ETag cache, single and batch reports, ledger) on one keep-alive connection; errors are
  :class:`dprl.client.APIError` (status, code, field, message).
* :mod:`dprl.server` — start a local ``dprl serve`` (the binary a platform wheel carries, else
  the one on PATH, or built from the checkout) with a temporary data directory, random tokens and
  a free port; and run ``dprl client simulate``.
* :mod:`dprl.gym` — Gymnasium users of a served tabular experiment (``dprl.gym.run``): exported
  model, batched reports, exact regret per policy version, and ``dprl run``'s run directory;
  needs the ``gym`` extra.
* :mod:`dprl.gym_export` — export Gymnasium toy-text environments (FrozenLake, CliffWalking,
  Taxi) to dprl's tabular MDP file format (``dprl run --family tabular --env file``); needs the
  ``gym`` extra.
* :mod:`dprl.ldp` — practical-ldp's user-side randomiser (contribution, clipping, Gaussian
  noise), producing :class:`dprl.protocol.Privatized` reports.
* :mod:`dprl.protocol` — the report message and its JSON and binary encodings, byte for byte
  those of the Go package ``agents/protocol``.
"""

__version__ = "0.1.0"
