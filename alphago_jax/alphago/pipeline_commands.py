"""The command-line subcommands of the AlphaGo pipeline: ``sl-train``, ``rollout-train``,
``rl-train`` and ``value-train``.

``add_commands(subparsers)`` adds them to the ``alphago-jax`` parser. Each trains into an
``--out`` run directory (checkpoints, ``metrics.csv``, ``metrics.png``); a killed run continues
with ``--resume`` (with its own saved settings; ``--steps`` / ``--iterations`` may extend it).
Any setting can be changed with ``--set NAME=VALUE`` (see ``--help`` of each command for the
names). The usual layout puts the four runs side by side in one pipeline directory, which the
AlphaGo player reads (``alphago:dir=DIR``)::

    alphago-jax sl-train      --data data/gnugo9-positions --out runs/alphago9/sl
    alphago-jax rollout-train --data data/gnugo9-positions --out runs/alphago9/rollout
    alphago-jax rl-train      --sl runs/alphago9/sl --out runs/alphago9/rl
    alphago-jax value-train   --dir runs/alphago9 --out runs/alphago9/value

Heavy imports wait inside the handlers, so ``alphago-jax --help`` stays fast.
"""

from __future__ import annotations

import pathlib
import time


def _config(cls, kind: str, args, fixed: dict):
    """The run's settings: the saved ones when resuming (else the defaults), then ``--set``,
    then the explicit flags in ``fixed`` (those not None)."""
    from alphago_jax.train.jobs import saved_config

    overrides = {}
    for text in args.set:
        name, sep, value = text.partition("=")
        if not sep or not name.strip():
            raise ValueError(f"--set takes NAME=VALUE, got {text!r}")
        overrides[name.strip()] = value.strip()
    saved = saved_config(args.out, kind, cls) if args.resume else None
    given = {k: v for k, v in fixed.items() if v is not None}
    return cls.build(saved, overrides, given), saved is not None


def _report(title: str, result, started: float, lines: list[str]) -> int:
    print(f"{title} finished in {time.perf_counter() - started:.0f} s")
    for line in lines:
        print(line)
    print(f"checkpoint:  {result.checkpoint}")
    print(f"metrics:     {result.metrics}")
    if result.plot is not None:
        print(f"plots:       {result.plot}")
    return 0


def _fmt(summary: dict, key: str, spec: str = ".3f") -> str:
    return format(summary[key], spec) if key in summary else "n/a"


def _require_data(args) -> None:
    if not args.data:
        raise ValueError("--data DIR is required: a dataset directory ('alphago-jax dataset build')")


def run_sl(args) -> int:
    from alphago_jax.alphago import supervised

    _require_data(args)
    config, resuming = _config(supervised.SLConfig, supervised.KIND_SL, args, {"steps": args.steps})
    print(f"SL policy on {args.data}: PolicyNet({config.filters} filters, {config.layers} layers), "
          f"{config.steps} steps of {config.batch}; writing to {args.out}" + (" (resuming)" if resuming else ""))
    t0 = time.perf_counter()
    result = supervised.train_sl(config, args.data, args.out, resume=args.resume, progress=not args.no_progress)
    s = result.summary
    return _report("SL policy", result, t0, [f"held-out top-1 accuracy {_fmt(s, 'held_out_accuracy')}, "
                                             f"loss {_fmt(s, 'held_out_loss')}"])


def run_rollout(args) -> int:
    from alphago_jax.alphago import supervised

    _require_data(args)
    config, resuming = _config(supervised.RolloutConfig, supervised.KIND_ROLLOUT, args, {"steps": args.steps})
    print(f"rollout policy on {args.data}: {config.steps} steps of {config.batch}; writing to {args.out}"
          + (" (resuming)" if resuming else ""))
    t0 = time.perf_counter()
    result = supervised.train_rollout(config, args.data, args.out, resume=args.resume, progress=not args.no_progress)
    s = result.summary
    return _report("rollout policy", result, t0, [
        f"held-out top-1 accuracy {_fmt(s, 'held_out_accuracy')}, loss {_fmt(s, 'held_out_loss')}; "
        f"{_fmt(s, 'rollout_us_per_move', '.1f')} µs per rollout move ({config.speed_batch} game(s) per call)"])


def run_rl(args) -> int:
    from alphago_jax.alphago import reinforce

    sl = str(pathlib.Path(args.sl).absolute()) if args.sl else None
    config, resuming = _config(reinforce.RLConfig, reinforce.KIND, args,
                               {"iterations": args.iterations, "sl_run": sl})
    print(f"RL policy from {config.sl_run}: {config.iterations} iterations of {2 * config.pairs} games against "
          f"the opponent pool; writing to {args.out}" + (" (resuming)" if resuming else ""))
    t0 = time.perf_counter()
    result = reinforce.train_rl(config, args.out, resume=args.resume, progress=not args.no_progress)
    s = result.summary
    line = (f"against the SL policy: win rate {_fmt(s, 'win_sl')} [{_fmt(s, 'win_sl_low')}, {_fmt(s, 'win_sl_high')}] "
            f"in {s.get('games_sl', 0)} games") if s else "no evaluation in this session"
    return _report("RL policy", result, t0, [line])


