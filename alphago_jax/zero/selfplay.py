"""The game loops of AlphaGo Zero's job: self-play into a replay buffer, and matches.

Self-play (Silver et al. 2017, "Self-play"): ``SelfPlay`` holds B games in flight and, per
game, the positions it has recorded so far: input planes (uint8), the search's visit
distribution, the player to move and the move played, in fixed-length trajectory arrays
(T = the game's ``max_moves``, the longest a game can last). ``selfplay_move`` searches all B
games, records each position, plays the chosen moves and, for the games that ended, assigns the
outcome ``z`` to each recorded position from the view of that position's player, appends those
positions to the replay buffer (``replay_add`` with a ``valid`` mask) and resets the games in
place (``reset_where``). ``selfplay`` runs it for a number of moves in a ``lax.scan``. Where the
buffer stores the targets of KataGo's auxiliary heads (``replay.AuxReplayBuffer``), each position
also gets its game's final Tromp-Taylor ownership and score margin from its player's view.

Three options of self-play, all off by default:

- Playout cap randomization (KataGo, Wu 2019): a move gets either the full search or a fast one
  (fewer simulations, no root noise) that only advances the game; only full-search positions
  become training examples (the trajectory's ``full`` mask), each with its game's outcome. The
  choice is one draw per move shared by the whole batch (``selfplay``'s ``schedule``): with
  fixed shapes a per-game choice would run both searches on every move, costing more than no cap.
- Resignation (Silver et al. 2017): a player resigns, losing, when its search's root value falls
  below the threshold ``Resignation.threshold``; a fraction of games, drawn as each starts, never
  resigns, and measures how often resigning would have been wrong. ``calibrate_resignation``
  moves the threshold after each iteration so that this false-resignation rate stays under a target.
- Varied starts (KataGo's varied positions, Wu 2019): a share of the games open with a few
  uniformly random stones (``random_starts``), which are not training examples, so that the
  network learns positions its own openings never reach (scattered strings, ataris at the edge).

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

STAT_NAMES = ("games", "positions", "black_wins", "white_wins", "resigned", "no_resign_games", "would_resign",
              "false_resigns")
"""The self-play statistics: finished games, positions added to the buffer, wins by colour; games
ended by resignation, finished no-resign games, those of them in which a player would have resigned
(root value under the threshold), and those in which that player then did not lose."""

RESIGN_BINS = 200
"""Bins over [-1, 1] (width 0.01) of the histograms of lowest root values that calibrate the
resignation threshold; its calibrated values are their edges."""

RESIGN_DECAY = 0.9
"""The histograms' weight kept per iteration: the calibration follows the recent network's
values (a window of about 10 iterations) rather than all the run's past."""

RESIGN_MIN_GAMES = 20.0
"""No threshold is chosen on fewer (decayed) no-resign games that would have resigned at it:
below 1 / 0.05 such games, a 5% rate is not measurable."""


@flax.struct.dataclass
class Resignation:
    """The resignation state of one worker's B games (AlphaGo Zero's v_resign and its calibration).

    Attributes:
      threshold: float32[], v_resign: the player to move resigns when its root value is below it
        (-inf: resignation off).
      no_resign: bool[B], the current game never resigns (drawn when it starts).
      low: float32[B, 2], the lowest root value black and white have had in the current game
        (+inf before their first move).
      would: int8[B], in a no-resign game, the player who would first have resigned at
        ``threshold`` (0: nobody yet).
      game_low: float32[RESIGN_BINS], finished no-resign games (decayed counts) by the lowest root
        value either player had: at threshold v, those below v would have resigned.
      winner_low: float32[RESIGN_BINS], the same games by the lowest root value of the player who
        did not lose: at v, those below v would (or might: the loser may have resigned first) have
        resigned wrongly.
    """

    threshold: jax.Array
    no_resign: jax.Array
    low: jax.Array
    would: jax.Array
    game_low: jax.Array
    winner_low: jax.Array


def _resign_bin(value: jax.Array) -> jax.Array:
    """int32: the histogram bin of root values in [-1, 1] (+inf: the last)."""
    scaled = (jnp.clip(value, -1.0, 1.0) + 1.0) * (RESIGN_BINS / 2)
    return jnp.clip(jnp.floor(scaled).astype(jnp.int32), 0, RESIGN_BINS - 1)


