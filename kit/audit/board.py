"""Stage: board placement -- the certify engine (:func:`kit.certify.engine.certify_board`) on
the board table that includes the agent's rows; the agent's pairs (admissible or refused,
certified or not) and its rank interval."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from kit.errors import ConfigError


def board_placement(
    frame: pd.DataFrame, design: Any, agent: str, source: str = "<board>"
) -> dict[str, Any]:
    """Certify the board table that includes the agent's rows; the agent's pairs and ranks.

    Returns ``pairs`` (the agent against every board system, per readout: admissible or
    refused with the reason, verdict, winner, gap, radius q), ``ranks`` (all systems' rank
    intervals over the composite) and ``m`` (Bonferroni denominator).
    """
    from kit.certify.engine import certify_board

    systems = sorted(set(frame["system"]))
    if agent not in systems:
        raise ConfigError(
            "agent_not_on_board",
            f"system {agent!r} has no rows in the board table (systems: {', '.join(systems)}); "
            "give the agent's rows with --agent-scores or name it with --agent-system",
        )
    cert = certify_board(frame, design, None, source)
    p = cert.pairs
    mine = p[(p["system_a"] == agent) | (p["system_b"] == agent)].copy()
    mine["other"] = np.where(mine["system_a"] == agent, mine["system_b"], mine["system_a"])
    mine["admissible"] = mine["verdict"] != "refused"
    mine["agent_better"] = np.where(
        mine["verdict"] == "certified", np.where(mine["winner"] == agent, "yes", "no"), ""
    )
    sign = np.where(mine["system_a"] == agent, 1.0, -1.0)
    mine["agent_gap"] = mine["gap"].to_numpy(dtype=float) * sign
    cols = ["other", "readout", "admissible", "verdict", "reason", "agent_better", "agent_gap", "q"]
    pairs = mine[cols].sort_values(["readout", "other"], kind="stable").reset_index(drop=True)
    return {"pairs": pairs, "ranks": cert.ranks, "m": int(cert.m)}
