"""The 9x9 tactical suite (``alphago_jax.play.tactics``, ``alphago-jax tactics``): the shipped
positions are legal with legal right moves, GNU Go level 10 answers each with a right move, broken
suite files are named precisely, and the command and the scoring work end to end."""

from __future__ import annotations

import collections
import pathlib
import types

import chex
import numpy as np
import pytest

from alphago_jax import cli
from alphago_jax.games import grid
from alphago_jax.games.base import BLACK, WHITE
from alphago_jax.play import tactics
from alphago_jax.play.commands import TACTICS_CATEGORIES
from alphago_jax.play.players import Decision, Player
from alphago_jax.play.position import Position, play_game

N = tactics.SIZE * tactics.SIZE


@pytest.fixture(scope="module")
def problems():
    return tactics.load_suite()


def test_suite_size_and_categories(problems):
    assert len(problems) >= 44
    counts = collections.Counter(p.category for p in problems)
    assert set(counts) == set(tactics.CATEGORIES), counts
    assert min(counts.values()) >= 4, counts
    assert len({p.name for p in problems}) == len(problems)
    assert TACTICS_CATEGORIES == tactics.CATEGORIES  # the command's copy, kept so its parser imports no JAX


def test_every_position_is_legal_with_legal_right_moves(problems):
    for p in problems:
        state = p.state
        chex.assert_shape(state.board, (N,))
        chex.assert_type(state.board, np.int8)
        np.testing.assert_array_equal(np.asarray(state.board), p.setup, err_msg=p.name)
        assert int(state.to_play) == p.to_play and not bool(state.terminal), p.name
        play_game(tactics.SIZE, p.komi).validate_setup(p.setup)  # every chain has a liberty
        legal = np.asarray(state.legal)
        chex.assert_shape(legal, (N + 1,))
        assert p.right and all(legal[a] for a in p.right_actions), p.name
        assert not legal[N] or N not in p.right_actions  # pass is never right
        pos = Position(play_game(tactics.SIZE, p.komi), p.setup, p.to_play)
        for a in p.right_actions:  # each right move steps the JAX rules without ending the game
            pos.play(p.to_play, a)
            assert int(pos.state.loser) == 0 and not bool(pos.state.terminal), (p.name, a)
            pos.undo()


def test_gnugo_level_10_answers_every_position_with_a_right_move(problems, gnugo_path):
    from alphago_jax.gtp_client import GNUGO_RULES_ARGS, GTPClient

    wrong = []
    with GTPClient([gnugo_path, *GNUGO_RULES_ARGS, "--level", "10"], timeout=60) as engine:
        for p in problems:
            engine.send_many(p.gtp_commands())
            # Plain genmove passes in the cleanup positions (GNU Go counts on dead stones being
            # removed by agreement); its Tromp-Taylor move is kgs-genmove_cleanup, as tactics.solve asks.
            verb = "kgs-genmove_cleanup" if p.category == "cleanup" else "genmove"
            move = engine.send(f"{verb} {p.colour}").upper()
            if move not in p.right:
                wrong.append(f"{p.name}: GNU Go {move}, right {p.right}")
    assert not wrong, "\n".join(wrong)


# ------------------------------------------------------------------------------ broken files

GOOD = dict(name="ok", category="ladder", to_play="black", right='["D4"]', description="a ladder",
            diagram=".........\n.........\n......O..\n..XXX....\n..XO.....\n.........\n..O......\n.........\n.........")


def suite_file(tmp_path: pathlib.Path, **changes) -> pathlib.Path:
    """A one-position suite file: ``GOOD`` with ``changes`` (None drops a field)."""
    entry = {**GOOD, **changes}
    lines = ["[[position]]"]
    for key, value in entry.items():
        if value is None:
            continue
        if key in ("right", "komi", "target"):
            lines.append(f"{key} = {value}")
        elif key == "diagram":
            lines.append(f'diagram = """\n{value}\n"""')
        else:
            lines.append(f'{key} = "{value}"')
    path = tmp_path / "suite.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_good_one_position_file_loads(tmp_path):
    (p,) = tactics.load_suite(suite_file(tmp_path))
    assert (p.name, p.category, p.to_play, p.right, p.komi) == ("ok", "ladder", BLACK, ("D4",), 7.5)
    assert p.target is None
    (p,) = tactics.load_suite(suite_file(tmp_path, target='"d5"'))
    assert p.target == "D5"


