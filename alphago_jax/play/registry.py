"""Players and networks by name, for the command line: ``make_player("mcts:sims=200")``.

A player spec is ``KIND`` or ``KIND:OPTIONS``; for most kinds the options are
``name=value`` pairs separated by commas::

    default                         a shipped network with search on its board (9x9, 19x19),
                                    pure-rollout MCTS on other sizes   (sims, nodes, c_puct, seed, lam, score,
                                                                        tactics, threads)
    random                          uniformly random legal moves       (seed)
    mcts:sims=200                   pure-rollout MCTS                  (sims, nodes, c_puct, seed, threads)
    net:net=untrained,sims=64       a network with PUCT search         (net, sims, nodes, c_puct, symmetries, seed, lam,
                                                                        score, tactics, threads)
    policy:net=untrained            a network's raw policy             (net)
    alphago:dir=runs/ag,sims=100    AlphaGo: SL priors, value + rollouts (dir, policy, value, rollout, sims, lam, ...)
    alphago-policy:run=runs/ag/rl   an AlphaGo policy alone, sampling  (run, temperature, seed)
    grave:playouts=300              GRAVE                              (playouts, nodes, ref, bias, seed)
    mcps:playouts=300,rho=30        Monte Carlo Permutation Search     (playouts, nodes, ref, window, rho, seed)
    gtp:/usr/games/gnugo --mode gtp --level 1    an external GTP engine (the rest is its command line;
                                    options after commas: time=SECONDS gives it a clock, name=NAME,
                                    timeout=SECONDS before a silent engine forfeits the game)
    /usr/games/gnugo --mode gtp     the same: a spec whose first word is a path runs that engine
    gnugo:level=10                  GNU Go 3.8 at its own settings (level 0 to 10, default 10;
                                    time=SECONDS gives it a clock; timeout; path=BINARY)
    katago:visits=1                 KataGo 1.18.1 with its b10 network, after `alphago-jax katago
                                    install` (visits per move, default 1; size: the board it starts
                                    for, default 19, others start their own engine; resign=true lets
                                    it resign, as our players do not in matches; time, timeout, dir)

External engines play at their own strength: a match's time per move is not passed on to them
(GNU Go lowers its level to fit a clock). GNU Go is always started on this project's rules
(Chinese area scoring, positional superko, no suicide: ``gtp_client.with_gnugo_rules``).

``sims`` is the simulations per move without a time limit (default 200); ``nodes`` the tree's
capacity (default ``8 * sims + 1``), which bounds a move searched for a time and ``lz-analyze``.
``grave`` and ``mcps`` (``amaf_players``) search each move afresh with random playouts:
``playouts`` per move (default 300; a time limit searches in chunks of 16), ``nodes`` the tree's capacity
with a time limit and in ``lz-analyze`` (default ``8 * playouts + 1``), GRAVE's ``ref``
(default 50) and ``bias`` (1e-5), MCPS's ``window`` (10000) and ``rho`` (30). A network's ``lam``
(default 0) values each leaf as ``(1 - lam) v + lam z``, AlphaGo's mixing of the network's value
``v`` with ``z``, the outcome of one random playout that keeps the player's own eyes. A network's
``score`` (default 0; a network with a score head) values each leaf as ``(1 - score) v + score
(2 / pi) atan(margin / S)``, KataGo's score utility: its score head's margin for the player to
move, on an S x S board. A network's ``tactics`` (default 0, below 1) gives that share of each
node's prior to a capture reader's moves (``search.tactical_evaluator``): captures that save a
string in atari and ladder captures at every node, nets (geta) at the root; ``root_tactics``
(default ``tactics``) sets the root's share apart, so that the reader steers the tree's reading
more than the move chosen from the root's visits. ``threads`` (default
1) searches that many trees side by side, one thread each, and plays the move of their summed
visits (``play.search_player.SearchPlayer``): on a CPU, where a network's search runs on one core,
``threads=2`` reads about twice the simulations in a move's time when one game is played at a time
(a network's trees then differ by their random symmetries; ``sims`` is each tree's).

Network sources (``net=``): ``shipped`` (the 9x9 AlphaGo Zero network in the package,
``alphago_jax/data/zero_9x9.msgpack``; ``shipped:19``, the 19x19 one, ``zero_19x19.msgpack``),
``checkpoint:PATH`` (a file written by ``alphago-jax export``, or a training run's directory: its
latest checkpoint) and ``untrained`` (a small randomly initialised AlphaGo Zero network, seed
``untrained:SEED``: for smoke tests). ``checkpoint:PATH,sims=..`` is a player: the network of PATH with search.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Callable

import jax

from alphago_jax.play.options import flag, parse_options
from alphago_jax.play.players import Network, Player, PolicyPlayer, RandomPlayer
from alphago_jax.play.search_player import mcts_player, network_player


@dataclasses.dataclass(frozen=True)
class Entry:
    """A registered name: ``build(arg)`` makes the thing from the text after ``name:``."""

    name: str
    summary: str
    build: Callable[[str], object]


_PLAYERS: dict[str, Entry] = {}
_NETWORKS: dict[str, Entry] = {}


def register_player(name: str, summary: str, build: Callable[[str], Player]) -> None:
    """Add (or replace) a player kind: ``build(options_text) -> Player``."""
    _PLAYERS[name] = Entry(name, summary, build)


def register_network(name: str, summary: str, build: Callable[[str], Network]) -> None:
    """Add (or replace) a network source: ``build(arg_text) -> Network``."""
    _NETWORKS[name] = Entry(name, summary, build)


def _known(table: dict[str, Entry]) -> str:
    return ", ".join(sorted(table))


def known_players() -> str:
    """The player kinds, for error messages and ``--help``."""
    return _known(_PLAYERS)


def player_help() -> str:
    """One line per player kind."""
    return "\n".join(f"  {e.name:<10} {e.summary}" for e in sorted(_PLAYERS.values(), key=lambda e: e.name))


def _lookup(table: dict[str, Entry], what: str, spec: str):
    spec = spec.strip()
    name, _, arg = spec.partition(":")
    entry = table.get(name.strip().lower())
    if entry is None:
        raise ValueError(f"unknown {what} {name.strip()!r}; known: {_known(table)}")
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


# ---------------------------------------------------------------------------- the built-ins

def _random(arg: str) -> Player:
    return RandomPlayer(**parse_options(arg, {"seed": int}, "random"))


def _pop_count(options: dict, kind: str, count: str, default: int) -> int:
    """Pop the per-move effort ``count`` (``sims``, ``playouts``) and check it and ``nodes``."""
    n = options.pop(count, default)
    if n < 1:
        raise ValueError(f"{kind}: {count} must be at least 1, got {n}")
    if options.get("nodes") is not None and options["nodes"] < n + 1:
        raise ValueError(f"{kind}: nodes must be at least {count} + 1 = {n + 1}, got {options['nodes']}")
    return n


def _search_options(arg: str, kind: str, extra: dict[str, type]) -> dict:
    options = parse_options(arg, {"sims": int, "nodes": int, "c_puct": float, "seed": int, "threads": int, **extra},
                            kind)
    if options.get("threads", 1) < 1:
        raise ValueError(f"{kind}: threads must be at least 1, got {options['threads']}")
    return dict(simulations=_pop_count(options, kind, "sims", 200), **options)


def _mcts(arg: str) -> Player:
    return mcts_player(**_search_options(arg, "mcts", {}))


def _net(arg: str) -> Player:
    options = _search_options(arg, "net", {"net": str, "symmetries": str, "lam": float, "score": float,
                                                  "tactics": float, "root_tactics": float})
    network = load_network(options.pop("net", "shipped"))
    return network_player(network, **options)


def _policy(arg: str) -> Player:
    options = parse_options(arg, {"net": str}, "policy")
    return PolicyPlayer(load_network(options.get("net", "shipped")))


_GTP_OPTIONS = {"time": float, "name": str, "timeout": float}


def _gtp(arg: str) -> Player:
    from alphago_jax.play.gtp_player import GTPPlayer

    # Options follow the command line after commas: "CMD,time=1" (a command with a comma of
    # its own keeps it, unless the text after it looks like one of these options).
    command, options = arg, {}
    while "," in command:
        head, _, tail = command.rpartition(",")
        if tail.partition("=")[0].strip() not in _GTP_OPTIONS:
            break
        options.update(parse_options(tail, _GTP_OPTIONS, "gtp"))
        command = head
    if not command.strip():
        raise ValueError("gtp: give the engine's command line, e.g. 'gtp:/usr/games/gnugo --mode gtp --level 1'")
    return GTPPlayer(command.strip(), **options)


def _gnugo(arg: str) -> Player:
    from alphago_jax.gtp_client import find_gnugo

    options = parse_options(arg, {"level": int, "time": float, "timeout": float, "path": str}, "gnugo")
    level = options.pop("level", 10)
    if not 0 <= level <= 10:
        raise ValueError(f"gnugo: level must be 0 to 10, got {level}")
    binary = options.pop("path", None) or find_gnugo()
    if binary is None:
        raise ValueError("gnugo: GNU Go is not installed (apt-get install -y gnugo, or give path=)")
    from alphago_jax.play.gtp_player import GTPPlayer

    return GTPPlayer([binary, "--level", str(level)], **options)


def _katago(arg: str) -> Player:
    from alphago_jax import katago

    options = parse_options(arg, {"visits": int, "size": int, "time": float, "timeout": float, "dir": str,
                                  "resign": flag}, "katago")
    visits, first, resign = options.pop("visits", 1), options.pop("size", 19), options.pop("resign", False)
    installed = katago.find_katago(options.pop("dir", None))
    if installed is None:
        raise ValueError("katago: KataGo is not installed (alphago-jax katago install, or give dir=)")
    installed.command(visits, first)  # bad settings are an error now, not at the first game
    from alphago_jax.play.gtp_player import GTPPlayer
    from alphago_jax.play.players import BySizePlayer

    # One engine per board size, its network buffer that size: a larger buffer costs every move
    # as much as the larger board (and crashed KataGo 1.18.1 on pocl for 9x9 in a 19x19 buffer).
    make = lambda n: lambda: GTPPlayer(installed.command(visits, n, resign=resign), **options)  # noqa: E731
    sizes = [first] + [n for n in range(2, 20) if n != first]

    def too_big():
        raise ValueError("katago: KataGo plays boards of 2x2 to 19x19")

    return BySizePlayer({n: make(n) for n in sizes}, too_big)


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


SHIPPED_NETWORKS = {9: "zero_9x9.msgpack", 19: "zero_19x19.msgpack"}
"""The file names, in ``alphago_jax/data/``, of the networks shipped with the package, by the
board size each is the ``default`` player's network on."""


