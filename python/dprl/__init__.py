"""dprl's Python package.

* :mod:`dprl.gym_export` — export Gymnasium toy-text environments (FrozenLake, CliffWalking,
  Taxi) to dprl's tabular MDP file format (``dprl run --family tabular --env file``); needs the
  ``gym`` extra.
* :mod:`dprl.ldp` — practical-ldp's user-side randomiser (contribution, clipping, Gaussian
  noise), producing :class:`dprl.protocol.Privatized` reports.
* :mod:`dprl.protocol` — the report message and its JSON and binary encodings, byte for byte
  those of the Go package ``agents/protocol``.
"""

__version__ = "0.1.0"
