"""Benchmark: start-up time of the `kit` command line.

Plain script (kept out of pytest):

    .venv/bin/python bench/bench_cli.py        # 10 runs each

Times `kit --version`, `kit --help` (both import no command group: the groups load lazily,
see kit/commands/__init__.py) against `kit schema list`, which loads its group, and against an
eager import of every group -- what the command line cost before groups loaded lazily.
Prints the median wall time of each and the ratio eager / lazy. Goal: `kit --version` < 0.5 s.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

EAGER = (
    "import importlib; from kit.commands import COMMANDS; "
    "[importlib.import_module(c.module) for c in COMMANDS.values()]"
)


def median_wall(cmd: list[str], runs: int) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=10, help="runs per command (median reported)")
    args = ap.parse_args()
    kit = [sys.executable, "-m", "kit"]
    rows = {
        "kit --version": median_wall([*kit, "--version"], args.runs),
        "kit --help": median_wall([*kit, "--help"], args.runs),
        "kit schema list": median_wall([*kit, "schema", "list"], args.runs),
        "import every group (eager)": median_wall([sys.executable, "-c", EAGER], args.runs),
    }
    print(f"median wall time over {args.runs} runs (python {sys.version.split()[0]}):")
    for name, t in rows.items():
        print(f"  {name:<28} {t:7.3f} s")
    lazy = rows["kit --version"]
    print(f"eager import / kit --version: {rows['import every group (eager)'] / lazy:.1f}x")
    verdict = "meets" if lazy < 0.5 else "MISSES"
    print(f"kit --version {verdict} the 0.5 s goal ({lazy:.3f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
