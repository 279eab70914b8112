"""Settings of a resumed run: which ones given now differ from the ones stored with the run.

A long run (a solver's checkpoint, a MAP-Elites archive, a dataset) stores the settings that define it; a
command that resumes it takes the settings left out from the file and must refuse ones that differ (they
would otherwise be silently replaced by the stored ones, or mix two runs).  Numbers compare by value
(``2 == 2.0``), everything else by ``==``.
"""
from __future__ import annotations

from typing import Any, Dict, Mapping, Tuple


class ResumeSettingsError(ValueError):
    """A resumed run was given settings other than its own; ``changed``: ``{name: (given, stored)}``, ``path``."""

    def __init__(self, path: str, changed: Dict[str, Tuple[Any, Any]]):
        self.path = path
        self.changed = dict(changed)
        detail = ", ".join(f"{k} {new} (checkpoint: {old})" for k, (new, old) in self.changed.items())
        super().__init__(f"{path} was made with other settings: {detail}; resume with its settings (or leave "
                         f"them out) or start a new run elsewhere")


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool) \
            and not isinstance(b, bool):
        return float(a) == float(b)
    return a == b


def changed_settings(given: Mapping[str, Any], stored: Mapping[str, Any]) -> Dict[str, Tuple[Any, Any]]:
    """``{name: (given, stored)}`` for every setting in both mappings whose values differ; settings given as
    ``None`` count as not given."""
    return {k: (v, stored[k]) for k, v in given.items() if v is not None and k in stored and not _same(v, stored[k])}


def check_resume_settings(path: str, given: Mapping[str, Any], stored: Mapping[str, Any]) -> Dict[str, Any]:
    """Raise :class:`ResumeSettingsError` if ``given`` changes a setting of ``stored``; else return the stored
    settings (a copy: what the resumed run uses, given or not)."""
    changed = changed_settings(given, stored)
    if changed:
        raise ResumeSettingsError(path, changed)
    return dict(stored)
