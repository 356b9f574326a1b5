"""Checkpoints of a training run on orbax, for resuming after the process is killed.

A checkpoint is one pytree of arrays (network parameters, optax state, replay buffer, RNG key,
step counter, ...) plus a JSON-able metadata dict (the run's configuration, say), saved under
an integer step::

    ckpt = Checkpointer("runs/zero-9x9", kind="zero", keep=3)
    ckpt.save(step, {"params": params, "opt": opt_state, "replay": buffer, "key": key},
              metadata={"config": dataclasses.asdict(config)})
    ...
    if ckpt.latest_step() is not None:                 # after a restart
        step, state, metadata = ckpt.restore(target=fresh_state)

Layout: ``<directory>/<step>/`` holds orbax's ``state`` item (the arrays) and ``meta`` item (a
JSON record: format, the run's ``kind``, the step, the caller's metadata, and every leaf's
path, shape, dtype and CRC-32). Orbax writes a step into ``<step>.orbax-checkpoint-tmp*`` and
renames it into place once complete, so a kill at any moment leaves the earlier checkpoints as
they were. Checkpoints beyond the last ``keep`` are first renamed into ``<directory>/.deleting/``
and only then removed, so a kill during that clean-up cannot leave a half-deleted step behind.
Leftover temporaries and ``.deleting`` are removed when a writable ``Checkpointer`` opens a
directory: a directory has one writer at a time (readers open it with ``read_only=True``).

Every problem with what is on disk raises ``CheckpointError`` naming the path: files that are
not checkpoints, a checkpoint of another kind of run, a missing or unreadable record, arrays
that cannot be read or fail their checksum, a target whose structure, shapes or dtypes differ
from the saved ones. Restoring never writes, moves or deletes anything.
"""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import zlib
from typing import Any, Mapping, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import orbax.checkpoint as ocp

FORMAT = "alphago_jax.checkpoint"
VERSION = 1
_STATE = "state"
_META = "meta"
_META_FILE = "metadata"  # the file orbax's JsonCheckpointHandler writes inside the ``meta`` item
_TMP_MARK = ".orbax-checkpoint-tmp"
_DELETING = ".deleting"


class CheckpointError(ValueError):
    """A checkpoint directory, or one checkpoint in it, is not what it should be."""


class Restored(NamedTuple):
    """What ``Checkpointer.restore`` returns.

    Attributes:
      step: the step restored.
      state: the pytree, in the target's structure (jax arrays).
      metadata: the dict given to ``save``.
    """

    step: int
    state: Any
    metadata: dict


def _is_key(x) -> bool:
    """Whether ``x`` is a typed PRNG key array (``jax.random.key``), not raw uint32 key data."""
    return hasattr(x, "dtype") and jnp.issubdtype(x.dtype, jax.dtypes.prng_key)


def _to_storable(tree):
    """Typed keys -> their uint32 key data (orbax stores plain arrays); other leaves as arrays."""
    return jax.tree_util.tree_map(lambda x: jax.random.key_data(x) if _is_key(x) else jnp.asarray(x), tree)


def _leaf_records(tree) -> list[list]:
    """[[path, shape, dtype], ...] for every leaf of a storable tree (arrays or ShapeDtypeStructs)."""
    return [
        [jax.tree_util.keystr(path), list(np.shape(x)), str(np.dtype(x.dtype))]
        for path, x in jax.tree_util.tree_leaves_with_path(tree)
    ]


def _key_names(path) -> list[str]:
    """A leaf's path as plain names, the same whether a level is a dict, a NamedTuple, a
    dataclass or a list: orbax restores without a target as dicts and lists."""
    return [str(getattr(k, "key", getattr(k, "name", getattr(k, "idx", k)))) for k in path]


def _host_value(x) -> np.ndarray:
    """The whole array on this host; an array split over several processes is gathered."""
    if isinstance(x, jax.Array) and not x.is_fully_addressable:
        from jax.experimental import multihost_utils

        return np.asarray(multihost_utils.process_allgather(x, tiled=True))
    return np.asarray(x)


