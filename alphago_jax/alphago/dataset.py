"""Position datasets from game records: SGF files and archives -> sharded ``.npz`` position files.

``build_dataset(sources, out_dir, size=19)`` reads SGF game records one at a time
(``sgf.iter_records``: a directory tree of ``.sgf`` files, ``.zip`` archives,
``.tar``/``.tar.gz``/``.tgz``/``.tar.bz2`` archives as KGS archives come, or single files),
replays each through the JAX rules, and writes every position with the move played and the
game's result into shards of ``shard_size`` positions.
Nothing is held in memory beyond one record and one shard per split. Games go whole to the
training or the held-out split (chosen from a hash of the record's name), never split by
position.

A shard ``{split}-{index:05d}.npz`` holds, for P positions of an N-point board:

- ``board`` int8[P, N]: +1 black, -1 white, 0 empty, before the move;
- ``placed_at`` int16[P, N]: the move number that put each stone down (0: setup or empty),
  for AlphaGo's "turns since" planes;
- ``ko`` int16[P]: the point forbidden by simple ko, -1 if none;
- ``to_play`` int8[P]; ``move`` int16[P] (``N`` is pass); ``move_number`` int16[P] (1-based);
- ``winner`` int8[P]: +1 black won, -1 white won, 0 unknown or drawn (from RE: score,
  resignation ``+R``, time ``+T``, forfeit ``+F``);
- ``game`` int32[P]: the game's index in ``manifest.json``'s ``games`` list.

``manifest.json`` says what was kept and why the rest was not: counts by reason, and every
skipped file with its reason. Handicap and setup stones in the root node are part of the start
position; passes are positions like any other. Records are replayed under simple ko (the
rules of most servers); a move illegal under it skips the record.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import pathlib
from typing import Iterator

import numpy as np

from alphago_jax import sgf
from alphago_jax.files import write_atomic
from alphago_jax.games.go import Go

FIELDS = ("board", "placed_at", "ko", "to_play", "move", "move_number", "winner", "game")


def _reason(message: str) -> str:
    """A short category for a rejected record (the counts in the manifest)."""
    lowered = message.lower()
    for key, label in (("malformed sgf", "malformed SGF"), ("setup stones", "setup stones after the root"),
                       ("no moves", "no moves"), ("out of turn", "moves out of turn"),
                       ("illegal setup", "illegal setup"), ("illegal", "illegal move"),
                       ("unsupported board size", "unsupported board size"), ("not a go record", "not Go"),
                       ("unreadable", "unreadable file"), ("cannot read", "unreadable file")):
        if key in lowered:
            return label
    return "unreadable record"


def _held_out(name: str, fraction: float) -> bool:
    digest = hashlib.sha1(name.encode("utf-8", "surrogateescape")).digest()
    return int.from_bytes(digest[:8], "big") / 2.0**64 < fraction


def game_positions(record: sgf.GameRecord, game_index: int) -> dict[str, np.ndarray]:
    """Every position of a record before each move (see the module docstring for the fields)."""
    # Simple ko: records were played under their own rules (Japanese on KGS), and without
    # a superko history every replayed position is a few arrays, not the whole game.
    game, states = sgf.replay(record, Go(size=record.size, komi=record.komi, superko=False), all_states=True)
    moves = np.array([a for _, a in record.moves], np.int16)
    m, n = len(moves), game.num_points
    boards = np.asarray(states.board)  # [m + 1, N]; [i] before move i + 1
    placed = np.zeros((m, n), np.int16)
    current = np.zeros(n, np.int16)
    for i in range(m):
        placed[i] = current
        if moves[i] < n:
            current[moves[i]] = i + 1
        current[boards[i + 1] == 0] = 0
    return dict(
        board=boards[:m].astype(np.int8),
        placed_at=placed,
        ko=np.asarray(states.ko, np.int16)[:m],
        to_play=np.asarray(states.to_play, np.int8)[:m],
        move=moves,
        move_number=np.arange(1, m + 1, dtype=np.int16),
        winner=np.full(m, sgf.winner_of(record.result), np.int8),
        game=np.full(m, game_index, np.int32),
    )


class _ShardWriter:
    """Buffers positions of one split and writes full shards atomically (temporary + rename)."""

    def __init__(self, out_dir: pathlib.Path, split: str, shard_size: int):
        self.out_dir, self.split, self.shard_size = out_dir, split, shard_size
        self.parts: list[dict[str, np.ndarray]] = []
        self.buffered = self.shards = self.positions = 0

    def add(self, positions: dict[str, np.ndarray]) -> None:
        self.parts.append(positions)
        self.buffered += len(positions["move"])
        while self.buffered >= self.shard_size:
            self._write(self.shard_size)

    def _write(self, count: int) -> None:
        joined = {k: np.concatenate([p[k] for p in self.parts]) for k in FIELDS}
        shard = {k: v[:count] for k, v in joined.items()}
        rest = {k: v[count:] for k, v in joined.items()}
        save_shard(self.out_dir / f"{self.split}-{self.shards:05d}.npz", shard)
        self.shards += 1
        self.positions += count
        self.parts = [rest] if len(rest["move"]) else []
        self.buffered = len(rest["move"])

    def close(self) -> None:
        if self.buffered:
            self._write(self.buffered)


@dataclasses.dataclass
class DatasetReport:
    """What ``build_dataset`` kept and skipped (also written to ``manifest.json``)."""

    size: int
    games: list[str] = dataclasses.field(default_factory=list)
    positions: dict[str, int] = dataclasses.field(default_factory=dict)
    shards: dict[str, int] = dataclasses.field(default_factory=dict)
    held_out_games: int = 0
    skipped: dict[str, int] = dataclasses.field(default_factory=dict)
    skipped_files: list[tuple[str, str]] = dataclasses.field(default_factory=list)

    @property
    def kept(self) -> int:
        return len(self.games)

    def summary(self) -> str:
        lines = [f"kept {self.kept} games ({self.held_out_games} held out), "
                 + ", ".join(f"{v:,} {k} positions" for k, v in self.positions.items())]
        lines += [f"skipped {v} ({k})" for k, v in sorted(self.skipped.items(), key=lambda kv: -kv[1])]
        return "\n".join(lines)


def build_dataset(sources, out_dir, *, size: int = 19, shard_size: int = 65536, held_out: float = 0.05,
                  progress: bool = True) -> DatasetReport:
    """Build a position dataset of ``size`` x ``size`` games from SGF files and archives.

    Args:
      sources: directories, ``.sgf`` files and archives (see ``sgf.iter_records``).
      out_dir: where the shards and ``manifest.json`` go; must not already hold a dataset.
      shard_size: positions per shard.
      held_out: fraction of games in the held-out split.
      progress: show a progress bar (records read).

    Returns:
      The report; records of another board size or that cannot be read or replayed are
      skipped, counted by reason and listed with their reason.
    """
    if shard_size < 1:
        raise ValueError(f"shard_size must be positive, got {shard_size}")
    if not 0.0 <= held_out < 1.0:
        raise ValueError(f"held_out must be in [0, 1), got {held_out}")
    Go(size=size)  # the size is one the rules support, or a ValueError naming the range
    out = pathlib.Path(out_dir)
    if (out / "manifest.json").exists() or any(out.glob("*.npz")):
        raise ValueError(f"{out} already holds a dataset; choose an empty directory")
    out.mkdir(parents=True, exist_ok=True)
    writers = {split: _ShardWriter(out, split, shard_size) for split in ("train", "held_out")}
    report = DatasetReport(size=size)

    def skip(name, reason, message):
        report.skipped[reason] = report.skipped.get(reason, 0) + 1
        report.skipped_files.append((name, message))

    from tqdm.auto import tqdm

    for name, data, problem in tqdm(sgf.iter_records(sources), desc="records", unit=" files", disable=not progress):
        if data is None:
            skip(name, "unreadable file", problem)
            continue
        try:
            record = sgf.load(data)
            if record.size != size:
                skip(name, "other board size", f"{record.size}x{record.size}, the dataset is {size}x{size}")
                continue
            positions = game_positions(record, len(report.games))
        except sgf.SGFError as e:
            message = str(e).replace("<sgf>", name, 1)
            skip(name, _reason(message), message)
            continue
        split = "held_out" if _held_out(name, held_out) else "train"
        report.held_out_games += split == "held_out"
        report.games.append(name)
        writers[split].add(positions)
    for split, writer in writers.items():
        writer.close()
        report.positions[split], report.shards[split] = writer.positions, writer.shards
    save_manifest(out, dataclasses.asdict(report))
    return report


def save_shard(path, shard: dict[str, np.ndarray]) -> None:
    """Write one shard (the arrays of ``FIELDS``, one row per position) as a compressed ``.npz``,
    atomically."""
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **{k: shard[k] for k in FIELDS})
    write_atomic(path, buffer.getvalue())


def save_manifest(out_dir, manifest: dict) -> None:
    """Write a dataset's ``manifest.json`` atomically: its presence marks the dataset complete."""
    write_atomic(pathlib.Path(out_dir) / "manifest.json", json.dumps(manifest, indent=1).encode())


def load_manifest(directory) -> dict:
    """The manifest of a dataset directory, or a ValueError naming the path."""
    path = pathlib.Path(directory) / "manifest.json"
    try:
        return json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as e:
        raise ValueError(f"{path}: not a dataset manifest ({e})") from None


def iter_shards(directory, split: str = "train") -> Iterator[dict[str, np.ndarray]]:
    """The shards of a split, one at a time, as dicts of arrays (``FIELDS``)."""
    load_manifest(directory)
    for path in sorted(pathlib.Path(directory).glob(f"{split}-*.npz")):
        with np.load(path) as shard:
            yield {k: shard[k] for k in FIELDS}


__all__ = ["DatasetReport", "FIELDS", "build_dataset", "game_positions", "iter_shards", "load_manifest",
           "save_manifest", "save_shard"]