def calibrate_resignation(res: Resignation, target: float, min_games: float = RESIGN_MIN_GAMES) -> Resignation:
    """The threshold of the workers' pooled record, then the record decayed (once per iteration).

    ``res`` holds W workers' states (leaves with a leading axis W); all get the same threshold:
    the highest bin edge v at which, of the recorded no-resign games in which somebody would have
    resigned (lowest root value below v; at least ``min_games``), at most a fraction ``target``
    would have resigned a game its player did not lose. That fraction counts a game where both
    players fell below v as a false resignation, so it is an upper bound of the false-resignation
    rate. With enough games and no such edge, -1 (no root value is below it: no resignation); with
    too few games, the threshold is kept.
    """
    game_low, winner_low = jnp.sum(res.game_low, axis=0), jnp.sum(res.winner_low, axis=0)
    zero = jnp.zeros((1,), jnp.float32)
    would = jnp.concatenate([zero, jnp.cumsum(game_low)])  # [BINS + 1]: lowest value < edge j
    wrong = jnp.concatenate([zero, jnp.cumsum(winner_low)])
    edges = jnp.linspace(-1.0, 1.0, RESIGN_BINS + 1, dtype=jnp.float32)
    ok = (would >= min_games) & (wrong <= target * would)
    best = jnp.max(jnp.where(ok, edges, -jnp.inf))
    threshold = jnp.where(jnp.any(ok), best, jnp.where(would[-1] >= min_games, -1.0, res.threshold[0]))
    return res.replace(threshold=jnp.broadcast_to(threshold, res.threshold.shape).astype(jnp.float32),
                       game_low=res.game_low * RESIGN_DECAY, winner_low=res.winner_low * RESIGN_DECAY)


@flax.struct.dataclass
class SelfPlay:
    """B games in flight and what each has recorded. T = the game's ``max_moves``, A actions.

    Attributes:
      games: the game states, a ``HistoryState`` batch [B].
      planes: uint8[B, T, S, S, C], the input planes of each recorded position (C: those of the
        ``inputs`` of ``selfplay_init``).
      policy: float32[B, T, A], the search's policy target there (``SearchOutput.policy_target``:
        the visit distribution, or Gumbel search's improved policy).
      player: int8[B, T], the player to move there (+1 black, -1 white).
      actions: int32[B, T], the move played there (a resigned game's last: the move it would have played).
      length: int32[B], positions recorded in the current game; entries at or past it are stale.
      full: bool[B, T], the position had the full search (playout cap randomization): only those
        become training examples. All true without the cap.
      resign: the games' ``Resignation`` state.
    """

    games: Any
    planes: jax.Array
    policy: jax.Array
    player: jax.Array
    actions: jax.Array
    length: jax.Array
    full: jax.Array
    resign: Resignation


def _fresh_games(game, batch: int):
    one = game.init()
    return jax.tree_util.tree_map(lambda x: jnp.broadcast_to(x, (batch,) + x.shape), one)


def random_starts(game, key, batch: int, moves: int, fraction: float):
    """``batch`` new games, ``fraction`` of them (drawn per game) opened by 1 to ``moves`` uniformly
    random legal moves other than pass (the number drawn uniformly per game), the rest empty.

    Self-play from such positions (KataGo's varied starts, Wu 2019) shows the network scattered
    stones, strings in atari near the edges and lopsided boards that its own openings never
    reach; the random moves are not training examples, the search's moves after them are.
    """
    games = _fresh_games(game, batch)
    k_pick, k_count, k_moves = jax.random.split(key, 3)
    count = jnp.where(jax.random.bernoulli(k_pick, fraction, (batch,)),
                      jax.random.randint(k_count, (batch,), 1, moves + 1), 0)
    no_pass = jnp.arange(game.num_actions) < game.num_actions - 1

    def one(i, games):
        legal = jax.vmap(game.legal_action_mask)(games)
        stones = legal & no_pass
        # A board with no legal point left (never on an opening's few stones) would pass.
        allowed = jnp.where(jnp.any(stones, -1, keepdims=True), stones, legal)
        action = sample_legal(jax.random.fold_in(k_moves, i), allowed)
        return reset_where(i < count, jax.vmap(game.step)(games, action), games)

    return jax.lax.fori_loop(0, moves, one, games)


