"""PUCT search on a tree that lives between moves: tree reuse, leaf batching, search in chunks.

mctx builds a fresh tree for every move and evaluates one leaf per game per simulation. This
module keeps the search tree as a value (``SearchTree``, a batch of array trees of fixed
capacity), so that

- after a move, the subtree of the move actually played becomes the next root, with its
  statistics (``TreeSearch.advance``; works for the opponent's moves too);
- each game gathers ``leaf_batch`` leaves per evaluator call, steering the later descents away
  from the earlier ones with virtual loss, so that one game fills an accelerator;
- a move's search can be run in chunks until a time budget is spent (``search.time_control``).

Selection is AlphaGo's PUCT::

    a* = argmax_a  Q(s, a) + c_puct P(s, a) sqrt(N(s)) / (1 + N(s, a))

with Q the mean backed-up value for the player to move at ``s`` (in [-1, 1]), an unvisited
child's Q being the parent's value minus ``fpu_reduction``, and N(s) the node's visits (its
own evaluation included). A leaf selected but not yet backed up counts as one visit that
lost (virtual loss). Ties go to the lowest action: the search is deterministic given its key.

Each evaluation is backed up as one visit: a leaf's value ``v`` (for its player to move)
becomes ``reward + discount * v`` for its parent, where the reward is the game's return for
the player who moved into the leaf on the move that ended the game, and the discount -1 (0
once the game is over). A descent stops at an unexpanded edge, at a finished game, at a leaf
gathered earlier in the same batch (evaluated again: one more visit), or at ``max_depth``.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import flax.struct
import jax
import jax.numpy as jnp

from alphago_jax.compile_cache import kept
from alphago_jax.games.base import Game
from alphago_jax.search.config import SearchConfig, SearchOutput, choose_moves
from alphago_jax.search.evaluators import Evaluator, RootedEvaluator, masked, value_for_mover

UNVISITED = -1
ROOT = 0


@flax.struct.dataclass
class SearchTree:
    """B search trees of C nodes over A actions. Node 0 is the root.

    Nodes are allocated in order, so a node's parent has a smaller index; nodes at or past
    ``num_nodes`` are free and hold stale values.

    Attributes:
      states: pytree [B, C, ...], the game state at each node.
      visits: int32[B, C], evaluations backed up through the node.
      value_sum: float32[B, C], their values for the node's player to move.
      raw_value: float32[B, C], the evaluator's value of the node.
      reward: float32[B, C], the return of the move into the node for the player who made it.
      discount: float32[B, C], -1, or 0 if the move into the node ended the game.
      parent: int32[B, C], -1 for the root.
      action: int32[B, C], the move from the parent (-1 for the root).
      children: int32[B, C, A], child node per action, -1 where none.
      prior: float32[B, C, A], prior probabilities (0 on illegal actions).
      legal: bool[B, C, A], legal actions of the node's state.
      expanded: bool[B, C], the node has been evaluated (prior, legal filled).
      terminal: bool[B, C], the node's game is over.
      num_nodes: int32[B], nodes in use.
    """

    states: Any
    visits: jnp.ndarray
    value_sum: jnp.ndarray
    raw_value: jnp.ndarray
    reward: jnp.ndarray
    discount: jnp.ndarray
    parent: jnp.ndarray
    action: jnp.ndarray
    children: jnp.ndarray
    prior: jnp.ndarray
    legal: jnp.ndarray
    expanded: jnp.ndarray
    terminal: jnp.ndarray
    num_nodes: jnp.ndarray

    @property
    def capacity(self) -> int:
        return self.visits.shape[-1]

    def root_states(self):
        """The root states, a batch (pytree with leading axis B)."""
        return jax.tree_util.tree_map(lambda x: x[:, ROOT], self.states)

    def root_visits(self) -> jnp.ndarray:
        """int32[B, A]: visits of the root's children (0 where none)."""
        return jax.vmap(_child_stats, in_axes=(0, None))(self, ROOT)[0]

    def root_q(self) -> jnp.ndarray:
        """float32[B, A]: the root children's mean values for the root's player (0 unvisited)."""
        return jax.vmap(_child_stats, in_axes=(0, None))(self, ROOT)[1]

    def root_value(self) -> jnp.ndarray:
        """float32[B]: the root's mean value for its player to move."""
        return self.value_sum[:, ROOT] / jnp.maximum(self.visits[:, ROOT], 1)


