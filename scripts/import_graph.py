"""Print the import graph of src/omega between components, as Mermaid, lowest layer last.

    python scripts/import_graph.py > docs/import-graph.md

Every arrow is an import (lazy and TYPE_CHECKING ones included); the layers are those of
tests/unit/test_layers.py, which fails on an arrow pointing up. This prints the same graph for
people to read, and says at the end whether any arrow points up."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.unit.test_layers import LAYERS, component_of, import_graph, layer_of

HEADER = """# Import graph of src/omega

Made by `python scripts/import_graph.py` (components of `tests/unit/test_layers.py`, which fails
on an arrow pointing up, a cycle, or a module with no layer); `make docs` makes it again. Higher
layers are drawn on top.
"""


def component_edges() -> dict[str, set[str]]:
    """component -> the components it imports."""
    edges: dict[str, set[str]] = {}
    for module, targets in import_graph().items():
        source = component_of(module)
        for target in targets:
            dest = component_of(target)
            if source and dest and source != dest:
                edges.setdefault(source, set()).add(dest)
    return edges


def main() -> None:
    edges = component_edges()
    ids = {c: f"c{i}" for i, c in enumerate(c for layer in LAYERS for c in layer)}
    print(HEADER)
    print("```mermaid\nflowchart TB")
    for index, layer in reversed(list(enumerate(LAYERS))):
        print(f'  subgraph L{index}["layer {index}"]')
        for component in layer:
            print(f'    {ids[component]}["{component.removeprefix("omega.") or "omega"}"]')
        print("  end")
    up = []
    for source in sorted(edges):
        for dest in sorted(edges[source]):
            print(f"  {ids[source]} --> {ids[dest]}")
            if layer_of(dest) > layer_of(source):
                up.append(f"{source} -> {dest}")
    print("```")
    print(f"\n{sum(len(d) for d in edges.values())} arrows between {len(ids)} components; ", end="")
    print("arrows pointing up: " + (", ".join(up) if up else "none"))


if __name__ == "__main__":
    main()
