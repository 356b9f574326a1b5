"""The GRAVE family's array tree, its random playouts and its backups with AMAF statistics.

One tree per game, of fixed capacity C over A actions and M move codes (``game.move_code``);
``grave.GraveSearch`` vmaps these unbatched functions over a batch. A playout adds one node and
plays random legal moves to the end; it is recorded as the codes played from the root (the path,
then the random part) with their players, and scored from black's side (0, 1/2, 1). The backup
adds to each node ``x`` of the path one visit and the score on the edge into ``x`` (UCT's ``n``,
``Q``) and on ``x`` itself, and for every code played from ``x`` on (each once per playout) one
AMAF visit and the score (``n~``, ``Q~``). Wins are black's; selection turns them into the mover's.

In Go (``protect_eyes``) playouts and the tree never fill the mover's one-point eyes and pass only
when nothing else is legal, as most Monte Carlo Go programs do: random games then end by two
passes once only eyes are left, and their results say something about the position.

Layer: depends on ``games``, ``playout`` and ``search.mcps`` (the window type the tree holds).
"""

from __future__ import annotations

import dataclasses
from typing import Any, NamedTuple

import flax.struct
import jax
import jax.numpy as jnp

from alphago_jax.games import grid
from alphago_jax.games.base import BLACK, Game
from alphago_jax.playout import sample_legal
from alphago_jax.search.mcps import PlayoutWindow, empty_window

NONE = -1
ROOT = 0


@flax.struct.dataclass
class AmafTree:
    """B trees of C nodes, A actions, M move codes. Node 0 is the root; nodes are allocated
    in order (a parent precedes its children); those at or past ``num_nodes`` are unused.

    Attributes:
      states: pytree [B, C, ...], the game state at each node.
      parent: int32[B, C], -1 for the root.
      action: int32[B, C], the move from the parent (-1 for the root).
      depth: int32[B, C], edges from the root.
      children: int32[B, C, A], child node per action, -1 where none.
      legal: bool[B, C, A], the actions the tree considers at the node (``playout_mask``).
      codes: int32[B, C, A], ``game.move_code`` of each action at the node.
      to_play: int8[B, C], the player to move at the node.
      terminal: bool[B, C], the node's game is over.
      score: float32[B, C], at a terminal node black's result (1 win, 1/2 draw, 0 loss).
      visits: int32[B, C], playouts through the node.
      edge_n: int32[B, C, A], playouts through the node that played the action next.
      edge_w: float32[B, C, A], their summed black score.
      amaf_n: int32[B, C, M'], playouts through the node that played the code at or below it
        (M' = M, or 0 for UCT).
      amaf_w: float32[B, C, M'], their summed black score.
      frozen: bool[B, C], MCPS: the node's permutation statistics are computed and fixed.
      perm_n: int32[B, C, M''], MCPS: window playouts containing the node's path and the code, as
        frozen (M'' = M for MCPS, else 0).
      perm_w: float32[B, C, M''], their summed black score.
      window: ``PlayoutWindow`` [B, ...], MCPS: the last playouts as bitsets (else a 1-slot stub).
      num_nodes: int32[B], nodes in use.
      playouts: int32[B], playouts run (a search from a finished game runs none).
    """

    states: Any
    parent: jnp.ndarray
    action: jnp.ndarray
    depth: jnp.ndarray
    children: jnp.ndarray
    legal: jnp.ndarray
    codes: jnp.ndarray
    to_play: jnp.ndarray
    terminal: jnp.ndarray
    score: jnp.ndarray
    visits: jnp.ndarray
    edge_n: jnp.ndarray
    edge_w: jnp.ndarray
    amaf_n: jnp.ndarray
    amaf_w: jnp.ndarray
    frozen: jnp.ndarray
    perm_n: jnp.ndarray
    perm_w: jnp.ndarray
    window: PlayoutWindow
    num_nodes: jnp.ndarray
    playouts: jnp.ndarray

    @property
    def capacity(self) -> int:
        return self.visits.shape[-1]

    def root_states(self):
        """The root states, a batch (pytree with leading axis B)."""
        return jax.tree_util.tree_map(lambda x: x[:, ROOT], self.states)

    def max_depth(self) -> jnp.ndarray:
        """int32[B]: the depth of the deepest node (0 for a lone root)."""
        used = jnp.arange(self.capacity) < self.num_nodes[:, None]
        return jnp.max(jnp.where(used, self.depth, 0), axis=-1)


