"""A warm start for AlphaGo Zero's network: supervised learning on game records.

The dual network learns from records what it would otherwise first learn from weak self-play:
its policy head the recorded move, its value head the recorded result (for the player to
move: +1 won, -1 lost, 0 a draw or no result). ``record_examples`` replays the records
through the JAX rules in one batched ``lax.scan`` and returns AlphaGo Zero's 17 planes of every
position; ``train_supervised`` fits a ``DualResNet`` to them with random symmetries::

    data = record_examples(["games/", "more.zip"], size=9, komi=7.5)
    result = train_supervised(data, net, steps=4000, batch=256, optimizer=OptimizerConfig())
    save_network(path, result.state.variables, ...)    # then `alphago-jax train --init path`

``fit_heads`` fits only the ownership and score heads of a fixed network to a teacher's
outputs (``teacher_examples``), leaving its moves and values as they were; ``own_policy`` makes
a network's own move probabilities the policy targets, so that it learns the records' results
while it keeps its moves, and ``own_values`` the reverse (its values, the records' or a
teacher's moves); ``own_targets`` makes all its outputs the targets of other positions,
drawn beside the new ones (``train_supervised``'s ``anchor``), so that it keeps its play there.

Records come from folders, SGF files and archives as ``alphago-jax dataset build`` reads them
(``sgf.iter_records``) and are parsed with ``sgf.load``; a record with setup stones, another board size or a move
the rules reject is skipped (counted in ``RecordExamples.skipped``, with the reason of the
first few). Data flows records -> ``replay.Examples`` -> ``TrainState``: nothing here knows
about self-play.
"""

from __future__ import annotations

import pathlib
from typing import Callable, Iterable, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax

from alphago_jax import features, games, sgf
from alphago_jax.games.history import WithHistory
from alphago_jax.nets import DualOutput, policy_value, policy_value_apply
from alphago_jax.train import replay
from alphago_jax.games.base import BLACK, WHITE
from alphago_jax.sgf import iter_records, winner_of
from alphago_jax.train.optimizer import OptimizerConfig, TrainState, init_train_state
from alphago_jax.zero import learner


class RecordExamples(NamedTuple):
    """Positions of game records as training examples (numpy), and what was left out.

    Attributes:
      examples: ``replay.Examples``: planes uint8[N, S, S, 17], policy float32[N, S*S+1] (the
        recorded move, one-hot), value float32[N] (the result for the player to move); where
        some record says who owns what at the end (``GameRecord.black_area``), also ownership
        int8[N, S*S] and score float32[N] (area margin) for the player to move, unknown
        (``replay.NO_OWNER``, NaN) in the positions of the records that do not say.
      game: int32[N], the index of each position's record among those kept.
      games: records kept.
      skipped: records left out; ``reasons``: the first few reasons, ``"file: why"``.
      owned: records kept that have ownership and score targets.
    """

    examples: replay.Examples
    game: np.ndarray
    games: int
    skipped: int
    reasons: tuple[str, ...]
    owned: int = 0


def _moves_of(record: sgf.GameRecord, size: int) -> list[int] | str:
    """The record's actions, or why it cannot be used."""
    if record.size != size:
        return f"board size {record.size}, not {size}"
    if record.black_setup or record.white_setup:
        return "setup stones"
    if [c for c, _ in record.moves] != [WHITE if i % 2 else BLACK for i in range(len(record.moves))]:
        return "the colours do not alternate from black"
    return [a for _, a in record.moves]


