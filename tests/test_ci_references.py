"""CI's CFRKIT_REQUIRE_REFERENCES=1 turns a missing reference into a failure (issue 17)."""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_missing_reference_fails_under_ci_and_skips_otherwise(tmp_path):
    test = tmp_path / "test_needs_reference.py"
    test.write_text("import pytest\n\ndef test_x():\n    pytest.importorskip('no_such_reference_module_xyz')\n")
    conftest = os.path.join(ROOT, "tests", "conftest.py")
    (tmp_path / "conftest.py").write_text(open(conftest).read())
    runs = {}
    for flag in ("1", ""):
        env = dict(os.environ, CFRKIT_REQUIRE_REFERENCES=flag)
        proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(test)],
                              cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
        runs[flag] = proc
    assert runs["1"].returncode == 1 and "is required" in runs["1"].stdout
    assert runs[""].returncode == 0 and "1 skipped" in runs[""].stdout
