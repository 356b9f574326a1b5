"""Tactical positions of game records, with KataGo's network on them: a teacher for the tactics.

Each record (SGF, 9x9 by default) is replayed on GNU Go 3.8 and on KataGo, and so are
``--branches`` branches of it: a position of the record followed by 2 to ``2 * --random-stones``
random legal moves (loose stones make strings short of liberties, as few record positions
have), and ``--nets`` more, where a ``net_shape`` (a walled-in string with two ways out, turned
and placed at random) is played onto one of the record's first ``--net-before`` positions, for
the nets that records and random stones seldom make. Before each move of the record, and at the
end of each branch, GNU Go's tactical reading looks at every string of the opponent with two
liberties (and at least ``--min-stones`` stones): where the mover can capture it (``attack``) and the opponent,
moving first, could save it (``defend``), the position is a tactic. The capture is a **net**
when GNU Go's capturing move is not one of the string's liberties, else an **atari** (a ladder
or a plain capture). KataGo's raw network (``kata-raw-nn 0``: policy, value, score lead,
ownership) labels the position, the position after the capture, and the position after each
liberty that is not the capture (an atari that lets the string out): the student learns the
move, and a value that tells the capture from the atari. A string is looked at once a record.

Written per tactic, atomically, as ``katago_teacher.py`` writes its games, so that
``alphago-jax warm-start --records OUT`` reads them (``warm_start.teacher_examples``): the
record's moves up to the labelled positions (then a pass, so that the last is a position before
a move), and ``NAME.npz`` with the arrays and ``index`` int32[K], the positions of the record
they label. ``NAME``: ``g00042-m017-net-0`` (the record, the move, the kind, the line: 0 the
capture, 1 and 2 the other liberties). ``summary.tsv`` lists every tactic found; a run stopped
and started again skips the records already done.

    alphago-jax katago install
    python experiments/tactical_teacher.py ../shared/data/gnugo-9x9-selfplay --out data/tactics9
    python experiments/tactical_teacher.py RECORDS --out /tmp/t --max-records 20 --no-katago  # count only
    python experiments/tactical_teacher.py RECORDS --out data/nets9 --branches 0 --nets 300 --min-stones 3 \
        --atari-share 0 --max-records 400                     # net shapes: about 1,000 nets, 30 minutes
    python experiments/tactical_teacher.py --select data/tactics9 --min-swing 0.3 --out data/decisive9

Most captures GNU Go's reading finds do not matter much: ``--select`` keeps the tactics where,
by KataGo's value, the capture is worth at least ``--min-swing`` more than the other liberties.
"""

from __future__ import annotations

import argparse
import pathlib
import random
import sys

import numpy as np

from alphago_jax import katago, sgf
from alphago_jax.games import grid
from alphago_jax.games.go import Go
from alphago_jax.gtp_client import GTPClient, GTPError, gnugo_rules_engine
from katago_teacher import write_teacher_record  # this directory's sibling

KINDS = ("net", "atari")


def strings(engine: GTPClient, colour: str) -> list[tuple[list[str], list[str]]]:
    """(stones, liberties) of each string of ``colour`` on GNU Go's board, vertices."""
    seen, out = set(), []
    for v in engine.send(f"list_stones {colour}").split():
        if v in seen:
            continue
        stones = engine.send(f"worm_stones {v}").split()
        seen.update(stones)
        out.append((stones, engine.send(f"findlib {v}").split()))
    return out


def tactics_here(engine: GTPClient, mover: str, min_stones: int) -> list[tuple[str, str, list[str], list[str]]]:
    """(kind, capturing move, liberties, stones) of each of the opponent's two-liberty strings
    the mover captures by GNU Go's reading and the opponent, moving first, could save."""
    found = []
    for stones, libs in strings(engine, "white" if mover == "b" else "black"):
        if len(libs) != 2 or len(stones) < min_stones:
            continue
        attack = engine.send(f"attack {stones[0]}").split()
        if attack[0] != "1" or engine.send(f"defend {stones[0]}").split()[0] == "0":
            continue  # no sure capture (0, or a ko), or already lost
        found.append(("atari" if attack[1] in libs else "net", attack[1], libs, stones))
    return found


def _raw(engine: GTPClient, size: int, white_to_play: bool) -> katago.RawOutput:
    return katago.parse_raw_nn(engine.send("kata-raw-nn 0"), size, white_to_play)


def _write(out: pathlib.Path, name: str, game: Go, moves: list[int], outputs: list, index: list[int]) -> None:
    record = sgf.record_from_moves(game, moves + [game.size * game.size], result="?",
                                   black_name="tactical position", white_name="tactical position")
    write_teacher_record(out, name, record, outputs, index=np.asarray(index, np.int32))


