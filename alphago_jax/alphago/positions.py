"""Dataset rows back into game states, batched and in jit; shuffled batches streamed from shards.

A row of a position dataset (``dataset``: ``board``, ``placed_at``, ``ko``, ``to_play``,
``move_number``, and the labels ``move`` and ``winner``) holds what AlphaGo's input planes and
the rollout policy read, but not the rules' bookkeeping. ``row_state`` rebuilds it:

- chains, their atari liberties and the legal moves, by the rules themselves
  (``Go.init_from_board``, then the legal moves again once the ko point is set);
- ``move_count = move_number - 1`` and ``placed_at`` as stored, so that a stone's age in
  turns (``move_count - placed_at + 1``) is what it was in the game;
- the last move: the stone placed at move ``move_number - 1``, or a pass if that move left no
  stone (``passes`` is then 1), or none at the first move (``last_move`` -1).

The rules are ``rules(size)``: Go with simple ko (a dataset keeps no position history, and
records are replayed under simple ko), wrapped in ``WithHistory(boards=1)`` (the state carries
``placed_at``). ``row_states`` is the batched form, jit- and vmap-safe, fixed shapes.

``augment_rows`` maps rows through one random board symmetry each (board, stone ages, ko point,
move): the 8-fold augmentation of every job that learns from positions, applied before the
planes are computed.

``BatchStream`` serves shuffled batches of a split without loading it whole: the shards of an
epoch in a seeded random order, the rows of each shard in a seeded random order, consecutive
batches running on across shard and epoch ends. Batch ``k`` is a function of the seed and
``k`` only, and ``batches(start)`` starts at batch ``start`` without reading the shards before
it: a resumed job sees the batches the uninterrupted job would have seen.
"""

from __future__ import annotations

import pathlib
from typing import Iterator, Mapping

import jax
import jax.numpy as jnp
import numpy as np

from alphago_jax.alphago.dataset import load_manifest
from alphago_jax.features import symmetry
from alphago_jax.games.go import Go
from alphago_jax.games.history import HistoryState, WithHistory

STATE_FIELDS = ("board", "placed_at", "ko", "to_play", "move_number")
"""The row fields a state is rebuilt from."""


def rules(size: int, komi: float = 7.5, max_moves: int | None = None) -> WithHistory:
    """The rules rebuilt rows are states of: simple-ko Go keeping ``placed_at`` (one board)."""
    return WithHistory(Go(size=size, komi=komi, superko=False, max_moves=max_moves), boards=1)


def row_state(game: WithHistory, board, placed_at, ko, to_play, move_number) -> HistoryState:
    """The state of one dataset row (see the module docstring).

    Args:
      game: ``rules(size)`` (any ``WithHistory`` of simple-ko ``Go``).
      board: int8[N]; placed_at: int[N]; ko: int[] (-1 none); to_play: int8[];
      move_number: int[] (1-based: the move about to be played).

    Returns:
      A ``HistoryState`` whose planes and rollout features are those of the game position.
    """
    go = game.game
    n = go.num_points
    board = jnp.asarray(board, jnp.int8)
    placed_at = jnp.asarray(placed_at, jnp.int32)
    move_count = jnp.asarray(move_number, jnp.int32) - 1
    inner = go.init_from_board(board, jnp.asarray(to_play, jnp.int8))
    just_played = (placed_at == move_count) & (board != 0) & (move_count > 0)
    last = jnp.where(jnp.any(just_played), jnp.argmax(just_played), jnp.where(move_count > 0, n, -1))
    inner = inner.replace(ko=jnp.asarray(ko, jnp.int16), move_count=move_count, last_move=last.astype(jnp.int16),
                          passes=(last == n).astype(jnp.int8))
    inner = inner.replace(legal=go._legal(inner))  # with the ko point known
    return HistoryState(inner=inner, boards=board[None], placed_at=jnp.where(board != 0, placed_at, 0))


def row_states(game: WithHistory, rows: Mapping[str, jnp.ndarray]) -> HistoryState:
    """``row_state`` of a batch of rows (``STATE_FIELDS``, leading axis B): a batched state."""
    return jax.vmap(lambda *xs: row_state(game, *xs))(*(rows[k] for k in STATE_FIELDS))


def augment_rows(key, rows: Mapping[str, jnp.ndarray], size: int) -> dict:
    """The rows under one random symmetry each (of the 8): board, ``placed_at``, ko and move.

    Other fields (``to_play``, ``move_number``, ``winner``, ...) are unchanged. jit-safe.
    """
    ks = symmetry.random_symmetries(key, rows["board"].shape[0])
    out = dict(rows)
    out["board"] = symmetry.apply_board(rows["board"], ks)
    out["placed_at"] = symmetry.apply_board(rows["placed_at"], ks)
    ko = jnp.asarray(rows["ko"], jnp.int32)
    out["ko"] = jnp.where(ko >= 0, symmetry.apply_action(jnp.maximum(ko, 0), ks, size), -1).astype(rows["ko"].dtype)
    if "move" in rows:
        out["move"] = symmetry.apply_action(rows["move"], ks, size).astype(rows["move"].dtype)
    return out


def player_outcome(rows: Mapping[str, jnp.ndarray]) -> jnp.ndarray:
    """float32[B]: the game's result for the player to move (+1 won, -1 lost, 0 unknown)."""
    return (jnp.asarray(rows["winner"], jnp.float32) * jnp.asarray(rows["to_play"], jnp.float32))


# ------------------------------------------------------------------------------- streaming

