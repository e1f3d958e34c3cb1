"""The tau curve of a calibration set, and the option grammar of its miss tolerances (library verbs).

``kit guard tau`` and ``kit guard coverage`` are thin shells over these (step 5 of
docs/architecture.md): :func:`parse_alphas` / :func:`parse_ints` read their comma lists and
ranges, :func:`tau_curve_table` builds the split-conformal tau curve (one row per alpha, with
the guarantee and its condition beside each tau) ready to write.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from kit.core.errors import ConfigError
from kit.core.schema import validate_frame

if TYPE_CHECKING:
    from kit.guard.conformal.calibration import CalibrationSet


def parse_alphas(text: str) -> list[float]:
    """'0.02:0.50:0.02' (start:stop:step, inclusive) or '0.05,0.1'. Rounded to 10 decimals."""
    try:
        if ":" in text:
            parts = [float(x) for x in text.split(":")]
            if len(parts) != 3 or parts[2] <= 0 or parts[1] < parts[0]:
                raise ValueError
            n = int(np.floor((parts[1] - parts[0]) / parts[2] + 1e-9)) + 1
            vals = [round(parts[0] + i * parts[2], 10) for i in range(n)]
        else:
            vals = [round(float(x), 10) for x in text.split(",") if x.strip()]
    except ValueError:
        raise ConfigError(
            "bad_parameter",
            f"--alphas must be START:STOP:STEP or a comma list of numbers; got {text!r}",
        ) from None
    bad = [a for a in vals if not 0 < a < 1]
    if not vals or bad:
        raise ConfigError("bad_parameter", f"--alphas must all lie in (0, 1); got {text!r}")
    return sorted(set(vals))


def parse_ints(text: str, name: str) -> list[int]:
    """A comma list of integers >= 1 (sorted, unique); ``name`` is the option named on error."""
    try:
        vals = sorted({int(x) for x in text.split(",") if x.strip()})
    except ValueError:
        raise ConfigError("bad_parameter", f"{name} must be a comma list of integers") from None
    if not vals or min(vals) < 1:
        raise ConfigError("bad_parameter", f"{name} must be integers >= 1; got {text!r}")
    return vals


@dataclass(frozen=True)
class TauCurve:
    """The validated tau curve (schema guard_tau_curve) and the calibration set it came from."""

    frame: pd.DataFrame
    calibration: CalibrationSet

    @property
    def guarantee(self) -> str:
        """The first row's guarantee (every row states the same condition)."""
        return str(self.frame["guarantee"].iloc[0])


def tau_curve_table(calibration: str, alphas: str, raw: Path, where: str) -> TauCurve:
    """tau = s_(k), k = ceil((n+1)(1-alpha)) on the unsupported scores of ``calibration`` (as
    :func:`kit.guard.conformal.calibration.load_calibration` reads it), one row per alpha of
    ``alphas`` (:func:`parse_alphas`), with the guarantee columns; validated, ``where`` naming
    the table in errors. Refuses (ConfigError) an alpha that needs k > n_cal."""
    from kit.guard.conformal import rule as conformal
    from kit.guard.conformal.calibration import guarantee_columns, load_calibration

    cal = load_calibration(calibration, raw)
    frame = pd.DataFrame(conformal.tau_curve(cal.unsupported, parse_alphas(alphas)))
    frame = frame.assign(**guarantee_columns(cal, frame["alpha"].to_numpy(float)))
    return TauCurve(validate_frame(frame, "guard_tau_curve", where), cal)