def selfplay_init(game: WithHistory, batch: int, resign_threshold: float | None = None,
                  inputs: str = "stones") -> SelfPlay:
    """``batch`` new games with empty trajectories (length ``game.max_moves``) of the input planes
    ``inputs`` (``features.zero.INPUTS``); resignation below ``resign_threshold`` (None: never)
    where ``selfplay_move`` is asked to resign."""
    t, s, a = game.max_moves, game.size, game.num_actions
    return SelfPlay(
        games=_fresh_games(game, batch),
        planes=jnp.zeros((batch, t, s, s, features.zero.num_planes(inputs)), jnp.uint8),
        policy=jnp.zeros((batch, t, a), jnp.float32),
        player=jnp.zeros((batch, t), jnp.int8),
        actions=jnp.zeros((batch, t), jnp.int32),
        length=jnp.zeros((batch,), jnp.int32),
        full=jnp.zeros((batch, t), bool),
        resign=Resignation(
            threshold=jnp.float32(-jnp.inf if resign_threshold is None else resign_threshold),
            no_resign=jnp.zeros((batch,), bool),
            low=jnp.full((batch, 2), jnp.inf, jnp.float32),
            would=jnp.zeros((batch,), jnp.int8),
            game_low=jnp.zeros((RESIGN_BINS,), jnp.float32),
            winner_low=jnp.zeros((RESIGN_BINS,), jnp.float32),
        ),
    )


def outcomes_for_players(player: jax.Array, returns: jax.Array) -> jax.Array:
    """float32[B, T]: ``z`` of each position for its player, from ``returns`` float32[B, 2]
    (black, white) and ``player`` int8[B, T]."""
    return jnp.where(player == BLACK, returns[:, :1], returns[:, 1:]).astype(jnp.float32)


def flush_finished(buffer: replay.ReplayBuffer, sp: SelfPlay, done: jax.Array, returns: jax.Array,
                   ownership: jax.Array | None = None, score: jax.Array | None = None) -> replay.ReplayBuffer:
    """Append the recorded positions of the games marked in ``done`` (bool[B]), game by game in
    move order, with their outcomes ``returns`` float32[B, 2] from each position's player's view.
    Only full-search positions (``sp.full``) are written: a fast search's visits are no target.

    A buffer with the auxiliary targets also needs each game's final ``ownership`` int8[B, N]
    (``game.ownership``: +1 black, -1 white) and ``score`` float32[B] (``game.score``: black's
    margin); every position gets them from its player's view (times the player, +1 or -1).
    ``replay.NO_OWNER`` and NaN mark a game's targets unknown (a resigned game).
    """
    b, t = sp.player.shape
    valid = done[:, None] & (jnp.arange(t)[None, :] < sp.length[:, None]) & sp.full
    aux = {}
    if buffer.ownership is not None:
        aux["ownership"] = (ownership[:, None, :] * sp.player[:, :, None]).astype(jnp.int8).reshape(b * t, -1)
    if buffer.score is not None:
        aux["score"] = (score[:, None] * sp.player).astype(jnp.float32).reshape(b * t)
    examples = replay.Examples(
        planes=sp.planes.reshape((b * t,) + sp.planes.shape[2:]),
        policy=sp.policy.reshape(b * t, -1),
        value=outcomes_for_players(sp.player, returns).reshape(b * t),
        **aux,
    )
    # Most moves end no game: skip the scatter over all B * T rows then.
    return jax.lax.cond(jnp.any(done), lambda: replay.replay_add(buffer, examples, valid.reshape(-1)),
                        lambda: buffer)


def _planes_of(sp: SelfPlay) -> Callable:
    """One state -> its input planes: those ``selfplay_init`` sized ``sp.planes`` for."""
    return features.zero.planes_function(features.zero.inputs_of(sp.planes.shape[-1]))


