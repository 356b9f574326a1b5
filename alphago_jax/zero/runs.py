"""A training run's directory read back: its networks (``network_of_run``, ``export_network``,
``init_network`` for a new run's ``--init``, ``network_chain``) and its curves (``plot_run``).
"""

from __future__ import annotations

import dataclasses
import pathlib
from typing import Any, Mapping

import jax
import numpy as np

from alphago_jax import nets
from alphago_jax.features import zero as zero_features
from alphago_jax.train.jobs import checkpoint_dir
from alphago_jax.train.checkpoint import Checkpointer, CheckpointError
from alphago_jax.train.metrics import plot_metrics, read_metrics
from alphago_jax.zero.config import KIND, ZeroConfig, saved_config

PLOT_PANELS = (
    ("loss", "policy_loss", "value_loss", "ownership_loss"),
    ("win_random", "win_mcts", "win_best", "win_gnugo", "win_katago"),
    ("elo_random", "elo_mcts", "best_elo", "elo_gnugo", "elo_katago"),
)
"""The panels of ``metrics.png`` (columns of ``metrics.csv``)."""


def _plot_keys(metrics_csv) -> list[list[str]]:
    columns = read_metrics(metrics_csv)
    panels = [[k for k in panel if k in columns and np.any(np.isfinite(columns[k]))] for panel in PLOT_PANELS]
    return [p for p in panels if p]


def network_of_run(out_dir, *, iteration: int | None = None, which: str = "latest"):
    """The network of a run's checkpoint as a ``nets.saved.SavedNetwork`` (numpy variables).

    Args:
      out_dir: the run's directory.
      iteration: the checkpoint (default: the latest).
      which: ``"latest"`` (the network being trained) or ``"best"`` (the gated best one).

    Raises:
      CheckpointError / ValueError: naming the path, for a directory without a readable run.
    """
    from alphago_jax.nets.saved import SavedNetwork

    if which not in ("latest", "best"):
        raise ValueError(f"which must be 'latest' or 'best', got {which!r}")
    config = saved_config(out_dir)
    if config is None:
        raise ValueError(f"{checkpoint_dir(out_dir)}: no checkpoint of a training run")
    with Checkpointer(checkpoint_dir(out_dir), kind=KIND, read_only=True) as ckpt:
        restored = ckpt.restore(iteration)
    where = checkpoint_dir(out_dir) / str(restored.step)
    meta = restored.metadata
    try:
        train_state = restored.state["train"]
        variables = restored.state["best"] if which == "best" else {k: train_state[k] for k in ("params", "batch_stats")}
        steps = int(np.asarray(train_state["step"]))
    except (KeyError, TypeError) as e:
        raise CheckpointError(f"{where}: not an AlphaGo Zero run state (missing {e})") from None
    variables = jax.tree_util.tree_map(lambda x: np.asarray(x, np.float32), variables)
    info = {"run": str(pathlib.Path(out_dir).absolute()), "iteration": restored.step, "train_steps": steps,
            "network": which, "config": config.to_dict()}
    this_run = {"step": "alphago-jax train", "run": info["run"], "iteration": restored.step, "train_steps": steps,
                "wall_s": round(float(meta.get("elapsed_s", 0.0)), 1), "device": meta.get("device")}
    info["chain"] = list(meta.get("chain", [])) + [this_run]
    return SavedNetwork(net=config.net, variables=variables, board_size=config.board_size, komi=config.komi,
                        info=info, path=where)


WARM_START_FILE = "network.msgpack"
"""The network file in a warm-start directory (``alphago-jax warm-start --out DIR``)."""


