"""Positions and players of ``alphago_jax.play``: rules at the Python edge, search players with
tree reuse, network players, the registry of player names, GNU Go as a player."""

from __future__ import annotations

import numpy as np
import pytest

from alphago_jax import sgf
from alphago_jax.games import grid
from alphago_jax.games.base import BLACK, WHITE
from alphago_jax.play import registry
from alphago_jax.play.analysis import lz_analyze_line
from alphago_jax.play.players import RESIGN, RandomPlayer
from alphago_jax.play.search_player import mcts_player
from alphago_jax.play.position import IllegalMove, Position, free_handicap_points, parse_colour, play_game

SIZE = 9


def v(vertex: str, size: int = SIZE) -> int:
    return grid.from_vertex(vertex, size)


@pytest.fixture(scope="session")
def mcts9():
    """The one pure-MCTS player of the play tests (9x9, 16 simulations)."""
    player = mcts_player(16, nodes=64)
    player.new_game(SIZE, 7.5)
    return player


# ---------------------------------------------------------------------------------- position

def test_position_plays_checks_and_undoes():
    pos = Position(play_game(SIZE, 7.5))
    pos.play(BLACK, v("E5"))
    with pytest.raises(IllegalMove, match="occupied"):
        pos.play(WHITE, v("E5"))
    assert len(pos.moves) == 1 and pos.to_play == WHITE
    pos.play(WHITE, v("D5"))
    assert pos.board[v("E5")] == BLACK and pos.board[v("D5")] == WHITE
    assert pos.undo() == (WHITE, v("D5"))
    assert pos.board[v("D5")] == 0 and pos.to_play == WHITE
    pos.undo()
    with pytest.raises(ValueError, match="no move"):
        pos.undo()
    assert pos.is_empty()


def test_position_suicide_and_superko_reasons():
    pos = Position(play_game(5, 0.5))
    for colour, vertex in [(BLACK, "B5"), (WHITE, "E1"), (BLACK, "A4"), (WHITE, "E2")]:
        pos.play(colour, v(vertex, 5))
    assert pos.why_illegal(WHITE, v("A5", 5)) == "suicide"
    # A ko: white takes at B3, black may not retake at C3 at once.
    pos = Position(play_game(5, 0.5))
    for colour, vertex in [(BLACK, "B4"), (WHITE, "C4"), (BLACK, "A3"), (WHITE, "D3"),
                           (BLACK, "B2"), (WHITE, "C2"), (BLACK, "C3"), (WHITE, "B3")]:
        pos.play(colour, v(vertex, 5))
    assert pos.board[v("C3", 5)] == 0
    with pytest.raises(IllegalMove, match="superko"):
        pos.play(BLACK, v("C3", 5))
    assert len(pos.moves) == 8


def test_position_accepts_either_colour_and_reopens_after_two_passes():
    pos = Position(play_game(SIZE, 7.5))
    pos.play(WHITE, v("C3"))  # white first: GTP allows it
    pos.play(WHITE, v("D3"))
    assert pos.moves == [(WHITE, v("C3")), (WHITE, v("D3"))] and pos.to_play == BLACK
    pos.play(BLACK, pos.pass_action)
    pos.play(WHITE, pos.pass_action)
    assert pos.consecutive_passes == 2 and bool(pos.state.terminal)
    pos.play(BLACK, v("G7"))  # play goes on (a cleanup phase)
    assert pos.board[v("G7")] == BLACK and pos.consecutive_passes == 0
    assert pos.score() == pytest.approx(pos.area()[0] - pos.area()[1] - 7.5)


def test_position_record_round_trips_through_sgf():
    pos = Position(play_game(SIZE, 6.5))
    player = RandomPlayer(seed=3)
    player.new_game(SIZE, 6.5)
    for _ in range(30):
        colour = pos.to_play
        d = player.genmove(colour)
        pos.play(colour, d.action)
    record = sgf.load(sgf.dump(pos.record("W+1.5", black_name="a", white_name="b")))
    assert record.komi == 6.5 and record.result == "W+1.5" and list(record.moves) == pos.moves
    _, state = sgf.replay(record, play_game(SIZE, 6.5))
    np.testing.assert_array_equal(np.asarray(state.board), pos.board)
    np.testing.assert_array_equal(player.pos.board, pos.board)


def test_free_handicap_points_spread_and_are_distinct():
    assert free_handicap_points(9, 4) == [grid.from_vertex(x, 9) for x in ("C3", "G7", "C7", "G3")]
    for size, stones in [(9, 12), (5, 3), (19, 20), (4, 15)]:
        points = free_handicap_points(size, stones)
        assert len(set(points)) == stones and all(0 <= p < size * size for p in points)