def run_value(args) -> int:
    from alphago_jax.alphago import value
    from alphago_jax.alphago.runs import SUBDIRS

    runs = {"sl_run": args.sl, "rl_run": args.rl, "rollout_run": args.rollout}
    if args.dir:
        for field, role in (("sl_run", "policy"), ("rl_run", "rl"), ("rollout_run", "rollout")):
            runs[field] = runs[field] or str(pathlib.Path(args.dir) / SUBDIRS[role])
    runs = {k: str(pathlib.Path(v).absolute()) if v else None for k, v in runs.items()}
    config, resuming = _config(value.ValueConfig, value.KIND, args, {"steps": args.steps, "games": args.games, **runs})
    print(f"value network: {config.games} self-play games of the RL policy ({config.rl_run}), one position each, "
          f"then {config.steps} steps of {config.batch}; writing to {args.out}" + (" (resuming)" if resuming else ""))
    t0 = time.perf_counter()
    result = value.train_value(config, args.out, resume=args.resume, progress=not args.no_progress)
    s = result.summary
    line = f"held-out MSE: value network {_fmt(s, 'value_mse', '.4f')}"
    if "rollout_mse" in s:
        line += f", rollout policy ({s['rollouts']} rollouts per position) {s['rollout_mse']:.4f}"
    return _report("value network", result, t0, [line + f" on {s.get('positions', 0)} positions"])


def _command(subparsers, name: str, run, summary: str, description: str, length: str, inputs) -> None:
    """One subcommand: its ``inputs`` (``(flag, help)``, each a path, default None), then the
    options every job has (``--out``, ``--resume``, ``--steps`` / ``--iterations``, ``--set``)."""
    p = subparsers.add_parser(name, help=summary, description=description + " A killed run continues with --resume.")
    for flag, text in inputs:
        p.add_argument(flag, default=None, type=int if flag == "--games" else None, help=text)
    p.add_argument("--out", required=True, help="the run directory (checkpoints, metrics.csv, metrics.png)")
    p.add_argument("--resume", action="store_true",
                   help="continue the run in --out from its latest checkpoint, with its own settings")
    p.add_argument(f"--{length}", type=int, default=None, help=f"{length} in all (extends a resumed run)")
    p.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                   help="change a setting, e.g. --set batch=128 (an unknown name lists the known ones)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(run=run)


def add_commands(subparsers) -> None:
    """Add ``sl-train``, ``rollout-train``, ``rl-train`` and ``value-train``."""
    data = ("--data", "a dataset directory ('alphago-jax dataset build'), required")
    _command(subparsers, "sl-train", run_sl, "AlphaGo's SL policy network from a position dataset",
             "Train AlphaGo's SL policy network on the positions of a dataset: cross-entropy, SGD with momentum, "
             "learning rate 0.003 halved every decay_every steps, 8-fold random symmetry augmentation, top-1 "
             "accuracy on held-out games.", "steps", [data])
    _command(subparsers, "rollout-train", run_rollout, "AlphaGo's fast rollout policy from a position dataset",
             "Train AlphaGo's linear rollout policy on a dataset's positions; reports its held-out top-1 accuracy "
             "and its measured microseconds per rollout move.", "steps", [data])
    _command(subparsers, "rl-train", run_rl, "AlphaGo's RL policy: REINFORCE against an opponent pool",
             "Improve the SL policy by REINFORCE: batched games against a randomly drawn earlier version of "
             "itself (the opponent pool), z = +1 / -1 weighting the log-likelihood of its moves; reports the win "
             "rate against the SL policy.", "iterations",
             [("--sl", "the SL policy's run directory (sl-train --out)")])
    _command(subparsers, "value-train", run_value, "AlphaGo's value network from self-play of the RL policy",
             "Generate one position per self-play game (SL moves up to a random step, one random move, then the "
             "RL policy to the end), train the value network by MSE on the outcome with 8-fold augmentation, and "
             "compare its held-out MSE with the rollout policy's estimate of the same positions.", "steps",
             [("--dir", "a pipeline directory holding sl/, rl/ and rollout/ runs"),
              ("--sl", "the SL policy's run (default DIR/sl)"), ("--rl", "the RL policy's run (default DIR/rl)"),
              ("--rollout", "the rollout policy's run, for the comparison (default DIR/rollout)"),
              ("--games", "self-play games, one position each (default 4096)")])


__all__ = ["add_commands", "run_rl", "run_rollout", "run_sl", "run_value"]