def _child_stats(tree: SearchTree, node, pending=None):
    """(int32[A] visits, float32[A] mean values for ``node``'s player; 0 where unvisited).

    Unbatched ``tree``. ``pending`` (int32[C]) adds virtual visits that each count as a loss.
    """
    kids = tree.children[node]
    has = kids >= 0
    k = jnp.maximum(kids, 0)
    n = jnp.where(has, tree.visits[k], 0)
    w = jnp.where(has, tree.reward[k] * n + tree.discount[k] * tree.value_sum[k], 0.0)
    if pending is not None:
        inflight = jnp.where(has, pending[k], 0)
        n, w = n + inflight, w - inflight
    return n, jnp.where(n > 0, w / jnp.maximum(n, 1), 0.0)


def _allocate(tree: SearchTree, index, parent, action, enable) -> SearchTree:
    """Unbatched: make ``index`` a fresh, unexpanded node under ``parent`` (when ``enable``)."""
    i = jnp.where(enable, index, tree.capacity)  # out of range: the writes are dropped

    def put(x, v):
        return x.at[i].set(v, mode="drop")

    return tree.replace(
        visits=put(tree.visits, 0),
        value_sum=put(tree.value_sum, 0.0),
        parent=put(tree.parent, parent),
        action=put(tree.action, action),
        children=put(tree.children, UNVISITED),
        expanded=put(tree.expanded, False),
    )


def empty_tree(states, capacity: int, num_actions: int) -> SearchTree:
    """B trees holding only their (unexpanded) roots ``states`` (pytree with leading axis B)."""
    b = jax.tree_util.tree_leaves(states)[0].shape[0]
    tree = SearchTree(
        states=jax.tree_util.tree_map(lambda x: jnp.broadcast_to(x[:, None], (b, capacity) + x.shape[1:]), states),
        visits=jnp.zeros((b, capacity), jnp.int32),
        value_sum=jnp.zeros((b, capacity), jnp.float32),
        raw_value=jnp.zeros((b, capacity), jnp.float32),
        reward=jnp.zeros((b, capacity), jnp.float32),
        discount=jnp.zeros((b, capacity), jnp.float32),
        parent=jnp.full((b, capacity), UNVISITED, jnp.int32),
        action=jnp.full((b, capacity), UNVISITED, jnp.int32),
        children=jnp.full((b, capacity, num_actions), UNVISITED, jnp.int32),
        prior=jnp.zeros((b, capacity, num_actions), jnp.float32),
        legal=jnp.zeros((b, capacity, num_actions), bool),
        expanded=jnp.zeros((b, capacity), bool),
        terminal=jnp.zeros((b, capacity), bool),
        num_nodes=jnp.ones((b,), jnp.int32),
    )
    return tree


def reroot(tree: SearchTree, child, keep: int) -> SearchTree:
    """Unbatched: the subtree under node ``child`` as a tree of its own, ``child`` its root.

    Nodes keep their order (parents before children); at most ``keep`` nodes are kept, the
    first in that order, which is again a tree (a dropped node's parent edge becomes
    unexpanded, its visits stay counted in its ancestors).
    """
    c, cap = child, tree.capacity
    idx = jnp.arange(cap)
    alive = idx < tree.num_nodes
    # up[i]: the first ancestor-or-self of i with index <= child, by pointer doubling
    # (parents precede children, so the walk up is monotone).
    up = jnp.where(alive & (idx > c), tree.parent, idx)
    for _ in range(max(1, (cap - 1).bit_length())):
        up = up[up]
    inside = alive & (up == c)
    new = jnp.cumsum(inside) - 1
    kept = inside & (new < keep)
    dest = jnp.where(kept, new, cap)

    def remap(x):  # old node indices -> new ones, -1 where not kept
        safe = jnp.maximum(x, 0)
        return jnp.where((x >= 0) & kept[safe], new[safe], UNVISITED)

    def move(x):
        return x.at[dest].set(x, mode="drop")

    # num_nodes gets a dummy node axis for the moment, so that every field moves alike.
    moved = jax.tree_util.tree_map(move, tree.replace(
        parent=remap(tree.parent), action=jnp.where(idx == c, UNVISITED, tree.action),
        children=remap(tree.children), num_nodes=jnp.zeros((cap,), jnp.int32)))
    return moved.replace(num_nodes=jnp.minimum(jnp.sum(inside), keep).astype(jnp.int32))