def shipped_network_path(size: int = 9):
    """Where the shipped network for ``size`` is (``importlib.resources``; it may not exist in a
    checkout that has not fetched it)."""
    import importlib.resources

    if size not in SHIPPED_NETWORKS:
        raise ValueError(f"no network is shipped for {size}x{size}; shipped: "
                         f"{', '.join(f'{s}x{s}' for s in SHIPPED_NETWORKS)}")
    return importlib.resources.files("alphago_jax") / "data" / SHIPPED_NETWORKS[size]


def saved_network(saved, name: str) -> Network:
    """A ``Network`` of a ``nets.saved.SavedNetwork`` (its variables on the device once); it
    plays the board size it was trained on, and every size when it is size-agnostic."""
    from alphago_jax import features

    on_device = functools.lru_cache(maxsize=1)(lambda: jax.device_put(saved.variables))

    def variables(size: int):
        if not saved.plays(size):
            raise ValueError(f"network {name} ({saved.path}) plays {saved.board_size}x{saved.board_size}, "
                             f"not {size}x{size} (its heads are sized for its board)")
        return on_device()

    from alphago_jax.nets import policy_value_apply

    # The search reads the policy and the value only; analysis (kata-analyze) reads the
    # auxiliary heads of a network that has them.
    planes = features.zero.planes_function(saved.inputs)
    return Network(apply=policy_value_apply(saved.net), planes=planes, variables=variables, history=8, name=name,
                   key=f"policy_value_apply({saved.net!r}), features.zero.{planes.__name__}",
                   aux=saved.net.apply if saved.net.has_aux else None)