def check_dataset(directory, size: int | None = None, split: str = "train") -> dict:
    """The manifest of a dataset directory, checked: it exists, holds ``split`` positions, and
    (if given) is of board ``size``. Raises ValueError naming the path."""
    path = pathlib.Path(directory)
    if not path.is_dir():
        raise ValueError(f"{path}: no such dataset directory (build one with 'alphago-jax dataset build')")
    manifest = load_manifest(path)
    if size is not None and manifest.get("size") != size:
        raise ValueError(f"{path}: a {manifest.get('size')}x{manifest.get('size')} dataset, the job is {size}x{size}")
    if not sorted(path.glob(f"{split}-*.npz")):
        raise ValueError(f"{path}: no {split!r} positions in the dataset")
    return manifest


def _shard_paths(directory, split: str) -> list[pathlib.Path]:
    return sorted(pathlib.Path(directory).glob(f"{split}-*.npz"))


def _load(path: pathlib.Path, fields) -> dict[str, np.ndarray]:
    try:
        with np.load(path) as shard:
            return {k: shard[k] for k in fields}
    except (OSError, KeyError, ValueError) as e:
        raise ValueError(f"{path}: unreadable shard ({e})") from None


class BatchStream:
    """Shuffled batches of one split of a dataset, streamed one shard at a time.

    Args:
      directory: a dataset directory (``dataset``) or any directory of
        ``{split}-*.npz`` shards with a ``manifest.json``.
      split: ``"train"`` or ``"held_out"``.
      batch: rows per batch.
      seed: the shuffle's seed.
      fields: the fields each batch holds.

    Only one shard is in memory at a time (plus one batch). ``len(stream)`` is the split's rows.
    """

    def __init__(self, directory, split: str, batch: int, seed: int, fields=STATE_FIELDS + ("move",)):
        if batch < 1:
            raise ValueError(f"batch must be positive, got {batch}")
        self.paths = _shard_paths(directory, split)
        if not self.paths:
            raise ValueError(f"{directory}: no {split!r} shards")
        self.batch, self.seed, self.fields = batch, seed, tuple(fields)
        self.lengths = np.array([len(_load(p, ("to_play",))["to_play"]) for p in self.paths], np.int64)
        self.total = int(self.lengths.sum())

    def __len__(self) -> int:
        return self.total

    def _order(self, epoch: int) -> np.ndarray:
        return np.random.default_rng([self.seed, epoch]).permutation(len(self.paths))

    def _rows(self, epoch: int, shard: int) -> dict[str, np.ndarray]:
        data = _load(self.paths[shard], self.fields)
        perm = np.random.default_rng([self.seed, epoch, shard + 1]).permutation(self.lengths[shard])
        return {k: v[perm] for k, v in data.items()}

    def batches(self, start: int = 0) -> Iterator[dict[str, np.ndarray]]:
        """Batches ``start``, ``start + 1``, ... (endless: epochs follow each other)."""
        b = self.batch
        epoch, offset = divmod(start * b, self.total)
        carry = None  # rows left over from the previous shard (fewer than a batch)
        while True:
            for shard in self._order(epoch):
                size = int(self.lengths[shard])
                if offset >= size:  # skipped without reading it
                    offset -= size
                    continue
                rows = {k: v[offset:] for k, v in self._rows(epoch, shard).items()}
                offset, i, n = 0, 0, size - offset
                if carry is not None:
                    i = min(b - len(carry["to_play"]), n)
                    carry = {k: np.concatenate([carry[k], rows[k][:i]]) for k in self.fields}
                    if len(carry["to_play"]) < b:
                        continue
                    yield carry
                    carry = None
                while i + b <= n:
                    yield {k: v[i:i + b] for k, v in rows.items()}
                    i += b
                carry = {k: v[i:] for k, v in rows.items()} if i < n else None
            epoch += 1


def sample_rows(directory, split: str, limit: int, seed: int = 0, fields=STATE_FIELDS + ("move",)) -> dict:
    """At most ``limit`` rows of a split, drawn uniformly without replacement (a fixed
    evaluation set), read one shard at a time. Rows keep the split's order."""
    paths = _shard_paths(directory, split)
    if not paths:
        raise ValueError(f"{directory}: no {split!r} shards")
    lengths = [len(_load(p, ("to_play",))["to_play"]) for p in paths]
    total = sum(lengths)
    chosen = np.sort(np.random.default_rng(seed).choice(total, size=min(limit, total), replace=False))
    parts, start = [], 0
    for path, length in zip(paths, lengths):
        mine = chosen[(chosen >= start) & (chosen < start + length)] - start
        if len(mine):
            parts.append({k: v[mine] for k, v in _load(path, fields).items()})
        start += length
    return {k: np.concatenate([p[k] for p in parts]) for k in fields}


def padded_batches(rows: Mapping[str, np.ndarray], batch: int) -> Iterator[tuple[dict, np.ndarray]]:
    """``(batch rows, bool[batch] weights)``: fixed-size batches of ``rows`` in order, the last
    one padded by repeating its first row (weight False), so one compiled shape serves all."""
    total = len(next(iter(rows.values())))
    for start in range(0, total, batch):
        idx = np.arange(start, start + batch)
        valid = idx < total
        idx = np.where(valid, idx, start)
        yield {k: v[idx] for k, v in rows.items()}, valid


__all__ = [
    "BatchStream",
    "STATE_FIELDS",
    "augment_rows",
    "check_dataset",
    "padded_batches",
    "player_outcome",
    "row_state",
    "row_states",
    "rules",
    "sample_rows",
]
