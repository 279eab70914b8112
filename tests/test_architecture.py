"""The layers of docs/ARCHITECTURE.md hold: import-linter's contracts in pyproject.toml pass.

A cycle or an upward import anywhere in ``cfrkit`` (function-local imports included) breaks a
contract, and the test fails with the linter's own report naming the import chain.
"""
import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# the linter's command-line entry point, run in a fresh interpreter so that its logging setup and its
# sys.path change stay out of the test process
_LINT = "import sys; from importlinter.cli import lint_imports_command; sys.exit(lint_imports_command())"


def _contracts():
    api = pytest.importorskip("importlinter.api")
    return api.read_configuration(os.path.join(ROOT, "pyproject.toml"))["contracts_options"]


def test_import_contracts_hold():
    pytest.importorskip("importlinter")
    # cwd is the repository root: the linter puts it first on sys.path, so this checkout is analysed
    proc = subprocess.run([sys.executable, "-c", _LINT, "--no-cache", "--no-logo", "--config", "pyproject.toml"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    report = proc.stdout + proc.stderr
    if proc.returncode != 0:
        pytest.fail(f"import-linter contracts broken (see docs/ARCHITECTURE.md, 'Layers'):\n{report}", pytrace=False)
    assert re.search(r"Contracts: \d+ kept, 0 broken", report), report


def test_architecture_doc_lists_the_contract_layers_in_order():
    """The numbered 'Layers' list of docs/ARCHITECTURE.md names the layers of the contract, top down."""
    (layers,) = [c["layers"] for c in _contracts() if c["id"] == "layers"]
    expected = [f"cfrkit.{name.strip().strip('()')}" for layer in layers for name in layer.split("|")]
    with open(os.path.join(ROOT, "docs", "ARCHITECTURE.md"), encoding="utf-8") as f:
        doc = f.read()
    section = doc.split("## Layers", 1)[1].split("\n## ", 1)[0]
    # each numbered item starts with the modules of one layer: "3. `cfrkit.platform`: ..."
    items = re.findall(r"^\d+\. ((?:`cfrkit\.[\w.]+`(?:, | \| )?)+)", section, flags=re.M)
    named = [m for item in items for m in re.findall(r"`(cfrkit\.[\w.]+)`", item)]
    assert named == expected, f"docs/ARCHITECTURE.md lists {named}, pyproject.toml's layers contract {expected}"
