"""The client for external GTP engines, re-exported from ``alphago_jax.gtp_client``.

The client lives below both ``play`` and ``train`` (``train`` evaluates against GNU Go and must
not import ``play``); this module keeps ``alphago_jax.play.gtp_client`` working.
"""

from alphago_jax.gtp_client import (
    GNUGO,
    GNUGO_RULES_ARGS,
    GTPClient,
    GTPError,
    find_gnugo,
    gnugo_player_args,
    gnugo_rules_engine,
)

__all__ = ["GNUGO", "GNUGO_RULES_ARGS", "GTPClient", "GTPError", "find_gnugo", "gnugo_player_args",
           "gnugo_rules_engine"]
