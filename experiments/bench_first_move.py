"""How soon the engine answers its first move, and how many simulations it searches in a move's time.

Two tables for docs/benchmarks.md:

1. First move: ``alphago-jax gtp`` started as a process, sent what a controller sends
   (``boardsize``, ``clear_board``, ``komi``, then ``genmove b`` and ``genmove w``), each
   answer timed from the process's start; then ``alphago-jax play`` with the human white, timed
   to the engine's first move; then the notebook player (``play.notebook.NotebookGame``, the
   human white) in a fresh Python process, timed from that process's start to the engine's
   first move. Each runs twice on a fresh compilation cache directory: empty (cold), then filled
   by the first run (warm).
2. Simulations per move: a network player (``--network``) searching for ``--seconds`` a move,
   both colours in turn on one board (the tree reused across moves), for several leaf batches
   (``SearchConfig.leaf_batch``), beside the player's settings before and after this change,
   and the default network player with ``threads`` trees searched side by side (``--threads``).
   The rows' players are compiled first, then play their moves in turn (one move of each row,
   then the next), so that a changing load on a shared machine weighs on every row alike.

Every row notes the machine's load average (``/proc/loadavg``, 1 minute) as it starts (first
table) or as the timed moves start and end (second table): the figures of a shared machine
move with it.

    python experiments/bench_first_move.py --network /tmp/runs/final.msgpack   # about 10 minutes
    python experiments/bench_first_move.py --only first-move --player default --time 1
    python experiments/bench_first_move.py --smoke                              # tiny, for CI
"""

from __future__ import annotations

import argparse
import os
import pathlib
import queue
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))  # sibling modules, however run
from benchlib import print_header  # noqa: E402


def load() -> str:
    """The 1-minute load average, or '?'."""
    try:
        with open("/proc/loadavg") as f:
            return f.read().split()[0]
    except OSError:
        return "?"


class Process:
    """A child process whose output is read in a thread, so that a reply without a newline
    (a prompt) can be waited for with a deadline."""

    def __init__(self, argv: list[str], env: dict):
        self.start = time.perf_counter()
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     env=env, text=True, bufsize=1)
        self.chunks: queue.Queue = queue.Queue()
        self.text = ""
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for piece in iter(lambda: self.proc.stdout.read(1), ""):
            self.chunks.put(piece)
        self.chunks.put(None)

    def send(self, line: str) -> None:
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def wait_for(self, done, timeout: float) -> float:
        """Seconds since the start when ``done(text so far)`` first holds."""
        deadline = time.perf_counter() + timeout
        while not done(self.text):
            try:
                piece = self.chunks.get(timeout=max(0.0, deadline - time.perf_counter()))
            except queue.Empty:
                raise TimeoutError(f"no answer in {timeout} s; output so far: {self.text[-300:]!r}") from None
            if piece is None:
                raise RuntimeError(f"the process ended; output: {self.text[-300:]!r}")
            self.text += piece
        return time.perf_counter() - self.start

    def close(self) -> None:
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def child_env() -> dict:
    """The environment of the measured commands: this one, without a JAX cache set by JAX's own
    variable (the command's ``--compile-cache`` decides)."""
    env = dict(os.environ)
    env.pop("JAX_COMPILATION_CACHE_DIR", None)
    env.pop("ALPHAGO_JAX_CACHE_DIR", None)
    return env


def command(cache: pathlib.Path) -> list[str]:
    return [sys.executable, "-m", "alphago_jax.cli", "--compile-cache", str(cache)]


def gtp_first_move(cache: pathlib.Path, player: str, size: int, komi: float, seconds: float | None,
                   timeout: float) -> dict:
    """Seconds from the start of ``alphago-jax gtp`` to each answer of a controller's opening."""
    argv = command(cache) + ["gtp", "--player", player, "--size", str(size), "--komi", str(komi), "--resign", "0"]
    if seconds is not None:
        argv += ["--time", str(seconds)]
    p = Process(argv, child_env())
    times = {}
    try:
        replies = 0
        for name, line in (("name", "name"), ("setup", f"boardsize {size}"), ("setup", "clear_board"),
                           ("setup", f"komi {komi}"), ("genmove b", "genmove b"), ("genmove w", "genmove w")):
            p.send(line)
            replies += 1
            times[name] = p.wait_for(lambda text, n=replies: text.count("\n\n") >= n, timeout)
        p.send("quit")
    finally:
        p.close()
    return times