def selfplay_move(game: WithHistory, search, params, sp: SelfPlay, buffer: replay.ReplayBuffer, key,
                  full: jax.Array | None = None, *, fast_search=None, resign: bool = False,
                  no_resign_fraction: float = 0.1, fresh=None) -> tuple[SelfPlay, replay.ReplayBuffer, dict]:
    """One searched move in every game; finished games go to ``buffer`` and restart.

    Args:
      game: the history-keeping game (``ZeroConfig.game``).
      search: ``(params, states, key) -> SearchOutput`` (``make_search``).
      params: the network's variables (``TrainState.variables``).
      full: bool[], with ``fast_search``: whether this move gets ``search`` (its positions become
        training examples) or ``fast_search`` (they do not). Under ``vmap`` keep it unbatched:
        ``lax.cond`` on a batched predicate runs both searches.
      fast_search: the fast search of playout cap randomization, like ``search`` (None: none).
      resign: whether games resign (below ``sp.resign.threshold``); ``no_resign_fraction`` of
        them, drawn as each game starts, never do.
      fresh: the states finished games restart from (a batch like ``sp.games``; None: empty boards).

    Returns:
      ``(sp, buffer, stats)``; ``stats`` (keys ``STAT_NAMES``), int32[B] per game: ``games``
      (1 if it finished), ``positions`` (added to the buffer), ``black_wins``, ``white_wins``,
      ``resigned`` (it ended by resignation), ``no_resign_games`` (it finished and could not
      resign), ``would_resign`` (such a game where a player fell below the threshold) and
      ``false_resigns`` (where the first such player did not lose).
    """
    batch = sp.length.shape[0]
    res = sp.resign
    if resign:  # the draws of new games (length 0) first, from a key of their own
        key, k_draw = jax.random.split(key)
        starting = sp.length == 0
        drawn = jax.random.bernoulli(k_draw, no_resign_fraction, (batch,))
        res = res.replace(no_resign=jnp.where(starting, drawn, res.no_resign),
                          low=jnp.where(starting[:, None], jnp.inf, res.low),
                          would=jnp.where(starting, 0, res.would).astype(jnp.int8))
    if fast_search is None:
        out = search(params, sp.games, key)
        full = jnp.ones((), bool)
    else:
        out = jax.lax.cond(full, lambda: search(params, sp.games, key), lambda: fast_search(params, sp.games, key))
    planes = jax.vmap(_planes_of(sp))(sp.games).astype(jnp.uint8)

    def record(store, row, value):  # one game: store[row] = value
        return jax.lax.dynamic_update_index_in_dim(store, value.astype(store.dtype), row, 0)

    sp = sp.replace(
        planes=jax.vmap(record)(sp.planes, sp.length, planes),
        policy=jax.vmap(record)(sp.policy, sp.length, out.policy_target),
        player=jax.vmap(record)(sp.player, sp.length, sp.games.to_play),
        actions=jax.vmap(record)(sp.actions, sp.length, out.actions),
        full=jax.vmap(record)(sp.full, sp.length, jnp.broadcast_to(full, (batch,))),
        length=sp.length + 1,
    )
    after = out.next_states
    done = jax.vmap(game.is_terminal)(after)
    returns = jax.vmap(game.returns)(after)
    if resign:
        res, resigned, done, returns = _resign(res, sp.games.to_play, out.root_value, done, returns)
    else:
        resigned = jnp.zeros((batch,), bool)
    # The auxiliary targets (only for a buffer that stores them): the area of the final board.
    # A resigned game's board was never played out: its targets are marked unknown, not learnt.
    final = {}
    if buffer.ownership is not None:
        final["ownership"] = jnp.where(resigned[:, None], jnp.int8(replay.NO_OWNER), jax.vmap(game.ownership)(after))
    if buffer.score is not None:
        final["score"] = jnp.where(resigned, jnp.nan, jax.vmap(game.score)(after))
    buffer = flush_finished(buffer, sp, done, returns, **final)
    recorded = jnp.arange(sp.full.shape[1])[None, :] < sp.length[:, None]
    stats = {
        "games": done.astype(jnp.int32),
        "positions": jnp.where(done, jnp.sum(sp.full & recorded, axis=1, dtype=jnp.int32), 0),
        "black_wins": (done & (returns[:, 0] > 0)).astype(jnp.int32),
        "white_wins": (done & (returns[:, 1] > 0)).astype(jnp.int32),
        "resigned": resigned.astype(jnp.int32),
        **_no_resign_stats(res, done, returns),
    }
    if resign:
        res = _record_no_resign_games(res, done, returns)
    fresh = _fresh_games(game, batch) if fresh is None else fresh
    sp = sp.replace(games=reset_where(done, fresh, after), length=jnp.where(done, 0, sp.length), resign=res)
    return sp, buffer, stats


def _resign(res: Resignation, to_play, root_value, done, returns):
    """Resignations of one move: ``(res, resigned bool[B], done, returns)``. ``to_play`` int8[B]
    the searched players, ``root_value`` float32[B] their root values, ``done`` bool[B] and
    ``returns`` float32[B, 2] the games' ends after the moves; a resigned game ends, lost by the
    player who resigned (its last recorded position included). Resigning comes before moving: a
    player below the threshold resigns even where its move would have ended the game, so that
    resignations and the no-resign games' would-have-resigned count the same events."""
    b = to_play.shape[0]
    below = root_value < res.threshold
    column = (to_play != BLACK).astype(jnp.int32)  # 0: black, 1: white
    low = res.low.at[jnp.arange(b), column].min(root_value)
    would = jnp.where(res.no_resign & below & (res.would == 0), to_play, res.would).astype(jnp.int8)
    resigned = below & ~res.no_resign
    mover = to_play.astype(jnp.float32)
    returns = jnp.where(resigned[:, None], jnp.stack([-mover, mover], axis=1), returns)  # (black, white)
    return res.replace(low=low, would=would), resigned, done | resigned, returns


