"""KataGo, a far stronger GTP engine than GNU Go, installed from PyPI: an opponent and a teacher.

    alphago-jax katago install                      # once: 164 MB into the cache, under a minute
    alphago-jax arena default katago:visits=1,size=9 --size 9 --games 100
    alphago-jax tactics default katago:visits=1,size=9

KataGo 1.18.1 and its b10 network (``b10c384h6nbttflrs``) ship inside PyPI's ``katrain`` 1.20.0
wheel (``katrain/KataGo/katago``, ``katrain/models/``). ``install`` downloads the wheel with pip
(or takes one already downloaded), extracts the binary, an AppImage, with its own
``--appimage-extract`` (containers have no FUSE to mount it), and writes:

- a GTP config: this project's rules (area scoring, positional superko, no suicide), one
  search thread, no pondering, resignation at a 5% win rate held for three moves (which
  ``KataGo.command`` turns off unless asked);
- a tuning file for KataGo's OpenCL kernels. On a CPU, KataGo runs on Debian's OpenCL,
  ``pocl-opencl-icd``, where its own tuner crashes (pocl 3.1, in the ``transformerRMSNorm``
  stage, minutes in). The file is in the tuner's format (``opencltuner.cpp``: ``VERSION=13``
  then 21 lines) with ``DEFAULTS=1`` on each kernel's line, a key that sets no parameter, so
  every kernel keeps its reference parameters: KataGo then answers its first move within 6 to 10 s.

``KataGo.command(visits, board_size)`` is its command line at a number of visits per move
(``-override-config``); the registry's ``katago:visits=N,size=N`` player runs it, one engine per
board size. ``board_size`` sizes KataGo's network buffer: a 19x19 buffer costs a 9x9 game as
much as a 19x19 one, and KataGo 1.18.1 under pocl died on a 9x9 board in one.

Measured here (2 cores, pocl 3.1): one evaluation (1 visit) takes about 0.17 s on 9x9, 0.5 s on
13x13 and 0.6 to 0.9 s on 19x19.

Layer: no JAX; nothing of the package but ``gtp_client`` (the base layer).
"""

from __future__ import annotations

import dataclasses
import glob
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import zipfile
from typing import Any

from alphago_jax.gtp_client import GTPClient

WHEEL = "katrain==1.20.0"
"""The PyPI release that carries KataGo 1.18.1 and its b10 network."""

BINARY_MEMBER = "katrain/KataGo/katago"
MODEL_MEMBER = "katrain/models/b10c384h6nbttflrs.bin.gz"

ENV = "ALPHAGO_JAX_KATAGO_DIR"
"""The environment variable that moves the install (default ``~/.cache/alphago_jax/katago``)."""

OPENCL_VENDORS = "/etc/OpenCL/vendors"
OPENCL_HINT = "apt-get install -y pocl-opencl-icd (a CPU's OpenCL), or a GPU's OpenCL driver"

# The project's rules (games/go.py): Tromp-Taylor area scoring, positional superko, no suicide.
CONFIG = """\
# Written by alphago_jax.katago.install: KataGo as an opponent under this project's rules.
homeDataDir = {root}/home
openclTunerFile = {tuning}
logDir = {root}/logs
logToStderr = false
logAllGTPCommunication = false
logSearchInfo = false
koRule = POSITIONAL
scoringRule = AREA
taxRule = NONE
multiStoneSuicideLegal = false
hasButton = false
whiteHandicapBonus = 0
allowResignation = true
resignThreshold = -0.90
resignConsecTurns = 3
maxVisits = 1
numSearchThreads = 1
ponderingEnabled = false
nnMaxBatchSize = 8
numNNServerThreadsPerModel = 1
maxBoardXSizeForNNBuffer = 19
maxBoardYSizeForNNBuffer = 19
"""

TUNING_SECTIONS = 13
"""Kernels in KataGo's tuning file (xGemmDirect ... spatialRMSNorm), after VERSION and 8 flags."""


def tuning_text() -> str:
    """KataGo's OpenCL tuning file (format ``VERSION=13``): no half-precision, and every kernel at
    its reference parameters (``DEFAULTS=1`` names no parameter, so none is changed)."""
    return "\n".join(["VERSION=13", *["0"] * 8, *["DEFAULTS=1"] * TUNING_SECTIONS]) + "\n"