@pytest.mark.parametrize("changes, field, message", [
    (dict(right='["Z9"]'), "right", "invalid vertex 'Z9'"),
    (dict(right='["D10"]'), "right", "invalid vertex 'D10'"),
    (dict(right='["pass"]'), "right", "pass is never a right move"),
    (dict(right='["D5"]'), "right", "D5 is illegal for black"),
    (dict(right='[]'), "right", "non-empty list"),
    (dict(right='["D4", "d4"]'), "right", "listed twice"),
    (dict(diagram=".........\n" * 7 + "........."), "diagram", "has 8 lines, expected 9"),
    (dict(diagram=GOOD["diagram"].replace(".........", "..........", 1)), "diagram", "line 1 .* has 10 characters"),
    (dict(diagram=GOOD["diagram"].replace("..XO.....", "..XOZ....")), "diagram", "line 5 .* has 'Z'"),
    (dict(diagram="XO.......\nO........\n" + ".........\n" * 6 + "........."), "diagram", "A9 has no liberties"),
    (dict(target='"Z9"'), "target", "invalid vertex 'Z9'"),
    (dict(target='"A1"'), "target", "'A1' is not a stone"),
    (dict(target='"pass"'), "target", "'pass' is not a stone"),
    (dict(category="ladders"), "category", "unknown category 'ladders'"),
    (dict(to_play="red"), "to_play", "black or white"),
    (dict(komi='"six"'), "komi", "must be a number"),
    (dict(description=None), "description", "missing"),
    (dict(extra="x"), "extra", "unknown field"),
])
def test_broken_suite_files_raise_naming_position_and_field(tmp_path, changes, field, message):
    path = suite_file(tmp_path, **changes)
    with pytest.raises(ValueError, match=rf"suite\.toml: position 1 \('ok'\): {field}: .*{message}"):
        tactics.load_suite(path)


def test_duplicate_names_and_empty_files_are_errors(tmp_path):
    one = suite_file(tmp_path).read_text()
    path = tmp_path / "two.toml"
    path.write_text(one + "\n" + one)
    with pytest.raises(ValueError, match=r"position 2 \('ok'\): name: 'ok' is used twice"):
        tactics.load_suite(path)
    path.write_text("# nothing\n")
    with pytest.raises(ValueError, match="no \\[\\[position\\]\\] tables"):
        tactics.load_suite(path)
    path.write_text("[[position]\n")
    with pytest.raises(ValueError, match="not valid TOML"):
        tactics.load_suite(path)


# ------------------------------------------------------------------------------ scoring

class Oracle(Player):
    """A fake player that knows the suite: it plays a right move (``pass_only``: passes). With
    ``refuse_setup`` it refuses setup stones, as a GTP engine does, so the stones come as moves."""

    def __init__(self, problems, pass_only=False, refuse_setup=False):
        self.name = "pass" if pass_only else "oracle"
        self.by_board = {p.setup.tobytes(): p for p in problems}
        self.pass_only, self.refuse_setup = pass_only, refuse_setup
        self.cleanups = 0

    def _new_game(self, size, komi, setup, first_player, handicap):
        assert size == 9
        if setup is not None and self.refuse_setup:
            raise ValueError("no setup stones")
        self.board = np.zeros(N, np.int8) if setup is None else np.asarray(setup, np.int8).copy()

    def _play(self, colour, action):
        assert self.board[action] == 0
        self.board[action] = colour

    def genmove(self, colour, seconds=None, *, commit=True, cleanup=False, resign_below=0.0):
        p = self.by_board[self.board.tobytes()]  # the stones all arrived, whichever way
        assert colour == p.to_play and cleanup == (p.category == "cleanup")
        self.cleanups += cleanup
        return Decision(N if self.pass_only else grid.from_vertex(p.right[-1], 9))


@pytest.mark.parametrize("refuse_setup", [False, True])
def test_a_player_of_right_moves_scores_all_and_a_passer_none(problems, refuse_setup):
    good = tactics.solve(Oracle(problems, refuse_setup=refuse_setup), problems)
    passer = tactics.solve(Oracle(problems, pass_only=True), problems)
    assert all(r.solved for r in good) and not any(r.solved for r in passer)
    assert {r.move for r in passer} == {"pass"}
    text = tactics.report({"oracle": good, "pass": passer})
    n = len(problems)
    assert f"{n}/{n} 100%" in text and f"0/{n}   0%" in text
    counts = collections.Counter(p.category for p in problems)
    for category, k in counts.items():
        line = next(line for line in text.splitlines() if line.startswith(category))
        assert line.split()[1:] == [f"{k}/{k}", "100%", f"0/{k}", "0%"], line
    assert "failed (oracle): none" in text and f"failed (pass): {n}" in text
    seconds = next(line for line in text.splitlines() if line.startswith(tactics.SECONDS_ROW))
    assert [float(x) >= 0 for x in seconds[len(tactics.SECONDS_ROW):].split()] == [True, True]
    assert f"{problems[0].name} [{problems[0].category}, {problems[0].colour}]: played pass" in text