def record_examples(sources: Iterable, *, size: int = 9, komi: float = 7.5, batch: int = 256,
                    max_records: int | None = None, inputs: str = "stones") -> RecordExamples:
    """Every position (before each recorded move) of the SGF records in ``sources``.

    Args:
      sources: folders (searched recursively), SGF files and archives (``sgf.iter_records``).
      size, komi: the game the planes are made for (komi does not enter the planes).
      batch: records replayed together in one compiled scan.
      max_records: read at most this many records (None: all).
      inputs: the input planes made (``features.zero.INPUTS``).

    Raises:
      ValueError: ``sources`` hold no SGF file, or no record that can be used (the first
        reasons named).
    """
    game = WithHistory(games.make("go", size=size, komi=komi), boards=8)
    actions, results, owners, reasons, skipped, read = [], [], [], [], 0, 0
    for name, data, unreadable in iter_records(sources):
        if max_records is not None and read >= max_records:
            break
        read += 1
        moves = unreadable
        if unreadable is None:
            try:
                record = sgf.load(data)
                moves = _moves_of(record, size)
            except (sgf.SGFError, ValueError) as e:
                moves = str(e)
        if isinstance(moves, str):
            skipped += 1
            if len(reasons) < 5:
                reasons.append(f"{name}: {moves}")
            continue
        actions.append(moves)
        results.append(winner_of(record.result))
        owners.append(_final_margin(record))
    if not read:
        raise ValueError(f"{', '.join(map(str, sources))}: no .sgf files")
    if not actions:
        raise ValueError(f"no usable {size}x{size} game records ({'; '.join(reasons)})")
    length = max(len(m) for m in actions)
    padded = np.full((len(actions), length), -1, np.int32)
    for i, m in enumerate(actions):
        padded[i, :len(m)] = m
    replay_fn = _replayer(game, inputs)
    planes, policy, value, aux, kept_games, owned = [], [], [], [], [], 0
    for lo in range(0, len(actions), batch):
        chunk = padded[lo:lo + batch]
        n = len(chunk)
        chunk = np.concatenate([chunk, np.full((batch - n, length), -1, np.int32)])  # one compiled shape
        p, legal_so_far, to_play = (np.asarray(x)[:n] for x in replay_fn(jnp.asarray(chunk)))
        winner = np.asarray(results[lo:lo + n], np.float32)
        for g in range(n):
            ok = legal_so_far[g]
            if not ok[:len(actions[lo + g])].all():
                skipped += 1
                if len(reasons) < 5:
                    reasons.append(f"record {lo + g}: a move the rules reject at move {int(np.argmin(ok)) + 1}")
                continue
            t = len(actions[lo + g])
            planes.append(p[g, :t])
            policy.append(np.eye(game.num_actions, dtype=np.float32)[chunk[g, :t]])
            value.append(winner[g] * to_play[g, :t].astype(np.float32))
            aux.append(_aux_targets(owners[lo + g], to_play[g, :t], game.num_actions - 1))
            owned += owners[lo + g] is not None
            kept_games.append(np.full(t, len(kept_games), np.int32))
    if not planes:
        raise ValueError(f"no usable {size}x{size} game records ({'; '.join(reasons)})")
    examples = replay.Examples(planes=np.concatenate(planes), policy=np.concatenate(policy),
                               value=np.concatenate(value),
                               ownership=np.concatenate([a[0] for a in aux]) if owned else None,
                               score=np.concatenate([a[1] for a in aux]) if owned else None)
    return RecordExamples(examples, np.concatenate(kept_games), len(kept_games), skipped, tuple(reasons), owned)


def _final_margin(record: sgf.GameRecord) -> tuple[np.ndarray, float] | None:
    """(final owner int8[S*S], area margin for black) of a record that says who owns what."""
    owner = record.final_owner()
    return None if owner is None else (owner, float(owner.sum()) - record.komi)


def _aux_targets(final: tuple[np.ndarray, float] | None, to_play: np.ndarray,
                 points: int) -> tuple[np.ndarray, np.ndarray]:
    """(ownership int8[T, S*S], score float32[T]) for the player to move in each of T positions
    (``to_play`` +1 / -1); unknown (``replay.NO_OWNER``, NaN) without ``final``."""
    if final is None:
        return (np.full((len(to_play), points), replay.NO_OWNER, np.int8),
                np.full(len(to_play), np.nan, np.float32))
    owner, margin = final
    side = to_play.astype(np.int8)[:, None]
    return owner[None, :] * side, (margin * to_play).astype(np.float32)


