"""What a player thinks of a position: per-move statistics, read from a search tree.

``tree_analysis`` turns the root of a (batch-1) ``search.SearchTree`` into ``MoveInfo`` rows:
visits, win rate and prior of each searched move and its principal variation (the most
visited child, repeatedly). Two GTP formats print them, the two that GUIs read:

``lz_analyze_line``, Leela Zero's ``lz-analyze`` (Sabaki, Lizzie)::

    info move D4 visits 120 winrate 5321 prior 1203 order 0 pv D4 Q16 info move ...

(win rate and prior in units of 0.01%, win rate for the player to move), and
``kata_analyze_line``, KataGo's ``kata-analyze`` (its GTP extensions document, "kata-analyze")::

    info move D4 visits 120 utility 0.0642 winrate 0.5321 scoreMean 1.7 scoreLead 1.7 prior 0.1203
    order 0 pv D4 Q16 info move ... ownership 0.93 0.88 ... -0.41

(floats, always written with a decimal point as Sabaki's ``analyze`` form needs, all for the
player analysed; ``ownership`` last, ``size * size`` values in row order from the top-left
point, +1 owned by the player analysed). Fields a player cannot supply (the score without a
score or ownership head) are left out rather than invented.

``parse_analyze_args`` reads the commands' arguments (KataGo's, as ``docs/gtp.md`` lists them)
into an ``AnalyzeRequest``.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from alphago_jax.games import grid
from alphago_jax.play.gtp import NUMBER, GTPFailure, colour_arg, int_arg, quoted, vertex_arg
from alphago_jax.play.position import COLOUR_NAMES, Position

DEFAULT_MAX_MOVES = 10
"""Moves an analysis reports when the controller does not say (``maxmoves``)."""


@dataclasses.dataclass(frozen=True)
class MoveInfo:
    """One candidate move of an analysis.

    Attributes:
      action: the move (a point, or ``size * size`` for pass).
      visits: simulations through it (1 for players that do not search; 0 for a move reported
        only to reach ``minmoves``).
      winrate: its value for the player to move, in [0, 1] (0.5 when unknown).
      prior: the prior probability of the move.
      pv: the principal variation starting with ``action``.
      score: the player to move's expected final area margin after the move, in points (komi
        counted), from a network's score or ownership head; None when the player has none.
      pv_visits: visits of each node of ``pv`` (empty when not known).
    """

    action: int
    visits: int
    winrate: float
    prior: float
    pv: tuple[int, ...]
    score: float | None = None
    pv_visits: tuple[int, ...] = ()


@dataclasses.dataclass(frozen=True)
class AnalysisOptions:
    """What a controller asks of an analysis (``Player.analyze``), beyond the colour and interval.

    Attributes:
      min_moves: report at least this many legal moves where the player can (search players add
        unvisited moves, most probable first: GTP ``minmoves``).
      max_moves: report at most this many moves (GTP ``maxmoves``).
      allowed: bool[size * size + 1], the first moves the search may consider (GTP ``avoid`` and
        ``allow`` for the analysed player's first move); None: every legal move. Only players
        with ``can_restrict_analysis`` take it.
      heads: read the network's ownership and score heads where the player has them: each
        reported ``MoveInfo`` gets its ``score`` and ``report`` gets the ownership too.
    """

    min_moves: int = 0
    max_moves: int = DEFAULT_MAX_MOVES
    allowed: np.ndarray | None = None
    heads: bool = False


def tree_analysis(tree, max_moves: int = DEFAULT_MAX_MOVES, pv_length: int = 12,
                  min_moves: int = 0) -> list[MoveInfo]:
    """The most visited moves at the root of game 0 of ``tree``, most visited first.

    Args:
      tree: a ``search.SearchTree`` (batch axis first; game 0 is read).
      max_moves: at most this many moves.
      pv_length: at most this many moves in each principal variation.
      min_moves: when fewer moves were visited, the root's unvisited legal moves follow, most
        probable first (visits 0, the root's win rate, a one-move variation), up to this many.
    """
    children = np.asarray(tree.children[0])  # [C, A]
    visits = np.asarray(tree.visits[0])
    value_sum = np.asarray(tree.value_sum[0])
    reward = np.asarray(tree.reward[0])
    discount = np.asarray(tree.discount[0])
    prior = np.asarray(tree.prior[0, 0])
    legal = np.asarray(tree.legal[0, 0])
    kids = children[0]
    rows = []
    for action in np.flatnonzero((kids >= 0) & legal):
        node = int(kids[action])
        n = int(visits[node])
        if n <= 0:
            continue
        q = (reward[node] * n + discount[node] * value_sum[node]) / n  # for the root's player
        pv, pv_visits = _principal_variation(children, visits, int(action), node, pv_length)
        rows.append(MoveInfo(int(action), n, float(np.clip((q + 1) / 2, 0, 1)), float(prior[action]), pv,
                             pv_visits=pv_visits))
    rows.sort(key=lambda m: (-m.visits, -m.winrate, m.action))
    rows = rows[:max_moves]
    want = min(min_moves, max_moves)
    if len(rows) < want:
        root_winrate = float(np.clip((value_sum[0] / max(int(visits[0]), 1) + 1) / 2, 0, 1))
        seen = {m.action for m in rows}
        rest = [int(a) for a in np.argsort(-prior, kind="stable") if legal[a] and int(a) not in seen]
        rows += [MoveInfo(a, 0, root_winrate, float(prior[a]), (a,), pv_visits=(0,)) for a in rest[:want - len(rows)]]
    return rows


def _principal_variation(children, visits, action, node, length) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The most visited line from ``action`` (its node ``node``), and each of its nodes' visits."""
    pv, pv_visits = [action], [int(visits[node])]
    while len(pv) < length:
        kids = children[node]
        has = kids >= 0
        if not has.any():
            break
        n = np.where(has, visits[np.maximum(kids, 0)], 0)
        best = int(np.argmax(n))
        if n[best] <= 0:
            break
        pv.append(best)
        pv_visits.append(int(n[best]))
        node = int(kids[best])
    return tuple(pv), tuple(pv_visits)


def lz_analyze_line(moves: list[MoveInfo], size: int) -> str:
    """One ``lz-analyze`` update: an ``info move ...`` group per move, on one line."""
    parts = []
    for order, m in enumerate(moves):
        pv = " ".join(grid.to_vertex(a, size) for a in m.pv)
        parts.append(f"info move {grid.to_vertex(m.action, size)} visits {m.visits} "
                     f"winrate {int(round(m.winrate * 10000))} prior {int(round(m.prior * 10000))} "
                     f"order {order} pv {pv}")
    return " ".join(parts)


def decimal(x: float, places: int = 6) -> str:
    """``x`` with at most ``places`` decimals and always a decimal point (``1.0``, ``-0.25``):
    Sabaki reads a win rate without one as Leela Zero's 0.01% units."""
    text = f"{float(x):.{places}f}".rstrip("0")
    text = text + "0" if text.endswith(".") else text
    return "0.0" if text in ("-0.0", "0.0") else text


def kata_analyze_line(moves: list[MoveInfo], size: int, ownership: np.ndarray | None = None,
                      pv_visits: bool = False) -> str:
    """One ``kata-analyze`` update: an ``info move ...`` group per move, then the ownership.

    Per move: ``move``, ``visits``, ``utility`` (the win/loss utility ``2 * winrate - 1``, in
    [-1, 1]; no score term), ``winrate``, ``scoreMean`` and ``scoreLead`` (both ``MoveInfo.score``;
    left out where it is None), ``prior``, ``order``, ``pv`` and, if asked, ``pvVisits``.

    Args:
      moves: the rows, best first.
      size: the board side.
      ownership: float[size * size] in [-1, 1] for the player analysed (index ``row * size +
        col``, row 0 the top edge: KataGo's order), or None to leave it out.
      pv_visits: add each variation's ``pvVisits`` (the visits of its nodes; 0 for nodes whose
        visits the player does not report).
    """
    parts = []
    for order, m in enumerate(moves):
        fields = [f"info move {grid.to_vertex(m.action, size)} visits {m.visits}",
                  f"utility {decimal(2 * m.winrate - 1)} winrate {decimal(m.winrate)}"]
        if m.score is not None:
            fields.append(f"scoreMean {decimal(m.score)} scoreLead {decimal(m.score)}")
        fields.append(f"prior {decimal(m.prior)} order {order} pv "
                      + " ".join(grid.to_vertex(a, size) for a in m.pv))
        if pv_visits:  # a player that does not know a node's visits: 0 from there on
            counts = tuple(m.pv_visits[:len(m.pv)]) or (m.visits,)
            counts += (0,) * (len(m.pv) - len(counts))
            fields.append("pvVisits " + " ".join(str(int(n)) for n in counts))
        parts.append(" ".join(fields))
    if ownership is not None:
        values = np.asarray(ownership, np.float64).reshape(-1)
        if values.shape != (size * size,):
            raise ValueError(f"ownership needs {size * size} values for a {size}x{size} board, got {values.shape}")
        parts.append("ownership " + " ".join(decimal(v, 4) for v in np.clip(values, -1.0, 1.0)))
    return " ".join(parts)


# ------------------------------------------------------------------- the commands' arguments

ANALYZE_NUMBERS = frozenset({"interval", "minmoves", "maxmoves"})
ANALYZE_KEYS = ANALYZE_NUMBERS | {"avoid", "allow"}
"""The key-value arguments of every analysis command (lower case)."""

KATA_SWITCHES = frozenset({"ownership", "ownershipstdev", "movesownership", "movesownershipstdev", "pvvisits",
                           "pvedgevisits", "rootinfo"})
"""The true/false arguments of ``kata-analyze`` (lower case); only ``ownership`` and ``pvVisits`` may be true."""


@dataclasses.dataclass(frozen=True)
class AnalyzeRequest:
    """A parsed analysis command.

    Attributes:
      colour: the player analysed.
      interval: seconds between reports.
      options: what the player is asked (``AnalysisOptions``).
      ownership: ``kata-analyze``'s ``ownership true``.
      pv_visits: ``kata-analyze``'s ``pvVisits true``.
    """

    colour: int
    interval: float
    options: AnalysisOptions
    ownership: bool = False
    pv_visits: bool = False


def parse_analyze_args(args: list[str], pos: Position, kata: bool) -> AnalyzeRequest:
    """``[COLOUR] [INTERVAL] KEY VALUE...`` of ``lz-analyze`` (``kata`` False) or ``kata-analyze``
    in ``pos`` (``docs/gtp.md``). Raises ``gtp.GTPFailure``."""
    args = list(args)
    keys = ANALYZE_KEYS | (KATA_SWITCHES if kata else frozenset())
    colour = pos.to_play
    if args and not NUMBER.fullmatch(args[0]) and args[0].lower() not in keys:
        colour = colour_arg(args.pop(0))
    centis = int_arg(args.pop(0), "interval", 0) if args and NUMBER.fullmatch(args[0]) else 100
    numbers = {"interval": centis, "minmoves": 0, "maxmoves": None}
    switches: dict[str, bool] = {}
    groups: dict[str, list[tuple[int, list[int], int]]] = {"avoid": [], "allow": []}
    while args:
        word = args.pop(0)
        key = word.lower()
        if key not in keys:
            raise GTPFailure(f"syntax error: unexpected argument {quoted(word)}")
        if key in groups:
            groups[key].append(_move_group(key, args, pos.size))
        elif key in ANALYZE_NUMBERS:
            if not args:
                raise GTPFailure(f"syntax error: {word} needs a number")
            numbers[key] = int_arg(args.pop(0), word, 0)
        else:
            switches[key] = _switch(word, args)
    if groups["allow"] and (groups["avoid"] or len(groups["allow"]) > 1):
        raise GTPFailure("syntax error: allow may be given once, and not with avoid")
    min_moves, max_moves = numbers["minmoves"], numbers["maxmoves"]
    options = AnalysisOptions(min_moves=min_moves,
                              max_moves=max(DEFAULT_MAX_MOVES, min_moves) if max_moves is None else max_moves,
                              allowed=_first_moves(pos, colour, groups), heads=kata)
    centis = numbers["interval"]
    return AnalyzeRequest(colour, centis / 100 if centis > 0 else 1.0, options,
                          switches.get("ownership", False), switches.get("pvvisits", False))


def _move_group(key: str, args: list[str], size: int) -> tuple[int, list[int], int]:
    """``avoid`` or ``allow``'s ``COLOUR VERTEX,VERTEX,... UNTILDEPTH``, taken from ``args``."""
    if len(args) < 3:
        raise GTPFailure(f"syntax error: usage: {key} COLOUR VERTEX,VERTEX,... UNTILDEPTH")
    who, vertices, depth = colour_arg(args.pop(0)), args.pop(0), int_arg(args.pop(0), "untildepth", 0)
    points = [vertex_arg(v, size) for v in vertices.split(",") if v]
    if not points:
        raise GTPFailure(f"syntax error: {key} needs at least one vertex")
    return who, points, depth


def _switch(word: str, args: list[str]) -> bool:
    """A ``kata-analyze`` switch's ``true`` or ``false``, taken from ``args``."""
    if not args:
        raise GTPFailure(f"syntax error: {word} needs true or false")
    value = args.pop(0)
    if value.lower() not in ("true", "false"):
        raise GTPFailure(f"syntax error: {word} must be true or false, got {quoted(value)}")
    if value.lower() == "true" and word.lower() not in ("ownership", "pvvisits"):
        raise GTPFailure(f"{word} is not supported (kata-analyze supports ownership and pvVisits)")
    return value.lower() == "true"


def _first_moves(pos: Position, colour: int, groups) -> np.ndarray | None:
    """bool[N + 1]: the analysed player's first moves that the ``avoid`` and ``allow`` groups
    leave; None when they restrict nothing. Raises ``GTPFailure`` for a restriction past the
    first move, or one that leaves no legal move."""
    allowed = np.ones(pos.num_points + 1, bool)
    for key, entries in groups.items():
        for who, points, depth in entries:
            # KataGo's depths: 0 is the analysed player's first move, the other player moves
            # at 1, the analysed player again at 2; a group holds at the depths below UNTILDEPTH.
            first = 0 if who == colour else 1  # the group's player's first depth
            if depth <= first:
                continue  # it restricts nothing
            if depth > 2 or who != colour:
                raise GTPFailure(f"{key} {COLOUR_NAMES[who]} with UNTILDEPTH {depth} is not supported: only the "
                                 f"analysed player's first move can be restricted (UNTILDEPTH 1)")
            mask = np.zeros_like(allowed)
            mask[points] = True
            allowed &= ~mask if key == "avoid" else mask
    if allowed.all():
        return None
    if not (allowed & pos.legal_mask(colour)).any():
        raise GTPFailure("avoid/allow leave no legal move to analyse")
    return allowed
