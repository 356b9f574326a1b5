"""A quick first move: the persistent compilation cache's directory rules, the command's cache
options, players compiled at the start of a game (terminal, notebook), network players' search
settings for timed moves."""

from __future__ import annotations

import dataclasses
import os
import io
import pathlib
import subprocess
import sys

import chex
import flax.struct
import jax
import jax.numpy as jnp
import pytest

from alphago_jax import cli, compile_cache
from alphago_jax.play.notebook import NotebookGame
from alphago_jax.play.players import RandomPlayer
from alphago_jax.play.search_player import (
    NETWORK_LEAF_BATCH,
    NETWORK_NODES_PER_SIMULATION,
    SearchPlayer,
    network_player,
    play_search_config,
)
from alphago_jax.play import registry
from alphago_jax.play.registry import untrained_network
from alphago_jax.play.terminal import play_terminal
from alphago_jax.search import rollout_evaluator

from children import child_env

PACKAGE = pathlib.Path(compile_cache.__file__).resolve().parent


# ---------------------------------------------------------------------- where the cache goes

def test_the_default_is_the_users_cache_directory(tmp_path):
    home = {"HOME": str(tmp_path)}
    assert compile_cache.choose(environ=home) == compile_cache.CacheChoice(tmp_path / ".cache" / "alphago_jax",
                                                                           "default")
    xdg = {"HOME": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    assert compile_cache.choose(environ=xdg).path == tmp_path / "xdg" / "alphago_jax"
    # A relative XDG_CACHE_HOME is ignored (XDG): the default never lands in the working directory.
    relative = {"HOME": str(tmp_path), "XDG_CACHE_HOME": "cache"}
    assert compile_cache.choose(environ=relative).path == tmp_path / ".cache" / "alphago_jax"
    assert compile_cache.choose(environ={"HOME": "not/absolute"}).path is None  # off, not somewhere relative


def test_the_environment_variable_moves_or_turns_off_the_cache(tmp_path):
    env = {"HOME": str(tmp_path), compile_cache.ENV: str(tmp_path / "mine")}
    assert compile_cache.choose(environ=env) == compile_cache.CacheChoice(tmp_path / "mine", "env")
    for word in ("off", "OFF", " off "):
        assert compile_cache.choose(environ={compile_cache.ENV: word}) == compile_cache.CacheChoice(None, "env")
    assert compile_cache.choose(environ={"HOME": str(tmp_path), compile_cache.ENV: ""}).source == "default"


def test_the_flag_comes_first_then_a_cache_jax_already_has(tmp_path):
    env = {"HOME": str(tmp_path), compile_cache.ENV: str(tmp_path / "env")}
    jax_dir = str(tmp_path / "tests")
    # The tests hand their cache to child processes in JAX's own variable: it is kept.
    assert compile_cache.choose(None, env, jax_dir) == compile_cache.CacheChoice(pathlib.Path(jax_dir), "jax")
    assert compile_cache.choose(str(tmp_path / "flag"), env, jax_dir) == \
        compile_cache.CacheChoice(tmp_path / "flag", "flag")
    assert compile_cache.choose(compile_cache.OFF, env, jax_dir) == compile_cache.CacheChoice(None, "flag")


def test_a_relative_directory_is_made_absolute(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert compile_cache.choose("here", {}).path == tmp_path.resolve() / "here"


@pytest.mark.parametrize("inside", [PACKAGE, PACKAGE / "data" / "cache"])
def test_never_inside_the_package(inside, tmp_path):
    with pytest.raises(ValueError, match="inside the alphago_jax package"):
        compile_cache.choose(str(inside), {})
    with pytest.raises(ValueError, match="inside the alphago_jax package"):
        compile_cache.choose(None, {compile_cache.ENV: str(inside)})
    assert compile_cache.choose(str(PACKAGE.parent / "elsewhere"), {}).path == PACKAGE.parent / "elsewhere"


@pytest.fixture
def jax_cache_settings():
    """JAX's cache settings as they were (the tests' own cache, conftest.py) after the test."""
    names = ("jax_compilation_cache_dir", "jax_enable_compilation_cache", "jax_persistent_cache_min_compile_time_secs")
    saved = {name: getattr(jax.config, name) for name in names}
    yield
    for name, value in saved.items():
        jax.config.update(name, value)


def test_configure_sets_jax_or_keeps_what_jax_has(tmp_path, jax_cache_settings):
    tests_cache = jax.config.jax_compilation_cache_dir
    assert tests_cache  # conftest.py's
    env = {"HOME": str(tmp_path), compile_cache.ENV: str(tmp_path / "env")}
    assert compile_cache.configure(None, env).source == "jax"
    assert jax.config.jax_compilation_cache_dir == tests_cache  # not overridden

    jax.config.update("jax_compilation_cache_dir", None)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 1.0)
    choice = compile_cache.configure(None, env)
    assert choice == compile_cache.CacheChoice(tmp_path / "env", "env") and (tmp_path / "env").is_dir()
    assert jax.config.jax_compilation_cache_dir == str(tmp_path / "env")
    assert jax.config.jax_enable_compilation_cache
    assert jax.config.jax_persistent_cache_min_compile_time_secs == compile_cache.MIN_COMPILE_SECONDS
    # Handed on to child processes (arena --parallel) in JAX's own variables.
    assert env[compile_cache.JAX_ENV] == str(tmp_path / "env")
    assert float(env["JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS"]) == compile_cache.MIN_COMPILE_SECONDS

    assert compile_cache.configure(compile_cache.OFF, env).path is None
    assert not jax.config.jax_enable_compilation_cache and env["JAX_ENABLE_COMPILATION_CACHE"] == "false"


def test_an_unwritable_directory_turns_the_cache_off(tmp_path, jax_cache_settings, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert compile_cache.configure(str(blocker / "cache"), {}).path is None
    assert not jax.config.jax_enable_compilation_cache
    assert "compilation cache off" in capsys.readouterr().err


@pytest.mark.parametrize("argv, expected", [
    (["demo"], None),
    (["--no-compile-cache", "demo"], "off"),
    (["demo", "--no-compile-cache"], "off"),
    (["--compile-cache", "/a", "demo"], "/a"),
    (["demo", "--compile-cache", "/b"], "/b"),
    (["train", "--no-compile-cache"], "off"),
])
def test_every_command_takes_the_cache_options(argv, expected):
    assert cli.build_parser().parse_args(argv).compile_cache == expected


def test_the_command_configures_the_cache_before_it_runs(monkeypatch, capsys):
    seen = []
    monkeypatch.setattr(compile_cache, "configure", lambda option=None: seen.append(option))
    assert cli.main(["demo", "--size", "25", "--compile-cache", "/somewhere"]) == 2  # a bad size: fails at once
    assert seen == ["/somewhere"]
    with pytest.raises(SystemExit):
        cli.main(["gtp", "--compile-cache", "/x", "--no-compile-cache"])  # one or the other
    capsys.readouterr()


def test_a_child_command_keeps_the_tests_cache_and_fills_a_flagged_one(tmp_path):
    """In a child process (tests/children.py's environment): the tests' cache, handed over in
    JAX_COMPILATION_CACHE_DIR, beats ALPHAGO_JAX_CACHE_DIR; --compile-cache DIR beats both and
    the command's compiled programs land in DIR."""
    env = dict(child_env(), **{compile_cache.ENV: str(tmp_path / "ignored")})
    code = ("import jax; from alphago_jax import compile_cache as c; ch = c.configure(); "
            "print(ch.source, jax.config.jax_compilation_cache_dir)")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    assert out.split() == ["jax", str(jax.config.jax_compilation_cache_dir)]
    flagged = tmp_path / "flagged"
    subprocess.run([sys.executable, "-m", "alphago_jax.cli", "--compile-cache", str(flagged), "demo", "--size", "3",
                    "--batch", "2"], env=env, capture_output=True, text=True, check=True)
    assert any(flagged.iterdir()) and not (tmp_path / "ignored").exists()


# ---------------------------------------------------------- players compiled at a game's start

class Preparing(RandomPlayer):
    """Records ``prepare`` calls (their ``seconds``) and the moves asked for after them."""

    def __init__(self):
        super().__init__(seed=0, name="preparing")
        self.log = []

    def prepare(self, seconds=None):
        super().prepare(seconds)
        self.log.append(("prepare", seconds))

    def genmove(self, colour, seconds=None, **kwargs):
        self.log.append(("genmove", seconds))
        return super().genmove(colour, seconds, **kwargs)


@pytest.mark.parametrize("seconds", [None, 0.5])
def test_terminal_play_prepares_the_engine_before_its_first_move(seconds):
    player, out = Preparing(), io.StringIO()
    play_terminal(player, size=5, komi=0.5, human=-1, seconds=seconds, stdin=io.StringIO("quit\n"), stdout=out)
    assert player.log[:2] == [("prepare", seconds), ("genmove", seconds)]
    assert "Preparing preparing for 5x5... ready in" in out.getvalue()


@pytest.mark.parametrize("seconds", [None, 0.5])
def test_a_notebook_game_prepares_the_engine_when_it_is_made(seconds):
    player = Preparing()
    game = NotebookGame(player, size=5, komi=0.5, colour="white", seconds=seconds)
    assert player.log[:2] == [("prepare", seconds), ("genmove", seconds)] and len(game.pos.moves) == 1


def test_a_notebook_game_configures_the_cache_before_the_engine_compiles(monkeypatch):
    seen = []
    monkeypatch.setattr(compile_cache, "configure", lambda option=None: seen.append(("configure", option)))
    player = Preparing()
    player.log = seen
    NotebookGame(player, size=5, komi=0.5, colour="white", compile_cache="/somewhere")
    assert seen[:2] == [("configure", "/somewhere"), ("prepare", None)]


# ------------------------------------------------------------ network players' timed search

def test_network_players_gather_leaves_and_keep_room_for_timed_moves():
    net = untrained_network()
    p = network_player(net, 200)
    assert p.config.leaf_batch == NETWORK_LEAF_BATCH == 8
    assert p.config.capacity == NETWORK_NODES_PER_SIMULATION * 200 + 1 and p.chunk == 64
    assert network_player(net, 100).config.leaf_batch == 4  # the largest batch that divides sims
    assert network_player(net, 7).config.leaf_batch == 1
    assert network_player(net, 16).chunk == 16  # never more than sims
    one = network_player(net, 200, leaf_batch=1, nodes=401)
    assert (one.config.leaf_batch, one.chunk, one.config.capacity) == (1, 16, 401)  # the old settings
    with pytest.raises(ValueError, match="leaf_batch must be a positive divisor"):
        network_player(net, 200, leaf_batch=16)
    with pytest.raises(ValueError, match="chunk must be a multiple of leaf_batch"):
        SearchPlayer(rollout_evaluator, None, play_search_config(32, leaf_batch=8), chunk=12)
    with pytest.raises(ValueError, match="at most num_simulations"):
        SearchPlayer(rollout_evaluator, None, play_search_config(32), chunk=64)


def test_prepare_leaves_the_game_and_the_random_stream_alone():
    """``prepare`` of a fixed-effort move: one search on a throwaway tree."""
    import numpy as np

    player = network_player(untrained_network(), 8, nodes=40)
    player.new_game(5, 0.5)
    key = np.asarray(player._key).copy()
    player.prepare()
    assert player.pos.moves == [] and player.tree is None
    np.testing.assert_array_equal(np.asarray(player._key), key)
    assert (player.search, False) in player._ready


# ------------------------------------------------------------------- programs kept on disk

@flax.struct.dataclass
class _Pair:
    a: jax.Array
    b: jax.Array


def _pair_program(pair: _Pair, scale: jax.Array, rounds: int) -> _Pair:
    for _ in range(rounds):
        pair = _Pair(jnp.tanh(pair.a * scale + pair.b.sum()), pair.b + pair.a[:2])
    return pair


@pytest.fixture
def programs_dir(tmp_path, monkeypatch):
    monkeypatch.setattr(compile_cache, "_programs_dir", lambda: tmp_path / "programs")
    return tmp_path / "programs"


def test_a_kept_program_is_read_back_and_computes_what_jit_does(programs_dir, tmp_path, monkeypatch):
    jitted = jax.jit(_pair_program, static_argnums=2)
    key = f"pair {tmp_path}"  # new each run: JAX's own cache has never seen the program
    pair, scale = _Pair(jnp.arange(4.0) / 4, jnp.ones(2)), jnp.float32(0.5)
    first = compile_cache.kept(jitted, "pair", key, static_argnums=(2,))
    chex.assert_trees_all_close(first(pair, scale, 3), jitted(pair, scale, 3))
    assert len(list(programs_dir.glob("pair-*.pkl"))) == 1

    # Another process: nothing traced or compiled, the same numbers.
    monkeypatch.setattr(compile_cache.Kept, "_compile", lambda *a: pytest.fail("compiled a kept program"))
    again = compile_cache.kept(jitted, "pair", key, static_argnums=(2,))
    chex.assert_trees_all_close(again(pair, scale, 3), jitted(pair, scale, 3))
    monkeypatch.undo()
    monkeypatch.setattr(compile_cache, "_programs_dir", lambda: programs_dir)

    # Another static argument, shape or key is another program.
    again(pair, scale, 2)
    again(_Pair(jnp.arange(6.0), jnp.ones(2)), scale, 2)
    compile_cache.kept(jitted, "pair", key + " other", static_argnums=(2,))(pair, scale, 3)
    assert len(list(programs_dir.glob("pair-*.pkl"))) == 4


def test_an_unreadable_kept_program_is_compiled_again(programs_dir, tmp_path, capsys):
    jitted = jax.jit(_pair_program, static_argnums=2)
    key = f"pair {tmp_path}"
    pair, scale = _Pair(jnp.arange(4.0), jnp.ones(2)), jnp.float32(0.25)
    compile_cache.kept(jitted, "pair", key, static_argnums=(2,))(pair, scale, 1)
    (path,) = programs_dir.glob("pair-*.pkl")
    path.write_bytes(b"not a program")
    out = compile_cache.kept(jitted, "pair", key, static_argnums=(2,))(pair, scale, 1)
    chex.assert_trees_all_close(out, jitted(pair, scale, 1))
    assert "kept program" in capsys.readouterr().err and path.read_bytes() != b"not a program"


def test_network_players_keep_their_search_only_when_the_network_is_named(tmp_path):
    named = dataclasses.replace(untrained_network(), key="untrained DualResNet 1x16")
    kept_player, plain = network_player(named, 8, nodes=40), network_player(untrained_network(), 8, nodes=40)
    for p in (kept_player, plain):
        p.new_game(5, 0.5)
    assert isinstance(kept_player.search.simulate, compile_cache.Kept)
    assert not isinstance(plain.search.simulate, compile_cache.Kept)
    jitted = jax.jit(_pair_program)
    assert compile_cache.kept(jitted, "pair", None) is jitted
    shipped = registry.load_network("shipped")  # named by its architecture and input planes
    assert "DualResNet(" in shipped.key and "zero_planes" in shipped.key


def test_kept_programs_are_evicted_least_recently_used_first(programs_dir, tmp_path, monkeypatch):
    jitted = jax.jit(_pair_program, static_argnums=2)
    key = f"pair {tmp_path}"
    pair, scale = _Pair(jnp.arange(4.0), jnp.ones(2)), jnp.float32(0.25)
    program = compile_cache.kept(jitted, "pair", key, static_argnums=(2,))
    program(pair, scale, 1)
    program(pair, scale, 2)
    first, second = sorted(programs_dir.glob("pair-*.pkl"), key=lambda p: p.stat().st_mtime)
    for i, path in enumerate((first, second)):  # written long ago, the first the longer
        os.utime(path, (1000 + i, 1000 + i))
    compile_cache.kept(jitted, "pair", key, static_argnums=(2,))(pair, scale, 1)  # reading the first touches it
    assert first.stat().st_mtime > second.stat().st_mtime
    # Writing a program evicts down to the bound (here none at all fits), the program still runs.
    monkeypatch.setattr(compile_cache, "max_bytes", lambda environ=None: 0)
    chex.assert_trees_all_close(program(pair, scale, 3), jitted(pair, scale, 3))
    assert not list(programs_dir.glob("pair-*.pkl"))


def test_eviction_removes_the_least_recently_used_until_the_rest_fit(tmp_path):
    for i, size in enumerate((300, 200, 100)):  # used at times 1000, 1001, 1002
        path = tmp_path / f"p{i}.pkl"
        path.write_bytes(b"x" * size)
        os.utime(path, (1000 + i, 1000 + i))
    assert compile_cache.evict(tmp_path, 600) == []
    assert [p.name for p in compile_cache.evict(tmp_path, 350)] == ["p0.pkl"]  # 300 bytes, used longest ago
    assert [p.name for p in compile_cache.evict(tmp_path, 150)] == ["p1.pkl"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p2.pkl"]


def test_starting_a_command_bounds_the_cache(tmp_path, jax_cache_settings):
    cache = tmp_path / "cache"
    (cache / compile_cache.PROGRAMS_SUBDIR).mkdir(parents=True)
    for i in range(3):  # JAX's entries (one with the -atime file of JAX's own bounded cache) and kept programs
        for path in (cache / f"jit_f{i}-cache", cache / compile_cache.PROGRAMS_SUBDIR / f"p{i}.pkl"):
            path.write_bytes(b"x" * (400 << 10))
            os.utime(path, (1000 + i, 1000 + i))
    (cache / "jit_f0-atime").write_bytes(b"t")
    jax.config.update("jax_compilation_cache_dir", None)
    compile_cache.configure(str(cache), {compile_cache.MAX_MB_ENV: "1"})  # room for two of each
    assert sorted(p.name for p in cache.iterdir() if p.is_file()) == ["jit_f1-cache", "jit_f2-cache"]
    assert sorted(p.name for p in (cache / compile_cache.PROGRAMS_SUBDIR).iterdir()) == ["p1.pkl", "p2.pkl"]


def test_the_cache_bound_is_checked():
    assert compile_cache.max_bytes({}) == compile_cache.DEFAULT_MAX_MB << 20
    assert compile_cache.max_bytes({compile_cache.MAX_MB_ENV: "1.5"}) == 3 << 19
    for bad in ("0", "-3", "lots"):
        with pytest.raises(ValueError, match="positive number of MB"):
            compile_cache.max_bytes({compile_cache.MAX_MB_ENV: bad})


def test_the_cache_command_shows_and_clears(tmp_path, jax_cache_settings, capsys, monkeypatch):
    cache = tmp_path / "cache"
    (cache / compile_cache.PROGRAMS_SUBDIR).mkdir(parents=True)
    (cache / "jit_f-abc-cache").write_bytes(b"x" * 2048)
    (cache / "jit_f-abc-atime").write_bytes(b"1")
    (cache / compile_cache.PROGRAMS_SUBDIR / "search-1.pkl").write_bytes(b"y" * 1024)
    monkeypatch.delenv(compile_cache.JAX_ENV, raising=False)
    jax.config.update("jax_compilation_cache_dir", None)
    assert cli.main(["--compile-cache", str(cache), "cache"]) == 0
    out = capsys.readouterr().out
    assert f"compilation cache: {cache}" in out
    assert "JAX's compiled programs: 1 files" in out and "kept search programs: 1 files" in out
    assert cli.main(["--compile-cache", str(cache), "cache", "--clear"]) == 0
    assert "removed 3 files" in capsys.readouterr().out
    assert compile_cache.usage(cache) == {"jax": (0, 0), "programs": (0, 0)}
    assert cli.main(["--no-compile-cache", "cache"]) == 0 and "off" in capsys.readouterr().out