def _shipped_file(size: int = 9):
    """The shipped network file for ``size``, loaded (``nets.saved.SavedNetwork``)."""
    from alphago_jax.nets.saved import load_network

    path = shipped_network_path(size)
    if not path.is_file():
        raise ValueError(f"{path}: the shipped network file is missing from this installation")
    return load_network(path)


def _shipped_network(size: int) -> Network:
    return saved_network(_shipped_file(size), "shipped" if size == 9 else f"shipped:{size}")


def _shipped(arg: str) -> Network:
    if arg and not arg.isdigit():
        raise ValueError(f"shipped takes a board size (shipped:19), got {arg!r}")
    return _shipped_network(int(arg or 9))


def _checkpoint_network(arg: str) -> Network:
    import pathlib

    from alphago_jax.nets.saved import load_network

    if not arg:
        raise ValueError("checkpoint: give a network file or a training run's directory, e.g. checkpoint:runs/zero")
    path = pathlib.Path(arg).expanduser()
    if path.is_dir():
        from alphago_jax import zero

        return saved_network(zero.network_of_run(path), path.name or str(path))
    return saved_network(load_network(path), path.stem)


def _default(arg: str) -> Player:
    from alphago_jax.play.players import BySizePlayer

    options = _search_options(arg, "default", {"lam": float, "score": float, "tactics": float, "root_tactics": float})
    makers = {size: functools.partial(lambda s: network_player(_shipped_network(s), **options), size)
              for size in SHIPPED_NETWORKS}
    # Pure MCTS: all playouts already, and no score head.
    rollouts_only = {k: v for k, v in options.items() if k not in ("lam", "score", "tactics", "root_tactics")}
    return BySizePlayer(makers, lambda: mcts_player(**rollouts_only))