def teacher_examples(folder, *, size: int = 9, komi: float = 7.5, batch: int = 256,
                     inputs: str = "stones") -> RecordExamples:
    """Positions of records written with a teacher's outputs beside each: ``NAME.sgf`` and
    ``NAME.npz`` (``experiments/katago_teacher.py``: policy float16[T, A], value, score
    float32[T], ownership float16[T, S*S], all for the player to move before each of the T
    moves; or, with ``index`` int32[K], for the K positions of the record it names, as
    ``experiments/tactical_teacher.py`` writes them). The targets are the teacher's, not the
    recorded move and result: distillation.

    Raises:
      ValueError: no such pair in ``folder``, a record the rules reject, arrays whose length
        is not the record's (or the index's), or an index past the record's positions.
    """
    folder = pathlib.Path(folder)
    records = [p for p in sorted(folder.rglob("*.sgf")) if p.with_suffix(".npz").is_file()]
    if not records:
        raise ValueError(f"{folder}: no SGF record with a teacher's .npz beside it")
    data = record_examples(records, size=size, komi=komi, batch=batch, inputs=inputs)
    if data.skipped:
        raise ValueError(f"{folder}: {data.skipped} teacher records cannot be used ({'; '.join(data.reasons)})")
    arrays, rows, games, first = [], [], [], 0
    for g, (path, moves) in enumerate(zip(records, np.bincount(data.game, minlength=data.games))):
        with np.load(path.with_suffix(".npz")) as a:
            arrays.append({k: a[k] for k in ("policy", "value", "score", "ownership")})
            index = a["index"].astype(np.int64) if "index" in a else np.arange(moves)
        labelled = arrays[-1]["value"].shape[0]
        if labelled != len(index) or (len(index) and not 0 <= index.min() <= index.max() < moves):
            raise ValueError(f"{path.with_suffix('.npz')}: {labelled} positions labelled, of the record's {moves}"
                             + (f" at {index.tolist()}" if len(index) != moves else ""))
        rows.append(first + index)
        games.append(np.full(len(index), g, np.int32))
        first += moves
    rows = np.concatenate(rows)
    planes = data.examples.planes
    planes = planes if np.array_equal(rows, np.arange(len(planes))) else planes[rows]  # all labelled: no copy
    joined = {k: np.concatenate([a[k] for a in arrays]).astype(np.float32) for k in arrays[0]}
    examples = replay.Examples(planes=planes, policy=joined["policy"], value=joined["value"],
                               ownership=np.clip(joined["ownership"], -1, 1), score=joined["score"])
    return data._replace(examples=examples, game=np.concatenate(games), owned=data.games)


def has_teacher(folder) -> bool:
    """Whether ``folder`` holds a record with a teacher's arrays beside it (``teacher_examples``)."""
    folder = pathlib.Path(folder)
    return folder.is_dir() and any(p.with_suffix(".sgf").is_file() for p in folder.rglob("*.npz"))


def _replayer(game: WithHistory, inputs: str) -> Callable:
    """Jitted ``actions int32[B, T] (-1 past the end) -> (planes uint8[B, T, S, S, C] of ``inputs``,
    legal bool[B, T] (every move so far was legal), to_play int8[B, T])``."""
    planes_fn = features.zero.planes_function(inputs)
    planes_of, step, legal_of = (jax.vmap(f) for f in (planes_fn, game.step, game.legal_action_mask))

    @jax.jit
    def run(actions):
        b = actions.shape[0]
        start = jax.tree_util.tree_map(lambda x: jnp.broadcast_to(x, (b,) + x.shape), game.init())

        def one(carry, a):
            states, ok = carry
            playing = a >= 0
            legal = legal_of(states)[jnp.arange(b), jnp.maximum(a, 0)]
            ok = ok & (legal | ~playing)
            out = (planes_of(states).astype(jnp.uint8), ok, states.to_play)
            stepped = step(states, jnp.maximum(a, 0))
            states = jax.tree_util.tree_map(
                lambda new, old: jnp.where(playing.reshape((b,) + (1,) * (new.ndim - 1)), new, old), stepped, states)
            return (states, ok), out

        _, (planes, ok, to_play) = jax.lax.scan(one, (start, jnp.ones((b,), bool)), actions.T)
        return tuple(jnp.swapaxes(x, 0, 1) for x in (planes, ok, to_play))

    return run


