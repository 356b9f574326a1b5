"""Static search settings, what a searched move returns, and how the move is chosen from the root."""

from __future__ import annotations

import dataclasses
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

from alphago_jax import checks

ALGORITHMS = ("puct", "muzero", "gumbel")
MOVE_CHOICES = ("visits", "value_weighted")


@dataclasses.dataclass(frozen=True)
class SearchConfig:
    """Static search settings (hashable: jitted functions close over them).

    Attributes:
      num_simulations: simulations per move (leaf evaluations backed up into the tree).
      algorithm: ``"puct"``, this project's PUCT tree (AlphaGo's selection with raw Q values;
        tree reuse, leaf batching with virtual loss, search in chunks for time control);
        ``"muzero"``, mctx's ``muzero_policy`` (PUCT on min-max normalised Q values, a fresh
        tree each move); ``"gumbel"``, mctx's ``gumbel_muzero_policy``.
      c_puct: exploration constant (``"muzero"``: mctx ``pb_c_init``).
      fpu_reduction: ``"puct"``: an unvisited child's Q is its parent's value minus this.
      dirichlet_alpha, dirichlet_fraction: root noise (fraction 0 turns it off); not Gumbel.
      temperature: the move is drawn from weights ** (1 / temperature); 0 plays the heaviest.
      temperature_moves: if set, only games with fewer moves played than this draw with
        ``temperature``; the others play the heaviest move (AlphaGo Zero: 30 on 19x19).
      move_choice: the weights of the move choice: ``"visits"`` (root visit counts) or
        ``"value_weighted"`` (visits * (1 + Q), Q the child's value in [-1, 1]).
      max_depth: deepest simulation (edges from the root), None for no limit.
      gumbel_considered: actions considered at the root by Gumbel search.
      gumbel_scale: ``"gumbel"``: scale of the Gumbel noise on the root's logits (1 in
        self-play: it is the search's exploration; 0 plays the best considered move).
      leaf_batch: ``"puct"``: leaves gathered (with virtual loss) per evaluator call in each
        game; ``num_simulations`` must be a multiple of it.
      tree_capacity: ``"puct"``: nodes per tree (default ``num_simulations + 1``). A reused
        subtree keeps at most ``tree_capacity - num_simulations`` nodes, so give room to reuse.
    """

    num_simulations: int = 64
    algorithm: str = "puct"
    c_puct: float = 1.25
    fpu_reduction: float = 0.0
    dirichlet_alpha: float = 0.3
    dirichlet_fraction: float = 0.25
    temperature: float = 1.0
    temperature_moves: int | None = None
    move_choice: str = "visits"
    max_depth: int | None = None
    gumbel_considered: int = 16
    gumbel_scale: float = 1.0
    leaf_batch: int = 1
    tree_capacity: int | None = None

    def __post_init__(self):
        checks.choice(self, "algorithm", ALGORITHMS, "search algorithm")
        checks.choice(self, "move_choice", MOVE_CHOICES, "move choice")
        checks.ints(self, 1, "num_simulations", "gumbel_considered")
        checks.number(self, "gumbel_scale", ">= 0")
        checks.number(self, "temperature", ">= 0")
        checks.require(self, "leaf_batch", checks.is_int(self.leaf_batch) and self.leaf_batch >= 1
                       and self.num_simulations % self.leaf_batch == 0,
                       f"must be a positive divisor of num_simulations ({self.num_simulations})")
        checks.require(self, "leaf_batch", self.leaf_batch == 1 or self.algorithm == "puct",
                       "must be 1 unless algorithm is 'puct'")
        checks.require(self, "tree_capacity", self.tree_capacity is None or self.tree_capacity > self.num_simulations,
                       f"must be None or at least num_simulations + 1 = {self.num_simulations + 1}")

    @property
    def capacity(self) -> int:
        """Nodes per tree of the ``"puct"`` search."""
        return self.tree_capacity or self.num_simulations + 1


class SearchOutput(NamedTuple):
    """What one searched move returns, for a batch of B games and A actions.

    Attributes:
      actions: int32[B], the moves played.
      visit_probs: float32[B, A], root visit counts normalised (the training target).
      root_value: float32[B], the searched value of the root for its player to move.
      next_states: the states after ``actions``.
      q_values: float32[B, A], the root children's values for the root's player (0 unvisited).
      policy_target: float32[B, A], what the network's policy learns from this search: the
        visit distribution, or for Gumbel search the improved policy from completed Q-values
        (mctx's ``action_weights``, Danihelka et al. 2022).
    """

    actions: jnp.ndarray
    visit_probs: jnp.ndarray
    root_value: jnp.ndarray
    next_states: Any
    q_values: jnp.ndarray
    policy_target: jnp.ndarray


def choose_moves(key, visits, q_values, legal, move_count, config: SearchConfig) -> jnp.ndarray:
    """int32[B]: the moves to play from the root statistics.

    Args:
      visits: float32[B, A] root visit counts; q_values: float32[B, A] in [-1, 1].
      legal: bool[B, A] the roots' legal moves; move_count: int32[B] moves played so far.
    """
    weights = visits if config.move_choice == "visits" else visits * (1.0 + q_values)
    weights = jnp.where(legal, weights, 0.0)
    greedy = jnp.argmax(jnp.where(legal, weights, -1.0), axis=-1).astype(jnp.int32)
    if config.temperature == 0:
        return greedy
    logits = jnp.where(weights > 0, jnp.log(jnp.maximum(weights, 1e-30)) / config.temperature, -jnp.inf)
    # A root with no weighted legal move (possible with one simulation) draws among legal moves.
    logits = jnp.where(jnp.any(weights > 0, axis=-1, keepdims=True), logits, jnp.where(legal, 0.0, -jnp.inf))
    drawn = jax.random.categorical(key, logits, axis=-1).astype(jnp.int32)
    if config.temperature_moves is None:
        return drawn
    return jnp.where(move_count < config.temperature_moves, drawn, greedy)
