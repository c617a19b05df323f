"""Run every benchmark script in this folder and print their figures."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> None:
    for script in sorted(HERE.glob("*.py")):
        if script.name in ("run_all.py", "__init__.py"):
            continue
        print(f"== {script.name}")
        subprocess.run([sys.executable, str(script)], check=False)


if __name__ == "__main__":
    main()