def play_first_move(cache: pathlib.Path, player: str, size: int, komi: float, seconds: float | None,
                    timeout: float) -> dict:
    """Seconds from the start of ``alphago-jax play`` (the human white) to the engine's first move."""
    argv = command(cache) + ["play", "--player", player, "--size", str(size), "--komi", str(komi),
                             "--colour", "white", "--resign", "0"]
    if seconds is not None:
        argv += ["--time", str(seconds)]
    p = Process(argv, child_env())
    try:
        ready = p.wait_for(lambda text: "ready in" in text, timeout)
        first = p.wait_for(lambda text: "Black plays" in text or "Black passes" in text, timeout)
        p.send("quit")
    finally:
        p.close()
    return {"ready": ready, "genmove b": first}


NOTEBOOK = """
import sys, time
from alphago_jax.play.notebook import NotebookGame
print("imported", flush=True)
player, size, komi, seconds = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
game = NotebookGame(player, size=size, komi=komi, colour="white", seconds=float(seconds) if seconds else None)
print(game.message, flush=True)
game.play("pass")
print(game.message, flush=True)
"""


def notebook_first_move(cache: pathlib.Path, player: str, size: int, komi: float, seconds: float | None,
                        timeout: float) -> dict:
    """Seconds from the start of a Python process that makes a ``NotebookGame`` (the human white)
    to the engine's first and second moves, as a notebook kernel's first cells would."""
    env = child_env()
    env["ALPHAGO_JAX_CACHE_DIR"] = str(cache)
    p = Process([sys.executable, "-c", NOTEBOOK, player, str(size), str(komi), "" if seconds is None else str(seconds)],
                env)
    try:
        ready = p.wait_for(lambda text: "imported" in text, timeout)
        first = p.wait_for(lambda text: "Black (" in text, timeout)
        second = p.wait_for(lambda text: text.count("Black (") >= 2, timeout)
    finally:
        p.close()
    return {"ready": ready, "genmove b": first, "genmove w": second}


def first_move_table(args) -> None:
    timed = f", {args.time:g} s a move" if args.time is not None else ", its fixed effort a move"
    print(f"Player `{args.player}`, {args.size}x{args.size}, komi {args.komi:g}{timed}. Seconds from the process "
          f"start to each answer; cold: an empty compilation cache, warm: the cache the cold run filled.\n")
    print("| command | cache | load (1 min) | setup answered | first genmove answered | its genmove | "
          "second genmove's |")
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="alphago_jax_bench_") as tmp:
        for name, run in (("gtp", gtp_first_move), ("play", play_first_move), ("notebook", notebook_first_move)):
            cache = pathlib.Path(tmp) / name
            for state in ("cold", "warm"):
                before = load()
                t = run(cache, args.player, args.size, args.komi, args.time, args.timeout)
                setup = t.get("setup", t.get("ready"))
                second = f"{t['genmove w'] - t['genmove b']:.1f}" if "genmove w" in t else "-"
                shown = "`NotebookGame`" if name == "notebook" else f"`alphago-jax {name}`"
                print(f"| {shown} | {state} | {before} | {setup:.1f} | {t['genmove b']:.1f} | "
                      f"{t['genmove b'] - setup:.1f} | {second} |", flush=True)
    print()


