"""Imports point one way (ARCHITECTURE §13): a lower layer never imports a higher one, and no
two components import each other, even lazily inside a function or under TYPE_CHECKING.

Every module of src/omega must belong to a declared component; a new top-level module or
package fails here until it is given a layer."""

from __future__ import annotations

import ast
from collections.abc import Mapping
from pathlib import Path

import omega

SRC = Path(omega.__file__).resolve().parent

# Lowest first. A component is a module or package (longest prefix wins); modules in one layer
# may import each other's components as long as no cycle forms between components.
LAYERS: list[tuple[str, ...]] = [
    (
        "omega",  # the package itself (__version__) and leaf modules every layer may use
        "omega.types",
        "omega.config",
        "omega.paths",
        "omega.i18n",
        "omega.logs",
        "omega.text",
        "omega.schedule",
        "omega.owner",
        "omega.prompts",
        "omega.checklist",
        "omega.channels.base",  # the Channel protocol the gateway runs channels through
        "omega.channels.health",  # what a running channel last reported, read by status
        "omega.commands_table",  # the chat commands' names and help (gateway and channels)
    ),
    ("omega.memory",),
    ("omega.sandbox", "omega.tools", "omega.providers", "omega.skills", "omega.quant"),
    ("omega.ops",),  # backup, run lock, service unit, sd_notify, self-check, set-up wizard
    ("omega.turn",),  # one message through the provider: deps, turn, ask, marker context
    ("omega.evolution",),
    ("omega.markers",),  # applying markers acts on limitations, lessons, self-healing
    ("omega.loops",),
    ("omega.channels",),  # below the gateway: a channel is handed to it, never reaches into it
    ("omega.gateway",),
    (
        "omega.web",  # the local page: serves the web channel and the dashboard
        "omega.app.runtime",  # bootstrap and pipeline deps; the web page is handed its Runtime
        "omega.app",  # the composition root: builds the service's channels and jobs, runs it
        "omega.cli.support",
        "omega.cli.evolution",
        "omega.cli.ops",
        "omega.cli.setup",
        "omega.cli.quant",
        "omega.cli",
        "omega.__main__",
    ),
]


def component_of(module: str) -> str | None:
    """The declared component a module belongs to (None: undeclared)."""
    best: str | None = None
    for layer in LAYERS:
        for prefix in layer:
            matches = module == prefix or (prefix != "omega" and module.startswith(prefix + "."))
            if matches and (best is None or len(prefix) > len(best)):
                best = prefix
    return best


def layer_of(component: str) -> int:
    """The index of a component's layer (0 is the lowest)."""
    return next(i for i, layer in enumerate(LAYERS) if component in layer)


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for path in SRC.rglob("*.py"):
        parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def import_graph() -> dict[str, set[str]]:
    """module -> omega modules it imports, anywhere in the file (lazy and TYPE_CHECKING too)."""
    modules = _modules()
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - node.level + 1]
                    module = ".".join(base + ([node.module] if node.module else []))
                else:
                    module = node.module or ""
                # `from omega import i18n` imports omega.i18n; `from x import name` imports x.
                names = [module] + [f"{module}.{alias.name}" for alias in node.names]
            for target in names:
                # the deepest omega module the name refers to
                while target and target not in modules:
                    target = target.rpartition(".")[0]
                if target.startswith("omega") and target != name:
                    targets.add(target)
        graph[name] = targets
    return graph


def violations(graph: Mapping[str, set[str]]) -> list[str]:
    """Upward imports and undeclared modules, one line each."""
    problems = []
    for module, targets in sorted(graph.items()):
        source = component_of(module)
        if source is None:
            problems.append(f"{module}: not in any layer (declare it in test_layers.LAYERS)")
            continue
        for target in sorted(targets):
            dest = component_of(target)
            if dest is None:
                continue  # reported as its own module
            if layer_of(dest) > layer_of(source):
                problems.append(
                    f"{module} imports {target}: layer {layer_of(source)} ({source}) may not "
                    f"import layer {layer_of(dest)} ({dest})"
                )
    return problems


def component_cycles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """Cycles between components (each as the path that closes it)."""
    edges: dict[str, set[str]] = {}
    for module, targets in graph.items():
        source = component_of(module)
        for target in targets:
            dest = component_of(target)
            if source and dest and source != dest:
                edges.setdefault(source, set()).add(dest)
    cycles: list[list[str]] = []
    state: dict[str, int] = {}  # 1 visiting, 2 done

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                cycles.append([*path[path.index(nxt) :], nxt])
            elif nxt not in state:
                visit(nxt, [*path, nxt])
        state[node] = 2

    for node in sorted(edges):
        if node not in state:
            visit(node, [node])
    return cycles


def test_every_import_points_down() -> None:
    problems = violations(import_graph())
    assert not problems, "\n".join(problems)


def test_no_cycles_between_components() -> None:
    cycles = component_cycles(import_graph())
    assert not cycles, "\n".join(" -> ".join(c) for c in cycles)


def test_the_graph_sees_lazy_and_type_checking_imports() -> None:
    graph = import_graph()
    # cli imports the composition root only inside its command functions
    assert "omega.app" in graph["omega.cli.main"]
    # the root's start-up imports PipelineDeps only for type checking
    assert "omega.turn" in graph["omega.app.runtime"]
    # `from omega import i18n` is an import of omega.i18n
    assert "omega.i18n" in graph["omega.providers.base"]


def test_an_upward_import_is_caught() -> None:
    graph = import_graph()
    graph["omega.memory.store"] = graph["omega.memory.store"] | {"omega.gateway.pipeline"}
    assert any("omega.memory.store imports omega.gateway.pipeline" in p for p in violations(graph))
    graph["omega.evolution.critic"] = graph["omega.evolution.critic"] | {"omega.loops.scheduler"}
    assert violations(graph)


def test_a_channel_borrowing_from_the_gateway_is_caught() -> None:
    # The command table is a leaf (omega.commands_table); a channel that took it, or anything
    # else, from the gateway again would point up.
    graph = import_graph()
    assert not any(t.startswith("omega.gateway") for t in graph["omega.channels.telegram.channel"])
    graph["omega.channels.telegram.channel"] |= {"omega.gateway.commands"}
    assert any(
        "omega.channels.telegram.channel imports omega.gateway.commands" in p
        for p in violations(graph)
    )


def test_the_web_page_may_use_the_runtime_but_not_the_root() -> None:
    # omega.app builds the web page; the page is handed a Runtime (omega.app.runtime). Taking
    # anything from omega.app itself would close a circle.
    graph = import_graph()
    assert "omega.web" in {component_of(t) for t in graph["omega.app.channels"]}
    graph["omega.web.app"] = graph["omega.web.app"] | {"omega.app"}
    assert any("omega.app" in c and "omega.web" in c for c in component_cycles(graph))


def test_a_sideways_cycle_is_caught() -> None:
    graph = import_graph()
    graph["omega.tools.builtin"] = graph["omega.tools.builtin"] | {"omega.providers.base"}
    cycles = component_cycles(graph)
    assert any("omega.tools" in c and "omega.providers" in c for c in cycles)


def test_an_undeclared_module_is_caught() -> None:
    graph = {**import_graph(), "omega.newthing": set()}
    assert any(p.startswith("omega.newthing: not in any layer") for p in violations(graph))