class SupervisedResult(NamedTuple):
    """What ``train_supervised`` returns: the trained state and its numbers.

    Attributes:
      state: the ``TrainState`` after the last step (``state.variables`` for a network file).
      metrics: each of ``learner.zero_loss``'s metrics as float32[steps] (numpy).
      held_out: ``{"policy_accuracy", "value_loss", "positions"}`` on the held-out games (empty
        when none), and ``evaluate_heads``' figures where they say who owns what.
    """

    state: TrainState
    metrics: dict
    held_out: dict


def split_games(data: RecordExamples, fraction: float) -> tuple[replay.Examples, replay.Examples | None]:
    """(training, held-out) examples: every ``round(1 / fraction)``-th game held out (None if 0;
    every game at 1, to score a network without training it)."""
    if fraction <= 0:
        return data.examples, None
    every = max(int(round(1 / fraction)), 1)
    held = data.game % every == every - 1
    pick = lambda mask: jax.tree_util.tree_map(lambda x: x[mask], data.examples)  # noqa: E731
    return pick(~held), pick(held)


def _training_split(data: RecordExamples, fraction: float, steps: int):
    """``split_games``, refusing to train on nothing: every game held out scores a network, with 0 steps."""
    train, test = split_games(data, fraction)
    if steps and not train.value.shape[0]:
        raise ValueError(f"held-out share {fraction:g} holds every game out, leaving none to train on: it scores "
                         "a network (--init) with 0 steps (--steps 0)")
    return train, test


def train_supervised(data: RecordExamples, net, *, steps: int, batch: int = 256,
                     optimizer: OptimizerConfig = OptimizerConfig(kind="adamw", learning_rate=1e-3, weight_decay=1e-4),
                     value_weight: float = 0.25, ownership_weight: float = 0.0, score_weight: float = 0.0,
                     held_out: float = 0.05, init: dict | None = None, seed: int = 0,
                     anchor: replay.Examples | None = None, anchor_share: float = 0.5,
                     progress: bool = True) -> SupervisedResult:
    """Fit ``net`` (a ``DualResNet``) to the records' moves and results.

    Each step draws ``batch`` positions uniformly with replacement from the training games and
    maps each by a random board symmetry (``learner.train_step``). ``value_weight`` scales the
    value loss: a record's result says less about one of its positions than a move does (the
    AlphaGo papers weigh it down for the same reason, against overfitting whole games).

    Args:
      data: ``record_examples``'s output; ``held_out``: the fraction of games kept out of
        training and scored at the end.
      ownership_weight, score_weight: the auxiliary heads' terms (``learner.loss_fn``), for
        examples with those targets (``teacher_examples``).
      init: variables to start from (default: a fresh ``net``).
      anchor: examples drawn beside ``data``'s, ``round(anchor_share * batch)`` of each batch
        (``own_targets`` of ``init``: what it should keep).
    """
    from tqdm.auto import tqdm

    train, test = _training_split(data, held_out, steps)
    key = jax.random.PRNGKey(seed)
    size = train.planes.shape[1]
    variables = init if init is not None else net.init(key, jnp.zeros((1, size, size, train.planes.shape[-1])))
    state = init_train_state(variables, optimizer)
    pools = (train,) if anchor is None else (train, _like(anchor, train))
    sizes = (batch,) if anchor is None else (batch - round(anchor_share * batch), round(anchor_share * batch))
    pools = jax.tree_util.tree_map(jnp.asarray, pools)

    @jax.jit  # the examples are an argument: closed over, they would be folded into the program
    def step(state, pools, key):
        k_rows, k_aug = jax.random.split(key)
        keys = jax.random.split(k_rows, len(pools)) if len(pools) > 1 else [k_rows]
        rows = [jax.random.randint(k, (n,), 0, pool.value.shape[0]) for k, n, pool in zip(keys, sizes, pools)]
        drawn = [jax.tree_util.tree_map(lambda x, r=r: x[r], pool) for r, pool in zip(rows, pools)]
        picked = jax.tree_util.tree_map(lambda *x: jnp.concatenate(x), *drawn)
        return learner.train_step(state, picked, net, optimizer, key=k_aug, value_weight=value_weight,
                                  ownership_weight=ownership_weight, score_weight=score_weight)

    collected = []
    for k in tqdm(jax.random.split(key, steps), desc="supervised warm start", disable=not progress,
                  dynamic_ncols=True):
        state, metrics = step(state, pools, k)
        collected.append(metrics)
    return SupervisedResult(state, _stacked(collected), _held_out_scores(net, state.variables, test))