def default_dir() -> pathlib.Path:
    """``$ALPHAGO_JAX_KATAGO_DIR``, else ``katago`` in the package's cache directory."""
    if os.environ.get(ENV):
        return pathlib.Path(os.environ[ENV]).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    base = pathlib.Path(xdg) if os.path.isabs(xdg) else pathlib.Path.home() / ".cache"
    return base / "alphago_jax" / "katago"


@dataclasses.dataclass(frozen=True)
class KataGo:
    """An installed KataGo: the files under ``root``."""

    root: pathlib.Path

    @property
    def binary(self) -> pathlib.Path:
        return self.root / "squashfs-root" / "AppRun"

    @property
    def model(self) -> pathlib.Path:
        return self.root / pathlib.PurePosixPath(MODEL_MEMBER).name

    @property
    def config(self) -> pathlib.Path:
        return self.root / "gtp.cfg"

    @property
    def tuning(self) -> pathlib.Path:
        return self.root / "opencl-tuning.txt"

    def installed(self) -> bool:
        return all(p.is_file() for p in (self.binary, self.model, self.config, self.tuning))

    def command(self, visits: int = 1, board_size: int = 19, threads: int = 1, resign: bool = False) -> list[str]:
        """The GTP command line at ``visits`` per move, its network buffer sized for boards up to
        ``board_size`` (smaller boards still play; larger ones are refused by KataGo).

        ``resign``: let KataGo resign (the config's 5% held for three moves). Off by default, as
        this project's players do not resign in matches either: from a random opening that komi
        already decides, KataGo at one visit resigns by its sixth move, and the game measures the
        opening rather than the play."""
        if visits < 1 or threads < 1 or not 2 <= board_size <= 19:
            raise ValueError(f"katago: visits and threads must be >= 1 and size 2 to 19, got visits={visits}, "
                             f"threads={threads}, size={board_size}")
        overrides = (f"maxVisits={visits},numSearchThreads={threads},"
                     f"maxBoardXSizeForNNBuffer={board_size},maxBoardYSizeForNNBuffer={board_size},"
                     f"allowResignation={'true' if resign else 'false'}")
        return [str(self.binary), "gtp", "-model", str(self.model), "-config", str(self.config),
                "-override-config", overrides]


def find_katago(root: str | os.PathLike | None = None) -> KataGo | None:
    """The KataGo installed under ``root`` (default ``default_dir()``), or None."""
    katago = KataGo(pathlib.Path(root) if root is not None else default_dir())
    return katago if katago.installed() else None


def _download_wheel(into: pathlib.Path) -> pathlib.Path:
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", WHEEL, "-d", str(into)]
    done = subprocess.run(command, capture_output=True, text=True)
    wheels = sorted(into.glob("katrain-*.whl"))
    if done.returncode != 0 or not wheels:
        raise OSError(f"could not download {WHEEL} ({' '.join(command)}): {done.stderr.strip()[-400:]}")
    return wheels[-1]


def _extract(wheel: pathlib.Path, root: pathlib.Path) -> None:
    """The AppImage and the network from the wheel; the AppImage unpacked into ``root``."""
    try:
        archive = zipfile.ZipFile(wheel)
    except (OSError, zipfile.BadZipFile) as e:
        raise ValueError(f"{wheel}: not a readable wheel ({e})") from None
    with archive:
        missing = [m for m in (BINARY_MEMBER, MODEL_MEMBER) if m not in archive.namelist()]
        if missing:
            raise ValueError(f"{wheel}: no {', '.join(missing)} in it; expected PyPI's {WHEEL} wheel")
        appimage = root / "katago.AppImage"
        for member, target in ((BINARY_MEMBER, appimage), (MODEL_MEMBER, KataGo(root).model)):
            with archive.open(member) as src, open(target, "wb") as dst:
                shutil.copyfileobj(src, dst)
    appimage.chmod(0o755)
    shutil.rmtree(root / "squashfs-root", ignore_errors=True)
    done = subprocess.run([str(appimage), "--appimage-extract"], cwd=root, capture_output=True, text=True)
    if done.returncode != 0 or not KataGo(root).binary.is_file():
        raise OSError(f"{appimage} --appimage-extract failed: {done.stderr.strip()[-400:]}")
    appimage.unlink()


