"""Fuzz every API operation with 200 valid and 200 invalid schemathesis cases (a few minutes on 2 cores).

Runs ``tests/integration/test_api_fuzz.py`` with a larger budget. Usage: ``python bench/fuzz_api.py [N]``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str]) -> int:
    """Run the fuzz test with ``N`` (default 200) cases per operation and generation mode."""
    examples = argv[0] if argv else "200"
    env = {**os.environ, "SIFT_API_FUZZ_EXAMPLES": examples}
    t0 = time.perf_counter()
    rc = subprocess.call([sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider",
                          "tests/integration/test_api_fuzz.py"], cwd=ROOT, env=env)
    print(f"fuzz with {examples} cases per operation and mode: exit {rc} in {time.perf_counter() - t0:.0f}s")
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