def _held_out_scores(net, variables: dict, test: replay.Examples | None) -> dict:
    """``evaluate_examples`` on the held-out ``test`` ({} when None), with ``evaluate_heads``'
    figures beside them where some of its positions say who owns what and the network has the heads."""
    if test is None:
        return {}
    scores = evaluate_examples(net, variables, test)
    owned = test.ownership is not None and np.any(np.abs(test.ownership) <= 1)  # NO_OWNER lies outside [-1, 1]
    if owned and (net.ownership or net.score):
        scores.update(evaluate_heads(net, variables, test))
    return scores


def _like(anchor: replay.Examples, examples: replay.Examples) -> replay.Examples:
    """``anchor`` with the targets ``examples`` have and no others, in their dtypes, so that one
    batch joins both; a target the anchor lacks (a network without the head) is unknown there
    (``replay.NO_OWNER``, NaN), which the loss leaves out."""
    n = anchor.value.shape[0]
    unknown = {"ownership": lambda x: np.full((n,) + x.shape[1:], replay.NO_OWNER),
               "score": lambda x: np.full((n,), np.nan)}
    fields = {}
    for name in ("planes", "policy", "value", "ownership", "score"):
        mine, theirs = getattr(anchor, name), getattr(examples, name)
        if theirs is not None:
            mine = unknown[name](theirs) if mine is None else mine
            fields[name] = np.asarray(mine).astype(np.asarray(theirs).dtype)
    return replay.Examples(**fields)


def _stacked(collected: list[dict]) -> dict:
    """Each step's metrics (dicts of scalars) as ``{name: float32[steps]}`` (numpy)."""
    return {k: np.asarray([float(m[k]) for m in collected], np.float32) for k in collected[0]} if collected else {}


AUX_HEADS = ("ownership_conv", "score_out")
"""The parameters of ``DualResNet``'s auxiliary heads (ownership, score)."""