def simulations_table(args) -> None:
    from alphago_jax.nets.saved import load_network
    from alphago_jax.play.search_player import network_player
    from alphago_jax.play.registry import saved_network, untrained_network

    if args.smoke:
        net, size = untrained_network(), 5
    else:
        net, size = saved_network(load_network(args.network), pathlib.Path(args.network).stem), args.size
    sims, fixed = args.sims, args.player_sims  # the sweep's, the player spec's default
    rows = [("before: leaf_batch 1, chunk 16, 8 * sims + 1 nodes", fixed,
             dict(leaf_batch=1, chunk=min(16, fixed), nodes=8 * fixed + 1)),
            ("now: the default network player", fixed, {})]
    rows += [(f"now, threads={n}", fixed, dict(threads=n)) for n in args.threads]
    rows += [(f"leaf_batch {k}", sims, dict(leaf_batch=k)) for k in args.leaf_batches if sims % k == 0]
    print(f"Network `{args.network if not args.smoke else 'untrained'}`, {size}x{size}, {args.seconds:g} s a move, "
          f"{args.moves} moves (both colours in turn, the tree reused).\n")
    print("| player settings | load (1 min) | sims | leaf_batch | chunk | nodes | threads | compile s | "
          "simulations per move: mean | median | min |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    players = []
    for label, n, options in rows:  # compile every row's search first
        player = network_player(net, n, **options)
        player.new_game(size, 7.5)
        t0 = time.perf_counter()
        player.prepare_timed()
        players.append((label, player, time.perf_counter() - t0, []))
    # The rows' moves in turn (a move of each, then the next move of each), so that a shared
    # machine's changing load weighs on every row alike.
    loads = [load()]
    for _ in range(args.moves):
        for _, player, _, done in players:
            done.append(player.genmove(player.pos.to_play, args.seconds).simulations)
    loads.append(load())
    for label, player, compile_s, done in players:
        cfg = player.config
        print(f"| {label} | {loads[0]} to {loads[1]} | {cfg.num_simulations} | {cfg.leaf_batch} | {player.chunk} | "
              f"{cfg.capacity} | {player.threads} | {compile_s:.0f} | {np.mean(done):.0f} | {np.median(done):.0f} | "
              f"{min(done)} |")
        player.close()
    print()


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", choices=("first-move", "simulations"), default=None, help="one table only")
    parser.add_argument("--player", default="default", help="the player of the first-move table (default: default)")
    parser.add_argument("--size", type=int, default=9)
    parser.add_argument("--komi", type=float, default=7.5)
    parser.add_argument("--time", type=float, default=None, help="first move: seconds a move (default fixed effort)")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds to wait for one answer")
    parser.add_argument("--network", default="/tmp/runs/final.msgpack", help="the simulations table's network file")
    parser.add_argument("--seconds", type=float, default=1.0, help="simulations table: seconds a move")
    parser.add_argument("--moves", type=int, default=12, help="simulations table: moves per row")
    parser.add_argument("--player-sims", type=int, default=200,
                        help="simulations table: sims of the before and now rows (default 200, the players' default)")
    parser.add_argument("--sims", type=int, default=256,
                        help="simulations table: sims of the leaf_batch rows (leaf batches must divide it)")
    parser.add_argument("--leaf-batches", type=lambda s: [int(x) for x in s.split(",")], default=[1, 4, 8, 16, 32])
    parser.add_argument("--threads", type=lambda s: [int(x) for x in s.split(",")], default=[2],
                        help="simulations table: rows of the default network player with these threads (default 2)")
    parser.add_argument("--smoke", action="store_true", help="tiny: random player, 5x5, an untrained network")
    args = parser.parse_args(argv)
    if args.smoke:
        args.player, args.size, args.komi, args.timeout = "random", 5, 0.5, 300.0
        args.seconds, args.moves, args.sims, args.player_sims, args.leaf_batches = 0.02, 2, 8, 8, []
        args.threads = []
    t_start = time.perf_counter()
    if args.only in (None, "first-move"):
        first_move_table(args)
    if args.only in (None, "simulations"):
        simulations_table(args)
    print_header("bench_first_move.py", argv, "first move and simulations per move", t_start)


if __name__ == "__main__":
    main()
