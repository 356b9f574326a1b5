"""KataGo's ``kata-analyze`` output, read back as KataGo's GTP extensions document describes it:
``info`` starts a move's key-value pairs, ``pv`` (and ``pvVisits``) is followed by values up to
the next key, and ``ownership`` by ``size * size`` floats in row-major order from the top-left
point, for the player analysed."""

from __future__ import annotations

KATA_KEYS = {"info", "ownership", "pvVisits", "move", "visits", "utility", "winrate", "scoreMean", "scoreStdev",
             "scoreLead", "scoreSelfplay", "prior", "lcb", "utilityLcb", "order", "pv", "isSymmetryOf"}


def parse_kata(line: str, size: int):
    """(moves: list of dicts, ownership: list of floats or None) of one kata-analyze line."""
    tokens, moves, ownership, i = line.split(), [], None, 0
    while i < len(tokens):
        key = tokens[i]
        if key == "info":
            moves.append({})
            i += 1
        elif key == "ownership":
            ownership = [float(t) for t in tokens[i + 1:i + 1 + size * size]]
            assert len(ownership) == size * size and i + 1 + size * size == len(tokens), line
            i += 1 + size * size
        elif key in ("pv", "pvVisits"):
            j = i + 1
            while j < len(tokens) and tokens[j] not in KATA_KEYS:
                j += 1
            moves[-1][key] = tokens[i + 1:j]
            i = j
        else:
            assert key in KATA_KEYS and moves, (key, line)
            moves[-1][key] = tokens[i + 1]
            i += 2
    return moves, ownership
