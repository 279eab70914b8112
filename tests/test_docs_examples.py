"""The docs' examples run in the suite, so examples that drift from the code fail.

Two kinds: ``>>>`` examples (run as doctests) and fenced blocks opened with ```` ```python test ````
(run in order, one namespace per file).  Plain ```` ```python ```` blocks are illustrations (paths to
the user's files, long runs) and are not run.
"""
import doctest
import glob
import os
import re

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FILES = sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")) + [os.path.join(ROOT, "README.md")])


def _read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


DOCTEST_FILES = [p for p in FILES if ">>>" in _read(p)]
BLOCK_FILES = [p for p in FILES if "```python test" in _read(p)]


@pytest.mark.parametrize("path", DOCTEST_FILES, ids=[os.path.basename(p) for p in DOCTEST_FILES])
def test_doctest_examples(path, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # examples that write files write them here
    result = doctest.testfile(path, module_relative=False,
                              optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} failing example(s) in {os.path.relpath(path, ROOT)}"


@pytest.mark.parametrize("path", BLOCK_FILES, ids=[os.path.basename(p) for p in BLOCK_FILES])
def test_tested_code_blocks(path, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    namespace = {"__name__": "__docs__"}
    for i, block in enumerate(re.findall(r"```python test\n(.*?)```", _read(path), re.S)):
        exec(compile(block, f"{os.path.relpath(path, ROOT)} block {i}", "exec"), namespace)
