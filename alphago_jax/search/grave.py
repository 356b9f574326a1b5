"""UCT, RAVE, GRAVE and MCPS: playout searches with AMAF statistics, batched and jitted.

``GraveSearch(game, GraveConfig(algorithm=...))`` is one compiled searched move for a batch of
games, ``(params, states, key) -> SearchOutput`` (``params`` unused), with the members of
``tree.TreeSearch`` (``init``, ``start``, ``simulate``, ``result``, ``run``; ``iterate`` runs one
playout per game for tests), so that players, matches and ``search.search_for`` drive both
alike. Each game grows its own ``amaf.AmafTree`` by one node per playout: a descent by the rule
below, then random legal moves to the end. The move played is the root's most visited action
(ties: the lowest).

Selection at node ``s`` over the legal actions ``a`` (``n``, ``Q``: the edge's playouts and the
mover's mean result, win 1, draw 1/2, loss 0; ``code`` the action's ``game.move_code``)::

    uct    Q + c sqrt(ln N(s) / n)                                     (n = 0: UNSEEN = 1e6)
    rave   (1 - beta) Q + beta Q~,  n~, Q~ the AMAF statistics of ``code`` at s itself
    grave  the same with n~, Q~ taken at the reference: the deepest node on the path from the
           root to s (s included) with more than ``ref`` playouts, the root if none.
           beta = n~ / (n~ + n + bias n~ n); n~ = 0: Q (n > 0) or UNSEEN (n = 0)
    mcps   (n Q + n~ Q~ + n^ Q^) / (n + n~ + n^), n~ as in grave, n^, Q^ the permutation
           statistics of ``code`` at the deepest frozen node on the path to s (``mcps``);
           UNSEEN where all three counts are 0

These are Cazenave's rules and settings: GRAVE ("Generalized Rapid Action Value Estimation",
2015: ref = 50, bias = 1e-5, no exploration term) and MCPS ("Monte Carlo Permutation Search",
arXiv:2510.06381, 2025: W = 10,000, rho = 30). GRAVE with ``ref = 0`` is RAVE.

MCPS's window holds the playouts of the current search (codes from the root on). A node is
frozen by the first playout after which it has ``rho`` playouts, at most one node per playout
and game, in at most ``ceil(B / 8)`` games per playout step (the bitset work is per game); a
node left waiting freezes on a later playout. The window keeps ``min(W, tree capacity)`` slots
(``trim_window``), the same statistics for any search of fewer playouts; with all W slots, a
search may start from the window of the game's previous one (``tree.replace(window=...)``).

Layer: depends on ``games``, ``playout`` and ``search.config`` (no network).
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp

from alphago_jax import checks
from alphago_jax.games.base import Game
from alphago_jax.search import amaf, mcps
from alphago_jax.search.amaf import NONE, ROOT, AmafTree, Trace
from alphago_jax.search.config import SearchOutput
from alphago_jax.search.mcps import UNSEEN

ALGORITHMS = ("uct", "rave", "grave", "mcps")
FREEZE_SLOTS_FRACTION = 8  # per playout step, at most ceil(B / 8) games of a batch freeze a node


def freezing_games(batch: int) -> int:
    """MCPS: how many of a batch's games may freeze a node per playout step, ``ceil(B / 8)``."""
    return min(batch, max(1, -(-batch // FREEZE_SLOTS_FRACTION)))


@dataclasses.dataclass(frozen=True)
class GraveConfig:
    """Static settings of the GRAVE-family searches (hashable: jitted functions close over them).

    Attributes:
      algorithm: ``"uct"``, ``"rave"``, ``"grave"`` or ``"mcps"`` (module docstring).
      playouts: playouts per move (each adds a node while the tree has room).
      c: UCT's exploration constant (results in [0, 1]); only ``"uct"``.
      ref: GRAVE's reference threshold in playouts (``"grave"``, ``"mcps"``).
      bias: GRAVE's ``bias`` in beta (``"rave"``, ``"grave"``).
      window: MCPS's sliding window W, in playouts.
      rho: MCPS's freezing threshold, in playouts through a node.
      tree_capacity: nodes per tree (default ``playouts + 1``); more for searches in chunks.
      max_moves: the longest game from any root, the playout record's length (default
        ``amaf.game_length_bound(game)``).
      protect_eyes: Go only: no filling the mover's one-point eyes, pass only when nothing else
        is legal (``amaf.playout_mask``).
      trim_window: MCPS stores ``min(window, tree capacity)`` slots; False stores all ``window``.
      playout_superko: Go only: False plays the random part of playouts under simple ko
        (``amaf.simple_ko_rules``), faster; the tree keeps the game's rules.
    """

    algorithm: str = "grave"
    playouts: int = 300
    c: float = 0.4
    ref: int = 50
    bias: float = 1e-5
    window: int = 10_000
    rho: int = 30
    tree_capacity: int | None = None
    max_moves: int | None = None
    protect_eyes: bool = True
    trim_window: bool = True
    playout_superko: bool = True

    def __post_init__(self):
        checks.choice(self, "algorithm", ALGORITHMS, "algorithm")
        checks.ints(self, 1, "playouts", "window", "rho")
        checks.ints(self, 0, "ref")
        checks.number(self, "c", ">= 0")
        checks.number(self, "bias", ">= 0")
        if self.tree_capacity is not None:
            checks.require(self, "tree_capacity", checks.is_int(self.tree_capacity) and
                           self.tree_capacity >= self.playouts + 1, f"must be at least playouts + 1 = {self.playouts + 1}")
        if self.max_moves is not None:
            checks.ints(self, 1, "max_moves")

    @property
    def capacity(self) -> int:
        return self.tree_capacity or self.playouts + 1

    @property
    def num_simulations(self) -> int:
        """``playouts``, under the name ``search.search_for`` reads."""
        return self.playouts


def grave_beta(n, n_amaf, bias) -> jnp.ndarray:
    """float32[...]: GRAVE's ``n~ / (n~ + n + bias n~ n)`` (0 where ``n~ = 0``)."""
    n, n_amaf = jnp.asarray(n, jnp.float32), jnp.asarray(n_amaf, jnp.float32)
    return n_amaf / jnp.maximum(n_amaf + n + bias * n_amaf * n, 1e-30)


def _mine(black, n, black_wins):
    """The mover's wins from black's: ``w`` for black, ``n - w`` for white."""
    return jnp.where(black, black_wins, n.astype(jnp.float32) - black_wins)


def selection_values(config: GraveConfig, tree: AmafTree, node, ref, perm_ref) -> jnp.ndarray:
    """Unbatched: float32[A], each action's value at ``node`` (-inf if illegal), given GRAVE's
    reference node ``ref`` and MCPS's deepest frozen node on the path ``perm_ref`` (-1: none)."""
    legal, codes = tree.legal[node], tree.codes[node]
    black = tree.to_play[node] > 0
    n = tree.edge_n[node]
    w = _mine(black, n, tree.edge_w[node])
    q = w / jnp.maximum(n, 1)
    if config.algorithm == "uct":
        parent_n = jnp.maximum(tree.visits[node], 1).astype(jnp.float32)
        value = jnp.where(n > 0, q + config.c * jnp.sqrt(jnp.log(parent_n) / jnp.maximum(n, 1)), UNSEEN)
    else:
        na = tree.amaf_n[ref, codes]
        wa = _mine(black, na, tree.amaf_w[ref, codes])
        if config.algorithm == "mcps":
            has = perm_ref >= 0
            pr = jnp.maximum(perm_ref, 0)
            nh = jnp.where(has, tree.perm_n[pr, codes], 0)
            wh = _mine(black, nh, jnp.where(has, tree.perm_w[pr, codes], 0.0))
            value = mcps.mcps_values(n, w, na, wa, nh, wh)
        else:
            beta = grave_beta(n, na, config.bias)
            mixed = (1.0 - beta) * q + beta * wa / jnp.maximum(na, 1)
            value = jnp.where(na > 0, mixed, jnp.where(n > 0, q, UNSEEN))
    return jnp.where(legal, value, -jnp.inf)


class GraveSearch:
    """UCT / RAVE / GRAVE / MCPS over a batch of games (see the module docstring)."""

    def __init__(self, game: Game, config: GraveConfig = GraveConfig()):
        self.game, self.config = game, config
        self.capacity = config.capacity
        self.record_length = config.max_moves or amaf.game_length_bound(game)
        self._mcps = config.algorithm == "mcps"
        slots = min(config.window, self.capacity) if config.trim_window else config.window
        self._window = slots if self._mcps else None
        self._playout_game = game if config.playout_superko else amaf.simple_ko_rules(game)
        self.init = jax.jit(self._init)
        self.start = jax.jit(lambda params, tree, key: tree)
        # The tree passed to ``simulate`` / ``iterate`` is consumed (donated): a search in chunks
        # would otherwise copy every statistic array at each call.
        self.simulate = jax.jit(self._simulate, static_argnums=3, donate_argnums=1)
        self.result = jax.jit(self._result)
        self.run = jax.jit(self._run)
        self.iterate = jax.jit(self._iterate, donate_argnums=0)
        self._fresh = jax.jit(lambda params, states, key: self._run(params, self._init(states), key)[0])

    def __call__(self, params, states, key) -> SearchOutput:
        return self._fresh(params, states, key)

    # -- the pieces ---------------------------------------------------------------------------

    def _init(self, states) -> AmafTree:
        return amaf.empty_tree(self.game, states, self.capacity, self.config.algorithm != "uct", self._window,
                               self.config.protect_eyes)

    def _simulate(self, params, tree: AmafTree, key, num_playouts: int) -> AmafTree:
        del params
        keys = jax.random.split(key, num_playouts)
        return jax.lax.fori_loop(0, num_playouts, lambda i, t: self._iterate(t, keys[i])[0], tree)

    def _run(self, params, tree: AmafTree, key):
        k_sim, k_move = jax.random.split(key)
        tree = self._simulate(params, tree, k_sim, self.config.playouts)
        return self._result(tree, k_move), tree

    def _result(self, tree: AmafTree, key) -> SearchOutput:
        del key  # the most visited move: nothing is drawn
        n = tree.edge_n[:, ROOT]
        legal = tree.legal[:, ROOT]
        black = amaf.root_is_black(tree)[:, None]
        w = _mine(black, n, tree.edge_w[:, ROOT])
        actions = jnp.argmax(jnp.where(legal, n, -1), axis=-1).astype(jnp.int32)
        total = jnp.sum(n, axis=-1)
        wins = jnp.sum(w, axis=-1)
        probs = n / jnp.maximum(total, 1)[:, None].astype(jnp.float32)
        return SearchOutput(
            actions=actions,
            visit_probs=probs,
            root_value=jnp.where(total > 0, 2.0 * wins / jnp.maximum(total, 1) - 1.0, 0.0),
            next_states=jax.vmap(self.game.step)(tree.root_states(), actions),
            q_values=jnp.where(n > 0, 2.0 * w / jnp.maximum(n, 1) - 1.0, 0.0),
            policy_target=probs,
        )

    # -- one playout per game -----------------------------------------------------------------

    def _descend(self, tree: AmafTree):
        """Unbatched: a playout's tree part, ``(node, action, child, path, record, length, active)``:
        the last edge, its child (-1: none), the nodes passed (int32[L + 1], -1 past ``node``),
        the record (actions, codes, players) and its length."""
        cfg = self.config
        bound = self.record_length

        def body(s):
            node, _, _, ref, perm_ref, path, (actions, codes, players), t, _ = s
            if cfg.algorithm == "rave":
                ref = node
            elif cfg.algorithm in ("grave", "mcps"):
                ref = jnp.where(tree.visits[node] > cfg.ref, node, ref)
            if self._mcps:
                perm_ref = jnp.where(tree.frozen[node], node, perm_ref)
            a = jnp.argmax(selection_values(cfg, tree, node, ref, perm_ref)).astype(jnp.int32)
            record = (actions.at[t].set(a), codes.at[t].set(tree.codes[node, a]),
                      players.at[t].set(tree.to_play[node]))
            path = path.at[t].set(node)
            child = tree.children[node, a]
            c = jnp.maximum(child, 0)
            going = (child >= 0) & ~tree.terminal[c] & (t + 1 < bound)
            return jnp.where(going, c, node), a, child, ref, perm_ref, path, record, t + 1, going

        active = ~tree.terminal[ROOT] & jnp.any(tree.legal[ROOT])
        empty = jnp.full((bound,), NONE, jnp.int32)
        init = (jnp.int32(ROOT), jnp.int32(0), jnp.int32(NONE), jnp.int32(ROOT), jnp.int32(NONE),
                jnp.full((bound + 1,), NONE, jnp.int32), (empty, empty, jnp.zeros((bound,), jnp.int8)),
                jnp.int32(0), active)
        node, a, child, _, _, path, record, t, _ = jax.lax.while_loop(lambda s: s[-1], body, init)
        return node, a, child, path, record, t, active

    def _one_playout(self, tree: AmafTree, key):
        """Unbatched: descent, expansion, random playout, backup. Returns (tree, trace row,
        freeze candidate)."""
        node, a, child, path, record, t, active = self._descend(tree)
        tree, after, new = amaf.expand(self.game, tree, node, a, active & (child < 0), self.config.protect_eyes)
        final, (actions, codes, players), length = amaf.random_playout(
            self._playout_game, after, record, t, key, self.config.protect_eyes)
        length = jnp.where(active, length, 0)
        # The deepest node updated: the new node, a terminal child revisited, or (the tree full)
        # the last node, whose chosen edge is still counted.
        bottom = jnp.where(new >= 0, new, jnp.where(child >= 0, child, node))
        path = path.at[t].set(jnp.where(child >= 0, child, new))
        kept = jnp.arange(codes.shape[0]) < length
        row = Trace(actions=jnp.where(kept, actions, NONE), codes=jnp.where(kept, codes, NONE),
                    players=jnp.where(kept, players, 0), length=length, tree_moves=jnp.where(active, t, 0),
                    bottom=jnp.where(active, bottom, NONE), score=amaf.black_score(self.game, final))
        tree, cand = amaf.back_up(tree, path, row, self.config.rho if self._mcps else None)
        if self._mcps:
            present = amaf.last_positions(row.codes, length, self.game.num_move_codes) >= 0
            tree = tree.replace(window=mcps.window_add(tree.window, present, row.score, active))
        return tree, row, cand

    def _freeze(self, tree: AmafTree, rows: Trace, cand, key):
        """Freeze the permutation statistics of the candidates (``cand`` int32[B], -1: none) in at
        most ``freezing_games(B)`` games drawn among those with one; the others stay candidates."""
        b = cand.shape[0]
        k = freezing_games(b)
        priority = (cand >= 0) + jax.random.uniform(key, (b,), maxval=0.5)
        _, games = jax.lax.top_k(priority, k)
        node = cand[games]
        window = jax.tree_util.tree_map(lambda x: x[games], tree.window)
        depth = tree.depth[games, jnp.maximum(node, 0)]
        n, w = jax.vmap(mcps.freeze)(window, rows.codes[games], depth)
        rows_at = (games, jnp.where(node >= 0, node, tree.capacity))  # -1: dropped
        return tree.replace(perm_n=tree.perm_n.at[rows_at].set(n, mode="drop"),
                            perm_w=tree.perm_w.at[rows_at].set(w, mode="drop"),
                            frozen=tree.frozen.at[rows_at].set(True, mode="drop"))

    def _iterate(self, tree: AmafTree, key):
        b = tree.num_nodes.shape[0]
        k_play, k_freeze = jax.random.split(key)
        tree, rows, cand = jax.vmap(self._one_playout)(tree, jax.random.split(k_play, b))
        if self._mcps:
            # The bitset work only when some game has a node to freeze (rare at batch 1).
            tree = jax.lax.cond(jnp.any(cand >= 0), lambda t: self._freeze(t, rows, cand, k_freeze),
                                lambda t: t, tree)
        return tree, rows


def make_grave_search(game: Game, config: GraveConfig = GraveConfig()) -> GraveSearch:
    """The searched move ``(params, states, key) -> SearchOutput`` of ``config.algorithm``."""
    return GraveSearch(game, config)


__all__ = ["ALGORITHMS", "GraveConfig", "GraveSearch", "freezing_games", "grave_beta", "make_grave_search", "selection_values"]
