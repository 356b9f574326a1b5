"""Players and networks by name, for the command line: ``make_player("mcts:sims=200")``.

A player spec is ``KIND`` or ``KIND:OPTIONS``; for most kinds the options are
``name=value`` pairs separated by commas::

    random                          uniformly random legal moves       (seed)
    mcts:sims=200                   pure-rollout MCTS                  (sims, nodes, c_puct, seed)
    net:net=untrained,sims=64       a network with PUCT search         (net, sims, nodes, c_puct, symmetries, seed)
    policy:net=untrained            a network's raw policy             (net)
    gtp:/usr/games/gnugo --mode gtp --level 1    an external GTP engine (the rest is its command line)
    /usr/games/gnugo --mode gtp     the same: a spec whose first word is a path runs that engine

``sims`` is the simulations per move without a time limit (default 200); ``nodes`` the tree's
capacity (default ``8 * sims + 1``), which bounds a move searched for a time and ``lz-analyze``.

Network sources (``net=``): ``untrained`` (a small randomly initialised AlphaGo Zero
network, seed ``untrained:SEED``: for smoke tests), ``shipped`` and ``checkpoint:PATH``.

Kinds and sources still to come are registered as planned (``shipped``, ``checkpoint``,
``alphago``, ``grave``, ``mcps``): naming one says so. They are added with
``register_player`` / ``register_network``, which replace a planned entry.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Callable

import jax

from alphago_jax.play.players import Network, Player, PolicyPlayer, RandomPlayer, mcts_player, network_player


@dataclasses.dataclass(frozen=True)
class Entry:
    """A registered name: ``build(arg)`` makes the thing from the text after ``name:``;
    ``build`` None marks a name that is planned but not available yet."""

    name: str
    summary: str
    build: Callable[[str], object] | None


_PLAYERS: dict[str, Entry] = {}
_NETWORKS: dict[str, Entry] = {}


def register_player(name: str, summary: str, build: Callable[[str], Player] | None) -> None:
    """Add (or replace) a player kind: ``build(options_text) -> Player``."""
    _PLAYERS[name] = Entry(name, summary, build)


def register_network(name: str, summary: str, build: Callable[[str], Network] | None) -> None:
    """Add (or replace) a network source: ``build(arg_text) -> Network``."""
    _NETWORKS[name] = Entry(name, summary, build)


def _known(table: dict[str, Entry]) -> str:
    ready = sorted(n for n, e in table.items() if e.build is not None)
    planned = sorted(n for n, e in table.items() if e.build is None)
    return ", ".join(ready) + (f" (planned, not available yet: {', '.join(planned)})" if planned else "")


def known_players() -> str:
    """The player kinds, for error messages and ``--help``."""
    return _known(_PLAYERS)


def player_help() -> str:
    """One line per player kind."""
    return "\n".join(f"  {e.name:<10} {e.summary}" + ("" if e.build else " [planned]")
                     for e in sorted(_PLAYERS.values(), key=lambda e: e.name))


def _lookup(table: dict[str, Entry], what: str, spec: str):
    spec = spec.strip()
    name, _, arg = spec.partition(":")
    entry = table.get(name.strip().lower())
    if entry is None:
        raise ValueError(f"unknown {what} {name.strip()!r}; known: {_known(table)}")
    if entry.build is None:
        raise ValueError(f"{what} {entry.name!r} ({entry.summary}) is not available yet; available: "
                         f"{', '.join(sorted(n for n, e in table.items() if e.build))}")
    return entry, arg.strip()


def make_player(spec: str) -> Player:
    """A player from its spec (see the module docstring).

    Raises:
      ValueError: naming the known kinds for an unknown one, or the bad option.
      GTPError: if an external engine cannot be started.
    """
    spec = spec.strip()
    if not spec:
        raise ValueError(f"empty player spec; known: {known_players()}")
    if "/" in spec.split()[0].split(":")[0]:
        spec = "gtp:" + spec  # a path to an engine
    entry, arg = _lookup(_PLAYERS, "player", spec)
    return entry.build(arg)


def load_network(spec: str) -> Network:
    """A network from its source spec (``untrained``, ``untrained:3``, ``checkpoint:PATH`` ...)."""
    entry, arg = _lookup(_NETWORKS, "network", spec)
    return entry.build(arg)


def parse_options(text: str, allowed: dict[str, type], kind: str) -> dict:
    """``"a=1,b=x"`` -> ``{"a": 1, "b": "x"}``, each value converted by its type in ``allowed``.

    Raises:
      ValueError: naming the option and the allowed ones.
    """
    options = {}
    for item in filter(None, (s.strip() for s in text.split(","))):
        name, sep, value = item.partition("=")
        name = name.strip()
        if not sep or name not in allowed:
            raise ValueError(f"bad option {item!r} for {kind}; options: "
                             f"{', '.join(f'{k}=<{t.__name__}>' for k, t in allowed.items())}")
        try:
            options[name] = allowed[name](value.strip())
        except ValueError:
            raise ValueError(f"bad value for {kind} option {name}: {value.strip()!r} "
                             f"(expected {allowed[name].__name__})") from None
    return options


# ---------------------------------------------------------------------------- the built-ins

def _random(arg: str) -> Player:
    return RandomPlayer(**parse_options(arg, {"seed": int}, "random"))


def _search_options(arg: str, kind: str, extra: dict[str, type]) -> dict:
    options = parse_options(arg, {"sims": int, "nodes": int, "c_puct": float, "seed": int, **extra}, kind)
    sims = options.pop("sims", 200)
    if sims < 1:
        raise ValueError(f"{kind}: sims must be at least 1, got {sims}")
    if options.get("nodes") is not None and options["nodes"] < sims + 1:
        raise ValueError(f"{kind}: nodes must be at least sims + 1 = {sims + 1}, got {options['nodes']}")
    return dict(simulations=sims, **options)


def _mcts(arg: str) -> Player:
    return mcts_player(**_search_options(arg, "mcts", {}))


def _net(arg: str) -> Player:
    options = _search_options(arg, "net", {"net": str, "symmetries": str})
    network = load_network(options.pop("net", "shipped"))
    return network_player(network, **options)


def _policy(arg: str) -> Player:
    options = parse_options(arg, {"net": str}, "policy")
    return PolicyPlayer(load_network(options.get("net", "shipped")))


def _gtp(arg: str) -> Player:
    from alphago_jax.play.gtp_player import GTPPlayer

    if not arg:
        raise ValueError("gtp: give the engine's command line, e.g. 'gtp:/usr/games/gnugo --mode gtp --level 1'")
    return GTPPlayer(arg)


def untrained_network(seed: int = 0, blocks: int = 1, filters: int = 16) -> Network:
    """A small randomly initialised AlphaGo Zero network (any board size): for smoke tests."""
    from alphago_jax import features, nets

    net = nets.DualResNet(in_planes=features.zero.NUM_PLANES, blocks=blocks, filters=filters, value_hidden=32)

    @functools.lru_cache(maxsize=None)
    def variables(size: int):
        # One compiled call (an eager init compiles every layer's operations one by one).
        return jax.jit(nets.init_variables, static_argnums=(0, 2))(net, jax.random.PRNGKey(seed), size)

    return Network(apply=lambda v, x: net.apply(v, x), planes=features.zero_planes, variables=variables,
                   history=8, name="untrained")


def _untrained(arg: str) -> Network:
    try:
        seed = int(arg) if arg else 0
    except ValueError:
        raise ValueError(f"untrained: the argument is a seed, got {arg!r}") from None
    return untrained_network(seed)


register_player("random", "uniformly random legal moves (seed)", _random)
register_player("mcts", "pure-rollout MCTS with tree reuse (sims, nodes, c_puct, seed)", _mcts)
register_player("net", "a network with PUCT search (net, sims, nodes, c_puct, symmetries, seed)", _net)
register_player("policy", "a network's raw policy, no search (net)", _policy)
register_player("gtp", "an external GTP engine: gtp:COMMAND LINE", _gtp)
register_player("checkpoint", "a training checkpoint with search: checkpoint:PATH", None)
register_player("alphago", "AlphaGo: policy, value and rollout networks with search", None)
register_player("grave", "GRAVE search", None)
register_player("mcps", "Monte Carlo Permutation Search", None)

register_network("untrained", "a small randomly initialised network (untrained:SEED)", _untrained)
register_network("shipped", "the network shipped with the package", None)
register_network("checkpoint", "a training checkpoint: checkpoint:PATH", None)
