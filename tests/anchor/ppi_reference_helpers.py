"""What the ppi-python reference tests share (test_ppi_reference.py, test_crossppi_reference.py):
the sha256 of a case's inputs and ppi-python's (point, interval) as one list. A plain module
beside them (imported as ``ppi_reference_helpers``, as pytest puts this folder on the path, and
make_ppi_reference.py does), not under ``tests.``: ppi-python's wheel installs a ``tests``
package that shadows the repository's."""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np


def inputs_sha256(*arrays: np.ndarray) -> str:
    h = hashlib.sha256()
    for a in arrays:
        h.update(np.ascontiguousarray(a, dtype="<f8").tobytes())
    return h.hexdigest()


def _triple(point: Any, ci: Any) -> list[float]:
    lo, hi = ci
    return [float(np.squeeze(point)), float(np.squeeze(lo)), float(np.squeeze(hi))]
