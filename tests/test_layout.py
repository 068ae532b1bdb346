"""The gateway's layout, kept: folders by concept (docs/architecture.md), the package root nearly
empty, imports at most MAX_DEPTH modules deep and without cycles. Measured on the import graph
read from the source (every `import` and `from ... import`, also those under TYPE_CHECKING).

privacy/ and routing/ count as one module each: their detectors and rules chain among themselves
in their own order, kept by their owners, and what this test guards is how the rest of the
gateway stacks on them. Measured so: 1 file at the root and 10 modules deep, where the gateway of
64 root files was 16 deep."""

import ast
import functools
from pathlib import Path

GATEWAY = Path(__file__).resolve().parent.parent / "gateway"
ONE_MODULE = ("gateway.privacy", "gateway.routing")  # folders counted as one module each
MAX_ROOT_FILES = 10
MAX_DEPTH = 10


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(GATEWAY.parent).with_suffix("").parts)
    name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
    return next((one for one in ONE_MODULE if name == one or name.startswith(one + ".")), name)


def _imported(tree: ast.Module, name: str, is_package: bool) -> set[str]:
    """Every dotted name an import of the module names (a `from` import: the module and each name)."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = name.split(".") if is_package else name.split(".")[:-1]
                package = package[: len(package) - node.level + 1]
                base = ".".join([*package, base] if base else package)
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
    return names


@functools.cache
def import_graph() -> dict[str, set[str]]:
    """Module -> the gateway modules it imports."""
    sources: dict[str, list[Path]] = {}
    for path in GATEWAY.rglob("*.py"):
        sources.setdefault(_module_name(path), []).append(path)
    graph: dict[str, set[str]] = {name: set() for name in sources}
    for name, paths in sources.items():
        for path in paths:
            own = _module_name(path) if path.name != "__init__.py" else name
            for imported in _imported(ast.parse(path.read_text()), own, path.name == "__init__.py"):
                while imported and imported not in graph:
                    imported = imported.rpartition(".")[0]
                if imported and imported != name and imported != "gateway":
                    graph[name].add(imported)
    return graph


def _longest_chain(graph: dict[str, set[str]]) -> list[str]:
    @functools.cache
    def chain(module: str) -> tuple[str, ...]:
        below = max((chain(imported) for imported in graph[module]), key=len, default=())
        return (module, *below)

    return list(max((chain(module) for module in graph), key=len))


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import loops (Tarjan's strongly connected components of more than one module)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    loops: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for imported in graph[module]:
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            component = []
            while not component or component[-1] != module:
                component.append(stack.pop())
            if len(component) > 1:
                loops.append(component)

    for module in graph:
        if module not in index:
            visit(module)
    return loops


def test_the_package_root_holds_few_files():
    files = sorted(path.name for path in GATEWAY.iterdir() if path.is_file())
    assert len(files) <= MAX_ROOT_FILES, files


def test_every_folder_says_what_lives_there():
    for folder in sorted(p for p in GATEWAY.iterdir() if p.is_dir() and (p / "__init__.py").exists()):
        assert ast.get_docstring(ast.parse((folder / "__init__.py").read_text())), folder.name


def test_no_import_cycles():
    assert _cycles(import_graph()) == []


def test_imports_chain_at_most_max_depth_modules():
    chain = _longest_chain(import_graph())
    assert len(chain) <= MAX_DEPTH, " -> ".join(chain)
