"""JAX's persistent compilation cache for the ``alphago-jax`` command, and programs kept whole.

A player's search takes many seconds to compile in every new process (docs/benchmarks.md, "The
first move"); the command turns JAX's disk cache on before anything compiles::

    compile_cache.configure()                  # the default place, or $ALPHAGO_JAX_CACHE_DIR
    compile_cache.configure("/scratch/cache")  # --compile-cache DIR
    compile_cache.configure(compile_cache.OFF) # --no-compile-cache

Where the cache goes, first rule that applies: (1) ``--compile-cache DIR`` or
``--no-compile-cache``; (2) a cache JAX already has (``JAX_COMPILATION_CACHE_DIR`` or the calling
code), kept as it is: that is how child processes share their parent's; (3)
``ALPHAGO_JAX_CACHE_DIR`` (a directory, or ``off``); (4) ``$XDG_CACHE_HOME/alphago_jax`` (an
absolute one), else ``~/.cache/alphago_jax``, else off. Never inside the installed package
(``ValueError``); a relative directory is made absolute. The command caches every program
(``MIN_COMPILE_SECONDS``), not only those that took a second to compile.

JAX's cache still traces and lowers every function in each new process; ``kept`` also keeps the
compiled executables of a player's search in the cache's ``programs`` folder, run later without
tracing. Each part is bounded by ``ALPHAGO_JAX_CACHE_MAX_MB`` (``evict``: least recently used
first; JAX's own bound fails on directories written without it). ``alphago-jax cache`` reports
(``usage``) and clears (``clear``) both.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import os
import pathlib
import sys
from typing import MutableMapping

ENV = "ALPHAGO_JAX_CACHE_DIR"
"""The environment variable that moves the cache (a directory) or turns it off (``off``)."""

OFF = "off"
"""The word that turns the cache off, in ``ALPHAGO_JAX_CACHE_DIR`` or ``--compile-cache``."""

JAX_ENV = "JAX_COMPILATION_CACHE_DIR"
"""JAX's own variable: a cache it names is kept (rule 2)."""

MAX_MB_ENV = "ALPHAGO_JAX_CACHE_MAX_MB"
"""The environment variable that bounds JAX's cache and the kept programs, each, in MB."""

DEFAULT_MAX_MB = 2048
"""Each part's bound without ``ALPHAGO_JAX_CACHE_MAX_MB``: a few hundred player programs."""

MIN_COMPILE_SECONDS = 0.0
"""``jax_persistent_cache_min_compile_time_secs`` for the command: cache every program."""

PACKAGE_DIR = pathlib.Path(__file__).resolve().parent


@dataclasses.dataclass(frozen=True)
class CacheChoice:
    """Where the compilation cache goes, and by which rule.

    Attributes:
      path: the directory, None when the cache is off.
      source: ``"flag"``, ``"jax"`` (a cache JAX already had), ``"env"`` (``ALPHAGO_JAX_CACHE_DIR``)
        or ``"default"``.
    """

    path: pathlib.Path | None
    source: str


def default_dir(environ: MutableMapping[str, str] | None = None) -> pathlib.Path | None:
    """``$XDG_CACHE_HOME/alphago_jax`` (an absolute ``XDG_CACHE_HOME`` only), else
    ``~/.cache/alphago_jax``; None where the home directory is unknown."""
    environ = os.environ if environ is None else environ
    xdg = environ.get("XDG_CACHE_HOME", "")
    if xdg and os.path.isabs(xdg):
        return pathlib.Path(xdg) / "alphago_jax"
    try:
        home = pathlib.Path(environ["HOME"]) if environ.get("HOME") else pathlib.Path.home()
    except (KeyError, RuntimeError):  # no HOME and no password entry
        return None
    return home / ".cache" / "alphago_jax" if home.is_absolute() else None