def test_parse_colour():
    assert parse_colour("B") == BLACK and parse_colour("white") == WHITE
    with pytest.raises(ValueError, match="invalid colour"):
        parse_colour("red")


# ------------------------------------------------------------------------------------ players

def test_random_player_plays_legal_moves_and_undoes():
    player = RandomPlayer(seed=0)
    player.new_game(SIZE, 7.5)
    for _ in range(20):
        colour = player.pos.to_play
        legal = player.pos.legal_mask(colour)
        d = player.genmove(colour)
        assert legal[d.action]
    assert len(player.pos.moves) == 20
    player.undo()
    assert len(player.pos.moves) == 19


def test_mcts_player_reuses_its_tree(mcts9):
    p = mcts9
    p.new_game(SIZE, 7.5)
    d = p.genmove(BLACK)
    assert d.simulations == 16 and 0.0 <= d.winrate <= 1.0
    assert p.pos.moves == [(BLACK, d.action)]
    assert p.tree is not None and p._tree_at == (1, WHITE)  # the subtree of the move played
    reused = int(p.tree.visits[0, 0])
    assert reused >= 1
    # The opponent's move: kept where it was searched, dropped (fresh root) otherwise.
    p.play(WHITE, p.pos.pass_action if p.pos.legal_mask()[-1] else int(np.flatnonzero(p.pos.legal_mask())[0]))
    assert p._tree_at in (None, (2, BLACK))
    d = p.genmove(BLACK, seconds=0.05)  # a time budget: at least one chunk
    assert d.simulations >= 16 and p.pos.legal_mask(BLACK) is not None
    p.undo()
    assert p.tree is None and len(p.pos.moves) == 2


def test_threads_search_trees_side_by_side_and_play_their_summed_visits(mcts9):
    import jax

    p = mcts_player(16, nodes=64, threads=2)  # mcts9's search and shapes: nothing new to compile but the merge
    assert p.name == "mcts16-threads2"
    p.new_game(SIZE, 7.5)
    d = p.genmove(BLACK)
    assert d.simulations == 32 and p._tree_at == (1, WHITE)
    assert len(p.trees) == 2 and all(int(t.visits[0, 0]) >= 1 for t in p.trees)  # each tree's subtree kept
    d = p.genmove(WHITE, seconds=0.05)
    assert d.simulations >= 32 and p.pos.moves[-1] == (WHITE, d.action)
    reports = []
    p.analyze(p.pos.to_play, reports.append, stop=lambda: True)  # the first tree, the others kept
    assert reports and len(p.trees) == 2
    p.close()

    # The merge: the trees' root visits summed, their values weighted by visits.
    search = p.search
    root = search.init(jax.tree_util.tree_map(lambda x: x[:, 0], p.tree.states))
    a, b = (search.simulate(None, search.start(None, root, k), k, 16) for k in jax.random.split(jax.random.PRNGKey(5)))
    visits = np.asarray(a.root_visits()) + np.asarray(b.root_visits())
    assert not np.array_equal(np.asarray(a.root_visits()), np.asarray(b.root_visits()))  # the playouts differ
    out = search.merged_result((a, b), jax.random.PRNGKey(0))
    np.testing.assert_allclose(np.asarray(out.visit_probs), visits / visits.sum(), rtol=1e-6)
    assert int(out.actions[0]) == int(np.argmax(visits[0]))
    weighted = float(a.value_sum[0, 0] + b.value_sum[0, 0]) / int(a.visits[0, 0] + b.visits[0, 0])
    assert float(out.root_value[0]) == pytest.approx(weighted, rel=1e-5)
    one = search.merged_result((a,), jax.random.PRNGKey(0))
    alone = search.result(a, jax.random.PRNGKey(0))
    np.testing.assert_array_equal(np.asarray(one.visit_probs), np.asarray(alone.visit_probs))


def test_threads_are_checked_and_named():
    with pytest.raises(ValueError, match="threads must be at least 1"):
        registry.make_player("mcts:threads=0")
    with pytest.raises(ValueError, match="needs symmetries 'random'"):
        registry.make_player("net:net=untrained,sims=8,threads=2,symmetries=none")
    assert registry.make_player("net:net=untrained,sims=8,threads=2").name.endswith("-search8-threads2")