def fit_heads(data: RecordExamples, net, variables: dict, *, steps: int, batch: int = 256,
              learning_rate: float = 1e-2, ownership_weight: float = 1.0, score_weight: float = 0.02,
              held_out: float = 0.05, seed: int = 0, progress: bool = True) -> SupervisedResult:
    """Fit only the auxiliary heads of ``net`` (``AUX_HEADS`` present in ``variables``) to the
    ownership and score of ``data`` (a teacher's, ``teacher_examples``, or records that say who
    owns what at the end, ``record_examples``); every other parameter and the batch
    statistics stay as they are, so the network's moves and values do not change.

    The heads read the trunk in inference mode (``train=False``: the batch statistics fixed), so
    what they learn is what they will see in play. Each step draws ``batch`` positions with a
    random symmetry; Adam at ``learning_rate`` on the heads' parameters alone.

    Returns: a ``SupervisedResult`` (its ``state.opt_state`` is Adam's over the heads);
    ``held_out``: ``evaluate_heads`` on the held-out games.
    """
    from tqdm.auto import tqdm

    params = variables["params"]
    heads = {k: v for k, v in params.items() if k in AUX_HEADS}
    if not heads:
        raise ValueError(f"the network has none of the heads {AUX_HEADS} to fit (set ownership=true, score=true)")
    train, test = _training_split(data, held_out, steps)
    if train.ownership is None or train.score is None:
        raise ValueError("fitting the heads needs ownership and score targets: a teacher's (teacher_examples) "
                         "or records that say who owns what at the end (TB/TW)")
    frozen = {k: v for k, v in params.items() if k not in AUX_HEADS}
    batch_stats = variables.get("batch_stats", {})
    adam = optax.adam(learning_rate)
    examples = jax.tree_util.tree_map(jnp.asarray, train)
    count = examples.value.shape[0]

    def loss(heads, picked):
        out = net.apply({"params": {**frozen, **heads}, "batch_stats": batch_stats}, picked.planes, train=False)
        o = 0.0 if out.ownership is None else learner.ownership_loss(out.ownership, picked.ownership)
        sc = 0.0 if out.score is None else learner.score_loss(out.score, picked.score)
        return ownership_weight * o + score_weight * sc, {"ownership_loss": o, "score_loss": sc}

    @jax.jit
    def step(heads, opt_state, examples, key):
        k_rows, k_aug = jax.random.split(key)
        rows = jax.random.randint(k_rows, (batch,), 0, count)
        picked = learner.augment_batch(k_aug, jax.tree_util.tree_map(lambda x: x[rows], examples))
        (value, metrics), grads = jax.value_and_grad(loss, has_aux=True)(heads, picked)
        updates, opt_state = adam.update(grads, opt_state, heads)
        return optax.apply_updates(heads, updates), opt_state, {"loss": value, **metrics}

    opt_state = adam.init(heads)
    collected = []
    for k in tqdm(jax.random.split(jax.random.PRNGKey(seed), steps), desc="fitting the heads",
                  disable=not progress, dynamic_ncols=True):
        heads, opt_state, metrics = step(heads, opt_state, examples, k)
        collected.append(metrics)
    metrics = _stacked(collected)
    state = TrainState(params={**frozen, **heads}, batch_stats=batch_stats, opt_state=opt_state,
                       step=jnp.asarray(steps, jnp.int32))
    return SupervisedResult(state, metrics, evaluate_heads(net, state.variables, test) if test is not None else {})


def evaluate_heads(net, variables, examples: replay.Examples, batch: int = 1024) -> dict:
    """``{"ownership_loss", "ownership_agreement", "score_error", "positions"}`` of the
    auxiliary heads against ``examples``' known targets (``replay.NO_OWNER`` and NaN skipped): the
    mean squared error of the ownership, the share of points the target gives to one side
    (|target| > 0.5) that the head gives to the same side, and the mean absolute error of the
    score in points."""
    apply = jax.jit(lambda v, x: net.apply(v, x, train=False))
    sq = agree = decided = known = err = scored = 0.0
    n = examples.value.shape[0]
    for lo in range(0, n, batch):
        out = apply(variables, jnp.asarray(examples.planes[lo:lo + batch]))
        if out.ownership is not None:
            target = np.asarray(examples.ownership[lo:lo + batch], np.float32)
            mask = np.abs(target) <= 1
            ownership = np.asarray(out.ownership)
            sq += float(np.sum(((ownership - target) ** 2)[mask]))
            known += float(mask.sum())
            sure = mask & (np.abs(target) > 0.5)
            decided += float(sure.sum())
            agree += float((np.sign(ownership) == np.sign(target))[sure].sum())
        if out.score is not None:
            target = np.asarray(examples.score[lo:lo + batch], np.float32)
            mask = np.isfinite(target)
            err += float(np.sum(np.abs(np.asarray(out.score) - target)[mask]))
            scored += float(mask.sum())
    return {"ownership_loss": sq / max(known, 1), "ownership_agreement": agree / max(decided, 1),
            "score_error": err / max(scored, 1), "positions": int(n)}