def init_network(source, config: ZeroConfig):
    """The network a new run of ``config`` starts from (``train(..., init=source)``).

    ``source``: a network file (``export_network``, ``save_network``), a training run's directory
    (its latest network), or a warm-start directory (holding ``WARM_START_FILE``). Returns a
    ``nets.saved.SavedNetwork`` of ``config.net``: auxiliary heads the run has and the source
    lacks (e.g. the shipped network, a warm start) start freshly initialised; heads the source
    has and the run lacks are dropped. A run whose input planes extend the source's (``inputs=
    liberties`` from a ``stones`` network) gets the new planes' weights at zero (``_widened``).

    Raises:
      ValueError: naming ``source``: nothing usable there, or a network of another shape,
        inputs or board size than ``config``'s.
    """
    from alphago_jax.nets.saved import load_network

    path = pathlib.Path(source)
    if path.is_file():
        saved = load_network(path)
    elif (path / WARM_START_FILE).is_file():
        saved = load_network(path / WARM_START_FILE)
    elif checkpoint_dir(path).is_dir():
        saved = network_of_run(path)
    else:
        raise ValueError(f"--init {source}: not a network file, a training run's directory or a warm-start "
                         "directory")
    want, got = config.net, saved.net
    shape = ("blocks", "filters", "value_hidden")

    def described(n, size):
        sizes = ", ".join(f"{k}={getattr(n, k)}" for k in shape)
        return (f"{sizes}, inputs={zero_features.inputs_of(n.in_planes)}"
                + (", global pooling" if n.global_pool else "")
                + (", size-agnostic heads" if n.size_agnostic else "") + f", board {size}")

    names = [zero_features.INPUTS[zero_features.inputs_of(n.in_planes)] for n in (got, want)]
    if (any(getattr(want, k) != getattr(got, k) for k in shape + ("global_pool", "size_agnostic"))
            or names[1][:len(names[0])] != names[0]):
        raise ValueError(f"--init {source}: its network ({described(got, saved.board_size)}) does not fit this "
                         f"run's ({described(want, config.board_size)}); set the run's sizes and inputs to match")
    if not saved.plays(config.board_size):
        raise ValueError(f"--init {source}: its network was trained on {saved.board_size}x{saved.board_size} "
                         f"and its heads are sized for that board, so it cannot start a {config.board_size}x"
                         f"{config.board_size} run; only a size-agnostic network (size_agnostic=true) moves "
                         "between board sizes")
    if want.in_planes != got.in_planes:
        saved = _widened(saved, want.in_planes)
    if (want.ownership, want.score) == (got.ownership, got.score):
        return saved
    fresh = jax.jit(nets.init_variables, static_argnums=(0, 2))(want, jax.random.PRNGKey(config.seed),
                                                                 config.board_size)
    fresh = jax.tree_util.tree_map(np.asarray, fresh)
    # The heads are top-level modules: every other module's arrays come from the source.
    variables = {col: {name: saved.variables[col].get(name, module) for name, module in fresh[col].items()}
                 for col in fresh}
    return dataclasses.replace(saved, net=want, variables=variables)


def _widened(saved, in_planes: int):
    """``saved`` (a ``SavedNetwork``) reading ``in_planes`` input planes, its own first: the stem's
    weights on the new planes are zero, so it computes what it did until training moves them."""
    params = dict(saved.variables["params"])
    kernel = params["stem_conv"]["kernel"]  # [3, 3, planes, filters]
    extra = np.zeros(kernel.shape[:2] + (in_planes - kernel.shape[2], kernel.shape[3]), kernel.dtype)
    params["stem_conv"] = {**params["stem_conv"], "kernel": np.concatenate([kernel, extra], axis=2)}
    return dataclasses.replace(saved, net=saved.net.clone(in_planes=in_planes),
                               variables={**saved.variables, "params": params})


def network_chain(saved) -> list[dict]:
    """The provenance of a loaded network (``SavedNetwork``): every run and init behind it, oldest
    first, each a dict (``step``, and what it knows: command, run, steps, seconds, device)."""
    info = dict(saved.info)
    chain = list(info.pop("chain", []))
    if not chain:  # a file from before chains were recorded: its own description is the only step
        chain = [{"step": "network file", **{k: v for k, v in info.items() if k != "config"}}]
    return chain + [{"step": "init", "path": str(saved.path)}]


def export_network(out_dir, path, *, iteration: int | None = None, which: str = "latest",
                   info: Mapping[str, Any] | None = None) -> pathlib.Path:
    """Write the network of a run's checkpoint (``network_of_run``) to one file
    (``nets.saved.save_network``), for the players; ``info`` is added to the file's description
    (which already names the run, the iteration, the training steps and the configuration)."""
    from alphago_jax.nets.saved import network_config, save_network

    saved = network_of_run(out_dir, iteration=iteration, which=which)
    return save_network(path, saved.variables, **network_config(saved.net), board_size=saved.board_size,
                        komi=saved.komi, info={**saved.info, **dict(info or {})})


def plot_run(out_dir) -> pathlib.Path:
    """Draw ``out_dir/metrics.csv`` (losses, win rates, Elo) into ``out_dir/metrics.png``."""
    path = pathlib.Path(out_dir) / "metrics.csv"
    if not path.is_file():
        raise ValueError(f"{path}: no metrics file: is {out_dir} the output directory of a training run?")
    return plot_metrics(path, pathlib.Path(out_dir) / "metrics.png", keys=_plot_keys(path) or None)