def test_prepare_timed_leaves_nothing_to_compile_in_the_first_timed_moves():
    """A fresh search (5x5, 8 simulations: shapes no other test compiles) prepared for timed
    play: its first timed moves, the opponent's move between them, compile nothing, and
    preparing changed neither the game nor the random stream."""
    import jax

    compiled = []

    def listen(event, seconds, **kwargs):
        if "backend_compile" in event:
            compiled.append(event)

    player = mcts_player(8, nodes=40)
    player.new_game(5, 7.5)
    key = np.asarray(player._key).copy()
    player.prepare_timed()
    assert player.pos.moves == [] and player.tree is None
    np.testing.assert_array_equal(np.asarray(player._key), key)
    jax.monitoring.register_event_duration_secs_listener(listen)
    try:
        first = player.genmove(BLACK, seconds=0.01)
        player.play(WHITE, next(a for a in np.flatnonzero(player.pos.legal_mask(WHITE)) if a != first.action))
        player.genmove(BLACK, seconds=0.01)
    finally:
        jax.monitoring.unregister_event_duration_listener(listen)
    assert compiled == [] and len(player.pos.moves) == 3


def test_mcts_player_resigns_only_below_the_threshold(mcts9):
    mcts9.new_game(SIZE, 7.5)
    assert mcts9.genmove(BLACK, commit=False).action != RESIGN
    assert mcts9.pos.moves == []  # commit=False only looks
    assert mcts9.genmove(BLACK, commit=False, resign_below=1.01).action == RESIGN
    assert mcts9.pos.moves == []


def test_mcts_analysis_lines(mcts9):
    mcts9.new_game(SIZE, 7.5)
    reports = []
    mcts9.analyze(BLACK, reports.append, stop=lambda: len(reports) >= 2, interval=0.0)
    assert len(reports) == 2
    moves = reports[-1]
    assert moves and all(m.visits >= 1 and 0 <= m.winrate <= 1 and 0 <= m.prior <= 1 for m in moves)
    assert [m.visits for m in moves] == sorted((m.visits for m in moves), reverse=True)
    assert all(m.pv[0] == m.action for m in moves)
    line = lz_analyze_line(moves, SIZE)
    assert line.startswith("info move ") and " order 0 pv " in line
    assert line.count("info move") == len(moves)
    # The analysed tree is kept for the next move.
    assert mcts9._tree_at == (0, BLACK)
    assert mcts9.genmove(BLACK).simulations == 16


def test_network_search_player_on_an_untrained_network():
    player = registry.make_player("net:net=untrained,sims=8,nodes=40")
    player.new_game(5, 0.5)
    for _ in range(6):
        colour = player.pos.to_play
        legal = player.pos.legal_mask(colour)
        d = player.genmove(colour)
        assert legal[d.action] and 0 <= d.winrate <= 1
    reports = []
    player.analyze(player.pos.to_play, reports.append, stop=lambda: True)
    assert reports and reports[0][0].visits >= 1


def test_network_search_player_mixes_its_value_with_playouts():
    plain = registry.make_player("net:net=untrained,sims=8,nodes=40")
    mixed = registry.make_player("net:net=untrained,sims=8,nodes=40,lam=1")
    assert mixed.name.endswith("-lam1") and not plain.name.endswith("-lam1")
    decisions = []
    for player in (plain, mixed):
        player.new_game(5, 0.5)
        decisions.append(player.genmove(player.pos.to_play))
        assert player.pos.legal_mask(player.pos.to_play)[player.genmove(player.pos.to_play).action]
    # A playout's outcome is a win or a loss: the mixed root value is not the network's.
    assert decisions[0].winrate != decisions[1].winrate
    with pytest.raises(ValueError, match="lam must be in"):
        registry.make_player("net:net=untrained,sims=8,lam=2")


def test_policy_player_takes_the_best_legal_move():
    player = registry.make_player("policy:net=untrained")
    player.new_game(5, 0.5)
    for _ in range(12):
        colour = player.pos.to_play
        logits, _ = player._outputs(colour)
        d = player.genmove(colour)
        assert d.action == int(np.argmax(logits)) and player.pos.moves[-1] == (colour, d.action)
        assert np.isfinite(logits[d.action])
    reports = []
    player.analyze(player.pos.to_play, reports.append, stop=lambda: True)
    assert abs(sum(m.prior for m in reports[0])) <= 1.0 + 1e-6


# ----------------------------------------------------------------------------------- registry