class _DescentCarry(NamedTuple):
    """The loop carry of one descent (unbatched; scalars int32 unless said)."""

    parent: jax.Array  # the node the last action was chosen at
    action: jax.Array  # that action
    child: jax.Array  # its child, UNVISITED when there is none yet
    at: jax.Array  # the child, or ROOT when there is none: where the next step selects
    depth: jax.Array
    going: jax.Array  # bool: the child is expanded, not terminal, and within the depth limit
    pending: jax.Array  # int32[N]: descents in flight through each node (virtual losses)


class _Descent(NamedTuple):
    """Where one descent ended (unbatched scalars; [B, K] once scanned and vmapped)."""

    node: jax.Array  # int32: the parent of the leaf
    action: jax.Array  # int32: the action from ``node`` to the leaf
    leaf: jax.Array  # int32: the leaf's node index (new or existing)
    new: jax.Array  # bool: the leaf was allocated by this descent
    active: jax.Array  # bool: the descent evaluates and backs up (the root is live, the tree had room)


class TreeSearch:
    """PUCT search over a batch of games with trees kept between moves.

    Built by ``search.make_search`` for ``algorithm="puct"``. Jitted members (B games, A
    actions):

    - ``__call__(params, states, key) -> SearchOutput``: a fresh search and the chosen move
      played (one compiled function: root evaluation, simulations, move choice, step).
    - ``init(states) -> SearchTree``: trees holding the unexpanded roots.
    - ``run(params, tree, key) -> (SearchOutput, SearchTree)``: search ``num_simulations``
      more from ``tree`` (fresh or reused) and choose the move; the searched tree is returned
      for analysis or for ``advance``.
    - ``step(params, tree, key) -> (SearchOutput, SearchTree)``: ``run`` then ``advance``
      with the chosen moves (self-play with tree reuse).
    - ``advance(tree, actions) -> SearchTree``: the subtrees of the moves played (any
      player's), a fresh root where the move was not in the tree.
    - ``start(params, tree, key)`` and ``simulate(params, tree, key, num_simulations)`` and
      ``result(tree, key)``: the pieces of ``run``, for searching in chunks.
    - ``merged_result(trees, key) -> SearchOutput``: ``result`` of a tuple of trees of the same
      roots searched apart (root parallelisation): their root visits summed, the children's
      values and the root's weighted by visits.

    Every searched tree's root children hold the visits of the simulations (and of the reused
    subtree), so that ``visit_probs`` sums to 1 and is 0 on illegal actions.

    ``evaluator_key`` names what ``evaluator`` computes (e.g. a network's architecture and input
    planes) the same way in every process; given it, ``init``, ``start``, ``simulate``,
    ``result`` and ``advance`` keep their compiled programs in the compilation cache
    (``compile_cache.kept``), so a player started again skips tracing them.
    """

    def __init__(self, game: Game, evaluator: Evaluator, config: SearchConfig, evaluator_key: str | None = None):
        if config.algorithm != "puct":
            raise ValueError(f"TreeSearch runs algorithm 'puct', not {config.algorithm!r}")
        self.game, self.config = game, config
        self.capacity = config.capacity
        self._evaluate = masked(game, evaluator)
        # A RootedEvaluator's root reading gives every root its prior, reused roots included.
        rooted = isinstance(evaluator, RootedEvaluator)
        self._evaluate_root = masked(game, evaluator.root) if rooted else self._evaluate
        self._refresh_root_prior = rooted
        self._step = jax.vmap(game.step)
        self._legal = jax.vmap(game.legal_action_mask)
        self._terminal = jax.vmap(game.is_terminal)
        # The pieces a player calls keep their compiled programs between processes when the
        # evaluator is named: the rest of the key is the rules' and settings' reprs.
        key = None if evaluator_key is None else f"{evaluator_key}|{game!r}|{config!r}"
        self.init = kept(jax.jit(self._init), "search_init", key)
        self.start = kept(jax.jit(self._start), "search_start", key)
        self.simulate = kept(jax.jit(self._simulate, static_argnums=3), "search_simulate", key, static_argnums=(3,))
        self.result = kept(jax.jit(self._result), "search_result", key)
        self.merged_result = kept(jax.jit(self._merged_result), "search_merged_result", key)
        self.advance = kept(jax.jit(self._advance), "search_advance", key)
        self.run = jax.jit(self._run)
        self.step = jax.jit(self._run_and_advance)
        self._fresh = jax.jit(self._search_fresh)

    def __call__(self, params, states, key) -> SearchOutput:
        return self._fresh(params, states, key)

    # -- pieces ------------------------------------------------------------------------------

    def _init(self, states) -> SearchTree:
        return empty_tree(states, self.capacity, self.game.num_actions)

    def _start(self, params, tree: SearchTree, key) -> SearchTree:
        """Evaluate unexpanded roots (one visit) and put Dirichlet noise on every root's prior."""
        cfg = self.config
        k_eval, k_noise = jax.random.split(key)
        roots = tree.root_states()
        logits, value = self._evaluate_root(params, roots, k_eval)
        legal = self._legal(roots)
        fresh = tree.visits[:, ROOT] == 0
        renew = fresh | self._refresh_root_prior
        prior = jnp.where(renew[:, None], jax.nn.softmax(logits, axis=-1), tree.prior[:, ROOT])
        prior = jnp.where(legal, prior, 0.0)
        if cfg.dirichlet_fraction > 0:
            noise = jnp.where(legal, jax.random.gamma(k_noise, cfg.dirichlet_alpha, prior.shape), 0.0)
            noise = noise / jnp.maximum(jnp.sum(noise, axis=-1, keepdims=True), 1e-30)
            prior = (1.0 - cfg.dirichlet_fraction) * prior + cfg.dirichlet_fraction * noise

        def root_set(x, v):
            return x.at[:, ROOT].set(v)

        return tree.replace(
            prior=root_set(tree.prior, prior),
            legal=root_set(tree.legal, legal),
            expanded=root_set(tree.expanded, True),
            terminal=root_set(tree.terminal, self._terminal(roots)),
            raw_value=root_set(tree.raw_value, jnp.where(fresh, value, tree.raw_value[:, ROOT])),
            visits=root_set(tree.visits, jnp.where(fresh, 1, tree.visits[:, ROOT])),
            value_sum=root_set(tree.value_sum, jnp.where(fresh, value, tree.value_sum[:, ROOT])),
        )

    def _simulate(self, params, tree: SearchTree, key, num_simulations: int) -> SearchTree:
        """``num_simulations`` more simulations (a multiple of ``leaf_batch``) into started trees."""
        k = self.config.leaf_batch
        if num_simulations % k:
            raise ValueError(f"num_simulations ({num_simulations}) must be a multiple of leaf_batch ({k})")
        keys = jax.random.split(key, num_simulations // k)
        return jax.lax.fori_loop(0, num_simulations // k, lambda i, t: self._round(params, t, keys[i]), tree)

    def _result(self, tree: SearchTree, key):
        """The move choice and the statistics of searched trees (``next_states`` after the moves)."""
        return self._output(tree, tree.root_visits().astype(jnp.float32), tree.root_q(), tree.root_value(), key)

    def _merged_result(self, trees: tuple[SearchTree, ...], key):
        """``_result`` of the summed root statistics of ``trees``, each over the same roots."""
        if len(trees) == 1:
            return self._result(trees[0], key)
        visits = [t.root_visits().astype(jnp.float32) for t in trees]
        total = sum(visits)
        q = sum(v * t.root_q() for v, t in zip(visits, trees)) / jnp.maximum(total, 1.0)
        root_value = sum(t.value_sum[:, ROOT] for t in trees) / jnp.maximum(sum(t.visits[:, ROOT] for t in trees), 1)
        return self._output(trees[0], total, q, root_value, key)

    def _output(self, tree: SearchTree, visits, q, root_value, key) -> SearchOutput:
        """The move choice from root ``visits`` (float32[B, A]) and ``q`` over ``tree``'s roots."""
        roots = tree.root_states()
        actions = choose_moves(key, visits, q, tree.legal[:, ROOT], roots.move_count, self.config)
        probs = visits / jnp.maximum(jnp.sum(visits, axis=-1, keepdims=True), 1.0)
        return SearchOutput(actions=actions, visit_probs=probs, root_value=root_value,
                            next_states=self._step(roots, actions), q_values=q, policy_target=probs)

    def _advance(self, tree: SearchTree, actions) -> SearchTree:
        b = actions.shape[0]
        kids = tree.children[jnp.arange(b), ROOT, actions]
        reusable = (kids >= 0) & tree.expanded[jnp.arange(b), jnp.maximum(kids, 0)]
        keep = self.capacity - self.config.num_simulations
        moved = jax.vmap(reroot, in_axes=(0, 0, None))(tree, jnp.maximum(kids, 0), keep)
        # Where the move was never searched: a fresh root, the other nodes free.
        fresh = jax.vmap(_allocate, in_axes=(0, None, None, None, None))(
            tree, ROOT, UNVISITED, UNVISITED, True)
        next_roots = self._step(tree.root_states(), actions)
        fresh = fresh.replace(
            states=jax.tree_util.tree_map(lambda x, r: x.at[:, ROOT].set(r), tree.states, next_roots),
            num_nodes=jnp.ones((b,), jnp.int32))

        def pick(m, f):
            return jnp.where(reusable.reshape((b,) + (1,) * (m.ndim - 1)), m, f)

        return jax.tree_util.tree_map(pick, moved, fresh)

    def _run(self, params, tree: SearchTree, key):
        k_start, k_sim, k_move = jax.random.split(key, 3)
        tree = self._start(params, tree, k_start)
        tree = self._simulate(params, tree, k_sim, self.config.num_simulations)
        return self._result(tree, k_move), tree

    def _run_and_advance(self, params, tree: SearchTree, key):
        out, tree = self._run(params, tree, key)
        return out, self._advance(tree, out.actions)

    def _search_fresh(self, params, states, key) -> SearchOutput:
        return self._run(params, self._init(states), key)[0]

    # -- one round: leaf_batch descents per game, one evaluator call, the backups ------------

    def _select(self, tree: SearchTree, pending, node):
        """Unbatched: the PUCT action at ``node``, in-flight descents counting as losses."""
        cfg = self.config
        n, q = _child_stats(tree, node, pending)
        parent_n = tree.visits[node] + pending[node]
        parent_q = tree.value_sum[node] / jnp.maximum(tree.visits[node], 1)
        q = jnp.where(n > 0, q, parent_q - cfg.fpu_reduction)
        u = cfg.c_puct * tree.prior[node] * jnp.sqrt(parent_n.astype(jnp.float32)) / (1.0 + n)
        return jnp.argmax(jnp.where(tree.legal[node], q + u, -jnp.inf)).astype(jnp.int32)

    def _descend(self, tree: SearchTree, pending):
        """Unbatched: one descent. Returns a ``_Descent`` (its ``pending`` counts this one)."""
        max_depth = self.config.max_depth or self.capacity

        def body(s: _DescentCarry) -> _DescentCarry:
            a = self._select(tree, s.pending, s.at)
            child = tree.children[s.at, a]
            c = jnp.maximum(child, 0)
            going = (child >= 0) & tree.expanded[c] & ~tree.terminal[c] & (s.depth + 1 < max_depth)
            return _DescentCarry(parent=s.at, action=a, child=child, at=c, depth=s.depth + 1, going=going,
                                 pending=s.pending.at[s.at].add(1))

        active = tree.expanded[ROOT] & ~tree.terminal[ROOT]
        init = _DescentCarry(parent=jnp.int32(ROOT), action=jnp.int32(0), child=jnp.int32(UNVISITED),
                             at=jnp.int32(ROOT), depth=jnp.int32(0), going=active, pending=pending)
        s = jax.lax.while_loop(lambda s: s.going, body, init)
        node, a, child = s.parent, s.action, s.child
        room = tree.num_nodes < self.capacity
        new = active & (child < 0) & room
        active = active & ((child >= 0) | room)  # a full tree drops the simulation
        leaf = jnp.where(new, tree.num_nodes, jnp.maximum(child, 0))
        tree = _allocate(tree, leaf, node, a, new)
        tree = tree.replace(
            children=tree.children.at[jnp.where(new, node, self.capacity), a].set(leaf, mode="drop"),
            num_nodes=tree.num_nodes + new.astype(jnp.int32),
        )
        pending = s.pending.at[leaf].add(active.astype(jnp.int32))
        return _Descent(node=node, action=a, leaf=leaf, new=new, active=active), tree, pending

    def _descend_all(self, tree: SearchTree):
        """Unbatched: ``leaf_batch`` descents in turn, each seeing the ones before as losses."""

        def one(carry, _):
            descent, tree, pending = self._descend(*carry)
            return (tree, pending), descent

        pending = jnp.zeros((self.capacity,), jnp.int32)
        (tree, _), out = jax.lax.scan(one, (tree, pending), None, length=self.config.leaf_batch)
        return tree, out

    def _round(self, params, tree: SearchTree, key) -> SearchTree:
        b, k = tree.num_nodes.shape[0], self.config.leaf_batch
        tree, d = jax.vmap(self._descend_all)(tree)  # each field [B, K]
        node, action, leaf, new, active = d.node, d.action, d.leaf, d.new, d.active
        before = jax.tree_util.tree_map(
            lambda x: x[jnp.arange(b)[:, None], node].reshape((b * k,) + x.shape[2:]), tree.states)
        flat_actions = action.reshape(b * k)
        after = self._step(before, flat_actions)
        logits, value = self._evaluate(params, after, key)
        evaluated = dict(
            states=after,
            prior=jax.nn.softmax(logits, axis=-1),
            legal=self._legal(after),
            terminal=self._terminal(after),
            raw_value=value,
            reward=value_for_mover(self.game, before, after),
            discount=jnp.where(self._terminal(after), 0.0, -1.0),
        )
        evaluated = jax.tree_util.tree_map(lambda x: x.reshape((b, k) + x.shape[1:]), evaluated)
        return jax.vmap(_write_and_back_up)(tree, leaf, new, active, evaluated)


def _write_and_back_up(tree: SearchTree, leaf, new, active, evaluated) -> SearchTree:
    """Unbatched: store the new leaves' evaluations, then back every active leaf's value up."""
    dest = jnp.where(new, leaf, tree.capacity)

    def put(x, v):
        return x.at[dest].set(v, mode="drop")

    tree = tree.replace(
        states=jax.tree_util.tree_map(put, tree.states, evaluated["states"]),
        prior=put(tree.prior, evaluated["prior"]),
        legal=put(tree.legal, evaluated["legal"]),
        terminal=put(tree.terminal, evaluated["terminal"]),
        raw_value=put(tree.raw_value, evaluated["raw_value"]),
        reward=put(tree.reward, evaluated["reward"]),
        discount=put(tree.discount, evaluated["discount"]),
        expanded=put(tree.expanded, True),
    )

    # All leaves climb together; scatter-adds sum the leaves that meet on a node.
    def body(s):
        visits, value_sum, at, g = s
        on = at >= 0
        i = jnp.maximum(at, 0)
        visits = visits.at[i].add(on.astype(jnp.int32))
        value_sum = value_sum.at[i].add(jnp.where(on, g, 0.0))
        g = tree.reward[i] + tree.discount[i] * g
        return visits, value_sum, jnp.where(on, tree.parent[i], UNVISITED), g

    init = (tree.visits, tree.value_sum, jnp.where(active, leaf, UNVISITED), evaluated["raw_value"])
    visits, value_sum, _, _ = jax.lax.while_loop(lambda s: jnp.any(s[2] >= 0), body, init)
    return tree.replace(visits=visits, value_sum=value_sum)
