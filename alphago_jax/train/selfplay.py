"""The game loops of AlphaGo Zero's job: self-play into a replay buffer, and matches.

Self-play (Silver et al. 2017, "Self-play"): ``SelfPlay`` holds B games in flight and, per
game, the positions it has recorded so far: input planes (uint8), the search's visit
distribution, the player to move and the move played, in fixed-length trajectory arrays
(T = the game's ``max_moves``, the longest a game can last). ``selfplay_move`` searches all B
games, records each position, plays the chosen moves and, for the games that ended, assigns the
outcome ``z`` to each recorded position from the view of that position's player, appends those
positions to the replay buffer (``replay_add`` with a ``valid`` mask) and resets the games in
place (``reset_where``). ``selfplay`` runs it for a number of moves in a ``lax.scan``.

Matches (``play_match``) play pairs of games with colours swapped, all in lockstep in one
``lax.while_loop``: at every ply all unfinished games have the same colour to move, so the
evaluated player moves in one game of each pair and the opponent in the other, and each side's
move chooser (``Mover``: a search, random play) runs once per ply on half the games.

Everything here is a pure function of fixed-shape arrays, jit- and vmap-safe, with no Python
control flow on traced values.
"""

from __future__ import annotations

from typing import Any, Callable, NamedTuple

import flax.struct
import jax
import jax.numpy as jnp

from alphago_jax import features
from alphago_jax.games.base import BLACK
from alphago_jax.games.history import WithHistory
from alphago_jax.playout import reset_where, sample_legal
from alphago_jax.train import replay

STAT_NAMES = ("games", "positions", "black_wins", "white_wins")
"""The self-play statistics: finished games, positions added to the buffer, wins by colour."""


@flax.struct.dataclass
class SelfPlay:
    """B games in flight and what each has recorded. T = the game's ``max_moves``, A actions.

    Attributes:
      games: the game states, a ``HistoryState`` batch [B].
      planes: uint8[B, T, S, S, 17], the input planes of each recorded position.
      policy: float32[B, T, A], the search's policy target there (``SearchOutput.policy_target``:
        the visit distribution, or Gumbel search's improved policy).
      player: int8[B, T], the player to move there (+1 black, -1 white).
      actions: int32[B, T], the move played there.
      length: int32[B], positions recorded in the current game; entries at or past it are stale.
    """

    games: Any
    planes: jax.Array
    policy: jax.Array
    player: jax.Array
    actions: jax.Array
    length: jax.Array


def _fresh_games(game, batch: int):
    one = game.init()
    return jax.tree_util.tree_map(lambda x: jnp.broadcast_to(x, (batch,) + x.shape), one)


def selfplay_init(game: WithHistory, batch: int) -> SelfPlay:
    """``batch`` new games with empty trajectories (length ``game.max_moves``)."""
    t, s, a = game.max_moves, game.size, game.num_actions
    return SelfPlay(
        games=_fresh_games(game, batch),
        planes=jnp.zeros((batch, t, s, s, features.zero.NUM_PLANES), jnp.uint8),
        policy=jnp.zeros((batch, t, a), jnp.float32),
        player=jnp.zeros((batch, t), jnp.int8),
        actions=jnp.zeros((batch, t), jnp.int32),
        length=jnp.zeros((batch,), jnp.int32),
    )


def outcomes_for_players(player: jax.Array, returns: jax.Array) -> jax.Array:
    """float32[B, T]: ``z`` of each position for its player, from ``returns`` float32[B, 2]
    (black, white) and ``player`` int8[B, T]."""
    return jnp.where(player == BLACK, returns[:, :1], returns[:, 1:]).astype(jnp.float32)