def test_registry_errors_are_clear():
    with pytest.raises(ValueError, match=r"unknown player 'nosuch'; known: .*mcts.*random"):
        registry.make_player("nosuch")
    with pytest.raises(ValueError, match="untrained: the argument is a seed"):
        registry.make_player("net:net=untrained:x")
    with pytest.raises(ValueError, match="checkpoint: give a network file"):
        registry.make_player("net:net=checkpoint:")
    with pytest.raises(ValueError, match="no-such.msgpack: no such network file"):
        registry.make_player("checkpoint:no-such.msgpack")
    with pytest.raises(ValueError, match="bad option 'foo=1' for mcts; options: sims="):
        registry.make_player("mcts:foo=1")
    with pytest.raises(ValueError, match="bad value for mcts option sims"):
        registry.make_player("mcts:sims=many")
    with pytest.raises(ValueError, match="nodes must be at least"):
        registry.make_player("mcts:sims=10,nodes=5")
    assert "checkpoint" in registry.known_players() and "default" in registry.known_players()
    assert "mcts" in registry.player_help()


def test_registry_builds_players():
    assert registry.make_player("random:seed=4").name == "random"
    p = registry.make_player("mcts:sims=16,nodes=64,seed=2")
    assert p.config.num_simulations == 16 and p.config.capacity == 64


def test_gnugo_as_a_player(gnugo_path):
    with registry.make_player(f"{gnugo_path} --mode gtp --level 1") as gnugo:
        assert gnugo.name.startswith("GNU Go") and gnugo.can_cleanup
        gnugo.new_game(SIZE, 7.5)
        gnugo.play(BLACK, v("E5"))
        d = gnugo.genmove(WHITE)
        assert 0 <= d.action <= SIZE * SIZE
        with pytest.raises(ValueError, match="refused"):
            gnugo.play(BLACK, v("E5"))
        gnugo.undo()
        gnugo.undo()
        assert gnugo.client.send("list_stones black") == ""
        looked = gnugo.genmove(BLACK, commit=False)
        assert 0 <= looked.action <= SIZE * SIZE and gnugo._moves == []
        gnugo.new_game(SIZE, 7.5, setup=np.isin(np.arange(81), [v("C3"), v("G7")]).astype(np.int8),
                       first_player=WHITE, handicap=2)
        assert set(gnugo.client.send("list_stones black").split()) == {"C3", "G7"}


def test_default_player_is_a_shipped_network_on_its_board_and_mcts_elsewhere():
    from alphago_jax.nets.saved import load_network

    saved = load_network(registry.shipped_network_path())  # a file in the package, as installed
    assert saved.board_size == 9 and saved.info["train_steps"] > 0
    assert saved.net.ownership and saved.net.score  # kata-analyze's territory map and score lead
    with registry.make_player("default:sims=8") as player:
        player.new_game(9, 7.5)
        assert player.name == "shipped-search8"
        assert player.analysis_heads == (True, True) and player.can_cleanup
        assert player.ownership().shape == (81,)
        d = player.genmove(BLACK)
        assert 0 <= d.action <= 81 and player.current.pos.moves[-1] == (BLACK, d.action)
        player.new_game(19, 7.5)  # the shipped 19x19 network, with its territory map
        assert player.name == "shipped:19-search8"
        assert player.analysis_heads == (True, True) and player.ownership().shape == (361,)
        assert 0 <= player.genmove(BLACK).action <= 361
        player.new_game(5, 0.5)  # a size with no shipped network: pure MCTS
        assert player.name == "mcts8"
        assert 0 <= player.genmove(BLACK).action <= 25
        player.undo()
        assert player.current.pos.moves == []
    saved19 = load_network(registry.shipped_network_path(19))
    assert saved19.board_size == 19 and saved19.net.size_agnostic and saved19.info["chain"]
    assert saved19.net.ownership and saved19.net.score and any(s.get("heads_only") for s in saved19.info["chain"])
    with pytest.raises(ValueError, match="shipped takes a board size"):
        registry.make_player("net:net=shipped:x")
    with pytest.raises(ValueError, match="no network is shipped for 13x13; shipped: 9x9, 19x19"):
        registry.make_player("net:net=shipped:13")


def test_reseed_restarts_the_random_stream():
    def moves(player, seed):
        player.reseed(seed)
        player.new_game(5, 0.5)
        return [player.genmove(BLACK if i % 2 == 0 else WHITE).action for i in range(6)]

    player = RandomPlayer(seed=3)
    assert moves(player, 1) == moves(player, 1) != moves(player, 2)
    assert moves(RandomPlayer(seed=4), 1) != moves(player, 1)
