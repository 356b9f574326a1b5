"""The ``alphago-jax`` command: one entry point, one subcommand per job."""

from __future__ import annotations

import argparse
import os
import pathlib
import sys
import time

from alphago_jax import compile_cache


def _demo(args) -> int:
    import jax
    import numpy as np

    from alphago_jax import games
    from alphago_jax.games import grid
    from alphago_jax.playout import random_games

    game = games.make("go", size=args.size, komi=args.komi)
    play = jax.jit(random_games, static_argnums=(0, 2))
    key = jax.random.PRNGKey(args.seed)
    print(f"Playing {args.batch} random legal games of {args.size}x{args.size} Go (positional superko, "
          f"komi {game.komi}) in one jitted, vmapped loop on {jax.devices()[0].platform.upper()}...")
    t0 = time.perf_counter()
    compiled = play.lower(game, key, args.batch).compile()
    compile_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    states, steps = compiled(key)
    moves = int(np.sum(np.asarray(states.move_count)))
    elapsed = time.perf_counter() - t0
    scores = np.asarray(jax.vmap(game.score)(states))
    print(f"compiled in {compile_s:.1f} s; {moves:,} moves in {elapsed:.2f} s: "
          f"{moves / elapsed:,.0f} moves/s (the batch runs in lockstep for {int(steps)} steps)")
    print(f"black won {np.mean(scores > 0):.0%}, white won {np.mean(scores < 0):.0%} of the games")
    s0 = jax.tree_util.tree_map(lambda x: np.asarray(x[0]), states)
    print(f"\nGame 1 after {int(s0.move_count)} moves (X black, O white):")
    print(grid.render(s0.board, args.size, int(s0.last_move) if s0.last_move < args.size**2 else None))
    area = np.asarray(game.area(s0))
    print(f"Tromp-Taylor area: black {area[0]}, white {area[1]}, komi {game.komi}: "
          f"score {float(scores[0]):+.1f} ({'black' if scores[0] > 0 else 'white'} wins)")
    return 0


def _train(args) -> int:
    started = time.perf_counter()
    from alphago_jax import zero

    # Before anything touches JAX: multi-host runs start the distributed runtime first.
    zero.initialize_distributed(True if args.distributed else None)
    saved = zero.saved_config(args.out) if args.resume else None
    config = _zero_config(args, saved if args.preset is None else None)
    import jax

    say = print if jax.process_index() == 0 else (lambda *a, **k: None)  # one voice on many hosts
    say(f"AlphaGo Zero on {config.board_size}x{config.board_size} Go: {config.iterations} iterations, "
          f"{config.selfplay_batch} games x {config.selfplay_moves} moves of self-play and {config.train_steps} "
          f"training steps each, on {jax.device_count()} {jax.devices()[0].platform.upper()} device(s); "
          f"writing to {args.out}" + (" (resuming)" if saved is not None else ""))
    # The time limit counts from the start of the command: starting JAX and reading the settings are inside it.
    time_limit = None if args.time_limit is None else args.time_limit - (time.perf_counter() - started)
    result = zero.train(config, args.out, resume=args.resume, progress=not args.no_progress, distributed=False,
                        time_limit=time_limit, init=args.init)
    if result.stopped:
        say(f"stopped by {result.stopped} after iteration {result.iterations} ({result.train_steps} training steps), "
            f"checkpointed; continue with: alphago-jax train --resume --out {args.out}")
        return 130
    say(f"finished {result.iterations} iterations ({result.train_steps} training steps) in "
        f"{time.perf_counter() - started:.0f} s")
    say(f"checkpoint:  {result.checkpoint}")
    say(f"metrics:     {result.metrics}")
    if result.plot is not None:
        say(f"plots:       {result.plot}")
    if result.sample_game is not None:
        say(f"sample game: {result.sample_game}")
    return 0