def label(teacher: GTPClient, size: int, moves: list[int], capture: int, others: list[int]) -> list[tuple]:
    """KataGo's outputs for each line of one tactic: ``[(moves of the record, outputs, index)]``,
    the capture first (the position and the one after it), then each other liberty (the
    position after it) that is legal; none if the capture is not. ``teacher`` stands at the
    position; it is left there."""
    t, white = len(moves), len(moves) % 2 == 1
    colour = "w" if white else "b"
    before = _raw(teacher, size, white)
    lines = []
    for k, move in enumerate([capture] + others):
        try:
            teacher.send(f"play {colour} {grid.to_vertex(move, size)}")
        except GTPError:  # a liberty that is suicide, or a capture the teacher's rules forbid
            if k == 0:
                return []
            continue
        after = _raw(teacher, size, not white)
        teacher.send("undo")
        lines.append((moves + [move], [before, after] if k == 0 else [after], [t, t + 1] if k == 0 else [t + 1]))
    return lines


def _scan(gnugo: GTPClient, teacher: GTPClient | None, size: int, moves: list[int], seen: set,
          rng: random.Random, args) -> list[tuple]:
    """The tactics of the position both engines stand at, after ``moves``: ``[(move number, kind,
    capture, lines)]`` (lines: ``label``'s, empty without a teacher); strings in ``seen`` are
    skipped, and the new ones added. Ataris are kept at random, ``args.atari_share`` of them."""
    found = []
    mover = "w" if len(moves) % 2 else "b"
    for kind, capture, libs, stones in tactics_here(gnugo, mover, args.min_stones):
        key = (tuple(sorted(stones)), tuple(sorted(libs)))
        if key in seen:
            continue
        seen.add(key)
        if kind == "atari" and rng.random() >= args.atari_share:
            continue
        others = [grid.from_vertex(v, size) for v in libs  # KataGo here allows suicide, these rules do not
                  if v != capture and gnugo.send(f"is_legal {mover} {v}") == "1"]
        lines = label(teacher, size, moves, grid.from_vertex(capture, size), others) if teacher else []
        found.append((len(moves), kind, capture, lines))
    return found


def _random_move(engines: list[GTPClient], colour: str, size: int, rng: random.Random,
                 avoid: frozenset = frozenset()) -> int | None:
    """A random move of ``colour`` off the points in ``avoid`` that every engine takes (played on
    them), or None if none does (GNU Go's ``all_legal`` does not check superko; the engines' rules
    may differ there)."""
    legal = [v for v in engines[0].send(f"all_legal {colour}").split() if grid.from_vertex(v, size) not in avoid]
    rng.shuffle(legal)
    for vertex in legal:
        played = []
        try:
            for engine in engines:
                engine.send(f"play {colour} {vertex}")
                played.append(engine)
            return grid.from_vertex(vertex, size)
        except GTPError:
            for engine in played:
                engine.send("undo")
    return None


def net_shape(rng: random.Random, size: int, occupied: set[int]) -> tuple[list[int], list[int], set[int]] | None:
    """A net to be, on the empty points of a board: ``(victim's stones, attacker's stones, the
    points they and the net need empty)``, or None if none fits after 50 tries.

    The victim's string of 2 to 5 stones runs straight from the edge or from an attacker's stone,
    walled in by the attacker on both sides but at its head, where two liberties (ahead and
    beside) lead out, each towards one or two stones of the victim's; one to four of the
    attacker's lie at random around them, and the point diagonal to the head is left empty. Turned, mirrored and
    placed at random, so no two are alike; GNU Go's reading says which of them are nets."""
    n = rng.randint(2, 5)
    victim = [(i, 0) for i in range(n)]
    attacker = [(i, -1) for i in range(n)] + [(i, 1) for i in range(n - 1)]
    empty = [(n, 0), (n - 1, 1), (n, 1)]  # ahead, beside, the net
    walls = []  # where the ways out lead: a short line of the victim's two points from each liberty
    for r, c in (rng.choice([(n + 2, 0), (n + 1, -1), (n, -2)]), rng.choice([(n - 1, 3), (n, 2), (n - 2, 2)])):
        dr, dc = rng.choice([(1, 0), (-1, 0), (0, 1), (0, -1)])
        line = [(r + i * dr, c + i * dc) for i in range(rng.randint(2, 4))]
        walls += [q for q in line if q not in empty + victim + attacker + walls]
    taken = empty + victim + attacker + walls
    ring = [(r, c) for r in range(n - 2, n + 3) for c in range(-2, 4) if (r, c) not in taken]
    victim, attacker = victim + walls, attacker + rng.sample(ring, rng.randint(1, 4)) + [(-1, 0)]
    core = victim[:n] + attacker[:2 * n - 1] + empty  # these must all be on the board
    for _ in range(50):
        where = (rng.randrange(8), rng.randrange(-2, size + 2), rng.randrange(-2, size + 2))
        spots = _place(core, where, size)
        if len(spots) < len(core) or occupied & set(spots):
            continue
        v, a, e = (_place(points, where, size) for points in (victim, attacker, empty))
        return [p for p in v if p not in occupied], [p for p in a if p not in occupied], set(v + a + e)
    return None