class Trace(NamedTuple):
    """One playout per game, as recorded (B games, L the longest game).

    Attributes:
      actions: int32[B, L], the moves from the root, path then random moves; -1 past ``length``.
      codes: int32[B, L], their move codes; -1 past ``length``.
      players: int8[B, L], who played each (+1 black, -1 white); 0 past ``length``.
      length: int32[B], moves recorded.
      tree_moves: int32[B], how many of them the tree chose (the path's length).
      bottom: int32[B], the deepest node updated; -1 where no playout ran (finished root).
      score: float32[B], black's result.
    """

    actions: jnp.ndarray
    codes: jnp.ndarray
    players: jnp.ndarray
    length: jnp.ndarray
    tree_moves: jnp.ndarray
    bottom: jnp.ndarray
    score: jnp.ndarray


def black_score(game: Game, state) -> jnp.ndarray:
    """float32[]: black's result of a finished game, 1 win, 1/2 draw, 0 loss."""
    return (game.returns(state)[0] + 1.0) * 0.5


def game_length_bound(game: Game) -> int:
    """Moves a game can last from any position: its ``max_moves`` (Go family), else ``num_actions``."""
    return int(getattr(game, "max_moves", None) or game.num_actions)


def _own_eyes(board, colour, size: int) -> jnp.ndarray:
    """bool[N]: ``colour``'s one-point eyes: empty points whose orthogonal neighbours are its stones
    or the edge, with at most one enemy diagonal (none on the edge)."""
    edge = jnp.int8(2)
    up, down, left, right = grid.neighbours(board, size, edge)
    surrounded = ((up == colour) | (up == edge)) & ((down == colour) | (down == edge)) \
        & ((left == colour) | (left == edge)) & ((right == colour) | (right == edge))
    # Diagonal values: vertical shifts of the horizontal neighbours.
    l_up, l_down, _, _ = grid.neighbours(left, size, edge)
    r_up, r_down, _, _ = grid.neighbours(right, size, edge)
    diagonals = (l_up, l_down, r_up, r_down)
    enemy = sum((d == -colour).astype(jnp.int32) for d in diagonals)
    off = sum((d == edge).astype(jnp.int32) for d in diagonals)
    return (board == 0) & surrounded & jnp.where(off > 0, enemy == 0, enemy <= 1)


def playout_mask(game: Game, state, protect_eyes: bool) -> jnp.ndarray:
    """bool[A]: the moves a random playout may play (see the module docstring)."""
    legal = game.legal_action_mask(state)
    if not (protect_eyes and game.name == "go"):
        return legal
    n = game.num_points
    points = legal[:n] & ~_own_eyes(state.board, state.to_play, game.size)
    return jnp.concatenate([points, (legal[n] & ~jnp.any(points))[None]])


def simple_ko_rules(game: Game) -> Game:
    """``game`` under simple ko where it has positional superko (Go), else ``game``; it steps the
    superko game's states as they are, so a playout can switch rules at any point."""
    return dataclasses.replace(game, superko=False) if getattr(game, "superko", False) else game


