"""No module of ``cfrkit`` reads or writes another module's private names (project rule: public, documented
names across modules; docs/ARCHITECTURE.md).

Every attribute ``x._name`` in ``cfrkit/`` (one leading underscore; also ``getattr(x, "_name")``, ``setattr``,
``hasattr``) must be one of the following, and no module imports another's private name
(``from cfrkit.x import _name``; the private modules ``cfrkit._kernels``, ``cfrkit._io``, ... are a layer of
their own, docs/ARCHITECTURE.md):

* on ``self``, ``cls`` or ``super()``;
* on a local bound, in the same function, to a new object of the function's own class: ``cls(...)``,
  ``C(...)`` or ``C.__new__(...)`` for the enclosing class ``C``, ``type(self)...``, ``self.__class__...``,
  ``copy.copy(self)``, ``self.clone()`` (clones and loaders filling in their own object);
* a name the module defines itself (a function or class, ``self._name = ...``, a module or class assignment):
  a helper of the module using its own names;
* namedtuple's public API (``_make``, ``_replace``, ``_asdict``, ``_fields``);
* listed in ``ALLOWED`` below, with its reason.

A limitation: a private name that the module also defines for itself passes unchecked.
"""
import ast
import os
from typing import Dict, List, Set, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = os.path.join(ROOT, "cfrkit")

NAMEDTUPLE_API = {"_make", "_replace", "_asdict", "_fields", "_field_defaults"}

# (module path, expression with the object's name) -> why it is not another cfrkit module's private name;
# an object's own attribute (``_compiled_rules`` on any object) is keyed "*._name"
ALLOWED: Dict[Tuple[str, str], str] = {
    ("cfrkit/games/holdem/fast.py", "*._compiled_rules"):
        "fast.py's own cache of the compiled rules, kept on the game object; no other module reads it",
    ("cfrkit/games/base.py", "*._cfrkit_checked"):
        "base.py's own marker on the protocol methods it wrapped; no other module reads it",
    ("cfrkit/platform/workers.py", "os._exit"): "os._exit is the standard library's documented API",
    ("cfrkit/value_nets/data.py", "os._exit"): "os._exit is the standard library's documented API",
    ("cfrkit/agents/symmtom/learning/stacked.py", "torch._foreach_lerp_"):
        "torch's fused multi-tensor lerp (no public spelling): every seed's soft target update in one call",
}


def _is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _module_names(tree: ast.AST) -> Set[str]:
    """The private names a module defines: functions, classes, ``self._x = ...`` / ``cls._x = ...``, and
    module- or class-level assignments."""
    names: Set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                for sub in ast.walk(t):
                    if isinstance(sub, ast.Name):
                        names.add(sub.id)
                    elif (isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Name)
                          and sub.value.id in ("self", "cls")):
                        names.add(sub.attr)
    return {n for n in names if _is_private(n)}


def _is_self(expr: ast.AST) -> bool:
    if isinstance(expr, ast.Name) and expr.id in ("self", "cls"):
        return True
    return isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id == "super"


def _own_class_instance(value: ast.AST, class_name: str) -> bool:
    """Whether ``value`` makes a new object of the enclosing class (see the module docstring)."""
    if not isinstance(value, ast.Call):
        return False
    f = value.func
    if isinstance(f, ast.Attribute) and f.attr == "copy" and isinstance(f.value, ast.Name) and f.value.id == "copy":
        return len(value.args) == 1 and isinstance(value.args[0], ast.Name) and value.args[0].id == "self"
    if isinstance(f, ast.Attribute) and f.attr == "clone":
        return isinstance(f.value, ast.Name) and f.value.id == "self" and not value.args
    if isinstance(f, ast.Attribute) and f.attr == "__new__":
        f = f.value
    if isinstance(f, ast.Name):
        return f.id in ("cls", class_name)
    if isinstance(f, ast.Attribute) and f.attr == "__class__":
        return isinstance(f.value, ast.Name) and f.value.id == "self"
    return (isinstance(f, ast.Call) and isinstance(f.func, ast.Name) and f.func.id == "type"
            and len(f.args) == 1 and isinstance(f.args[0], ast.Name) and f.args[0].id == "self")


