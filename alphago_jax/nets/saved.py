"""AlphaGo Zero networks saved as one file: the network shipped with the package, and exports of
training runs (``alphago-jax export``).

A file is msgpack (``flax.serialization``) of a header and the float32 variables::

    {"format": "alphago_jax-network", "version": 1, "kind": "dual_resnet",
     "config": {"blocks", "filters", "value_hidden", "board_size", "komi", "inputs",
                "ownership", "score", "global_pool", "size_agnostic"},
     "info": {...anything JSON-able: the run, iteration, training steps, the command...},
     "variables": <msgpack bytes of {"params", "batch_stats"}>, "crc32": <of those bytes>}

The four switches (``SWITCHES``) are off when absent, and ``inputs`` (the input planes,
``features.zero.INPUTS``) is ``"stones"``. Loading checks the header, the checksum and
every array's shape against the network the header describes, and raises ``ValueError`` naming
the file for anything that does not fit.
"""

from __future__ import annotations

import dataclasses
import pathlib
import zlib
from typing import Any

import jax
import numpy as np
from flax import serialization

from alphago_jax.features import zero as zero_features
from alphago_jax.files import write_atomic
from alphago_jax.nets.resnet import DualResNet
from alphago_jax.nets.variables import init_variables

FORMAT = "alphago_jax-network"
VERSION = 1


@dataclasses.dataclass(frozen=True)
class SavedNetwork:
    """A loaded network file.

    Attributes:
      net: the ``DualResNet`` (its ``in_planes``: those of ``inputs``).
      variables: ``{"params", "batch_stats"}``, float32 numpy leaves.
      board_size: the board it was trained on (the only one it plays unless ``size_agnostic``).
      komi: the komi it was trained with.
      info: the file's free-form description (run, iteration, command, ...).
      path: where it was read from.
    """

    net: DualResNet
    variables: Any
    board_size: int
    komi: float
    info: dict
    path: pathlib.Path

    @property
    def inputs(self) -> str:
        """The network's input planes (a key of ``features.zero.INPUTS``)."""
        return zero_features.inputs_of(self.net.in_planes)

    def plays(self, size: int) -> bool:
        """Whether the network runs on a ``size`` x ``size`` board."""
        return size == self.board_size or self.net.size_agnostic


def _host(tree):
    return jax.tree_util.tree_map(lambda x: np.asarray(x, np.float32), tree)


SWITCHES = ("ownership", "score", "global_pool", "size_agnostic")
"""``DualResNet``'s boolean fields that a file records (missing: False)."""


def network_config(net: DualResNet) -> dict:
    """``save_network``'s keyword arguments that describe ``net`` (``blocks``, ``filters``,
    ``value_hidden``, ``inputs``, the ``SWITCHES``)."""
    return {"blocks": net.blocks, "filters": net.filters, "value_hidden": net.value_hidden,
            "inputs": zero_features.inputs_of(net.in_planes),
            **{k: bool(getattr(net, k)) for k in SWITCHES}}


def save_network(path, variables, *, blocks: int, filters: int, value_hidden: int, board_size: int,
                 komi: float, info: dict | None = None, inputs: str = "stones", ownership: bool = False,
                 score: bool = False, global_pool: bool = False, size_agnostic: bool = False) -> pathlib.Path:
    """Write the ``variables`` of the ``DualResNet`` the arguments describe (``network_config``) to
    ``path``, atomically; returns the path."""
    zero_features.num_planes(inputs)  # an unknown input set is refused before anything is written
    body = serialization.msgpack_serialize(serialization.to_state_dict(_host(variables)))
    record = {
        "format": FORMAT, "version": VERSION, "kind": "dual_resnet",
        "config": {"blocks": int(blocks), "filters": int(filters), "value_hidden": int(value_hidden),
                   "board_size": int(board_size), "komi": float(komi),
                   "inputs": inputs, "ownership": bool(ownership),
                   "score": bool(score), "global_pool": bool(global_pool),
                   "size_agnostic": bool(size_agnostic)},
        "info": dict(info or {}), "variables": body, "crc32": zlib.crc32(body),
    }
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    return write_atomic(path, serialization.msgpack_serialize(record))


def load_network(path) -> SavedNetwork:
    """Read a network file written by ``save_network``; ``ValueError`` naming ``path`` if it is
    missing, unreadable, of another format or version, damaged, or does not fit its header."""
    path = pathlib.Path(path)
    if not path.is_file():
        raise ValueError(f"{path}: no such network file")

    def bad(why):
        return ValueError(f"{path}: not a usable network file: {why}")

    try:
        record = serialization.msgpack_restore(path.read_bytes())
    except Exception as e:  # msgpack raises several types for damaged data
        raise bad(f"cannot decode it ({type(e).__name__})") from None
    if not isinstance(record, dict) or record.get("format") != FORMAT:
        raise bad(f"the header does not say {FORMAT!r}")
    if record.get("version") != VERSION or record.get("kind") != "dual_resnet":
        raise bad(f"version {record.get('version')!r} / kind {record.get('kind')!r}; this version reads "
                  f"{VERSION} / 'dual_resnet'")
    body = record.get("variables")
    if not isinstance(body, bytes) or zlib.crc32(body) != record.get("crc32"):
        raise bad("its arrays fail their checksum (the file is damaged)")
    try:
        config = record["config"]
        switches = {k: config.get(k, False) for k in SWITCHES}  # older files: all off
        if any(not isinstance(v, bool) for v in switches.values()):
            raise ValueError(f"switches must be true or false, got {switches}")
        in_planes = zero_features.num_planes(config.get("inputs", "stones"))  # older files: 17 planes
        net = DualResNet(in_planes=in_planes, blocks=int(config["blocks"]),
                         filters=int(config["filters"]), value_hidden=int(config["value_hidden"]), **switches)
        size, komi = int(config["board_size"]), float(config["komi"])
    except (KeyError, TypeError, ValueError) as e:
        raise bad(f"bad network description ({e})") from None
    expected = jax.eval_shape(lambda: init_variables(net, jax.random.PRNGKey(0), size))
    try:
        stored = serialization.msgpack_restore(body)
        variables = serialization.from_state_dict(expected, stored)
    except Exception as e:
        raise bad(f"its arrays do not fit the network it describes ({e})") from None
    # from_state_dict ignores arrays the network lacks (e.g. a head whose switch is missing).
    extra = sorted(set(_paths(stored)) - set(_paths(serialization.to_state_dict(expected))))
    if extra:
        raise bad(f"it holds arrays the network it describes does not have: {', '.join(extra[:3])}")
    for (where, want), got in zip(jax.tree_util.tree_leaves_with_path(expected), jax.tree_util.tree_leaves(variables)):
        if np.shape(got) != want.shape:
            raise bad(f"array {jax.tree_util.keystr(where)} has shape {np.shape(got)}, the network needs {want.shape}")
    return SavedNetwork(net=net, variables=_host(variables), board_size=size, komi=komi,
                        info=dict(record.get("info") or {}), path=path)


def _paths(tree, prefix: str = "") -> list[str]:
    """The ``/``-joined key paths of the leaves of a nested dict."""
    if not isinstance(tree, dict):
        return [prefix]
    return [p for k, v in tree.items() for p in _paths(v, f"{prefix}/{k}")]


__all__ = ["FORMAT", "SWITCHES", "VERSION", "SavedNetwork", "load_network", "network_config", "save_network"]