def _zero_config(args, saved=None):
    """The ``ZeroConfig`` of ``--preset`` (or ``saved``, a resumed run's own) and ``--set`` (plus
    ``--iterations`` and ``--seed`` where the command has them)."""
    from alphago_jax import zero

    overrides = dict(_setting(text) for text in args.set)
    for name in ("iterations", "seed"):
        if getattr(args, name, None) is not None:
            overrides[name] = str(getattr(args, name))
    if saved is not None:
        config = saved  # resume with the run's own settings (plus --iterations to extend it)
    else:
        name = args.preset or zero.DEFAULT_PRESET
        if name not in zero.PRESETS:
            raise ValueError(f"unknown preset {name!r}; known: {', '.join(zero.PRESETS)}")
        config = zero.PRESETS[name]
    return zero.with_overrides(config, overrides)


def _warm_start(args) -> int:
    from alphago_jax.nets.saved import load_network, network_config, save_network
    from alphago_jax import zero
    from alphago_jax.train.optimizer import OptimizerConfig
    from alphago_jax.zero import warm_start

    config = _zero_config(args)
    t0 = time.perf_counter()
    teacher = warm_start.has_teacher(args.records)
    read = warm_start.teacher_examples if teacher else warm_start.record_examples
    data = read(args.records if teacher else [args.records], size=config.board_size, komi=config.komi,
                inputs=config.inputs)
    aux = data.examples.ownership is not None  # a teacher's, or records that say who owns what (TB/TW)
    print(f"{data.games} records ({data.skipped} skipped{': ' + data.reasons[0] if data.reasons else ''}), "
          f"{data.examples.value.shape[0]:,} positions"
          + (", with a teacher's policy, value, ownership and score for each" if teacher else
             f", {data.owned} of them with who owns what at the end (ownership and score targets)" if aux else ""))
    init = zero.init_network(args.init, config) if args.init else None
    if args.keep_policy:
        if init is None or args.heads_only:
            raise ValueError("--keep-policy trains a whole --init network towards its own moves: it needs --init, "
                             "and --heads-only leaves the moves as they are without it")
        data = data._replace(examples=warm_start.own_policy(config.net, init.variables, data.examples))
    if args.keep_values:
        if init is None or args.heads_only or args.keep_policy:
            raise ValueError("--keep-values trains a whole --init network towards the records' moves with its own "
                             "values: it needs --init, and neither --heads-only nor --keep-policy")
        data = data._replace(examples=warm_start.own_values(config.net, init.variables, data.examples))
    anchor = None
    if args.anchor:
        if init is None or args.heads_only:
            raise ValueError("--anchor holds an --init network to its own outputs: it needs --init, not --heads-only")
        kept = warm_start.record_examples([args.anchor], size=config.board_size, komi=config.komi, inputs=config.inputs)
        anchor = warm_start.own_targets(config.net, init.variables, kept.examples)
        print(f"anchor: {anchor.value.shape[0]:,} positions of {kept.games} records, the --init network's own "
              f"outputs as targets, {args.anchor_share:.0%} of each batch")
    weights = dict(ownership_weight=config.ownership_weight, score_weight=config.score_weight) if aux else {}
    if teacher:  # a teacher's value is an estimate of each position, not one game's result: full weight
        weights["value_weight"] = 1.0
    if args.heads_only:
        if not (aux and init):
            raise ValueError("--heads-only fits the heads of an --init network to records with ownership targets: "
                             "a teacher's (experiments/katago_teacher.py) or records that say who owns what at "
                             "the end (TB/TW, experiments/make_gnugo_dataset.py)")
        result = warm_start.fit_heads(data, config.net, init.variables, steps=args.steps, batch=args.batch,
                                      learning_rate=args.learning_rate, ownership_weight=config.ownership_weight,
                                      score_weight=config.score_weight, seed=config.seed,
                                      held_out=args.held_out, progress=not args.no_progress)
    else:
        optimizer = OptimizerConfig(kind="adamw", learning_rate=args.learning_rate, weight_decay=1e-4)
        result = warm_start.train_supervised(data, config.net, steps=args.steps, batch=args.batch, seed=config.seed,
                                             optimizer=optimizer, init=init.variables if init else None,
                                             held_out=args.held_out, progress=not args.no_progress,
                                             anchor=anchor, anchor_share=args.anchor_share, **weights)
    net = config.net
    step = {"step": "alphago-jax warm-start", "command": " ".join(["alphago-jax"] + sys.argv[1:]),
            "records": str(args.records), "teacher": teacher, "games": data.games,
            "positions": int(data.examples.value.shape[0]), "train_steps": args.steps, "batch": args.batch,
            "learning_rate": args.learning_rate, "heads_only": bool(args.heads_only),
            "keep_policy": bool(args.keep_policy), "keep_values": bool(args.keep_values), "held_out": result.held_out,
            "anchor": args.anchor and {"records": str(args.anchor), "share": args.anchor_share},
            "wall_s": round(time.perf_counter() - t0, 1)}
    out = pathlib.Path(args.out)
    chain = (zero.network_chain(init) if init else []) + [step]
    # Heads fitted to a fixed network: its description (settings, iterations, steps) stays its own.
    info = {**init.info, "chain": chain} if args.heads_only else {"chain": chain, "config": config.to_dict()}
    path = save_network(out / zero.WARM_START_FILE, result.state.variables, **network_config(net),
                        board_size=config.board_size, komi=config.komi, info=info)
    load_network(path)  # read back: the file is usable
    print(_held_out_line(path, result.held_out, heads_only=args.heads_only, out=out))
    return 0