def private_accesses(source: str, path: str = "<source>") -> List[Tuple[str, int, str]]:
    """``[(path, line, expression)]``: the private accesses of ``source`` that no rule of the module docstring
    (``ALLOWED`` aside) accepts."""
    tree = ast.parse(source)
    own = _module_names(tree)
    found: List[Tuple[str, int, str]] = []

    def visit(node: ast.AST, class_name: str, locals_of_class: Set[str]) -> None:
        if isinstance(node, ast.ClassDef):
            class_name = node.name
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            locals_of_class = set()
            for sub in ast.walk(node):
                if isinstance(sub, ast.Assign) and _own_class_instance(sub.value, class_name):
                    locals_of_class |= {t.id for t in sub.targets if isinstance(t, ast.Name)}
        checked = None
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "cfrkit":
            found.extend((path, node.lineno, f"from {node.module} import {a.name}") for a in node.names
                         if _is_private(a.name))
        if isinstance(node, ast.Attribute) and _is_private(node.attr):
            checked = (node.value, node.attr, ast.unparse(node))
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
              and node.func.id in ("getattr", "setattr", "hasattr") and len(node.args) >= 2
              and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str)
              and _is_private(node.args[1].value)):
            checked = (node.args[0], node.args[1].value, f"{ast.unparse(node.args[0])}.{node.args[1].value}")
        if checked is not None:
            obj, name, text = checked
            fine = (_is_self(obj) or name in own or name in NAMEDTUPLE_API
                    or (isinstance(obj, ast.Name) and obj.id in locals_of_class))
            if not fine:
                found.append((path, node.lineno, text))
        for child in ast.iter_child_nodes(node):
            visit(child, class_name, locals_of_class)

    visit(tree, "", set())
    return found


def test_no_private_access_across_modules():
    offending, used = [], set()
    for folder, _, files in os.walk(PACKAGE):
        for name in sorted(files):
            if not name.endswith(".py"):
                continue
            full = os.path.join(folder, name)
            rel = os.path.relpath(full, ROOT).replace(os.sep, "/")
            with open(full, encoding="utf-8") as f:
                source = f.read()
            for path, line, text in private_accesses(source, rel):
                key = next((k for k in ((path, text), (path, "*." + text.rsplit(".", 1)[1])) if k in ALLOWED), None)
                if key is not None:
                    used.add(key)
                else:
                    offending.append(f"{path}:{line}: {text}")
    assert not offending, ("private names of other modules used (give the callee a public, documented name, or "
                           "move the code where it belongs):\n" + "\n".join(offending))
    assert used == set(ALLOWED), f"ALLOWED entries that no longer occur (remove them): {set(ALLOWED) - used}"


def test_the_check_flags_a_foreign_private_access_and_accepts_own_objects():
    source = '''
import copy

class Table:
    def __init__(self):
        self._rows = []

    def clone(self):
        new = Table.__new__(Table)
        new._rows = list(self._rows)
        twin = copy.copy(self)
        twin._rows = []
        other = self.clone()
        other._rows = []
        return new

    @classmethod
    def load(cls, path):
        table = cls()
        table._rows = [path]
        return table

    def grow(self, trainer, other):
        n = len(self._rows)
        trainer._step(n)                   # a trainer's private method: flagged
        if getattr(other, "_secret", None):  # read through getattr: flagged
            return other._rows             # a name this module defines: accepted
        return super()._grow()             # the base class's own protocol: accepted

    def make(self, Point):
        from cfrkit.games.base import _helper  # a private import: flagged
        return Point._make((1, 2))         # namedtuple API: accepted
'''
    lines = source.splitlines()
    flagged = [i + 1 for i, line in enumerate(lines) if line.endswith(": flagged")]
    assert private_accesses(source) == [("<source>", flagged[0], "trainer._step"),
                                        ("<source>", flagged[1], "other._secret"),
                                        ("<source>", flagged[2], "from cfrkit.games.base import _helper")]