def _place(points: list[tuple[int, int]], where: tuple[int, int, int], size: int) -> list[int]:
    """The board points of a shape's ``(row, column)`` points turned by symmetry ``where[0]`` and
    moved by ``where[1:]``; those off the board left out."""
    sym, dr, dc = where
    turned = [((c, r) if sym & 1 else (r, c)) for r, c in points]
    turned = [(-r if sym & 2 else r, -c if sym & 4 else c) for r, c in turned]
    return [(r + dr) * size + c + dc for r, c in turned if 0 <= r + dr < size and 0 <= c + dc < size]


def _stamp(engines: list[GTPClient], size: int, moves: list[int], rng: random.Random) -> bool:
    """Play ``net_shape``'s stones onto the position the engines stand at after ``moves`` (each
    colour's in turn, random moves elsewhere for the colour with none left), so that the attacker
    moves next; extends ``moves``. False if no shape fits or a stone is refused: the position is
    then dropped, and the engines start the next one afresh."""
    occupied = {grid.from_vertex(v, size) for c in ("black", "white")
                for v in engines[0].send(f"list_stones {c}").split()}
    shape = net_shape(rng, size, occupied)
    if shape is None:
        return False
    attacker = rng.choice("bw")
    stones = {attacker: shape[1], "w" if attacker == "b" else "b": shape[0]}
    while stones["b"] or stones["w"] or ("w" if len(moves) % 2 else "b") != attacker:
        colour = "w" if len(moves) % 2 else "b"
        if stones[colour]:
            move = stones[colour].pop(rng.randrange(len(stones[colour])))
            try:
                for engine in engines:
                    engine.send(f"play {colour} {grid.to_vertex(move, size)}")
            except GTPError:
                return False
        else:
            move = _random_move(engines, colour, size, rng, avoid=frozenset(shape[2]))
            if move is None:
                return False
        moves.append(move)
    return True


def mine_record(gnugo: GTPClient, teacher: GTPClient | None, record: sgf.GameRecord, rng: random.Random,
                args) -> list[tuple]:
    """Every tactic of one record (``_scan``'s), before each of its moves, in ``args.branches``
    branches (a position of the record with ``2 * randint(1, args.random_stones)`` random legal
    moves added: loose stones make strings short of liberties, as few record positions have), and
    in ``args.nets`` more (a position of the record's first ``args.net_before`` moves with a
    ``net_shape`` played onto it, then up to ``args.random_stones`` random moves a colour)."""
    size, engines = record.size, [gnugo] + ([teacher] if teacher else [])
    actions = [a for _, a in record.moves]
    passes = [i for i in range(1, len(actions)) if actions[i - 1] == actions[i] == size * size]
    ends = passes[0] if passes else len(actions)  # the positions before the game ends: where moves follow
    seen: set[tuple] = set()
    found = []
    for line in range(1 + args.branches + args.nets):
        stamped = line > args.branches
        last = min(ends, args.net_before) if stamped else ends  # the latest position a branch starts from
        t = len(actions) if line == 0 else rng.randrange(last + 1)
        for engine in engines:
            engine.send_many([f"boardsize {size}", "clear_board", f"komi {record.komi:g}"])
        moves: list[int] = []
        for step in range(t):
            if line == 0:
                found += _scan(gnugo, teacher, size, moves, seen, rng, args)
            for engine in engines:
                engine.send(f"play {'w' if step % 2 else 'b'} {grid.to_vertex(actions[step], size)}")
            moves.append(actions[step])
        if line == 0 or (stamped and not _stamp(engines, size, moves, rng)):
            continue
        for _ in range(2 * rng.randint(0 if stamped else 1, args.random_stones)):
            action = _random_move(engines, "w" if len(moves) % 2 else "b", size, rng)
            if action is None:
                break
            moves.append(action)
        found += _scan(gnugo, teacher, size, moves, seen, rng, args)
    return found


