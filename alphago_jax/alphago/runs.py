"""The pipeline directory: where each of AlphaGo's trained networks lives, and all of them loaded.

A pipeline directory holds the four training runs side by side (``SUBDIRS``: ``sl/``, ``rl/``,
``value/``, ``rollout/``, the ``--out`` of the four training commands). ``load_networks`` reads
the networks the AlphaGo player needs from it (``supervised.load_trained``), or from run
directories given one by one; ``value-train --dir`` finds its inputs by the same layout.
"""

from __future__ import annotations

import dataclasses
import pathlib
from typing import Any

from alphago_jax.alphago.supervised import POLICY_KINDS, load_trained

SUBDIRS = {"policy": "sl", "value": "value", "rollout": "rollout", "rl": "rl"}
"""The run directories of a pipeline directory, by role."""


@dataclasses.dataclass(frozen=True)
class AlphaGoNetworks:
    """The trained networks of an AlphaGo player (``supervised.Trained``; value or rollout may be
    None where ``lam`` does not need them)."""

    policy: Any
    value: Any = None
    rollout: Any = None

    @property
    def board_size(self) -> int:
        return self.policy.board_size

    @property
    def params(self) -> dict:
        """The search's parameters: ``{"policy", "value", "rollout"}`` (None where absent)."""
        return {"policy": self.policy.params, "value": self.value and self.value.params,
                "rollout": self.rollout and self.rollout.params}


def load_networks(directory=None, *, policy=None, value=None, rollout=None, lam: float = 0.5) -> AlphaGoNetworks:
    """The networks of a pipeline directory (``sl/``, ``value/``, ``rollout/``), or of the run
    directories given one by one (which take precedence).

    Raises:
      ValueError: a network the mixture needs is missing, the networks play different board
        sizes, or a checkpoint is corrupted (the message names the path).
    """
    if not 0.0 <= lam <= 1.0:
        raise ValueError(f"lam must be in [0, 1], got {lam}")

    def where(given, role):
        if given:
            return pathlib.Path(given).expanduser()
        if directory:
            return pathlib.Path(directory).expanduser() / SUBDIRS[role]
        return None

    paths = {role: where(given, role) for role, given in (("policy", policy), ("value", value), ("rollout", rollout))}
    if paths["policy"] is None:
        raise ValueError("alphago: give the pipeline directory (dir=DIR) or the policy's run (policy=DIR)")
    needed = {"policy": True, "value": lam < 1.0, "rollout": lam > 0.0}
    kinds = {"policy": POLICY_KINDS, "value": ("value",), "rollout": ("rollout",)}
    loaded = {}
    for role, path in paths.items():
        if not needed[role]:
            continue
        if path is None:
            raise ValueError(f"alphago: lam={lam} needs a {role} network: give dir=DIR or {role}=DIR")
        loaded[role] = load_trained(path, kinds[role])
    sizes = {role: t.board_size for role, t in loaded.items()}
    if len(set(sizes.values())) > 1:
        raise ValueError(f"alphago: the networks play different board sizes: {sizes}")
    return AlphaGoNetworks(**loaded)


__all__ = ["AlphaGoNetworks", "SUBDIRS", "load_networks"]
