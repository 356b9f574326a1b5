"""Hand-made tactical positions with a single winning or saving move, for searches without a network.

Each entry: (game name, game config, diagram, player to move, the move as (row, col), what it
is). Diagrams: X black, O white, rows from the top. Hex positions were checked with an
exhaustive solver: the move given is the only one that wins. In the Go and AtariGo positions,
every other move lets the opponent capture (or escape with) the group at stake.
"""

from __future__ import annotations

BLACK, WHITE = 1, -1

_GO7 = """
. . . . . . .
. X X X X . .
X O O O O X .
. X X X O X .
. . . X O X .
. . . . . . .
. . . . . . .
"""

_GO5 = """
. . . . .
. X X X .
X O O O X
. X X O X
. . . . .
"""

_GO9 = """
. . . . . . . . .
. X X X X X X . .
X O O O O O O X .
. X X X X X O X .
. . . . . X O X .
. . . . . X . . .
. . . . . . . . .
. . . . . . . . .
. . . . . . . . .
"""

POSITIONS = [
    ("go", dict(size=5, komi=0.5), _GO5, BLACK, (4, 3), "capture four white stones in atari"),
    ("go", dict(size=5, komi=0.5), _GO5, WHITE, (4, 3), "save four white stones in atari"),
    ("go", dict(size=7, komi=0.5), _GO7, BLACK, (5, 4), "capture six white stones in atari"),
    ("go", dict(size=7, komi=0.5), _GO7, WHITE, (5, 4), "save six white stones in atari"),
    ("go", dict(size=9, komi=0.5), _GO9, BLACK, (5, 6), "capture eight white stones in atari"),
    ("atari_go", dict(size=5), """
        . X . . .
        X O X . .
        . . . O .
        . . . . .
        . . . . .
     """, BLACK, (2, 1), "AtariGo: the first capture"),
    ("atari_go", dict(size=7), """
        . . . . . . .
        . . X O . . .
        . X O X . . .
        . . . . . . .
        . . . . O . .
        . . . . . . .
        . . . . . . .
     """, BLACK, (3, 2), "AtariGo: the first capture"),
    ("atari_go", dict(size=7), """
        . . . . . . .
        . . . . . . .
        . . O X O . .
        . . . O . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
     """, BLACK, (1, 3), "AtariGo: save the stone in atari"),
    ("hex", dict(size=5), """
        . . X . .
        . . X . O
        . O O X .
        . O . X .
        . . . . .
     """, BLACK, (1, 3), "Hex: answer the intrusion into a bridge"),
    ("hex", dict(size=5), """
        . . X . O
        . . X O .
        . X O . .
        . X O . .
        . O . . .
     """, BLACK, (4, 0), "Hex: answer the intrusion into an edge template"),
]
