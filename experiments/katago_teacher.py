"""Games of KataGo's raw network against itself, with its outputs on every position: a teacher.

Each game starts on an empty board; in ``--random-share`` of the games, ``1..--random-stones``
random legal moves of each colour come first (unusual positions: loose stones, strings in
atari, edges), in the others ``0..--opening`` random moves. Then KataGo's network picks every
move: drawn from its policy for the first ``--sample-moves`` moves, its top move after. Before
each move, ``kata-raw-nn 0`` gives KataGo's policy, value, score lead and ownership for the
player to move; they are the targets of ``alphago-jax warm-start`` (distillation: every
position teaches a whole distribution, not one move).

A game ends at two passes, when one side's value stays below ``-0.96`` for 4 of its moves in a
row (in ``1 - --finish-share`` of the games: the others are played out, dead stones and all, so
that the student learns to capture them before it passes), or after ``3 * size * size`` moves.
The result is KataGo's ``final_score`` (area scoring, this project's rules) or the resignation.

Written per game, atomically, the arrays first: ``game-00042.npz`` (policy float16[T, S*S+1],
value float32[T], score float32[T], ownership float16[T, S*S], all for the player to move) and
``game-00042.sgf``. A run stopped and started again skips the games already written.

    alphago-jax katago install
    python experiments/katago_teacher.py --size 9 --games 500 --out data/katago9
    alphago-jax warm-start --records data/katago9 --out runs/distill9 --set size_agnostic=true ...
    python experiments/katago_teacher.py --smoke --out /tmp/teacher-smoke   # 2 short 5x5 games
"""

from __future__ import annotations

import argparse
import io
import pathlib
import random
import sys

import numpy as np

from alphago_jax import katago, sgf
from alphago_jax.files import write_atomic
from alphago_jax.games import grid
from alphago_jax.games.go import Go
from alphago_jax.gtp_client import GTPClient

RESIGN_VALUE, RESIGN_MOVES = -0.96, 4


def _ask(engine: GTPClient, size: int, moves: int) -> katago.RawOutput:
    return katago.parse_raw_nn(engine.send("kata-raw-nn 0"), size, white_to_play=moves % 2 == 1)


def _random_moves(engine: GTPClient, size: int, count: int, rng: random.Random, actions: list, outputs: list) -> None:
    """``count`` random legal moves, colours alternating, each after KataGo's outputs there."""
    for _ in range(count):
        raw = _ask(engine, size, len(actions))
        legal = [p for p in range(size * size) if raw.policy[p] > 0]  # KataGo gives illegal points no mass
        if not legal:
            return
        move = rng.choice(legal)
        engine.send(f"play {'w' if len(actions) % 2 else 'b'} {grid.to_vertex(move, size)}")
        actions.append(move)
        outputs.append(raw)


def play_game(engine: GTPClient, args, rng: random.Random):
    """One game: (actions, KataGo's outputs before each, result string)."""
    size, n = args.size, args.size * args.size
    engine.send_many([f"boardsize {size}", "clear_board", f"komi {args.komi:g}"])
    actions: list[int] = []
    outputs: list[katago.RawOutput] = []
    randoms = (2 * rng.randint(1, args.random_stones) if rng.random() < args.random_share
               else rng.randint(0, args.opening))
    _random_moves(engine, size, randoms, rng, actions, outputs)
    finish = rng.random() < args.finish_share
    low = [0, 0]  # moves in a row each side has been lost in KataGo's eyes
    passes, result, drawn = 0, None, 0
    while len(actions) < 3 * n:
        white = len(actions) % 2
        raw = _ask(engine, size, len(actions))
        low[white] = low[white] + 1 if raw.value < RESIGN_VALUE else 0
        if not finish and low[white] >= RESIGN_MOVES:
            result = f"{'B' if white else 'W'}+R"
            break
        if drawn < args.sample_moves:
            move, drawn = int(rng.choices(range(n + 1), weights=raw.policy)[0]), drawn + 1
        else:
            move = int(np.argmax(raw.policy))
        engine.send(f"play {'w' if white else 'b'} {grid.to_vertex(move, size)}")
        actions.append(move)
        outputs.append(raw)
        passes = passes + 1 if move == n else 0
        if passes == 2:
            break
    if result is None:
        score = engine.send("final_score")
        result = "0" if score in ("0", "Draw") else score
    return actions, outputs, result


def write_teacher_record(out: pathlib.Path, name: str, record: sgf.GameRecord, outputs, **extra) -> None:
    """``NAME.npz`` (KataGo's ``outputs``: policy, value, score, ownership; and the ``extra``
    arrays), then ``NAME.sgf``, each atomically: a record with its SGF is whole."""
    arrays = {"policy": np.stack([o.policy for o in outputs]).astype(np.float16),
              "value": np.asarray([o.value for o in outputs], np.float32),
              "score": np.asarray([o.score for o in outputs], np.float32),
              "ownership": np.stack([o.ownership for o in outputs]).astype(np.float16), **extra}
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **arrays)
    write_atomic(out / f"{name}.npz", buffer.getvalue())
    sgf.save(record, out / f"{name}.sgf")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--smoke", action="store_true", help="2 short games on 5x5 (CI-sized)")
    ap.add_argument("--games", type=int, default=500)
    ap.add_argument("--size", type=int, default=9)
    ap.add_argument("--komi", type=float, default=7.5)
    ap.add_argument("--opening", type=int, default=4, help="at most this many random moves in most games")
    ap.add_argument("--random-share", type=float, default=0.3, help="games that start with random stones")
    ap.add_argument("--random-stones", type=int, default=6, help="at most this many random stones a colour")
    ap.add_argument("--sample-moves", type=int, default=None, help="moves drawn from the policy (default size*size/8)")
    ap.add_argument("--finish-share", type=float, default=0.3, help="games played to two passes, never resigned")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--katago-dir", default=None, help=f"the install (default ${katago.ENV} or the cache)")
    ap.add_argument("--out", required=True, help="directory for the games")
    args = ap.parse_args(argv)
    if args.smoke:
        args.games, args.size, args.random_stones, args.opening = 2, 5, 2, 2
    if args.sample_moves is None:
        args.sample_moves = args.size * args.size // 8
    Go(size=args.size)  # a size the rules support, or a clear error
    engine_files = katago.find_katago(args.katago_dir)
    if engine_files is None:
        sys.exit("KataGo is not installed: run `alphago-jax katago install` first")
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    from tqdm.auto import tqdm

    todo = [i for i in range(args.games) if not (out / f"game-{i:05d}.sgf").exists()]
    with GTPClient(engine_files.command(board_size=args.size), timeout=600) as engine:
        for i in tqdm(todo, desc="teacher games", disable=args.smoke):
            rng = random.Random(args.seed * 1_000_003 + i)
            actions, outputs, result = play_game(engine, args, rng)
            record = sgf.record_from_moves(Go(size=args.size, komi=args.komi, superko=False), actions,
                                           result=result, black_name="KataGo b10 (raw network)",
                                           white_name="KataGo b10 (raw network)")
            write_teacher_record(out, f"game-{i:05d}", record, outputs)
    games = len(list(out.glob("game-*.sgf")))
    print(f"{games} games in {out}; train on them with: alphago-jax warm-start --records {out} ...")
    return 0


if __name__ == "__main__":
    sys.exit(main())