def _checked(text: str, what: str) -> pathlib.Path:
    """``text`` as an absolute directory, refused inside the package."""
    path = pathlib.Path(text).expanduser().resolve()
    if path == PACKAGE_DIR or PACKAGE_DIR in path.parents:
        raise ValueError(f"{what} {text!r} is inside the alphago_jax package ({PACKAGE_DIR}); "
                         f"give a directory outside it")
    return path


def choose(option: str | None = None, environ: MutableMapping[str, str] | None = None,
           jax_dir: str | None = None) -> CacheChoice:
    """Where the cache goes by the module docstring's rules, changing nothing: ``option`` is
    ``--compile-cache DIR`` (``OFF``: ``--no-compile-cache``; None: not given), ``environ`` the
    environment (default ``os.environ``), ``jax_dir`` the directory JAX already has.
    ``ValueError`` for a directory inside the package."""
    environ = os.environ if environ is None else environ
    if option is not None:
        if option.strip().lower() == OFF:
            return CacheChoice(None, "flag")
        return CacheChoice(_checked(option, "--compile-cache"), "flag")
    if jax_dir:
        return CacheChoice(pathlib.Path(jax_dir), "jax")
    value = environ.get(ENV, "").strip()
    if value.lower() == OFF:
        return CacheChoice(None, "env")
    if value:
        return CacheChoice(_checked(value, ENV), "env")
    return CacheChoice(default_dir(environ), "default")


def configure(option: str | None = None, environ: MutableMapping[str, str] | None = None) -> CacheChoice:
    """Set JAX's persistent compilation cache for this process, before anything compiles; returns
    the choice (``path`` None when off), ``ValueError`` for a directory inside the package.

    A cache JAX already had is left alone. Otherwise the directory is created and set, with
    ``MIN_COMPILE_SECONDS`` unless JAX's own variable sets one; a directory that cannot be
    created turns the cache off with a warning on stderr (stdout is GTP's). The choice is written
    to ``environ`` in JAX's variables, for the processes the command starts.
    """
    import jax

    environ = os.environ if environ is None else environ
    choice = choose(option, environ, jax.config.jax_compilation_cache_dir)
    if choice.source == "jax":
        return choice
    if choice.path is not None:
        try:
            choice.path.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            print(f"alphago-jax: compilation cache off: cannot create {choice.path}: {e.strerror or e}",
                  file=sys.stderr)
            choice = CacheChoice(None, choice.source)
    if choice.path is None:
        jax.config.update("jax_enable_compilation_cache", False)
        environ["JAX_ENABLE_COMPILATION_CACHE"] = "false"
        return choice
    jax.config.update("jax_enable_compilation_cache", True)
    jax.config.update("jax_compilation_cache_dir", str(choice.path))
    environ[JAX_ENV] = str(choice.path)  # child processes: rule 2
    limit = max_bytes(environ)
    evict(choice.path, limit, "*-cache")
    evict(choice.path / PROGRAMS_SUBDIR, limit)
    if "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS" not in environ:
        jax.config.update("jax_persistent_cache_min_compile_time_secs", MIN_COMPILE_SECONDS)
        environ["JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS"] = str(MIN_COMPILE_SECONDS)
    # jax_persistent_cache_min_entry_size_bytes stays JAX's default, 0: entries of every size.
    return choice


def max_bytes(environ: MutableMapping[str, str] | None = None) -> int:
    """The bound of each part of the cache, in bytes (``ALPHAGO_JAX_CACHE_MAX_MB``; ``ValueError``
    unless a positive number of MB)."""
    environ = os.environ if environ is None else environ
    text = environ.get(MAX_MB_ENV, "").strip()
    if not text:
        return DEFAULT_MAX_MB << 20
    try:
        mb = float(text)
    except ValueError:
        mb = -1.0
    if not mb > 0:
        raise ValueError(f"{MAX_MB_ENV}={text!r}: give the cache's bound as a positive number of MB")
    return int(mb * (1 << 20))


