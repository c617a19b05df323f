"""Size of a base install (issue 41): a fresh virtualenv, `pip install` of this checkout (or of a
wheel), then the disk its site-packages takes, as `du` counts it, with the largest distributions.

pip, setuptools and what comes with them are the virtualenv's own and are left out of the
figure. Needs PyPI (or a configured index); takes a few minutes.

Run: .venv/bin/python bench/install_size.py [--extras local,gemini] [--wheel dist/x.whl]
     [--venv /existing/venv]  (measure a virtualenv already installed, install nothing)
"""

from __future__ import annotations

import argparse
import importlib.metadata as metadata
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# A virtualenv's own tooling, not what installing Omega brings.
VENV_TOOLING = frozenset({"pip", "setuptools", "wheel"})
MIB = 1024 * 1024


def disk_usage(path: Path) -> int:
    """Bytes on disk under `path` (allocated blocks, as `du` counts them)."""
    return sum(p.lstat().st_blocks * 512 for p in path.rglob("*") if not p.is_symlink())


def site_packages(venv: Path) -> Path:
    """The virtualenv's site-packages folder."""
    (found,) = venv.glob("lib/python3*/site-packages")
    return found


def distribution_sizes(packages: Path) -> dict[str, int]:
    """Bytes on disk of each installed distribution, from the files its RECORD lists."""
    sizes: dict[str, int] = {}
    for dist in metadata.distributions(path=[str(packages)]):
        total = 0
        for file in dist.files or ():
            path = Path(str(dist.locate_file(file)))
            if path.is_file() and not path.is_symlink():
                total += path.lstat().st_blocks * 512
        sizes[dist.metadata["Name"]] = total
    return sizes


def install(venv: Path, target: str) -> None:
    """A fresh virtualenv at `venv` with `target` pip-installed into it."""
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet"]
    subprocess.run([*pip, "--upgrade", "pip"], check=True)
    subprocess.run([*pip, target], check=True)


def report(venv: Path, top: int = 15) -> None:
    """Print the base install's size and its largest distributions."""
    packages = site_packages(venv)
    sizes = distribution_sizes(packages)
    tooling = sum(size for name, size in sizes.items() if name.lower() in VENV_TOOLING)
    total = disk_usage(packages)
    omega_and_deps = (total - tooling) / MIB
    print(f"site-packages {total / MIB:.0f} MiB, without pip/setuptools {omega_and_deps:.0f} MiB")
    names = sorted(sizes, key=sizes.__getitem__, reverse=True)
    for name in names[:top]:
        print(f"  {sizes[name] / MIB:6.1f} MiB  {name}")
    heavy = [n for n in ("llama_cpp_python", "anthropic", "google-genai") if n in sizes]
    print(f"  {len(sizes)} distributions; of the optional ones installed: {heavy or 'none'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--extras", default="", help="extras to install too, comma-separated")
    parser.add_argument("--wheel", default="", help="install this wheel instead of the checkout")
    parser.add_argument("--venv", default="", help="measure this virtualenv, install nothing")
    args = parser.parse_args()
    if args.venv:
        report(Path(args.venv))
        return
    target = args.wheel or str(ROOT)
    if args.extras:
        target = f"{target}[{args.extras}]"
    with tempfile.TemporaryDirectory(prefix="omega-install-") as folder:
        venv = Path(folder) / "venv"
        install(venv, target)
        print(
            f"pip install {target if args.wheel or args.extras else 'omega-agent (this checkout)'}"
        )
        report(venv)


if __name__ == "__main__":
    main()