def test_a_failing_player_is_scored_wrong_with_the_reason(problems):
    class Broken(Oracle):
        def genmove(self, colour, seconds=None, **kwargs):
            raise ValueError("engine fell over")

    (result,) = tactics.solve(Broken(problems), problems[:1])
    assert not result.solved and result.move == "error" and "engine fell over" in result.error
    assert "played error (ValueError: engine fell over)" in tactics.report([result])


# ------------------------------------------------------------------------------ the command

def test_tactics_command_end_to_end_with_sgf(problems, tmp_path, capsys):
    picked = tactics.select(problems, ["capture-to-save"])
    rc = cli.main(["tactics", "random", "--category", "capture-to-save", "--sgf", str(tmp_path)])
    assert rc == 0
    out = capsys.readouterr().out
    header, row, overall = out.splitlines()[:3]
    assert header.split() == ["category", "random"]
    assert row.split()[0] == "capture-to-save" and row.split()[1].endswith(f"/{len(picked)}")
    assert overall.split()[0] == "overall" and "failed (random)" in out

    from sgfmill import sgf as sgfmill

    paths = sorted(tmp_path.glob("*.sgf"))
    assert [p.name for p in paths] == [f"{i + 1:02d}-{p.name}.sgf" for i, p in enumerate(picked)]
    for path, p in zip(paths, picked):
        game = sgfmill.Sgf_game.from_bytes(path.read_bytes())
        root = game.get_root()
        black, white, empty = root.get_setup_stones()
        assert not empty and game.get_size() == 9
        board = np.zeros(N, np.int8)
        for points, colour in ((black, BLACK), (white, WHITE)):
            for row_, col in points:
                board[(8 - row_) * 9 + col] = colour
        np.testing.assert_array_equal(board, p.setup, err_msg=p.name)
        assert root.get("PL") == ("b" if p.to_play == BLACK else "w")
        assert all(v in root.get("C") for v in p.right) and p.name in root.get("C")
        assert {(8 - r) * 9 + c for r, c in root.get("TR")} == set(p.right_actions)


def test_tactics_command_rejects_an_unknown_category(capsys):
    with pytest.raises(SystemExit):
        cli.main(["tactics", "random", "--category", "ko"])
    assert "invalid choice: 'ko'" in capsys.readouterr().err


def test_select_and_the_shipped_file(problems):
    assert tactics.suite_path().name == "tactics_9x9.toml" and tactics.suite_path().is_file()
    nets = tactics.select(problems, ["net", "ladder"])
    assert {p.category for p in nets} == {"net", "ladder"}
    assert len(nets) == sum(p.category in ("net", "ladder") for p in problems)
    assert tactics.select(problems, []) == problems
    with pytest.raises(ValueError, match="unknown category 'kos'"):
        tactics.select(problems, ["kos"])
    picked = tactics.select(problems, ["ladder"], ["ladder-block", "ladder-block-white", "throw-in-corner"])
    assert [p.name for p in picked] == ["ladder-block", "ladder-block-white"]  # suite order, categories first
    with pytest.raises(ValueError, match="no position named 'ladder-wrks'"):
        tactics.select(problems, [], ["ladder-wrks"])


@pytest.fixture
def tactics_outcomes(monkeypatch):
    """``experiments/tactics_outcomes.py`` as a module."""
    monkeypatch.syspath_prepend(str(pathlib.Path(__file__).resolve().parents[1] / "experiments"))
    import tactics_outcomes

    return tactics_outcomes


