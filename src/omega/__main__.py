"""Allow `python -m omega`."""

from omega.cli import main

main()
