"""The agent registry: every poker agent cfrkit builds from a name goes through :func:`make_agent`.

::

    make_agent("always-call")
    make_agent("fixed-range-raiser", hand_range="TT+,AKs", fraction=0.5)
    make_agent("blueprint:bp.npz", seed=1)
    make_agent("deepstack-holdem:nets=nets/,iterations=500")   # or "deepstack-holdem:nets/"
    make_agent("deepstack", game="leduc", iterations=200)      # Leduc family: the same names
    make_agent("policy:avg.npz", game="leduc")

A spec is ``NAME`` or ``NAME:ARGUMENT`` (the part after the first colon: a file, a directory or an
option list, as the agent's entry says).  The CLI (``cfrkit match``, ``lbr``, ``drl-br``,
``platform-agent``, ``acpc-client``, ``play``, ``blueprint``), the platform server, the evaluators
and the benchmarks all build agents here.

**Entry points, not imports.**  This module sits in the play layer, *below* the agents it builds
(:mod:`cfrkit.agents` imports the interface from :mod:`cfrkit.poker`), so it cannot import them.
Each entry is a ``"module:attribute"`` string resolved with :mod:`importlib` when an agent is built,
as gymnasium's ``register(id, entry_point=...)`` does.  This also keeps heavy dependencies lazy:
torch is imported only when a DeepStack agent is built.

An entry point is a builder ``build(argument, *, game, seed, **options) -> agent``: ``argument`` is the
spec's text after the colon (None without one), ``game`` the loaded :class:`~cfrkit.games.base.Game`
(default ``holdem``: heads-up no-limit 50/100, 200 bb).  Third-party agents register the same way::

    register_agent("my-bot", "mypackage.bots:build_my_bot", help="my bot")

Every failure is one :class:`RegistryError` line: an unknown name (listing the known ones), an
option the agent does not take (listing those it does), a builder's refusal of its argument.
"""
from __future__ import annotations

import importlib
import inspect
from dataclasses import dataclass
from typing import Any, Callable, Dict, Mapping, Optional, Tuple

from cfrkit.games.base import Game, GameError
from cfrkit.games.registry import load

__all__ = ["AgentEntry", "RegistryError", "agent_entry", "agent_help", "agent_names", "make_agent", "parse_spec",
           "register_agent"]


class RegistryError(GameError):
    """An agent spec the registry cannot build (unknown name, bad option or argument)."""


@dataclass(frozen=True)
class AgentEntry:
    """A registered agent: its name, builder entry point (``"module:attribute"``), help and aliases."""

    name: str
    entry_point: str
    help: str = ""
    aliases: Tuple[str, ...] = ()

    def load(self) -> Callable[..., Any]:
        """The builder the entry point names (imported now)."""
        module, _, attr = self.entry_point.partition(":")
        try:
            obj = importlib.import_module(module)
            for part in attr.split("."):
                obj = getattr(obj, part)
        except (ImportError, AttributeError) as exc:
            raise RegistryError(f"agent {self.name!r}: cannot load its entry point {self.entry_point!r} "
                                f"({type(exc).__name__}: {exc})") from None
        return obj


_ENTRIES: Dict[str, AgentEntry] = {}
_ALIASES: Dict[str, str] = {}


def register_agent(name: str, entry_point: str, help: str = "", aliases: Tuple[str, ...] = (),
                   replace: bool = False) -> AgentEntry:
    """Register ``name`` (and ``aliases``) to be built by ``entry_point`` (``"module:attribute"``).

    Raises :class:`RegistryError` for a malformed name or entry point, or a name already taken
    (unless ``replace``)."""
    if not isinstance(name, str) or not name or ":" in name or name != name.strip():
        raise RegistryError(f"agent names are non-empty strings without ':' or spaces around, got {name!r}")
    module, sep, attr = str(entry_point).partition(":")
    if not sep or not module or not attr:
        raise RegistryError(f"entry point of agent {name!r} must look like 'module:attribute', got {entry_point!r}")
    for n in (name, *aliases):
        owner = _ENTRIES.get(n) or (_ENTRIES.get(_ALIASES[n]) if n in _ALIASES else None)
        if owner is not None and not replace and owner.name != name:
            raise RegistryError(f"agent name {n!r} is already registered (to {owner.entry_point!r})")
        if owner is not None and not replace and owner.name == name:
            raise RegistryError(f"agent {name!r} is already registered (replace=True to change it)")
    entry = AgentEntry(name, str(entry_point), str(help), tuple(aliases))
    _ENTRIES[name] = entry
    for a in aliases:
        _ALIASES[a] = name
    return entry


def agent_names() -> Tuple[str, ...]:
    """The registered agent names (not the aliases), in registration order."""
    return tuple(_ENTRIES)


def agent_help() -> Dict[str, str]:
    """``{name: one-line help}`` of the registered agents (aliases in the help text)."""
    out = {}
    for name, e in _ENTRIES.items():
        alias = f" (alias {', '.join(e.aliases)})" if e.aliases else ""
        out[name] = e.help + alias
    return out