def empty_tree(game: Game, states, capacity: int, amaf: bool, window: int | None,
               protect_eyes: bool = False) -> AmafTree:
    """B trees holding only their roots ``states`` (leading axis B), with AMAF statistics if
    ``amaf``, an MCPS window of ``window`` slots (None: none), the moves of ``playout_mask``."""
    b = jax.tree_util.tree_leaves(states)[0].shape[0]
    a, m = game.num_actions, game.num_move_codes
    mp = m if window is not None else 0
    actions = jnp.arange(a)
    legal = jax.vmap(lambda s: playout_mask(game, s, protect_eyes))(states)
    codes = jax.vmap(lambda s: jax.vmap(lambda x: game.move_code(s, x))(actions))(states)
    root = jnp.arange(capacity) == ROOT

    def per_node(root_value, fill, dtype):  # [B, C, ...]: the root's row, ``fill`` elsewhere
        root_value = jnp.asarray(root_value, dtype)
        shape = (b, capacity) + root_value.shape[1:]
        mask = root.reshape((1, capacity) + (1,) * (root_value.ndim - 1))
        return jnp.where(mask, root_value[:, None], jnp.full(shape, fill, dtype))

    terminal = jax.vmap(game.is_terminal)(states)
    win = empty_window(m if window is not None else 1, window or 1)
    return AmafTree(
        states=jax.tree_util.tree_map(lambda x: jnp.broadcast_to(x[:, None], (b, capacity) + x.shape[1:]), states),
        parent=jnp.full((b, capacity), NONE, jnp.int32),
        action=jnp.full((b, capacity), NONE, jnp.int32),
        depth=jnp.zeros((b, capacity), jnp.int32),
        children=jnp.full((b, capacity, a), NONE, jnp.int32),
        legal=per_node(legal, False, bool),
        codes=per_node(codes, 0, jnp.int32),
        to_play=per_node(states.to_play, 0, jnp.int8),
        terminal=per_node(terminal, False, bool),
        score=per_node(jax.vmap(lambda s: black_score(game, s))(states), 0.0, jnp.float32),
        visits=jnp.zeros((b, capacity), jnp.int32),
        edge_n=jnp.zeros((b, capacity, a), jnp.int32),
        edge_w=jnp.zeros((b, capacity, a), jnp.float32),
        amaf_n=jnp.zeros((b, capacity, m if amaf else 0), jnp.int32),
        amaf_w=jnp.zeros((b, capacity, m if amaf else 0), jnp.float32),
        frozen=jnp.zeros((b, capacity), bool),
        perm_n=jnp.zeros((b, capacity, mp), jnp.int32),
        perm_w=jnp.zeros((b, capacity, mp), jnp.float32),
        window=jax.tree_util.tree_map(lambda x: jnp.broadcast_to(x, (b,) + x.shape), win),
        num_nodes=jnp.ones((b,), jnp.int32),
        playouts=jnp.zeros((b,), jnp.int32),
    )


def expand(game: Game, tree: AmafTree, node, action, enable, protect_eyes: bool = False):
    """Unbatched: ``(tree, state after, new node or -1)``: the state after ``action`` at ``node``,
    stored as a new node when ``enable`` and the tree has room."""
    state = jax.tree_util.tree_map(lambda x: x[node], tree.states)
    after = game.step(state, action)
    new = enable & (tree.num_nodes < tree.capacity)
    i = jnp.where(new, tree.num_nodes, tree.capacity)  # out of range: the writes are dropped

    def put(x, v):
        return x.at[i].set(v, mode="drop")

    actions = jnp.arange(game.num_actions)
    tree = tree.replace(
        states=jax.tree_util.tree_map(put, tree.states, after),
        parent=put(tree.parent, node),
        action=put(tree.action, action),
        depth=put(tree.depth, tree.depth[node] + 1),
        legal=put(tree.legal, playout_mask(game, after, protect_eyes)),
        codes=put(tree.codes, jax.vmap(lambda x: game.move_code(after, x))(actions)),
        to_play=put(tree.to_play, after.to_play.astype(jnp.int8)),
        terminal=put(tree.terminal, game.is_terminal(after)),
        score=put(tree.score, black_score(game, after)),
        children=tree.children.at[jnp.where(new, node, tree.capacity), action].set(i, mode="drop"),
        num_nodes=tree.num_nodes + new.astype(jnp.int32),
    )
    return tree, after, jnp.where(new, i, NONE)