def _held_out_line(path, held: dict, *, heads_only: bool, out) -> str:
    """What ``warm-start`` says of its network on the held-out games (``train_supervised``'s or
    ``fit_heads``' ``held_out``)."""
    heads = (f"ownership MSE {held['ownership_loss']:.3f}, sure points (|target| > 0.5) on the targets' side "
             f"{held['ownership_agreement']:.1%}, score error {held['score_error']:.1f} points") \
        if "ownership_loss" in held else ""
    positions = f"over {held.get('positions', 0):,} positions"
    if heads_only:
        return f"{path}: held-out {heads or 'figures: none'} {positions}; moves and values as --init's"
    return (f"{path}: held-out top-1 {held.get('policy_accuracy', float('nan')):.1%}, value MSE "
            f"{held.get('value_loss', float('nan')):.3f}{', ' + heads if heads else ''} {positions}; "
            f"start a run from it with: alphago-jax train --init {out} (same --preset and --set)")


def _setting(text: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise ValueError(f"--set takes NAME=VALUE, got {text!r}")
    return name.strip(), value.strip()


def _fraction(text: str, top: float = 0.5) -> float:
    """A share of the games held out: 0 (none) to 0.5 (every other game)."""
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 <= value <= top:
        raise argparse.ArgumentTypeError(f"a fraction from 0 to {top:g}, got {text!r}")
    return value


def _held_out(text: str) -> float:
    """``--held-out``: 0 to 0.5, or 1 (every game: scoring a network with ``--steps 0``)."""
    try:
        value = _fraction(text, 1.0)
    except argparse.ArgumentTypeError:
        value = float("nan")
    if not (value <= 0.5 or value == 1):
        raise argparse.ArgumentTypeError(f"a fraction from 0 to 0.5, or 1 with --steps 0, got {text!r}")
    return value


def _share(text: str) -> float:
    """A share of each batch: 0 to 0.95 (some of it must be the new targets)."""
    return _fraction(text, 0.95)


def _plot(args) -> int:
    from alphago_jax import zero

    print(f"plots: {zero.plot_run(args.run_dir)}")
    return 0


def _export(args) -> int:
    from alphago_jax.nets.saved import load_network
    from alphago_jax import zero

    info = {"command": args.note} if args.note else None
    path = zero.export_network(args.run_dir, args.file, iteration=args.iteration, which=args.network, info=info)
    saved = load_network(path)  # read back: the file is usable
    print(f"{path}: {saved.board_size}x{saved.board_size} network, iteration {saved.info['iteration']}, "
          f"{saved.info['train_steps']} training steps, {path.stat().st_size / 1e6:.1f} MB; play it with "
          f"--player net:net=checkpoint:{path}")
    return 0


def _dataset_build(args) -> int:
    from alphago_jax.alphago.dataset import build_dataset

    report = build_dataset(args.sources, args.out, size=args.size, shard_size=args.shard_size,
                           held_out=args.held_out, progress=not args.no_progress)
    print(report.summary())
    print(f"shards and manifest.json (every skipped file with its reason) in {args.out}")
    return 0


def _cache(args) -> int:
    """``alphago-jax cache``: the cache's place, contents and bound; ``--clear`` empties it."""
    import jax

    directory = jax.config.jax_compilation_cache_dir
    if not jax.config.jax_enable_compilation_cache or not directory:
        print("the compilation cache is off")
        return 0
    path = pathlib.Path(directory)
    if args.clear:
        print(f"{path}: removed {compile_cache.clear(path)} files")
        return 0
    limit = compile_cache.max_bytes() / (1 << 20)
    print(f"compilation cache: {path}")
    for name, (files, size) in compile_cache.usage(path).items():
        what = "JAX's compiled programs" if name == "jax" else "kept search programs"
        print(f"  {what}: {files} files, {size / (1 << 20):.1f} MB of at most {limit:.0f} MB")
    return 0


def _add_dataset_command(sub) -> None:
    dataset = sub.add_parser("dataset", help="position datasets from SGF game records")
    actions = dataset.add_subparsers(dest="action", required=True)
    build = actions.add_parser("build", help="SGF files, directories, .zip / .tar.gz archives -> sharded positions")
    build.add_argument("sources", nargs="+", help="directories, .sgf files and archives")
    build.add_argument("--out", required=True, help="an empty directory for the shards")
    build.add_argument("--size", type=int, default=19, help="board size kept (default 19; others are skipped)")
    build.add_argument("--shard-size", type=int, default=65536, help="positions per shard (default 65536)")
    build.add_argument("--held-out", type=float, default=0.05, help="fraction of games held out (default 0.05)")
    build.add_argument("--no-progress", action="store_true", help="no progress bar")
    build.set_defaults(run=_dataset_build)


def _katago_install(args) -> int:
    from alphago_jax import katago

    installed = katago.install(args.dir, wheel=args.wheel)
    print(f"KataGo is installed in {installed.root}. As a player: katago:visits=1 (add size=9 for 9x9 first);\n"
          f"for a tool that takes any GTP engine: {katago.player_spec(installed, visits=1)}")
    return 0


def _add_katago_command(sub) -> None:
    kata = sub.add_parser("katago", help="install KataGo (PyPI's katrain wheel) as an opponent and teacher",
                          description="KataGo 1.18.1 and its b10 network, from PyPI's katrain 1.20.0 wheel, into a "
                                      "cache; it needs OpenCL (on a CPU: apt-get install -y pocl-opencl-icd). Then "
                                      "the player katago:visits=N plays in arena, tactics and gtp.")
    actions = kata.add_subparsers(dest="action", required=True)
    install = actions.add_parser("install", help="download, extract, configure and start it once")
    install.add_argument("--dir", default=None, help="where (default $ALPHAGO_JAX_KATAGO_DIR or "
                                                     "~/.cache/alphago_jax/katago)")
    install.add_argument("--wheel", default=None, help="a katrain wheel already downloaded (default: pip download)")
    install.set_defaults(run=_katago_install)


def _add_train_command(sub) -> None:
    train = sub.add_parser(
        "train", help="AlphaGo Zero: self-play, training, evaluation, checkpoints",
        description="Train an AlphaGo Zero agent by self-play. The default preset, tiny, learns 5x5 Go "
                    "on a 2-core CPU in 3 to 7 minutes. A killed run continues with --resume. Every "
                    "device JAX sees is used (data parallel); for several hosts add --distributed.")
    train.add_argument("--preset", default=None, help="tiny (default), smoke, 9x9 or 19x19")
    train.add_argument("--out", default="runs/zero", help="output directory (default runs/zero)")
    train.add_argument("--resume", action="store_true",
                       help="continue the run in --out from its latest checkpoint (with its own settings)")
    train.add_argument("--iterations", type=int, default=None, help="iterations in all (default: the preset's)")
    train.add_argument("--seed", type=int, default=None, help="random seed (default: the preset's)")
    train.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                       help="override a setting, e.g. --set num_simulations=32 --set optimizer.learning_rate=0.01")
    train.add_argument("--time-limit", type=float, default=None, metavar="SECONDS",
                       help="a budget of wall time: the run plans its iterations from the times it measures so "
                            "that it ends, final evaluation and checkpoint included, within SECONDS plus at most "
                            "one iteration; the final evaluation is shortened or skipped when time is short, and "
                            "the log says so (--resume continues)")
    train.add_argument("--init", default=None, metavar="FILE_OR_RUN",
                       help="start the network (only the network) from a network file, a training run's directory "
                            "or an `alphago-jax warm-start` directory")
    train.add_argument("--no-progress", action="store_true", help="no progress bar")
    train.add_argument("--distributed", action="store_true",
                       help="multi-host: call jax.distributed.initialize() first (also ALPHAGO_JAX_DISTRIBUTED=1)")
    train.set_defaults(run=_train)


