"""Dataset building streams: peak memory stays flat as the corpus grows.

Builds a 19x19 position dataset (``alphago-jax dataset build``) from a ``.tar.gz`` archive
holding ``k`` copies of the SGF corpus in ``../shared/data/sgf`` (each copy under its own
folder), for ``k = 1`` and ``k = 10``, each in a fresh process, and prints the records read,
positions written, seconds and the process's peak resident memory.

    python experiments/bench_dataset.py            # 1x and 10x the shared corpus
    python experiments/bench_dataset.py --smoke    # 1x and 2x of 40 records, for CI
"""

from __future__ import annotations

import argparse
import io
import json
import pathlib
import subprocess
import sys
import tarfile
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))  # sibling modules, however run
from benchlib import print_header  # noqa: E402

CORPUS = pathlib.Path(__file__).resolve().parents[1].parent / "shared" / "data" / "sgf"

CHILD = """
import json, resource, sys, time
from alphago_jax.alphago.dataset import build_dataset
t0 = time.perf_counter()
report = build_dataset([sys.argv[1]], sys.argv[2], size=19, shard_size=int(sys.argv[3]), progress=False)
print(json.dumps(dict(records=report.kept + sum(report.skipped.values()), games=report.kept,
                      positions=sum(report.positions.values()), seconds=time.perf_counter() - t0,
                      peak_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)))
"""


def make_archive(files, copies: int, path: pathlib.Path) -> None:
    with tarfile.open(path, "w:gz") as tar:
        for c in range(copies):
            for f in files:
                data = f.read_bytes()
                info = tarfile.TarInfo(f"copy{c:03d}/{f.name}")
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--smoke", action="store_true", help="40 records, 1x and 2x (CI)")
    ap.add_argument("--copies", type=int, nargs="+", default=None, help="corpus copies (default 1 10)")
    ap.add_argument("--shard-size", type=int, default=16384)
    args = ap.parse_args(argv)
    if not CORPUS.is_dir():
        sys.exit(f"{CORPUS} is absent: the SGF corpus ships in ../shared beside the checkout")
    t_start = time.perf_counter()
    files = sorted(CORPUS.rglob("*.sgf"))
    if args.smoke:
        files = files[:40]
    copies = args.copies or ([1, 2] if args.smoke else [1, 10])
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for k in copies:
            archive = pathlib.Path(tmp) / f"corpus{k}.tar.gz"
            make_archive(files, k, archive)
            out = subprocess.run([sys.executable, "-c", CHILD, str(archive), str(pathlib.Path(tmp) / f"ds{k}"),
                                  str(args.shard_size)], capture_output=True, text=True, check=True)
            r = json.loads(out.stdout.strip().splitlines()[-1])
            rows.append(f"| {k}x | {r['records']:,} | {r['games']:,} | {r['positions']:,} | {r['seconds']:.1f} | "
                        f"{r['peak_mb']:,.0f} |")
    print_header("bench_dataset.py", argv, f"19x19 dataset from a .tar.gz of the corpus, shards of {args.shard_size}",
                 t_start)
    print("| corpus | records | games kept | positions | seconds | peak memory (MB) |")
    print("|---|---|---|---|---|---|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