def random_playout(game: Game, state, record, length, key, protect_eyes: bool):
    """Unbatched: ``(final state, record, length)`` after random moves from ``state`` to the end,
    appended to ``record`` (actions int32[L], codes int32[L], players int8[L]; ``length`` filled)."""
    bound = record[0].shape[0]

    def more(s):
        st, _, t = s
        return ~game.is_terminal(st) & (t < bound)

    def body(s):
        st, (actions, codes, players), t = s
        a = sample_legal(jax.random.fold_in(key, t), playout_mask(game, st, protect_eyes)[None])[0]
        record = (actions.at[t].set(a), codes.at[t].set(game.move_code(st, a)),
                  players.at[t].set(st.to_play.astype(jnp.int8)))
        return game.step(st, a), record, t + 1

    return jax.lax.while_loop(more, body, (state, record, length))


def last_positions(codes, length, num_codes: int) -> jnp.ndarray:
    """int32[M]: the last index in ``codes[:length]`` at which each code was played, -1 if never."""
    idx = jnp.arange(codes.shape[0], dtype=jnp.int32)
    at = jnp.where(idx < length, codes, num_codes)
    return jnp.full((num_codes,), NONE, jnp.int32).at[at].max(idx, mode="drop")


def back_up(tree: AmafTree, path, trace_row: Trace, rho: int | None):
    """Unbatched: ``(tree, freeze candidate)`` after adding one playout to its path's nodes and edges.

    ``path`` (int32[L + 1]) holds the node at each depth of the tree part, -1 past
    ``trace_row.bottom``; the edges counted are ``(path[d], actions[d])`` for ``d < tree_moves``.
    The candidate is the shallowest path node with ``rho`` playouts, not yet frozen (-1: none, or
    ``rho`` None). One scatter per array, no loop: under ``vmap`` a loop of varying length would
    copy every statistic array at each step.
    """
    cap, score = tree.capacity, trace_row.score
    depth = jnp.arange(path.shape[0])
    on = (path >= 0) & (trace_row.bottom >= 0)
    rows = jnp.where(on, path, cap)  # out of range: dropped
    edge_on = on & (depth < trace_row.tree_moves)
    edge_rows = jnp.where(edge_on, path, cap)
    edge_actions = jnp.maximum(jnp.concatenate([trace_row.actions, jnp.zeros((1,), jnp.int32)]), 0)
    tree = tree.replace(
        visits=tree.visits.at[rows].add(1, mode="drop"),
        edge_n=tree.edge_n.at[edge_rows, edge_actions].add(1, mode="drop"),
        edge_w=tree.edge_w.at[edge_rows, edge_actions].add(score, mode="drop"),
        playouts=tree.playouts + (trace_row.bottom >= 0).astype(jnp.int32),
    )
    if tree.amaf_n.shape[-1] > 0:
        # The node at depth d gets the codes played at index d or later, each once.
        last = last_positions(trace_row.codes, trace_row.length, tree.amaf_n.shape[-1])
        inc = (last[None, :] >= depth[:, None]).astype(jnp.int32)
        tree = tree.replace(amaf_n=tree.amaf_n.at[rows].add(inc, mode="drop"),
                            amaf_w=tree.amaf_w.at[rows].add(inc * score, mode="drop"))
    cand = jnp.int32(NONE)
    if rho is not None:
        safe = jnp.maximum(path, 0)
        ready = on & (tree.visits[safe] >= rho) & ~tree.frozen[safe]
        cand = jnp.where(jnp.any(ready), path[jnp.argmax(ready)], NONE).astype(jnp.int32)
    return tree, cand


def root_is_black(tree: AmafTree) -> jnp.ndarray:
    """bool[B]: black is to move at the root."""
    return tree.to_play[:, ROOT] == BLACK


__all__ = [
    "AmafTree",
    "NONE",
    "ROOT",
    "Trace",
    "back_up",
    "black_score",
    "empty_tree",
    "expand",
    "game_length_bound",
    "last_positions",
    "playout_mask",
    "random_playout",
    "root_is_black",
    "simple_ko_rules",
]
