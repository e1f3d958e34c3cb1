"""Write tests/anchor/ppi_python_reference.json and crossppi_python_reference.json: ppi-python's
numbers on the SYNTHETIC cases of test_ppi_reference.py and test_crossppi_reference.py (the kit is compared with them by every test run).

ppi-python is kept out of the kit's environment (its wheel installs a top-level ``tests``
package that shadows the repository's); install it beside, e.g. ::

    .venv/bin/pip install --target /tmp/ppi-ref ppi-python==0.2.3 -c constraints.txt
    PYTHONPATH=/tmp/ppi-ref .venv/bin/python tests/anchor/make_ppi_reference.py
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # ppi_reference_helpers, as pytest finds it


FILES = (
    ("test_ppi_reference.py", "ppi-python's outputs on the SYNTHETIC cases of test_ppi_reference.py: "
     "[estimate, ci_low, ci_high] per method; written by make_ppi_reference.py"),
    ("test_crossppi_reference.py", "ppi-python's cross-prediction outputs on the SYNTHETIC cases "
     "of test_crossppi_reference.py: [estimate, ci_low, ci_high]; written by "
     "make_ppi_reference.py"),
)  # fmt: skip


def main() -> None:
    import ppi_py

    for name, note in FILES:
        spec = importlib.util.spec_from_file_location(name.removesuffix(".py"), HERE / name)
        assert spec is not None and spec.loader is not None
        cases = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(cases)
        frozen = {
            "ppi_python": importlib.metadata.version("ppi-python"),
            "note": note,
            "cases": {str(c[0]): cases.reference(ppi_py, c) for c in cases.CASES},
        }
        cases.REFERENCE.write_text(json.dumps(frozen, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