def flush_finished(buffer: replay.ReplayBuffer, sp: SelfPlay, done: jax.Array, returns: jax.Array
                   ) -> replay.ReplayBuffer:
    """Append the recorded positions of the games marked in ``done`` (bool[B]), game by game in
    move order, with their outcomes ``returns`` float32[B, 2] from each position's player's view."""
    b, t = sp.player.shape
    valid = done[:, None] & (jnp.arange(t)[None, :] < sp.length[:, None])
    examples = replay.Examples(
        planes=sp.planes.reshape((b * t,) + sp.planes.shape[2:]),
        policy=sp.policy.reshape(b * t, -1),
        value=outcomes_for_players(sp.player, returns).reshape(b * t),
    )
    # Most moves end no game: skip the scatter over all B * T rows then.
    return jax.lax.cond(jnp.any(done), lambda: replay.replay_add(buffer, examples, valid.reshape(-1)),
                        lambda: buffer)


def selfplay_move(game: WithHistory, search, params, sp: SelfPlay, buffer: replay.ReplayBuffer, key
                  ) -> tuple[SelfPlay, replay.ReplayBuffer, dict]:
    """One searched move in every game; finished games go to ``buffer`` and restart.

    Args:
      game: the history-keeping game (``ZeroConfig.game``).
      search: ``(params, states, key) -> SearchOutput`` (``make_search``).
      params: the network's variables (``TrainState.variables``).

    Returns:
      ``(sp, buffer, stats)``; ``stats`` (keys ``STAT_NAMES``), int32[B] per game: ``games``
      (1 if it finished), ``positions`` (added to the buffer), ``black_wins``, ``white_wins``.
    """
    out = search(params, sp.games, key)
    planes = jax.vmap(features.zero_planes)(sp.games).astype(jnp.uint8)

    def record(store, row, value):  # one game: store[row] = value
        return jax.lax.dynamic_update_index_in_dim(store, value.astype(store.dtype), row, 0)

    sp = sp.replace(
        planes=jax.vmap(record)(sp.planes, sp.length, planes),
        policy=jax.vmap(record)(sp.policy, sp.length, out.policy_target),
        player=jax.vmap(record)(sp.player, sp.length, sp.games.to_play),
        actions=jax.vmap(record)(sp.actions, sp.length, out.actions),
        length=sp.length + 1,
    )
    after = out.next_states
    done = jax.vmap(game.is_terminal)(after)
    returns = jax.vmap(game.returns)(after)
    buffer = flush_finished(buffer, sp, done, returns)
    stats = {
        "games": done.astype(jnp.int32),
        "positions": jnp.where(done, sp.length, 0),
        "black_wins": (done & (returns[:, 0] > 0)).astype(jnp.int32),
        "white_wins": (done & (returns[:, 1] > 0)).astype(jnp.int32),
    }
    batch = sp.length.shape[0]
    sp = sp.replace(games=reset_where(done, _fresh_games(game, batch), after), length=jnp.where(done, 0, sp.length))
    return sp, buffer, stats


def selfplay(game: WithHistory, search, moves: int, params, sp: SelfPlay, buffer: replay.ReplayBuffer, key
             ) -> tuple[SelfPlay, replay.ReplayBuffer, dict]:
    """``moves`` calls of ``selfplay_move`` in a ``lax.scan``; the stats summed over moves and games
    (int32 scalars)."""

    def one(carry, k):
        sp, buffer, total = carry
        sp, buffer, stats = selfplay_move(game, search, params, sp, buffer, k)
        return (sp, buffer, jax.tree_util.tree_map(jnp.add, total, stats)), None

    batch = sp.length.shape[0]
    zeros = {k: jnp.zeros((batch,), jnp.int32) for k in STAT_NAMES}
    (sp, buffer, total), _ = jax.lax.scan(one, (sp, buffer, zeros), jax.random.split(key, moves))
    return sp, buffer, jax.tree_util.tree_map(jnp.sum, total)


# ------------------------------------------------------------------------------------ matches

Mover = Callable[[Any, Any, jax.Array], jax.Array]
"""``(params, states, key) -> int32[B]``: the moves a player chooses in a batch of states."""


def search_mover(search) -> Mover:
    """The moves of a search (``make_search``)."""
    return lambda params, states, key: search(params, states, key).actions