def test_gnugo_reading_finds_exactly_the_right_moves(problems, gnugo_path, monkeypatch, capsys):
    """Every position but the cleanups names the string at stake, and GNU Go's reading, move by
    move (``experiments/tactics_reading.py``), settles it after each right move and no other."""
    from alphago_jax.gtp_client import GNUGO_RULES_ARGS, GTPClient

    monkeypatch.syspath_prepend(str(pathlib.Path(__file__).resolve().parents[1] / "experiments"))
    import tactics_reading

    assert all((p.target is None) == (p.category == "cleanup") for p in problems)
    differ = []
    with GTPClient([gnugo_path, *GNUGO_RULES_ARGS, "--level", "10"], timeout=60) as engine:
        for p in (p for p in problems if p.target):
            found = tactics_reading.reading_moves(engine, p)
            if set(found) != set(p.right):
                differ.append(f"{p.name}: GNU Go's reading {found}, right {list(p.right)}")
    assert not differ, "\n".join(differ)
    assert tactics_reading.main(["--positions", "net-head"]) == 0
    assert "the same moves in 1 of 1 positions" in capsys.readouterr().out


def test_play_outs_of_the_right_move_and_of_a_failed_players_move(problems, gnugo_path, tactics_outcomes):
    """``experiments/tactics_outcomes.py``: the failed moves of one column of a report, and GNU Go's
    play-out after a move, scored for the mover at the position's komi."""
    first, second = problems[0], problems[1]
    results = {"a": [tactics.Result(first, min(first.right_actions)),
                     tactics.Result(second, 40)],
               "b": [tactics.Result(first, 80), tactics.Result(second, None, error="died")]}
    report = tactics.report(results)
    assert tactics_outcomes.played_moves(report, "a") == {second.name: "E5"}
    assert tactics_outcomes.played_moves(report, "b") == {first.name: "J1", second.name: "error"}
    # cts-edge-cutting-stone: capturing the cutting stone joins Black's stones to its wall and wins;
    # passing instead lets White capture them, and Black loses.
    problem = next(p for p in problems if p.name == "cts-edge-cutting-stone")
    won = tactics_outcomes.play_out(gnugo_path, 10, problem, problem.right[0])
    lost = tactics_outcomes.play_out(gnugo_path, 10, problem, "pass")
    assert won is not None and lost is not None and won > 0 > lost, (won, lost)


# every category but the cleanups, where the question is the cleanup move itself
DECISIVE = tuple(c for c in tactics.CATEGORIES if c != "cleanup")


def test_in_balanced_categories_the_right_move_wins_and_a_pass_loses(problems, gnugo_path, tactics_outcomes):
    """A search that plays to win prefers the right move only where the tactic decides the game."""
    for p in (p for p in problems if p.category in DECISIVE):
        won = tactics_outcomes.play_out(gnugo_path, 10, p, p.right[0])
        lost = tactics_outcomes.play_out(gnugo_path, 10, p, "pass")
        assert won is not None and lost is not None and won > 0 > lost, (p.name, won, lost)


@pytest.fixture
def tactical_teacher(monkeypatch):
    monkeypatch.syspath_prepend(str(pathlib.Path(__file__).resolve().parents[1] / "experiments"))
    import tactical_teacher

    return tactical_teacher


def test_the_tactical_teacher_finds_the_suites_nets_and_ladders(problems, gnugo_path, tactical_teacher):
    """``experiments/tactical_teacher.py``'s reading (``tactics_here``) on the suite's own nets and
    ladders: the string at stake, a net or an atari as the suite says, captured by a right move."""
    from alphago_jax.gtp_client import GNUGO_RULES_ARGS, GTPClient

    chosen = [p for p in problems if p.category in ("net", "ladder")]
    with GTPClient([gnugo_path, *GNUGO_RULES_ARGS], timeout=60) as engine:
        for p in chosen:
            engine.send_many(p.gtp_commands())
            found = {tuple(stones): (kind, move)
                     for kind, move, _, stones in tactical_teacher.tactics_here(engine, p.colour[0], min_stones=1)}
            at_stake = [v for v in found if p.target in v]
            assert len(at_stake) == 1, (p.name, found)
            kind, move = found[at_stake[0]]
            assert kind == ("net" if p.category == "net" else "atari") and move in p.right, (p.name, kind, move)