def _checkpoint_player(arg: str) -> Player:
    path, _, rest = arg.partition(",")
    return _net(f"net=checkpoint:{path}" + (f",{rest}" if rest else ""))


def _amaf(arg: str, kind: str, extra: dict[str, type]) -> Player:
    from alphago_jax.play.amaf_players import amaf_player

    options = parse_options(arg, {"playouts": int, "nodes": int, "ref": int, "seed": int, **extra}, kind)
    playouts = _pop_count(options, kind, "playouts", 300)
    try:
        return amaf_player(kind, playouts, **options)
    except ValueError as e:
        raise ValueError(f"{kind}: {e}") from None


def _grave(arg: str) -> Player:
    return _amaf(arg, "grave", {"bias": float})


def _mcps(arg: str) -> Player:
    return _amaf(arg, "mcps", {"window": int, "rho": int})


def _alphago_player_module():
    from alphago_jax.play import alphago_player

    return alphago_player


def _untrained(arg: str) -> Network:
    try:
        seed = int(arg) if arg else 0
    except ValueError:
        raise ValueError(f"untrained: the argument is a seed, got {arg!r}") from None
    return untrained_network(seed)


register_player("default", "a shipped network with PUCT search on its board (9x9, 19x19), pure-rollout MCTS "
                "on other sizes (sims, nodes, c_puct, seed, lam, score, tactics, root_tactics, threads)", _default)
register_player("random", "uniformly random legal moves (seed)", _random)
register_player("mcts", "pure-rollout MCTS with tree reuse (sims, nodes, c_puct, seed, threads)", _mcts)
register_player("net", "a network with PUCT search (net, sims, nodes, c_puct, symmetries, seed, lam, score, "
                "tactics, root_tactics, threads)", _net)
register_player("policy", "a network's raw policy, no search (net)", _policy)
register_player("gtp", "an external GTP engine: gtp:COMMAND LINE[,time=SECONDS][,name=NAME][,timeout=SECONDS]",
                _gtp)
register_player("gnugo", "GNU Go at its own settings, on this project's rules (level, time, timeout, path)", _gnugo)
register_player("katago", "KataGo 1.18.1's b10 network, after `alphago-jax katago install` "
                "(visits, default 1; size, the first board; resign, default false; time, timeout, dir)", _katago)
register_player("checkpoint", "a network file or training run with PUCT search: checkpoint:PATH[,sims=..]",
                _checkpoint_player)
register_player("alphago", "AlphaGo: SL policy priors, value network and rollouts in PUCT search "
                "(dir, policy, value, rollout, sims, lam, c_puct, nodes, leaf_batch, seed)",
                lambda arg: _alphago_player_module().player_from_options(arg))
register_player("alphago-policy", "an AlphaGo SL or RL policy network alone, sampling (run, temperature, seed)",
                lambda arg: _alphago_player_module().policy_player_from_options(arg))
register_player("grave", "GRAVE search, random playouts (playouts, nodes, ref, bias, seed)", _grave)
register_player("mcps", "Monte Carlo Permutation Search (playouts, nodes, ref, window, rho, seed)", _mcps)

register_network("untrained", "a small randomly initialised network (untrained:SEED)", _untrained)
register_network("shipped", "the 9x9 AlphaGo Zero network shipped with the package (shipped:19, the 19x19 one)",
                 _shipped)
register_network("checkpoint", "a network file (alphago-jax export) or a training run's directory: checkpoint:PATH",
                 _checkpoint_network)