def random_mover(game) -> Mover:
    """Uniformly random legal moves (params unused)."""
    legal = jax.vmap(game.legal_action_mask)
    return lambda params, states, key: sample_legal(key, legal(states))


def inner_mover(mover: Mover) -> Mover:
    """``mover`` for the plain game applied to ``HistoryState``s (e.g. pure MCTS, which needs no history)."""
    return lambda params, states, key: mover(params, states.inner, key)


class MatchOutput(NamedTuple):
    """What ``play_match`` returns for P pairs of games (G = 2P), T = ``max_moves``.

    Attributes:
      outcomes: float32[G], +1 / 0 / -1: the player's result. Game ``2p`` has the player as
        black, game ``2p + 1`` as white.
      moves: int32[G, T], the actions played, -1 after the end.
      scores: float32[G], the final area scores (black - white - komi).
    """

    outcomes: jax.Array
    moves: jax.Array
    scores: jax.Array


def play_match(game, player: Mover, opponent: Mover, pairs: int, player_params, opponent_params, key
               ) -> MatchOutput:
    """``2 * pairs`` games between ``player`` and ``opponent``, colours alternating, in one loop.

    States are kept as [P, 2] (column 0: the player is black). All unfinished games have played
    the same number of moves, so at ply t the player moves in column ``t % 2`` and the opponent
    in the other: each mover is called once per ply on P games.
    """
    limit = game.max_moves
    states = jax.tree_util.tree_map(lambda x: jnp.broadcast_to(x, (pairs, 2) + x.shape), game.init())
    step, terminal = jax.vmap(game.step), jax.vmap(jax.vmap(game.is_terminal))

    def column(tree, c):
        return jax.tree_util.tree_map(lambda x: jnp.where(c == 0, x[:, 0], x[:, 1]), tree)

    def body(carry):
        states, moves, t, key = carry
        key, k_player, k_opponent = jax.random.split(key, 3)
        c = t % 2  # the column where the player is to move
        mine, theirs = column(states, c), column(states, 1 - c)
        a_mine = player(player_params, mine, k_player)
        a_theirs = opponent(opponent_params, theirs, k_opponent)
        mine, theirs = step(mine, a_mine), step(theirs, a_theirs)
        stepped = jax.tree_util.tree_map(
            lambda x, y: jnp.where(c == 0, jnp.stack([x, y], axis=1), jnp.stack([y, x], axis=1)), mine, theirs)
        over = terminal(states)
        stepped = jax.tree_util.tree_map(
            lambda new, old: jnp.where(over.reshape(over.shape + (1,) * (new.ndim - 2)), old, new), stepped, states)
        actions = jnp.stack([jnp.where(c == 0, a_mine, a_theirs), jnp.where(c == 0, a_theirs, a_mine)], axis=1)
        moves = jax.lax.dynamic_update_index_in_dim(moves, jnp.where(over, -1, actions), t, 2)
        return stepped, moves, t + 1, key

    def going(carry):
        states, _, t, _ = carry
        return (t < limit) & ~jnp.all(terminal(states))

    moves = jnp.full((pairs, 2, limit), -1, jnp.int32)
    states, moves, _, _ = jax.lax.while_loop(going, body, (states, moves, jnp.int32(0), key))
    returns = jax.vmap(jax.vmap(game.returns))(states)  # [P, 2, 2]
    outcomes = jnp.stack([returns[:, 0, 0], returns[:, 1, 1]], axis=1)
    scores = jax.vmap(jax.vmap(game.score))(states)
    return MatchOutput(outcomes.reshape(-1), moves.reshape(2 * pairs, limit), scores.reshape(-1))


__all__ = [
    "MatchOutput",
    "Mover",
    "STAT_NAMES",
    "SelfPlay",
    "flush_finished",
    "inner_mover",
    "outcomes_for_players",
    "play_match",
    "random_mover",
    "search_mover",
    "selfplay",
    "selfplay_init",
    "selfplay_move",
]