def _files(directory: pathlib.Path, pattern: str) -> list[pathlib.Path]:
    return [p for p in directory.glob(pattern) if p.is_file()] if directory.is_dir() else []


def _last_used(path: pathlib.Path) -> float:
    info = path.stat()
    return max(info.st_atime, info.st_mtime)


def evict(directory: pathlib.Path, limit: int, pattern: str = "*.pkl") -> list[pathlib.Path]:
    """Remove the files matching ``pattern`` in ``directory`` used longest ago (later of access and
    modification times) until the rest fit in ``limit`` bytes; returns those removed. A JAX
    entry's ``-atime`` companion goes with it."""
    try:
        files = sorted(((_last_used(p), p.stat().st_size, p) for p in _files(directory, pattern)),
                       key=lambda entry: entry[0])
    except FileNotFoundError:  # another process evicting at the same time: leave it to that one
        return []
    total = sum(size for _, size, _ in files)
    removed = []
    for _, size, path in files:
        if total <= limit:
            break
        total -= size
        path.unlink(missing_ok=True)
        if path.name.endswith("-cache"):
            path.with_name(path.name[: -len("-cache")] + "-atime").unlink(missing_ok=True)
        removed.append(path)
    return removed


def usage(path: pathlib.Path) -> dict[str, tuple[int, int]]:
    """``{"jax": (files, bytes), "programs": (files, bytes)}`` of the cache at ``path``."""
    parts = {"jax": _files(path, "*-cache"), "programs": _files(path / PROGRAMS_SUBDIR, "*.pkl")}
    return {name: (len(files), sum(p.stat().st_size for p in files)) for name, files in parts.items()}


def clear(path: pathlib.Path) -> int:
    """Empty the cache at ``path`` (JAX's entries and the kept programs); returns the files removed."""
    files = [*_files(path, "*-cache"), *_files(path, "*-atime"), *_files(path / PROGRAMS_SUBDIR, "*")]
    for p in files:
        p.unlink(missing_ok=True)
    return len(files)


