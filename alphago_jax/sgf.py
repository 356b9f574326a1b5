"""SGF game records: read, replay through the JAX Go rules, write. Built on ``sgfmill``.

Points are flat indices ``row * size + col``, row 0 the top edge (sgfmill's row ``r`` counts
from the bottom: ours is ``size - 1 - r``); ``size * size`` is pass (``B[]``, or ``B[tt]`` up
to 19x19). Only the main line is read. What is not a plain game record raises an ``SGFError``
naming the file and the problem (malformed SGF, an unsupported board size, setup stones after
the root, no moves); ``replay`` rejects illegal moves naming the move number and vertex.
``iter_records`` yields every record in folders, SGF files and archives; ``winner_of`` reads a
result (``RE``) as +1 / -1 / 0.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import pathlib
import tarfile
import zipfile
from typing import Iterator, Sequence

import jax
import jax.numpy as jnp
import numpy as np
from sgfmill import sgf, sgf_grammar, sgf_properties

from alphago_jax.files import write_atomic
from alphago_jax.games import grid
from alphago_jax.games.base import BLACK, WHITE
from alphago_jax.games.go import MAX_SIZE, MIN_SIZE, Go, GoState

_SGF_COLOUR = {BLACK: "b", WHITE: "w"}
_COLOUR = {"b": BLACK, "w": WHITE}
_NAME = {BLACK: "B", WHITE: "W"}


class SGFError(ValueError):
    """A record that cannot be read or replayed; the message names the file and the problem.

    Attributes:
      move: the 1-based number of the offending move, or None when no move is to blame.
    """

    def __init__(self, message: str, move: int | None = None):
        super().__init__(message)
        self.move = move


@dataclasses.dataclass(frozen=True)
class GameRecord:
    """One Go game as recorded in SGF (main line only).

    Attributes:
      size: board side (2 to 19).
      komi: points given to white (KM; 0.0 when absent).
      handicap: number of handicap stones (HA; 0 when absent).
      black_setup: sorted flat points of the black setup stones (AB), row 0 the top edge.
      white_setup: sorted flat points of the white setup stones (AW).
      first_player: colour to move first, +1 black, -1 white.
      moves: ``(colour, action)`` pairs, colour +1/-1, action in ``[0, size * size]`` (pass last).
      result: the RE property (e.g. ``"B+3.5"``, ``"W+R"``), or None.
      black_name, white_name: PB / PW, or None.
      source: the file the record was read from, or None. Not compared by ``==``.
      comments: each move's comment (C), ``""`` for none, aligned with ``moves`` (or empty when
        none has one). Not compared by ``==``.
      comment: the game's own comment (the root's C), or None. Not compared by ``==``.
      black_area, white_area: sorted flat points each side owns when the game ended, under area
        scoring: its living stones, its territory and the other side's dead stones (TB / TW on
        the last node); empty when the record does not say (a resignation, most records).
    """

    size: int
    komi: float = 0.0
    handicap: int = 0
    black_setup: tuple[int, ...] = ()
    white_setup: tuple[int, ...] = ()
    first_player: int = BLACK
    moves: tuple[tuple[int, int], ...] = ()
    result: str | None = None
    black_name: str | None = None
    white_name: str | None = None
    source: str | None = dataclasses.field(default=None, compare=False)
    comments: tuple[str, ...] = dataclasses.field(default=(), compare=False)
    comment: str | None = dataclasses.field(default=None, compare=False)
    black_area: tuple[int, ...] = ()
    white_area: tuple[int, ...] = ()

    @property
    def name(self) -> str:
        """The source file, or ``"<sgf>"``: the prefix of every error message."""
        return self.source or "<sgf>"

    def final_owner(self) -> np.ndarray | None:
        """int8[size * size]: each point's owner when the game ended (``black_area`` +1,
        ``white_area`` -1, neither 0), or None when the record does not say."""
        if not (self.black_area or self.white_area):
            return None
        owner = np.zeros(self.size * self.size, np.int8)
        owner[list(self.black_area)] = BLACK
        owner[list(self.white_area)] = WHITE
        return owner

    def setup_board(self) -> np.ndarray:
        """int8[size * size]: the setup stones, +1 black, -1 white, 0 empty."""
        board = np.zeros(self.size * self.size, np.int8)
        board[list(self.black_setup)] = BLACK
        board[list(self.white_setup)] = WHITE
        return board


# --------------------------------------------------------------------------------- reading
def _default_first_player(moves, handicap, black_setup, white_setup) -> int:
    """Who moves first when PL is absent: the first mover, else white after handicap stones."""
    if moves:
        return moves[0][0]
    return WHITE if handicap >= 2 and black_setup and not white_setup else BLACK


def _to_point(row_col, size) -> int:
    """Flat point of an sgfmill ``(row, col)`` (row 0 at the bottom); pass for None."""
    if row_col is None:
        return size * size
    row, col = row_col
    return (size - 1 - row) * size + col


def _to_row_col(point, size):
    """Inverse of ``_to_point``."""
    if point == size * size:
        return None
    row, col = divmod(int(point), size)
    return size - 1 - row, col


def _read_source(path_or_bytes) -> tuple[bytes, str | None, str | None]:
    """(SGF bytes, source path or None, encoding overriding CA or None); a str starting with ``(``
    is SGF text (UTF-8 whatever CA says), else a path."""
    if isinstance(path_or_bytes, (bytes, bytearray, memoryview)):
        return bytes(path_or_bytes), None, None
    if isinstance(path_or_bytes, str) and path_or_bytes.lstrip().startswith("("):
        return path_or_bytes.encode("utf-8"), None, "utf-8"
    path = os.fspath(path_or_bytes)
    try:
        with open(path, "rb") as f:
            return f.read(), path, None
    except OSError as e:
        raise SGFError(f"{path}: cannot read: {e.strerror or e}") from None


def _root_get(root, ident, default=None):
    """A root property's value; a property repeated with one value (a common slip) counts once."""
    if not root.has_property(ident):
        return default
    raw = root.get_raw_list(ident)
    text = "".join(f"[{v.decode('latin-1')}]" for v in raw)
    if len(set(raw)) > 1:
        raise ValueError(f"{ident}{text}: several values")
    try:
        return root.get_presenter().interpret(ident, raw[:1])
    except ValueError as e:
        raise ValueError(f"{ident}{text}: {str(e) or 'malformed value'}") from None


def _comment(node) -> str | None:
    """A node's comment (C), or None (also for a malformed one: a comment never stops a load)."""
    try:
        return node.get("C") if node.has_property("C") else None
    except ValueError:
        return None


def load(path_or_bytes, *, require_moves: bool = True) -> GameRecord:
    """The main line of an SGF game record: a path, SGF text (a str starting with ``(``) or bytes.

    ``source`` is the path (None for text and bytes); ``SGFError`` names the file and the problem,
    including a record without moves when ``require_moves``.
    """
    data, source, encoding = _read_source(path_or_bytes)
    name = source or "<sgf>"
    try:
        tree = sgf_grammar.parse_sgf_game(data)
    except ValueError as e:
        raise SGFError(f"{name}: malformed SGF: {e}") from None
    try:
        game = sgf.Sgf_game.from_coarse_game_tree(tree, override_encoding=encoding)
    except (ValueError, LookupError) as e:
        raise SGFError(f"{name}: bad SZ or CA property: {e}") from None
    root = game.get_root()
    size = game.get_size()
    try:
        gm = _root_get(root, "GM", 1)
        komi = _root_get(root, "KM", 0.0)
        handicap = _root_get(root, "HA", 0)
        result = _root_get(root, "RE")
        black_name, white_name = _root_get(root, "PB"), _root_get(root, "PW")
        pl = _root_get(root, "PL")
    except ValueError as e:
        raise SGFError(f"{name}: bad root property {e}") from None
    if gm != 1:
        raise SGFError(f"{name}: not a Go record (GM[{gm}])")
    if not MIN_SIZE <= size <= MAX_SIZE:
        raise SGFError(f"{name}: unsupported board size {size} (the rules allow {MIN_SIZE} to {MAX_SIZE})")
    if handicap < 0:
        raise SGFError(f"{name}: bad root property HA[{handicap}]")

    try:
        ab, aw, ae = root.get_setup_stones()
    except ValueError:
        raise SGFError(f"{name}: setup stone (AB/AW/AE) off the board or malformed") from None
    if ab & aw:
        raise SGFError(f"{name}: a point is in both AB and AW")
    black_setup = tuple(sorted(_to_point(p, size) for p in ab - ae))
    white_setup = tuple(sorted(_to_point(p, size) for p in aw - ae))

    moves, comments, area = [], [], ((), ())
    for depth, node in enumerate(game.get_main_sequence()):
        if node.has_property("TB") or node.has_property("TW"):
            area = _area(node, size, name)
        if depth > 0 and node.has_setup_stones():
            raise SGFError(
                f"{name}: setup stones (AB/AW/AE) after the root node: "
                f"a problem or variation file, not a game record (node {depth})")
        colour, raw = node.get_raw_move()
        if colour is None:
            continue
        try:
            point = sgf_properties.interpret_go_point(raw, size)
        except ValueError:
            text = raw.decode("latin-1")
            what = f"move {len(moves) + 1} {colour.upper()}[{text}]"
            raise SGFError(f"{name}: {what} is off the board or malformed", len(moves) + 1) from None
        moves.append((_COLOUR[colour], _to_point(point, size)))
        comments.append(_comment(node) or "")
    if require_moves and not moves:
        raise SGFError(f"{name}: no moves (a position or problem, not a game record)")
    first = _COLOUR[pl] if pl else _default_first_player(moves, handicap, black_setup, white_setup)
    return GameRecord(
        size=size, komi=float(komi), handicap=int(handicap), black_setup=black_setup,
        white_setup=white_setup, first_player=first, moves=tuple(moves), result=result,
        black_name=black_name, white_name=white_name, source=source,
        comments=tuple(comments) if any(comments) else (),
        comment=_comment(root), black_area=area[0], white_area=area[1],
    )


def _area(node, size: int, name: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(black, white) sorted flat points of a node's TB and TW."""
    try:
        black, white = (tuple(sorted(_to_point(p, size) for p in (node.get(k) if node.has_property(k) else ())))
                        for k in ("TB", "TW"))
    except ValueError:
        raise SGFError(f"{name}: TB/TW off the board or malformed") from None
    if set(black) & set(white):
        raise SGFError(f"{name}: a point is in both TB and TW")
    return black, white


# --------------------------------------------------------------------------------- replay
@functools.lru_cache(maxsize=None)
def _compiled_replay(game: Go, all_states: bool):
    """jit of ``run(board, to_play, actions, colours, resume, length) -> (final, ok, states)`` over
    ``game.max_moves`` padded moves (the first ``length`` count); from the first move out of turn
    or not in ``state.legal`` nothing is stepped, so ``final`` is the state before it."""

    def run(board, to_play, actions, colours, resume, length):
        def body(carry, x):
            state, stopped = carry
            i, action, colour, reset = x
            ok = (state.to_play == colour) & state.legal[action]
            played = state.replace(passes=jnp.where(reset, jnp.int8(0), state.passes))
            new = jax.lax.cond(~stopped & ok & (i < length), lambda: game.step(played, action), lambda: state)
            return (new, stopped | ((i < length) & ~ok)), (ok, new if all_states else None)

        start = game.init_from_board(board, to_play)
        xs = (jnp.arange(actions.shape[0]), actions, colours, resume)
        (final, _), (ok, states) = jax.lax.scan(body, (start, jnp.bool_(False)), xs)
        if all_states:
            states = jax.tree_util.tree_map(lambda s0, s: jnp.concatenate([s0[None], s]), start, states)
        return final, ok, states

    return jax.jit(run)


def _why_illegal(game: Go, state: GoState, action: int) -> str:
    """Why the player to move may not play ``action`` (which ``state.legal`` rejects)."""
    if bool(state.terminal):
        return f"the game is already over (after {int(state.move_count)} moves, max_moves={game.max_moves})"
    board = np.array(state.board)
    if board[action] != 0:
        return "the point is occupied"
    colour = int(state.to_play)
    board[action] = colour
    table = grid.neighbour_table(game.size)
    captures = any(
        board[q] == -colour and not grid.chain_and_liberties(board, game.size, int(q))[1]
        for q in table[action] if q >= 0)
    if not captures and not grid.chain_and_liberties(board, game.size, action)[1]:
        return "suicide"
    if game.superko:
        return "it repeats an earlier position (positional superko)"
    return "it retakes a ko at once (ko)"


def _describe(record: GameRecord, i: int) -> str:
    colour, action = record.moves[i]
    return f"move {i + 1} ({_NAME[colour]} {grid.to_vertex(action, record.size)})"


def replay(record: GameRecord, game: Go | None = None, *, all_states: bool = False) -> tuple[Go, GoState]:
    """``(game, state)``: a record played through the rules ``game`` (default ``Go(size, komi)`` of
    the record) from its setup stones, illegal moves rejected before they are stepped.

    ``state`` is the ``GoState`` after the last move, or with ``all_states`` one of numpy arrays
    with leading axis ``len(record.moves) + 1`` (``[i]``: after move ``i``). One jitted scan per
    board size and rules. Play that goes on after two passes (a disputed result) is replayed as
    recorded. ``SGFError`` names the file, move number, vertex and why for an illegal move
    (occupied, suicide, ko / superko, the game over), a move out of turn, or a bad setup.
    """
    name = record.name
    if game is None:
        game = Go(size=record.size, komi=record.komi)
    elif game.size != record.size:
        raise SGFError(f"{name}: record is {record.size}x{record.size}, the game is {game.size}x{game.size}")
    board = record.setup_board()
    try:
        game.validate_setup(board)
    except ValueError as e:
        raise SGFError(f"{name}: illegal setup position: {e}") from None

    n, horizon = game.num_points, game.max_moves
    m = min(len(record.moves), horizon)
    actions = np.full(horizon, n, np.int32)
    colours = np.zeros(horizon, np.int8)
    if m:
        colours[:m], actions[:m] = np.array(record.moves[:m], np.int32).T
    resume = np.zeros(horizon, bool)  # a second pass with moves after it: play resumes
    if m >= 3:
        resume[1:m - 1] = (actions[1:m - 1] == n) & (actions[:m - 2] == n)
    run = _compiled_replay(dataclasses.replace(game, komi=0.0), all_states)
    final, ok, states = run(board, np.int8(record.first_player), actions, colours, resume, np.int32(m))

    bad = np.flatnonzero(~np.asarray(ok)[:m])
    if bad.size:  # ``final`` is the position before the first bad move
        i = int(bad[0])
        colour, action = record.moves[i]
        if colour != int(final.to_play):
            whose = _NAME[int(final.to_play)]
            raise SGFError(f"{name}: moves out of turn at {_describe(record, i)}: {whose} is to play", i + 1)
        raise SGFError(f"{name}: illegal {_describe(record, i)}: {_why_illegal(game, final, action)}", i + 1)
    if len(record.moves) > horizon:
        why = f"the game is already over (max_moves={horizon})"
        raise SGFError(f"{name}: illegal {_describe(record, horizon)}: {why}", horizon + 1)
    if all_states:  # sliced on the host: a jax slice would compile once per record length
        return game, jax.tree_util.tree_map(lambda x: np.asarray(x)[: m + 1], states)
    return game, final


# --------------------------------------------------------------------------------- writing
def dump(record: GameRecord) -> bytes:
    """The record as SGF (FF[4], UTF-8): SZ, KM, HA, PB, PW, RE, C, AB, AW, PL if needed, moves
    (with their comments), TB and TW on the last node if the record has an area."""
    size = record.size
    game = sgf.Sgf_game(size=size)
    root = game.get_root()
    root.set("KM", record.komi)
    if record.handicap:
        root.set("HA", record.handicap)
    for ident, value in (("PB", record.black_name), ("PW", record.white_name), ("RE", record.result),
                         ("C", record.comment)):
        if value is not None:
            root.set(ident, value)
    root.set_setup_stones(
        [_to_row_col(p, size) for p in record.black_setup],
        [_to_row_col(p, size) for p in record.white_setup])
    default = _default_first_player(record.moves, record.handicap, record.black_setup, record.white_setup)
    if record.first_player != default:
        root.set("PL", _SGF_COLOUR[record.first_player])
    for i, (colour, action) in enumerate(record.moves):
        node = game.extend_main_sequence()
        node.set_move(_SGF_COLOUR[colour], _to_row_col(action, size))
        if i < len(record.comments) and record.comments[i]:
            node.set("C", record.comments[i])
    last = game.get_last_node()
    for ident, points in (("TB", record.black_area), ("TW", record.white_area)):
        if points:
            last.set(ident, {_to_row_col(p, size) for p in points})
    return game.serialise()


def save(record: GameRecord, path) -> None:
    """Write ``dump(record)`` to ``path``, atomically (``files.write_atomic``)."""
    write_atomic(path, dump(record))


def result_string(score: float) -> str:
    """SGF RE value of an area score (black - white - komi): ``"B+3.5"``, ``"W+0.5"``, ``"0"``."""
    if score == 0:
        return "0"
    return f"{'B' if score > 0 else 'W'}+{abs(float(score)):g}"


def winner_of(result: str | None) -> int:
    """+1 / -1 for a black / white win in an SGF RE value ("B+3.5", "W+R", "B+T"), else 0."""
    if not result:
        return 0
    head = result.strip().upper()[:2]
    return {"B+": 1, "W+": -1}.get(head, 0)


def record_from_moves(
    game: Go,
    actions: Sequence[int],
    *,
    result: str | None = None,
    black_name: str | None = None,
    white_name: str | None = None,
    black_area: Sequence[int] = (),
    white_area: Sequence[int] = (),
) -> GameRecord:
    """A record of ``actions`` (in ``[0, game.num_actions)``) from the empty board, colours
    alternating from black, and the points each side owns at the end (``GameRecord.black_area``);
    legality is ``replay``'s to check."""
    moves = tuple((BLACK if i % 2 == 0 else WHITE, int(a)) for i, a in enumerate(actions))
    for i, (_, a) in enumerate(moves):
        if not 0 <= a < game.num_actions:
            raise ValueError(f"action {a} at move {i + 1} is outside [0, {game.num_actions})")
    return GameRecord(
        size=game.size, komi=game.komi, moves=moves, result=result,
        black_name=black_name, white_name=white_name,
        black_area=tuple(sorted(map(int, black_area))), white_area=tuple(sorted(map(int, white_area))))


# ------------------------------------------------------------------ records in bulk

ARCHIVE_SUFFIXES = (".zip", ".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tbz2")


def _suffix(name: str) -> str:
    lower = name.lower()
    return next((s for s in ARCHIVE_SUFFIXES if lower.endswith(s)), pathlib.PurePath(lower).suffix)


def iter_records(sources) -> Iterator[tuple[str, bytes | None, str | None]]:
    """``(name, SGF bytes, None)`` for every record in ``sources`` in order: directories (recursive,
    sorted), ``.sgf`` files and archives (``ARCHIVE_SUFFIXES``; a member is named
    ``archive:member``); an unreadable file or archive yields ``(name, None, reason)``."""
    for source in sources:
        path = pathlib.Path(source)
        if path.is_dir():
            for child in sorted(p for p in path.rglob("*") if p.is_file()):
                if child.suffix.lower() == ".sgf" or _suffix(child.name) in ARCHIVE_SUFFIXES:
                    yield from iter_records([child])
            continue
        name, suffix = str(path), _suffix(path.name)
        try:
            if suffix == ".zip":
                with zipfile.ZipFile(path) as archive:
                    for info in archive.infolist():
                        if not info.is_dir() and info.filename.lower().endswith(".sgf"):
                            yield f"{name}:{info.filename}", archive.read(info), None
            elif suffix in ARCHIVE_SUFFIXES:
                with tarfile.open(path, "r|*") as archive:  # streamed: no random access needed
                    for member in archive:
                        if member.isfile() and member.name.lower().endswith(".sgf"):
                            yield f"{name}:{member.name}", archive.extractfile(member).read(), None
            else:
                yield name, path.read_bytes(), None
        except (OSError, zipfile.BadZipFile, tarfile.TarError, EOFError) as e:
            yield name, None, f"unreadable: {e}"