def parse_spec(spec: str) -> Tuple[str, Optional[str]]:
    """``(name, argument)`` of ``"NAME"`` / ``"NAME:ARGUMENT"`` (argument None without a colon)."""
    if not isinstance(spec, str) or not spec.strip():
        raise RegistryError(f"an agent spec is a non-empty string such as 'always-call' or 'blueprint:bp.npz', "
                            f"got {spec!r}")
    name, sep, arg = spec.strip().partition(":")
    return name, (arg if sep else None)


def agent_entry(name: str) -> AgentEntry:
    """The entry of ``name`` or one of its aliases (``RegistryError`` listing the known names)."""
    key = _ALIASES.get(name, name)
    entry = _ENTRIES.get(key)
    if entry is None:
        raise RegistryError(f"unknown agent {name!r}; known: {', '.join(agent_names())}")
    return entry


def _accepted(builder) -> Tuple[set, bool]:
    params = inspect.signature(builder).parameters
    names = {p.name for p in params.values() if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)}
    var_kw = any(p.kind is p.VAR_KEYWORD for p in params.values())
    return names - {"argument", "game", "seed"}, var_kw


def make_agent(spec: str, *, game: "str | Game | None" = None, seed: Optional[int] = None,
               defaults: Optional[Mapping[str, Any]] = None, **options) -> Any:
    """Build the agent ``spec`` (``"NAME"`` or ``"NAME:ARGUMENT"``) for ``game`` (default ``holdem``).

    Args:
        spec: a registered name or alias, optionally with the argument its entry describes
            (``"blueprint:bp.npz"``, ``"policy:avg.npz"``, ``"deepstack-holdem:nets=DIR,iterations=500"``).
        game: the game the agent will play (string or Game; default ``holdem``); when given, agents
            with ``check_game`` (policies, blueprints) are checked against it.
        seed: the agent's random seed (agents without randomness ignore it).
        defaults: options passed only to agents that take them (command-line defaults such as
            ``iterations`` of the DeepStack agents).
        options: the agent's keyword options (e.g. ``hand_range``, ``fraction``); an option the agent
            does not take is an error.

    Raises :class:`RegistryError` (one line) for an unknown name or option; the agent's own
    ``GameError`` / ``ValueError`` for a bad argument is re-raised as one ``RegistryError`` line.
    """
    name, arg = parse_spec(spec)
    entry = agent_entry(name)
    g = load("holdem" if game is None else game)
    builder = entry.load()
    accepted, var_kw = _accepted(builder)
    bad = sorted(k for k in options if k not in accepted and not var_kw)
    if bad:
        takes = f"its options: {', '.join(sorted(accepted))}" if accepted else "it takes no options"
        raise RegistryError(f"agent {entry.name!r} takes no option {', '.join(map(repr, bad))}; {takes}")
    kwargs = {k: v for k, v in (defaults or {}).items() if k in accepted}
    kwargs.update(options)
    try:
        agent = builder(arg, game=g, seed=seed, **kwargs)
        check = getattr(agent, "check_game", None)
        if check is not None and game is not None:  # a policy file's own game stands when none is named
            check(g)
    except RegistryError:
        raise
    except (GameError, ValueError, OSError) as exc:
        raise RegistryError(f"agent {spec!r}: {exc}") from None
    return agent


# ---------------------------------------------------------------------- the built-in agents
_BUILTIN = (
    ("random", "cfrkit.agents.builders:random_agent", "uniform over the legal kinds of action (then a uniform "
     "raise size)", ()),
    ("always-call", "cfrkit.agents.builders:always_call", "checks or calls every time", ("call", "caller")),
    ("always-fold", "cfrkit.agents.builders:always_fold", "folds when it may, else checks", ("fold", "folder")),
    ("fixed-range-raiser", "cfrkit.agents.builders:fixed_range_raiser", "raises a pot fraction (fraction=) with "
     "hands in a range (hand_range= or fixed-range-raiser:RANGE), else check/fold; hold'em", ("raiser",)),
    ("rule-based", "cfrkit.agents.builders:rule_based", "A^R, the rule-based agent; hold'em", ("ar",)),
    ("policy", "cfrkit.agents.builders:policy", "a TabularPolicy file: policy:PATH (or policy_path=)", ()),
    ("blueprint", "cfrkit.agents.builders:blueprint", "a CFR+ blueprint file (A^C): blueprint:PATH (or "
     "policy_path=); hold'em", ()),
    ("deepstack-holdem", "cfrkit.agents.builders:deepstack_holdem", "A^D, continual re-solving in hold'em: "
     "deepstack-holdem:nets=DIR,iterations=N,... or deepstack-holdem:DIR", ("ds-holdem",)),
    ("deepstack", "cfrkit.agents.builders:deepstack", "continual re-solving: Leduc family (exact leaves or "
     "net=PATH), hold'em as deepstack-holdem", ()),
    ("cfr", "cfrkit.agents.builders:cfr_policy", "the average policy of CFR+ after N iterations: cfr:N; "
     "Leduc family", ()),
)
for _name, _entry, _help, _aliases in _BUILTIN:
    register_agent(_name, _entry, help=_help, aliases=_aliases)