def _add_warm_start_command(sub) -> None:
    warm = sub.add_parser(
        "warm-start", help="AlphaGo Zero's network by supervised learning on game records, for train --init",
        description="Fit the dual network of a preset (and --set sizes) to SGF game records: the policy to "
                    "each recorded move, the value to the result; or, where a teacher's arrays lie beside the "
                    "records (experiments/katago_teacher.py, tactical_teacher.py), to the teacher's policy, value, "
                    "ownership and score; "
                    "records that say who owns what at the end (TB/TW) also train the ownership and score heads. "
                    "Writes OUT/network.msgpack; start a run from it with `alphago-jax train --init OUT` and the "
                    "same sizes.")
    warm.add_argument("--records", required=True,
                      help="SGF records: a folder (searched recursively), an .sgf file or an archive; a folder "
                           "with a teacher's .npz beside each record (experiments/katago_teacher.py) trains on "
                           "the teacher's outputs (distillation; --set ownership_weight=, score_weight= for "
                           "those heads)")
    warm.add_argument("--out", required=True, help="output directory")
    warm.add_argument("--preset", default=None, help="the network sizes and board of this preset (default tiny)")
    warm.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", help="as for train")
    warm.add_argument("--init", default=None, metavar="FILE_OR_RUN",
                      help="start from this network (a network file, a run or a warm-start directory) rather than "
                           "a fresh one; heads it lacks start fresh")
    warm.add_argument("--steps", type=int, default=2000, help="training steps (default 2000)")
    warm.add_argument("--batch", type=int, default=256, help="positions per step (default 256)")
    warm.add_argument("--learning-rate", type=float, default=1e-3,
                      help="AdamW's learning rate (default 1e-3; lower to fine-tune an --init network)")
    warm.add_argument("--heads-only", action="store_true",
                      help="with --init and records with ownership targets (a teacher's, or TB/TW at the end): "
                           "fit only the ownership and score heads (--set "
                           "ownership_weight=, score_weight= turn them on), the rest of the network fixed, so "
                           "its moves and values stay --init's (--learning-rate: Adam's, e.g. 1e-2)")
    warm.add_argument("--keep-policy", action="store_true",
                      help="with --init: the policy targets are the --init network's own move probabilities on each "
                           "position, not the recorded moves, so it learns the records' results (and ownership and "
                           "score) while keeping its moves; the held-out top-1 is then agreement with --init")
    warm.add_argument("--keep-values", action="store_true",
                      help="with --init: the value (and ownership and score) targets are the --init network's own "
                           "on each position, so it learns the records' or a teacher's moves while keeping its "
                           "judgement of the positions")
    warm.add_argument("--anchor", default=None, metavar="RECORDS",
                      help="with --init: positions of these SGF records, with the --init network's own outputs as "
                           "targets, are drawn beside the --records' (learning without forgetting), so it learns "
                           "the new targets and keeps what it did elsewhere")
    warm.add_argument("--anchor-share", type=_share, default=0.5, metavar="FRACTION",
                      help="the share of each batch drawn from --anchor (default 0.5)")
    warm.add_argument("--held-out", type=_held_out, default=0.05, metavar="FRACTION",
                      help="share of the games held out and scored, never trained on: every round(1/FRACTION)-th "
                           "game (default 0.05; 0 holds none out; raise it when there are few games; with "
                           "--steps 0, 1 scores --init's network on every game)")
    warm.add_argument("--no-progress", action="store_true", help="no progress bar")
    warm.set_defaults(run=_warm_start)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="alphago-jax", description="AlphaGo, AlphaGo Zero, GRAVE and MCPS as batched JAX functions.")
    compile_cache.add_options(parser)
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="play a batch of random legal games with the JAX rules")
    demo.add_argument("--size", type=int, default=9, help="board size, 2 to 19 (default 9)")
    demo.add_argument("--batch", type=int, default=256, help="games played at once (default 256)")
    demo.add_argument("--komi", type=float, default=7.5, help="points given to white (default 7.5)")
    demo.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    demo.set_defaults(run=_demo)

    _add_train_command(sub)
    _add_warm_start_command(sub)

    plot = sub.add_parser("plot", help="draw a training run's loss, win-rate and Elo curves to PNG")
    plot.add_argument("run_dir", help="the --out directory of a training run")
    plot.set_defaults(run=_plot)

    export = sub.add_parser("export", help="write a training run's network to one file for the players")
    export.add_argument("run_dir", help="the --out directory of a training run")
    export.add_argument("file", help="the network file to write (e.g. zero-9x9.msgpack)")
    export.add_argument("--iteration", type=int, default=None, help="the checkpoint (default: the latest)")
    export.add_argument("--network", choices=("latest", "best"), default="latest",
                        help="the network being trained (default) or the gated best one")
    export.add_argument("--note", default=None, help="a description stored in the file (e.g. the training command)")
    export.set_defaults(run=_export)
    cache = sub.add_parser("cache", help="show or clear the compilation cache and the kept search programs",
                           description="Where the compilation cache is, what it holds and its bound "
                                       f"(${compile_cache.MAX_MB_ENV}, default {compile_cache.DEFAULT_MAX_MB} MB "
                                       "for JAX's programs and as much for the kept search programs; the least "
                                       "recently used go first).")
    cache.add_argument("--clear", action="store_true", help="remove everything in it")
    cache.set_defaults(run=_cache)
    from alphago_jax.play.commands import add_commands  # gtp, arena, play

    add_commands(sub)
    _add_dataset_command(sub)
    _add_katago_command(sub)
    from alphago_jax.alphago import pipeline_commands  # sl-train, rollout-train, rl-train, value-train

    pipeline_commands.add_commands(sub)
    for command in sub.choices.values():  # the cache options after the subcommand too (alphago-jax gtp --no-compile-cache)
        compile_cache.add_options(command, default=argparse.SUPPRESS)  # not given there: the main parser's value stays
    return parser


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        # Before anything compiles: a compiled search is read back from disk on the next start.
        compile_cache.configure(args.compile_cache)
        return args.run(args)
    except ValueError as e:  # bad sizes, unknown games: a clear message, no traceback
        print(f"alphago-jax {args.command}: error: {e}", file=sys.stderr)
        return 2
    except OSError as e:  # a full disk, a read-only or vanished directory, a process that did not arrive
        where = f"{e.filename}: " if e.filename else ""
        resume = ("; the checkpoints already written are intact, and --resume continues once that is mended"
                  if args.command == "train" and os.path.isdir(args.out) else "")
        print(f"alphago-jax {args.command}: error: {where}{e.strerror or e}{resume}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