def install(root: str | os.PathLike | None = None, wheel: str | os.PathLike | None = None,
            check: bool = True, log=print) -> KataGo:
    """Install KataGo under ``root`` (default ``default_dir()``) and return it.

    Args:
      wheel: a katrain wheel already downloaded; default: ``pip download`` it (into a temporary
        directory, removed after).
      check: start the engine once and ask its name and version (a few seconds).
      log: where the steps are reported.

    Raises:
      OSError: no OpenCL platform, a failed download or extraction.
      ValueError: ``wheel`` is not katrain's wheel.
      GTPError: the installed engine does not start.
    """
    if check and not glob.glob(os.path.join(OPENCL_VENDORS, "*.icd")):
        raise OSError(f"no OpenCL platform in {OPENCL_VENDORS}, which KataGo needs: {OPENCL_HINT}")
    katago = KataGo(pathlib.Path(root) if root is not None else default_dir())
    katago.root.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        if wheel is None:
            log(f"downloading {WHEEL} from PyPI ...")
            wheel = _download_wheel(pathlib.Path(tmp))
        log(f"extracting KataGo and its network from {pathlib.Path(wheel).name} into {katago.root} ...")
        _extract(pathlib.Path(wheel), katago.root)
    katago.tuning.write_text(tuning_text())
    katago.config.write_text(CONFIG.format(root=katago.root, tuning=katago.tuning))
    if check:
        log("starting it once ...")
        with GTPClient(katago.command(board_size=9), timeout=300) as engine:
            log(f"{engine.send('name')} {engine.send('version')} answers")
    return katago


@dataclasses.dataclass(frozen=True)
class RawOutput:
    """KataGo's network on one position (``kata-raw-nn 0``), seen by the player to move.

    Attributes:
      policy: float32[S*S + 1], the move probabilities (row-major from the top, pass last),
        0 on illegal points.
      value: the expected result in ``[-1, 1]`` (win probability - loss probability).
      score: the expected score lead, in points (komi included).
      ownership: float32[S*S], in ``[-1, 1]``: +1 the player to move owns the point.
    """

    policy: Any
    value: float
    score: float
    ownership: Any


def parse_raw_nn(text: str, size: int, white_to_play: bool) -> RawOutput:
    """``kata-raw-nn 0``'s reply (white's view, as KataGo gives it) for the player to move.

    Raises:
      ValueError: naming what is missing or malformed.
    """
    import numpy as np

    words = text.split()

    def number(word: str) -> float | None:
        try:
            return float(word)  # "NAN" too: KataGo's mark for an occupied point
        except ValueError:
            return None

    def after(key: str, count: int) -> list[float]:
        if key not in words:
            raise ValueError(f"kata-raw-nn reply without {key!r}")
        values = []
        for word in words[words.index(key) + 1:]:
            if (x := number(word)) is None:
                break
            values.append(x)
        if len(values) < count:
            raise ValueError(f"kata-raw-nn reply: {key!r} has {len(values)} values, not {count}")
        return values[:count]

    n = size * size
    policy = np.nan_to_num(np.asarray(after("policy", n) + after("policyPass", 1), np.float32))
    policy /= max(float(policy.sum()), 1e-9)
    sign = 1.0 if white_to_play else -1.0
    win, loss = after("whiteWin", 1)[0], after("whiteLoss", 1)[0]
    return RawOutput(policy=policy, value=sign * (win - loss), score=sign * after("whiteLead", 1)[0],
                     ownership=sign * np.asarray(after("whiteOwnership", n), np.float32))


def player_spec(katago: KataGo, visits: int = 1, board_size: int = 19) -> str:
    """The ``gtp:`` player spec of ``katago`` at ``visits``, for tools that take any GTP engine."""
    return "gtp:" + " ".join(katago.command(visits, board_size))


__all__ = ["KataGo", "WHEEL", "ENV", "default_dir", "find_katago", "install", "parse_raw_nn", "player_spec", "RawOutput",
           "tuning_text"]
