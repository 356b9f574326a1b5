"""The AlphaGo player (Silver et al. 2016), and its trained policies as players of their own.

``alphago_player(networks, ...)`` searches with PUCT on a tree kept between moves
(``search_player.SearchPlayer``): the SL policy network's probabilities are the priors, and a leaf
is valued by the mixture ``(1 - lam) v(s) + lam z`` of the value network's ``v`` and the outcome
``z`` of one rollout of the fast rollout policy to the end of the game (``lam = 0.5``, the
paper's choice; ``lam = 0`` needs no rollout policy, ``lam = 1`` no value network). The input
planes (AlphaGo's 48, and 49 for the value network) of a batch of leaves are computed once,
with their ladders read together (``supervised.batch_planes``; without the ladder planes if the
networks were trained without them).

``policy_player(trained, temperature, seed)`` plays a policy network alone: its move drawn from
the policy's probabilities (temperature 1, as the paper's matches between policies did), or
the most probable legal move (temperature 0).

The networks come from the pipeline's run directories (``alphago.runs.load_networks``): a
pipeline directory holds ``sl/``, ``rl/``, ``value/`` and ``rollout/`` (the ``--out`` of the
four training commands of ``alphago_jax.alphago``); any of them can be given on its own.
Registered in ``play.registry`` as ``alphago:dir=DIR,sims=N,lam=X,seed=N`` and
``alphago-policy:run=DIR,temperature=X,seed=N``, so the arena, GTP and terminal play use them.
"""

from __future__ import annotations

import functools
import pathlib

import jax
import jax.numpy as jnp
import numpy as np

from alphago_jax.alphago.runs import AlphaGoNetworks, load_networks
from alphago_jax.alphago.supervised import POLICY_KINDS, batch_planes, load_trained
from alphago_jax.features.alphago import NUM_PLANES, alphago_planes
from alphago_jax.play.options import parse_options
from alphago_jax.play.players import Decision, Network, PolicyPlayer
from alphago_jax.play.search_player import SearchPlayer
from alphago_jax.search import SearchConfig, mixed_evaluator, policy_rollout_evaluator


def alphago_evaluator(game, networks: AlphaGoNetworks, lam: float = 0.5, rollout_moves: int | None = None):
    """The search's leaf evaluator: SL policy priors, ``(1 - lam) v + lam z`` (``search.mixed_evaluator``).

    Args:
      game: the rules of the search (states with ``placed_at``: ``WithHistory``).
      networks: the trained networks; params at call time are ``networks.params``' layout.
      rollout_moves: a rollout's move limit (default ``search.policy_rollout_evaluator``'s);
        an unfinished rollout counts 0.
    """
    policy_net = networks.policy.net
    value_net = networks.value.net if networks.value is not None else None
    ladders = networks.policy.spec.get("ladders", True)
    value_ladders = networks.value.spec.get("ladders", True) if value_net is not None else ladders

    def network(params, states, key):
        del key
        planes = batch_planes(states, value_net=value_net is not None, ladders=ladders)
        logits = policy_net.apply({"params": params["policy"]}, planes[..., :NUM_PLANES])
        if value_net is None:
            return logits, jnp.zeros(logits.shape[:1], jnp.float32)
        if value_ladders != ladders:  # the networks were trained on different planes
            planes = batch_planes(states, value_net=True, ladders=value_ladders)
        return logits, value_net.apply({"params": params["value"]}, planes)

    if networks.rollout is None:
        return mixed_evaluator(network, network, 0.0)
    rollout = policy_rollout_evaluator(game, networks.rollout.net, rollout_moves, pick=lambda p: p["rollout"])
    return mixed_evaluator(network, rollout, lam)


def _params_for(networks: AlphaGoNetworks, name: str):
    params = jax.device_put(networks.params)

    def for_size(size: int):
        if size != networks.board_size:
            raise ValueError(f"{name} plays {networks.board_size}x{networks.board_size}, not {size}x{size}")
        return params

    return for_size