def _checksums(tree) -> list[list]:
    """[[key names, CRC-32 of the leaf's bytes], ...]. Orbax's zstd chunks carry no checksum:
    without this, a damaged data file can restore as different numbers without any error."""
    return [
        [_key_names(path), zlib.crc32(np.ascontiguousarray(_host_value(x)).reshape(-1).view(np.uint8))]
        for path, x in jax.tree_util.tree_leaves_with_path(tree)
    ]


def _abstract(x):
    """The ShapeDtypeStruct orbax restores one leaf of the target into (on the default device)."""
    if _is_key(x):
        if not isinstance(x, jax.Array):
            raise TypeError("a typed PRNG key in a restore target must be a key array, e.g. jax.random.key(0)")
        x = jax.random.key_data(x)
    elif not isinstance(x, (jax.Array, jax.ShapeDtypeStruct)):
        x = jnp.asarray(x)  # as ``save`` stores numpy arrays and Python scalars
    sharding = getattr(x, "sharding", None) or jax.sharding.SingleDeviceSharding(jax.devices()[0])
    return jax.ShapeDtypeStruct(np.shape(x), x.dtype, sharding=sharding)


class Checkpointer:
    """The checkpoints of one training run in ``directory``; keeps the last ``keep``.

    Args:
      directory: created if absent. Must hold nothing but this module's checkpoints.
      kind: the kind of run (e.g. ``"zero"``, ``"sl"``): saved with every checkpoint, and a
        directory holding checkpoints of another kind is refused.
      keep: how many of the most recent checkpoints ``save`` keeps (at least 1).
      read_only: only list and restore (e.g. an evaluator reading a running job's
        checkpoints): nothing is created or removed, and ``save`` raises.

    Raises:
      CheckpointError: the directory holds other files, or a checkpoint whose record is
        missing, unreadable, of another format or of another kind.
    """

    def __init__(self, directory: str | os.PathLike, *, kind: str, keep: int = 3, read_only: bool = False):
        if keep < 1:
            raise ValueError(f"keep must be at least 1, got {keep}")
        if not kind:
            raise ValueError("kind must be a non-empty string naming the kind of run, e.g. 'zero'")
        self.directory = pathlib.Path(directory).absolute()
        self.kind = kind
        self.keep = keep
        self.read_only = read_only
        if self.directory.exists() and not self.directory.is_dir():
            raise CheckpointError(f"{self.directory}: not a directory")
        self._scan()  # refuse a foreign directory before touching anything in it
        # Restoring reads one step's ``state`` item directly: no manager state to keep in sync
        # with a directory that another process may be writing.
        self._reader = ocp.Checkpointer(ocp.StandardCheckpointHandler())
        self._manager = None
        if read_only:
            return
        self._remove_leftovers()
        self._manager = ocp.CheckpointManager(
            self.directory,
            options=ocp.CheckpointManagerOptions(
                max_to_keep=keep,
                enable_async_checkpointing=False,  # save returns with the step on disk
                create=True,
                cleanup_tmp_directories=False,  # done above, synchronously
                todelete_subdir=_DELETING,
            ),
        )

    # -- directory contents ------------------------------------------------------------------

    def _scan(self) -> list[int]:
        """Validate the directory; the steps of its complete checkpoints, ascending."""
        if not self.directory.exists():
            return []
        steps, foreign = [], []
        for entry in sorted(self.directory.iterdir()):
            if entry.name.isdigit() and entry.is_dir():
                steps.append(int(entry.name))
            elif _TMP_MARK in entry.name or entry.name == _DELETING:
                continue  # an interrupted save or clean-up: never a checkpoint
            else:
                foreign.append(entry.name)
        if foreign:
            shown = ", ".join(foreign[:5]) + (", ..." if len(foreign) > 5 else "")
            raise CheckpointError(
                f"{self.directory}: not a checkpoint directory of alphago_jax: it holds {shown} "
                "(expected only step directories); choose another directory"
            )
        steps.sort()
        for step in steps:
            self._record(step)
        return steps

    def _remove_leftovers(self) -> None:
        if not self.directory.exists():
            return
        for entry in self.directory.iterdir():
            if _TMP_MARK not in entry.name and entry.name != _DELETING:
                continue
            if entry.is_dir():
                shutil.rmtree(entry, ignore_errors=True)
            else:
                entry.unlink(missing_ok=True)

    def _step_path(self, step: int) -> pathlib.Path:
        return self.directory / str(step)

    def _record(self, step: int) -> dict:
        """The validated JSON record of one step (raises CheckpointError naming the file)."""
        path = self._step_path(step) / _META / _META_FILE
        try:
            record = json.loads(path.read_text())
        except FileNotFoundError:
            raise CheckpointError(
                f"{path}: missing: {self._step_path(step)} is corrupted or not an alphago_jax checkpoint"
            ) from None
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
            raise CheckpointError(f"{path}: unreadable checkpoint record ({e}): the checkpoint is corrupted") from None
        if not isinstance(record, dict) or record.get("format") != FORMAT:
            raise CheckpointError(f"{path}: not an alphago_jax checkpoint record (format is not {FORMAT!r})")
        if record.get("version") != VERSION:
            raise CheckpointError(
                f"{path}: checkpoint format version {record.get('version')!r}, this code reads {VERSION}"
            )
        if record.get("kind") != self.kind:
            raise CheckpointError(
                f"{self._step_path(step)}: a checkpoint of a {record.get('kind')!r} run, not {self.kind!r}; "
                "choose another directory or the matching kind"
            )
        leaves, crcs = record.get("leaves"), record.get("crc32")
        well_formed = isinstance(leaves, list) and isinstance(crcs, list) and len(crcs) == len(leaves)
        if record.get("step") != step or not well_formed:
            raise CheckpointError(
                f"{path}: inconsistent checkpoint record (step {record.get('step')!r} in directory {step})"
            )
        return record

    # -- public API --------------------------------------------------------------------------

    def all_steps(self) -> list[int]:
        """The steps of the complete checkpoints on disk, ascending."""
        return self._scan()

    def latest_step(self) -> int | None:
        """The newest complete checkpoint's step, or None if there is none."""
        steps = self.all_steps()
        return steps[-1] if steps else None

    def metadata(self, step: int | None = None) -> dict:
        """The metadata dict saved with ``step`` (default: the latest), without reading arrays."""
        return self._record(self._resolve(step))["metadata"]

    def save(self, step: int, state, metadata: Mapping[str, Any] | None = None) -> pathlib.Path:
        """Write ``state`` and ``metadata`` as checkpoint ``step``; keep the last ``keep``.

        Args:
          step: a non-negative int larger than every step already saved.
          state: a pytree of arrays (jax or numpy, any dtype; typed PRNG keys are stored as
            their uint32 key data and restored as typed keys). Containers can be dicts, lists,
            tuples, NamedTuples (optax states) and flax struct dataclasses.
          metadata: a JSON-serialisable dict, returned by ``restore`` (as JSON gives it back:
            tuples become lists).

        Returns the checkpoint's directory. The call returns once it is complete on disk.
        """
        if self._manager is None:
            raise CheckpointError(f"{self.directory}: opened read-only, cannot save")
        step = int(step)
        if step < 0:
            raise ValueError(f"step must be non-negative, got {step}")
        latest = self.latest_step()
        if latest is not None and step <= latest:
            raise CheckpointError(
                f"{self._step_path(step)}: cannot save step {step}: {self.directory} already holds step {latest}"
            )
        metadata = dict(metadata or {})
        storable = _to_storable(state)
        record = {
            "format": FORMAT,
            "version": VERSION,
            "kind": self.kind,
            "step": step,
            "metadata": metadata,
            "leaves": _leaf_records(storable),
            "crc32": _checksums(storable),
        }
        try:
            json.dumps(record)  # fail before writing anything
        except (TypeError, ValueError) as e:
            raise TypeError(f"checkpoint metadata must be JSON-serialisable: {e}") from None
        args = ocp.args.Composite(**{_STATE: ocp.args.StandardSave(storable), _META: ocp.args.JsonSave(record)})
        saved = self._manager.save(step, args=args)
        self._manager.wait_until_finished()
        if not saved:
            raise CheckpointError(f"{self._step_path(step)}: orbax declined to save step {step}")
        # Steps beyond ``keep`` were renamed into .deleting by orbax; remove them now.
        shutil.rmtree(self.directory / _DELETING, ignore_errors=True)
        return self._step_path(step)

    def restore(self, step: int | None = None, *, target=None) -> Restored:
        """Read checkpoint ``step`` (default: the latest).

        Args:
          step: the step to restore, None for the latest.
          target: a pytree like the saved state (arrays, or ``jax.ShapeDtypeStruct``s for
            leaves other than typed keys), whose structure the result takes: optax states
            come back as their NamedTuples, typed keys as typed keys. None returns the tree
            as orbax stored it (dicts and lists of arrays, keys as uint32 key data).

        Returns ``Restored(step, state, metadata)``.

        Raises:
          CheckpointError: no such checkpoint, a corrupted or foreign one, or a target whose
            leaf paths, shapes or dtypes differ from the saved ones.
        """
        step = self._resolve(step)
        record = self._record(step)
        path = self._step_path(step)
        if target is not None:
            abstract = jax.tree_util.tree_map(_abstract, target)
            expected = _leaf_records(abstract)
            if expected != record["leaves"]:
                difference = _first_difference(record["leaves"], expected)
                raise CheckpointError(f"{path}: the target does not match the checkpoint: {difference}")
            item = ocp.args.StandardRestore(abstract)
        else:
            item = ocp.args.StandardRestore()
        try:
            restored = self._reader.restore(path / _STATE, args=item)
        except Exception as e:  # orbax and tensorstore raise many types for damaged files
            # The first line only: tensorstore appends the whole store's spec.
            detail = (str(e).splitlines() or [""])[0][:300]
            raise CheckpointError(
                f"{path}: cannot read the checkpoint's arrays, it is corrupted ({type(e).__name__}: {detail})"
            ) from e
        saved = {tuple(names): crc for names, crc in record["crc32"]}
        now = _checksums(restored)
        if len(now) != len(saved):
            raise CheckpointError(f"{path}: restored {len(now)} arrays, the checkpoint's record lists {len(saved)}")
        for names, crc in now:
            if saved.get(tuple(names)) != crc:
                raise CheckpointError(
                    f"{path}: array {'/'.join(names)} does not match its checksum: its data files are corrupted"
                )
        if target is not None:
            restored = _check_and_rewrap(restored, target, path)
        return Restored(step, restored, record["metadata"])

    def close(self) -> None:
        """Wait for orbax to finish and release it (also on leaving a ``with`` block)."""
        if self._manager is not None:
            self._manager.wait_until_finished()
            self._manager.close()
        self._reader.close()

    def __enter__(self) -> Checkpointer:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _resolve(self, step: int | None) -> int:
        steps = self.all_steps()
        if not steps:
            raise CheckpointError(f"{self.directory}: no checkpoint to restore")
        if step is None:
            return steps[-1]
        if int(step) not in steps:
            raise CheckpointError(f"{self._step_path(step)}: no checkpoint at step {step} (saved steps: {steps})")
        return int(step)


def _first_difference(saved: list, expected: list) -> str:
    if len(saved) != len(expected):
        return f"{len(saved)} leaves saved, the target has {len(expected)}"
    for (p, s, d), (tp, ts, td) in zip(saved, expected):
        if (p, s, d) != (tp, ts, td):
            return f"saved leaf {p} {d}{s} vs target leaf {tp} {td}{ts}"
    return "unknown difference"


def _check_and_rewrap(restored, target, path: pathlib.Path):
    """The restored leaves in ``target``'s structure, key data turned back into typed keys."""
    leaves = jax.tree_util.tree_leaves(restored)
    treedef = jax.tree_util.tree_structure(target)
    if len(leaves) != treedef.num_leaves:
        raise CheckpointError(f"{path}: restored {len(leaves)} leaves, the target has {treedef.num_leaves}")
    targets = jax.tree_util.tree_leaves(target)
    out = [
        jax.random.wrap_key_data(x, impl=jax.random.key_impl(t)) if _is_key(t) else x
        for x, t in zip(leaves, targets)
    ]
    return jax.tree_util.tree_unflatten(treedef, out)