def test_net_shapes_played_onto_a_board_make_nets(gnugo_path, tactical_teacher):
    """``--nets``: ``net_shape``'s stones are played onto an empty board (all but a few refused),
    GNU Go's reading finds nets of three or more stones among them, and a shape keeps its three
    points (ahead, beside, the net) empty, or finds no room on a full board."""
    import random

    from alphago_jax.gtp_client import GNUGO_RULES_ARGS, GTPClient

    rng, kinds, played = random.Random(0), collections.Counter(), 0
    with GTPClient([gnugo_path, *GNUGO_RULES_ARGS], timeout=60) as engine:
        for _ in range(150):
            engine.send_many(["boardsize 9", "clear_board"])
            moves = []
            if not tactical_teacher._stamp([engine], 9, moves, rng):
                continue
            played += 1
            mover = "w" if len(moves) % 2 else "b"
            kinds.update(kind for kind, *_ in tactical_teacher.tactics_here(engine, mover, min_stones=3))
    assert played >= 140 and kinds["net"] >= 1, (played, kinds)
    shape = tactical_teacher.net_shape(random.Random(1), 9, set())
    victim, attacker, needed = shape
    assert not set(victim) & set(attacker) and len(needed - set(victim) - set(attacker)) == 3
    assert tactical_teacher.net_shape(random.Random(1), 9, set(range(81))) is None  # a full board: no room


class FakeTeacher:
    """KataGo's GTP as the tactical teacher uses it: ``kata-raw-nn 0`` answers the same policy,
    value (white's 0.6 - 0.4) and ownership everywhere; other commands succeed."""

    def __init__(self, *args, **kwargs):
        pass

    def send(self, command: str) -> str:
        if command != "kata-raw-nn 0":
            return ""
        n = tactics.SIZE * tactics.SIZE
        return " ".join(["whiteWin 0.6 whiteLoss 0.4 whiteLead 2.5 whiteOwnership", *["0.5"] * n,
                         "policy", *["0.01"] * n, "policyPass 0.19"])

    def send_many(self, commands):
        return [self.send(c) for c in commands]

    def close(self):
        pass


def test_the_tactical_teacher_writes_what_the_warm_start_reads(gnugo_path, tactical_teacher, tmp_path, monkeypatch):
    """Tactics mined from two GNU Go records, labelled (a stand-in for KataGo), read back by
    ``warm_start.teacher_examples``: the capture line's two positions and each other line's one."""
    from conftest import SHARED
    from alphago_jax.zero import warm_start

    records = [SHARED / "data" / "gnugo-9x9-selfplay" / f"game-0000{i}.sgf" for i in range(2)]
    if not all(r.is_file() for r in records):
        pytest.skip(f"{records[0].parent} is absent: the GNU Go records ship in ../shared beside the checkout")
    files = types.SimpleNamespace(command=lambda **kw: ["katago"])
    monkeypatch.setattr(tactical_teacher.katago, "find_katago", lambda root=None: files)
    monkeypatch.setattr(tactical_teacher, "GTPClient", FakeTeacher)
    out = tmp_path / "mined"
    argv = [*map(str, records), "--out", str(out), "--branches", "6", "--atari-share", "1"]
    assert tactical_teacher.main(argv) == 0
    rows = (out / "summary.tsv").read_text().splitlines()
    lines = sorted(out.glob("*.npz"))
    assert rows and len(lines) >= len(rows) and {r.split("\t")[2] for r in rows} <= set(tactical_teacher.KINDS)
    data = warm_start.teacher_examples(out, size=tactics.SIZE, komi=7.0)
    captures = sum(p.stem.endswith("-0") for p in lines)
    assert data.games == len(lines) and len(data.game) == captures * 2 + (len(lines) - captures)
    np.testing.assert_allclose(np.abs(data.examples.value), 0.2, atol=1e-6)  # white's 0.6 - 0.4, either side
    np.testing.assert_allclose(np.abs(data.examples.ownership), 0.5, atol=1e-3)
    assert tactical_teacher.main(argv) == 0  # again: the records are done, nothing is added
    assert sorted(out.glob("*.npz")) == lines and len((out / "summary.tsv").read_text().splitlines()) == len(rows)
    # The stand-in's value is the same after every move: no capture swings it, and --select keeps none.
    with_others = {p.stem.rpartition("-")[0] for p in lines if not p.stem.endswith("-0")}
    assert tactical_teacher.swings(out) == dict.fromkeys(with_others, 0.0)
    assert tactical_teacher.main(["--select", str(out), "--min-swing", "0.1", "--out", str(tmp_path / "none")]) == 0
    assert not list((tmp_path / "none").iterdir())
    assert tactical_teacher.main(["--select", str(out), "--min-swing", "0", "--out", str(tmp_path / "all")]) == 0
    assert {p.stem.rpartition("-")[0] for p in (tmp_path / "all").glob("*.npz")} == with_others