def _no_resign_stats(res: Resignation, done, returns) -> dict:
    """int32[B] each: the finished no-resign games, those where a player would have resigned, and
    those where that player did not lose."""
    finished = done & res.no_resign
    would = finished & (res.would != 0)
    would_result = jnp.where(res.would == BLACK, returns[:, 0], returns[:, 1])
    return {"no_resign_games": finished.astype(jnp.int32), "would_resign": would.astype(jnp.int32),
            "false_resigns": (would & (would_result >= 0)).astype(jnp.int32)}


def _record_no_resign_games(res: Resignation, done, returns) -> Resignation:
    """The finished no-resign games added to the calibration histograms."""
    weight = (done & res.no_resign).astype(jnp.float32)
    game_low = jnp.min(res.low, axis=1)
    winner_low = jnp.min(jnp.where(returns >= 0, res.low, jnp.inf), axis=1)
    return res.replace(game_low=res.game_low.at[_resign_bin(game_low)].add(weight),
                       winner_low=res.winner_low.at[_resign_bin(winner_low)].add(weight))


def selfplay(game: WithHistory, search, moves: int, params, sp: SelfPlay, buffer: replay.ReplayBuffer, key,
             schedule: jax.Array | None = None, *, fast_search=None, resign: bool = False,
             no_resign_fraction: float = 0.1, random_start: tuple[int, float] = (0, 0.0)
             ) -> tuple[SelfPlay, replay.ReplayBuffer, dict]:
    """``moves`` calls of ``selfplay_move`` in a ``lax.scan``; the stats summed over moves and games
    (int32 scalars).

    ``schedule``: bool[moves], with ``fast_search``, which moves get the full search (playout cap
    randomization). One draw per move for the whole batch, not per game: with fixed shapes a
    per-game choice would run both searches on every move (cost ``num + fast`` simulations a move
    instead of ``fraction * num + (1 - fraction) * fast`` on average), while a shared draw lets
    ``lax.cond`` run one. The price: the positions of one move are all targets or none. Keep it
    unbatched under ``vmap`` (e.g. one schedule for all workers) for the same reason.

    ``random_start``: ``(moves, fraction)`` of ``random_starts``: the games that finish restart from
    positions drawn once per call (a game slot finishing twice in one call starts the same position
    twice). The other keyword arguments are ``selfplay_move``'s.
    """
    batch = sp.length.shape[0]
    fresh = None
    if random_start[0] > 0 and random_start[1] > 0:  # a key of its own only then: other runs keep their streams
        key, k_start = jax.random.split(key)
        fresh = random_starts(game, k_start, batch, *random_start)
    options = dict(fast_search=fast_search, resign=resign, no_resign_fraction=no_resign_fraction, fresh=fresh)
    if fast_search is not None and schedule is None:
        raise ValueError("selfplay: a fast_search needs a schedule of the full-search moves")

    def one(carry, x):
        sp, buffer, total = carry
        k, full = x if fast_search is not None else (x, None)
        sp, buffer, stats = selfplay_move(game, search, params, sp, buffer, k, full, **options)
        return (sp, buffer, jax.tree_util.tree_map(jnp.add, total, stats)), None

    zeros = {k: jnp.zeros((batch,), jnp.int32) for k in STAT_NAMES}
    keys = jax.random.split(key, moves)
    xs = (keys, schedule) if fast_search is not None else keys
    (sp, buffer, total), _ = jax.lax.scan(one, (sp, buffer, zeros), xs)
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


def play_match(game, player: Mover, opponent: Mover, pairs: int, player_params, opponent_params, key,
               starts=None) -> MatchOutput:
    """``2 * pairs`` games between ``player`` and ``opponent``, colours alternating, in one loop.

    States are kept as [P, 2] (column 0: the player is black). All unfinished games have played
    the same number of moves, so at ply t the player moves in column ``t % 2`` and the opponent
    in the other: each mover is called once per ply on P games.

    ``starts``: the position each pair's two games start from, a batch of P states of ``game``
    with black to move (e.g. a few random moves in, so that deterministic players play distinct
    games); None: the empty board.
    """
    limit = game.max_moves
    if starts is None:
        states = jax.tree_util.tree_map(lambda x: jnp.broadcast_to(x, (pairs, 2) + x.shape), game.init())
    else:
        states = jax.tree_util.tree_map(lambda x: jnp.broadcast_to(x[:, None], (pairs, 2) + x.shape[1:]), starts)
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
    "RESIGN_BINS",
    "RESIGN_DECAY",
    "RESIGN_MIN_GAMES",
    "Resignation",
    "STAT_NAMES",
    "SelfPlay",
    "calibrate_resignation",
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