def swings(folder: pathlib.Path) -> dict[str, float]:
    """Each tactic in ``folder`` (``NAME`` less its line) -> the teacher's value for the mover
    after the capture less its best value after another liberty (tactics with no other line
    left out): how much the capture matters, by the teacher's value."""
    values: dict[str, dict[int, np.ndarray]] = {}
    for path in folder.glob("*.npz"):
        tactic, _, line = path.stem.rpartition("-")
        with np.load(path) as a:
            values.setdefault(tactic, {})[int(line)] = a["value"]
    return {tactic: float(min(v[k][-1] for k in v if k) - v[0][-1])  # each after-move value is the opponent's
            for tactic, v in values.items() if 0 in v and len(v) > 1}


def select(source: pathlib.Path, out: pathlib.Path, min_swing: float) -> dict[str, int]:
    """Link into ``out`` every line of the tactics of ``source`` whose ``swings`` is at least
    ``min_swing``; returns how many tactics of each kind."""
    counts = dict.fromkeys(KINDS, 0)
    out.mkdir(parents=True, exist_ok=True)
    for tactic, swing in swings(source).items():
        if swing < min_swing:
            continue
        counts[tactic.rpartition("-")[2]] += 1
        for path in source.glob(f"{tactic}-*"):
            if not (out / path.name).exists():
                (out / path.name).hardlink_to(path)
    return counts


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("records", nargs="*", help="folders, SGF files or archives of game records")
    ap.add_argument("--out", required=True, help="directory for the labelled tactics")
    ap.add_argument("--size", type=int, default=9, help="records of other sizes are skipped")
    ap.add_argument("--min-stones", type=int, default=1, help="strings of fewer stones are left out")
    ap.add_argument("--atari-share", type=float, default=0.15, help="the share of ataris kept (nets: all)")
    ap.add_argument("--max-records", type=int, default=None)
    ap.add_argument("--branches", type=int, default=40, help="positions with random stones added, a record")
    ap.add_argument("--random-stones", type=int, default=6, help="at most this many random stones a colour")
    ap.add_argument("--nets", type=int, default=0, help="positions with a net_shape played, a record")
    ap.add_argument("--net-before", type=int, default=20,
                    help="a net_shape goes onto one of the record's positions before this move")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-katago", action="store_true", help="find and count the tactics, label nothing")
    ap.add_argument("--katago-dir", default=None, help=f"the install (default ${katago.ENV} or the cache)")
    ap.add_argument("--select", default=None, metavar="DIR",
                    help="mine nothing: link into --out the tactics of DIR (an earlier --out) whose capture is "
                         "worth at least --min-swing of the teacher's value more than every other liberty")
    ap.add_argument("--min-swing", type=float, default=0.3)
    args = ap.parse_args(argv)
    out = pathlib.Path(args.out)
    if args.select:
        counts = select(pathlib.Path(args.select), out, args.min_swing)
        print(f"{counts['net']} nets and {counts['atari']} ataris with a swing of at least {args.min_swing:g} in {out}")
        return 0
    if not args.records:
        ap.error("give records to mine, or --select DIR")
    out.mkdir(parents=True, exist_ok=True)
    files = None if args.no_katago else katago.find_katago(args.katago_dir)
    if files is None and not args.no_katago:
        sys.exit("KataGo is not installed: run `alphago-jax katago install` first (or pass --no-katago)")
    from tqdm.auto import tqdm

    counts = dict.fromkeys(KINDS, 0)
    summary = out / "summary.tsv"
    teacher = GTPClient(files.command(board_size=args.size), timeout=600) if files else None
    with gnugo_rules_engine() as gnugo, open(summary, "a") as table:
        records = list(sgf.iter_records(args.records))[:args.max_records]
        for i, (name, data, unreadable) in enumerate(tqdm(records, desc="records", dynamic_ncols=True)):
            done = out / f"g{i:05d}.done"
            if done.exists() or unreadable:
                continue
            try:
                record = sgf.load(data)
            except (sgf.SGFError, ValueError) as e:
                print(f"{name}: skipped: {e}", file=sys.stderr)
                continue
            if record.size != args.size or record.black_setup or record.white_setup:
                continue
            game = Go(size=record.size, komi=record.komi, superko=False)
            rng = random.Random(args.seed * 1_000_003 + i)
            for t, kind, capture, lines in mine_record(gnugo, teacher, record, rng, args):
                counts[kind] += 1
                table.write(f"{name}\t{t}\t{kind}\t{capture}\n")
                for k, (moves, outputs, index) in enumerate(lines):
                    _write(out, f"g{i:05d}-m{t:03d}-{kind}-{k}", game, moves, outputs, index)
            table.flush()
            done.touch()
    if teacher:
        teacher.close()
    print(f"{counts['net']} nets and {counts['atari']} ataris that capture in this run; all: {summary}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