def add_options(parser, default=None) -> None:
    """Add ``--compile-cache DIR`` and ``--no-compile-cache`` (one ``compile_cache`` value:
    the directory, ``OFF``, or ``default``) to an ``argparse`` parser."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--compile-cache", metavar="DIR", default=default,
                       help=f"keep JAX's compiled programs in DIR (default ${ENV}, else "
                            f"$XDG_CACHE_HOME/alphago_jax or ~/.cache/alphago_jax; '{OFF}' turns it off)")
    group.add_argument("--no-compile-cache", dest="compile_cache", action="store_const", const=OFF, default=default,
                       help=f"compile everything afresh, keep nothing (also {ENV}={OFF})")


# ------------------------------------------------------------------------------ kept programs

PROGRAMS_SUBDIR = "programs"
"""Where ``kept`` programs go, inside the compilation cache directory."""


@functools.lru_cache(maxsize=1)
def _environment_digest() -> str:
    """What a compiled program depends on besides its function and arguments: this package's
    source, the versions of JAX, XLA and the libraries it builds programs with, XLA's flags,
    the backend and its device."""
    import importlib.metadata

    import jax

    h = hashlib.sha256()
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
        h.update(str(path.relative_to(PACKAGE_DIR)).encode())
        h.update(path.read_bytes())
    device = jax.devices()[0]
    versions = [f"{p}={importlib.metadata.version(p)}" for p in ("jax", "jaxlib", "flax", "mctx")]
    for part in (*versions, jax.default_backend(), device.device_kind,
                 str(jax.device_count()), os.environ.get("XLA_FLAGS", ""), str(jax.config.jax_enable_x64)):
        h.update(part.encode() + b"\0")
    return h.hexdigest()


def _programs_dir() -> pathlib.Path | None:
    import jax

    if not jax.config.jax_enable_compilation_cache or not jax.config.jax_compilation_cache_dir:
        return None
    return pathlib.Path(jax.config.jax_compilation_cache_dir) / PROGRAMS_SUBDIR


class Kept:
    """A jitted function whose compiled programs are kept on disk, so that a later process
    calls them without tracing, lowering or compiling (``kept``)."""

    def __init__(self, jitted, name: str, key: str, static_argnums: tuple[int, ...] = ()):
        self._jitted, self._name, self._key, self._static = jitted, name, key, frozenset(static_argnums)
        self._loaded: dict = {}

    def __call__(self, *args):
        import jax

        dynamic = tuple(a for i, a in enumerate(args) if i not in self._static)
        static = tuple(a for i, a in enumerate(args) if i in self._static)
        leaves, treedef = jax.tree_util.tree_flatten(dynamic)
        signature = (str(treedef), tuple(str(jax.typeof(x)) for x in leaves), repr(static))
        program = self._loaded.get(signature)
        if program is None:
            program = self._loaded[signature] = self._load_or_compile(args, signature)
        return program(*dynamic)

    def _load_or_compile(self, args, signature):
        """The compiled program of ``args``: read back from the programs directory, else
        compiled and written there. A file that cannot be read back (another JAX, a torn
        write) is replaced."""
        import pickle

        from jax.experimental import serialize_executable

        directory = _programs_dir()
        digest = hashlib.sha256(repr((self._name, self._key, signature, _environment_digest())).encode()).hexdigest()
        path = directory / f"{self._name}-{digest[:40]}.pkl"
        try:
            with open(path, "rb") as f:
                program = serialize_executable.deserialize_and_load(*pickle.load(f))
            os.utime(path)  # used now: the last to be evicted
            return program
        except FileNotFoundError:
            pass
        except Exception as e:  # noqa: BLE001 - any unreadable entry is recompiled, never fatal
            print(f"alphago-jax: recompiling {self._name}: kept program {path.name} unreadable ({e})", file=sys.stderr)
        compiled = self._compile(args)
        try:
            directory.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            with open(tmp, "wb") as f:
                pickle.dump(serialize_executable.serialize(compiled), f)
            os.replace(tmp, path)  # readers see a whole file or none
            evict(directory, max_bytes())
        except (OSError, ValueError, NotImplementedError, pickle.PicklingError) as e:
            print(f"alphago-jax: could not keep {self._name}'s program: {e}", file=sys.stderr)
        return compiled

    def _compile(self, args):
        """The program compiled by XLA here and now, kept out of JAX's cache both ways (on CPU an
        executable read back from it serializes without its code): a name of its own makes JAX's
        lookup miss, a minimum compile time of forever stops its write."""
        import jax

        jitted = self._jitted

        def program(*a):
            return jitted(*a)

        program.__name__ = program.__qualname__ = f"{self._name}_{os.urandom(8).hex()}"
        minimum = jax.config.jax_persistent_cache_min_compile_time_secs
        jax.config.update("jax_persistent_cache_min_compile_time_secs", float("inf"))
        try:
            return jax.jit(program, static_argnums=tuple(sorted(self._static))).lower(*args).compile()
        finally:
            jax.config.update("jax_persistent_cache_min_compile_time_secs", minimum)


def kept(jitted, name: str, key: str | None, static_argnums: tuple[int, ...] = ()):
    """``jitted`` (a ``jax.jit`` function with ``static_argnums``) with its compiled programs kept in
    the cache's ``programs`` folder, one per argument signature, read back and run without tracing.

    The function is not hashed (only this package's source, JAX's versions and flags and the
    device are), so ``key`` must describe everything it closes over (rules, settings, the
    network's architecture), e.g. their reprs; ``name`` is part of the file name. ``key`` None, or
    the cache off: ``jitted`` as it is. The folder is trusted as JAX's own cache is.
    """
    if key is None or _programs_dir() is None:
        return jitted
    return Kept(jitted, name, key, static_argnums)