def _own_outputs(net, variables: dict, planes, batch: int) -> dict:
    """The network's own outputs on ``planes`` (eval mode), numpy: ``policy`` float32[N, A] (move
    probabilities), ``value`` float32[N], and ``ownership``, ``score`` where it has those heads."""
    @jax.jit
    def apply(v, x):
        out = net.apply(v, x)
        logits, value = policy_value(out)
        aux = {} if not isinstance(out, DualOutput) else {k: getattr(out, k) for k in ("ownership", "score")
                                                          if getattr(out, k) is not None}
        return {"policy": jax.nn.softmax(logits, axis=-1), "value": value, **aux}

    chunks = [jax.device_get(apply(variables, jnp.asarray(planes[lo:lo + batch])))
              for lo in range(0, len(planes), batch)]
    return {k: np.concatenate([c[k] for c in chunks]).astype(np.float32) for k in chunks[0]} if chunks else {}


def _own(net, variables: dict, examples: replay.Examples, heads: tuple[str, ...], batch: int) -> replay.Examples:
    """``examples`` with the targets named in ``heads`` that the network outputs replaced by its
    own outputs on each position (eval mode)."""
    if not examples.value.shape[0]:
        return examples
    out = _own_outputs(net, variables, examples.planes, batch)
    return examples.replace(**{h: out[h] for h in heads if h in out})


def own_policy(net, variables: dict, examples: replay.Examples, batch: int = 1024) -> replay.Examples:
    """``examples`` with the policy targets replaced by the network's own move probabilities
    (float32[N, A], eval mode) on each position: trained on them, a network keeps its moves while
    it learns the examples' values (and ownership and score), as in learning without forgetting."""
    return _own(net, variables, examples, ("policy",), batch)


def own_values(net, variables: dict, examples: replay.Examples, batch: int = 1024) -> replay.Examples:
    """``examples`` with the value targets (float32[N]), and the ownership and score targets where
    the network has those heads, replaced by its own outputs on each position (eval mode): trained
    on them, a network learns the examples' moves while it keeps its judgement of the positions."""
    return _own(net, variables, examples, ("value", "ownership", "score"), batch)


def own_targets(net, variables: dict, examples: replay.Examples, batch: int = 1024) -> replay.Examples:
    """``examples`` with every target the network's own output on its position (eval mode): the
    policy, the value and, where it has the heads, ownership and score (None where it has not).
    Drawn beside new targets in training (``train_supervised``'s ``anchor``), they hold the
    network to what it did on positions the new targets do not cover: learning without forgetting."""
    out = _own_outputs(net, variables, examples.planes, batch)
    return replay.Examples(planes=examples.planes, policy=out["policy"], value=out["value"],
                           ownership=out.get("ownership"), score=out.get("score"))


def evaluate_examples(net, variables, examples: replay.Examples, batch: int = 1024) -> dict:
    """``{"policy_accuracy", "value_loss", "positions"}`` of ``variables`` on ``examples``
    (the recorded move as the network's top move; squared error of the value)."""
    apply = jax.jit(policy_value_apply(net))  # a network's auxiliary heads have no targets here
    hits, sq, n = 0.0, 0.0, examples.value.shape[0]
    for lo in range(0, n, batch):
        logits, value = apply(variables, jnp.asarray(examples.planes[lo:lo + batch]))
        target = np.asarray(examples.policy[lo:lo + batch])
        hits += float(np.sum(np.argmax(np.asarray(logits), -1) == np.argmax(target, -1)))
        sq += float(np.sum((np.asarray(value) - np.asarray(examples.value[lo:lo + batch])) ** 2))
    return {"policy_accuracy": hits / max(n, 1), "value_loss": sq / max(n, 1), "positions": int(n)}


__all__ = ["AUX_HEADS", "RecordExamples", "SupervisedResult", "evaluate_examples", "evaluate_heads", "fit_heads",
           "has_teacher", "own_policy", "own_targets", "own_values", "record_examples", "split_games",
           "teacher_examples", "train_supervised"]