def alphago_player(networks: AlphaGoNetworks, simulations: int = 100, *, lam: float = 0.5, c_puct: float = 1.25,
                   nodes: int | None = None, leaf_batch: int = 1, seed: int = 0,
                   name: str | None = None) -> SearchPlayer:
    """The AlphaGo player: PUCT with ``simulations`` per move (see the module docstring).

    ``leaf_batch`` leaves are evaluated per network call (virtual loss keeps them apart);
    ``simulations`` must be a multiple of it. The most visited move is played, no root noise.
    """
    if simulations < 1 or simulations % leaf_batch:
        raise ValueError(f"alphago: sims must be a positive multiple of leaf_batch ({leaf_batch}), got {simulations}")
    config = SearchConfig(num_simulations=simulations, temperature=0.0, dirichlet_fraction=0.0, c_puct=c_puct,
                          leaf_batch=leaf_batch, tree_capacity=nodes or 8 * simulations + 1)
    name = name or f"alphago{simulations}"

    def evaluator(game):
        return alphago_evaluator(game, networks, lam)

    return SearchPlayer(evaluator, _params_for(networks, name), config, name=name, history=1, seed=seed)


class SampledPolicyPlayer(PolicyPlayer):
    """A policy network's move drawn from its probabilities at ``temperature`` (0: the most
    probable legal move). No value estimate: it never resigns."""

    def __init__(self, network: Network, temperature: float = 1.0, seed: int = 0, name: str | None = None):
        if temperature < 0:
            raise ValueError(f"temperature must be >= 0, got {temperature}")
        super().__init__(network, name)
        self.temperature = temperature
        self._rng = np.random.default_rng(seed)

    def _decide(self, colour, seconds) -> Decision:
        logits, _ = self._outputs(colour)  # -inf on illegal moves
        if self.temperature == 0:
            return Decision(int(np.argmax(logits)))
        z = logits / self.temperature
        p = np.exp(z - z.max())
        return Decision(int(self._rng.choice(len(p), p=p / p.sum())))


def policy_network(trained) -> Network:
    """A trained SL or RL policy as a ``players.Network`` (value 0: the policy has none)."""
    net = trained.net

    def apply(variables, planes):
        logits = net.apply(variables, planes)
        return logits, jnp.zeros(logits.shape[:1], jnp.float32)

    variables = _params_for(AlphaGoNetworks(trained), f"{trained.kind} policy ({trained.path})")
    planes = functools.partial(alphago_planes, ladders=trained.spec.get("ladders", True))
    return Network(apply=apply, planes=planes, variables=lambda size: {"params": variables(size)["policy"]},
                   history=1, name=f"{trained.kind}-policy")


def policy_player(trained, temperature: float = 1.0, seed: int = 0, name: str | None = None) -> SampledPolicyPlayer:
    """A trained SL or RL policy (``supervised.Trained``) playing alone, by sampling."""
    return SampledPolicyPlayer(policy_network(trained), temperature, seed,
                               name or f"{trained.kind}-policy" + ("" if temperature else "-greedy"))


# -------------------------------------------------------------------------- from a spec

def player_from_options(text: str):
    """``alphago:OPTIONS``: ``dir``, ``policy``, ``value``, ``rollout`` (run directories),
    ``sims`` (100), ``lam`` (0.5), ``c_puct`` (1.25), ``nodes``, ``leaf_batch`` (1), ``seed``."""
    options = parse_options(text, {"dir": str, "policy": str, "value": str, "rollout": str, "sims": int,
                                   "lam": float, "c_puct": float, "nodes": int, "leaf_batch": int, "seed": int},
                            "alphago")
    lam = options.pop("lam", 0.5)
    networks = load_networks(options.pop("dir", None), policy=options.pop("policy", None),
                             value=options.pop("value", None), rollout=options.pop("rollout", None), lam=lam)
    return alphago_player(networks, options.pop("sims", 100), lam=lam, **options)


def policy_player_from_options(text: str):
    """``alphago-policy:OPTIONS``: ``run`` (an SL or RL run directory), ``temperature`` (1),
    ``seed``."""
    options = parse_options(text, {"run": str, "temperature": float, "seed": int}, "alphago-policy")
    if "run" not in options:
        raise ValueError("alphago-policy: give the policy's run directory, e.g. alphago-policy:run=runs/alphago9/rl")
    trained = load_trained(pathlib.Path(options.pop("run")).expanduser(), POLICY_KINDS)
    return policy_player(trained, **options)


__all__ = [
    "SampledPolicyPlayer",
    "alphago_evaluator",
    "alphago_player",
    "player_from_options",
    "policy_network",
    "policy_player",
    "policy_player_from_options",
]
