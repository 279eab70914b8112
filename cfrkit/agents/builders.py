"""Builders of the built-in agents, the entry points of :mod:`cfrkit.poker.registry`.

Each builder is ``build(argument, *, game, seed, **options) -> agent`` (``argument``: the spec's
text after the colon or None; ``game``: a loaded Game) and picks the hold'em or the Leduc-family
agent of its name.  Users call :func:`cfrkit.poker.registry.make_agent`, not these.  The agents with heavy imports
(the blueprint's solver tables, A^R's tables, torch for value nets, the CFR solvers) are imported
inside their builders so that building a simple agent stays cheap.
"""
from __future__ import annotations

from typing import Optional

from cfrkit.agents.leduc_agents import LeducDeepStackAgent, LeducPolicyAgent, make_leduc_agent
from cfrkit.agents.poker import AlwaysCallAgent, AlwaysFoldAgent, FixedRangeRaiser, PolicyAgent, RandomAgent
from cfrkit.games.base import Game, GameError
from cfrkit.games.holdem.game import HoldemGame
from cfrkit.policy import TabularPolicy


def _is_holdem(game: Game) -> bool:
    return isinstance(game, HoldemGame)


def _holdem_only(name: str, game: Game) -> None:
    if not _is_holdem(game):
        raise GameError(f"the {name} agent plays hold'em games, not {game.game_string()!r}")


def _no_argument(name: str, argument: Optional[str]) -> None:
    if argument:
        raise GameError(f"the {name} agent takes no argument after ':', got {argument!r}")


def _path(name: str, argument: Optional[str], policy_path: Optional[str]) -> str:
    if argument and policy_path and argument != policy_path:
        raise GameError(f"the {name} agent got two files: {argument!r} and policy_path={policy_path!r}")
    path = argument or policy_path
    if not path:
        raise GameError(f"the {name} agent needs a file: {name}:PATH (--policy PATH)")
    return path


def random_agent(argument, *, game, seed=None):
    """``random``: uniform over the legal kinds of action (hold'em: then a uniform raise-to amount)."""
    _no_argument("random", argument)
    if _is_holdem(game):
        return RandomAgent(seed)
    return make_leduc_agent("random", game, seed=seed)


def always_call(argument, *, game, seed=None):
    """``always-call``: checks or calls every time."""
    _no_argument("always-call", argument)
    if _is_holdem(game):
        return AlwaysCallAgent()
    return make_leduc_agent("always-call", game, seed=seed)


def always_fold(argument, *, game, seed=None):
    """``always-fold``: folds whenever folding is legal, checks otherwise."""
    _no_argument("always-fold", argument)
    if _is_holdem(game):
        return AlwaysFoldAgent()
    return make_leduc_agent("always-fold", game, seed=seed)


def fixed_range_raiser(argument, *, game, seed=None, hand_range: Optional[str] = None, fraction: float = 1.0):
    """``fixed-range-raiser[:RANGE]``: raises ``fraction`` of the pot with hands in the range (default
    ``88+,ATs+,KQs,AJo+``), otherwise checks or folds."""
    _holdem_only("fixed-range-raiser", game)
    if argument and hand_range and argument != hand_range:
        raise GameError(f"two hand ranges: {argument!r} and hand_range={hand_range!r}")
    return FixedRangeRaiser(argument or hand_range or "88+,ATs+,KQs,AJo+", 1.0 if fraction is None else fraction)


def rule_based(argument, *, game, seed=None):
    """``rule-based`` (alias ``ar``): A^R, deterministic."""
    from cfrkit.agents.rule_based import RuleBasedAgent

    _no_argument("rule-based", argument)
    _holdem_only("rule-based", game)
    return RuleBasedAgent()


def policy(argument, *, game, seed=None, policy_path: Optional[str] = None):
    """``policy:PATH``: a :class:`~cfrkit.policy.TabularPolicy` file (hold'em: of a ``holdem`` or
    ``holdem_abstract`` game; Leduc family: of the game)."""
    path = _path("policy", argument, policy_path)
    if _is_holdem(game):
        return PolicyAgent(TabularPolicy.load(path), seed=seed)
    return LeducPolicyAgent(TabularPolicy.load(path, game), game, name="policy", seed=seed)


def blueprint(argument, *, game, seed=None, policy_path: Optional[str] = None):
    """``blueprint:PATH``: a CFR+ blueprint file (``cfrkit blueprint train``), A^C."""
    from cfrkit.agents.blueprint import BlueprintAgent

    _holdem_only("blueprint", game)
    return BlueprintAgent(_path("blueprint", argument, policy_path), seed=seed)


def deepstack_holdem(argument, *, game, seed=None, **options):
    """``deepstack-holdem:nets=DIR,iterations=N,...`` or ``deepstack-holdem:DIR`` (A^D); keyword
    options go to :class:`~cfrkit.agents.holdem_deepstack.HoldemDeepStackAgent`."""
    # torch and the solvers load only here, when A^D is built
    from cfrkit.agents.holdem_deepstack import HoldemDeepStackAgent

    _holdem_only("deepstack-holdem", game)
    text = argument or ""
    if text and "=" not in text:  # a bare directory of nets
        text = f"nets={text}"
    if "game=" not in text and "game" not in options:
        options["game"] = game
    return HoldemDeepStackAgent.from_spec(text, seed=seed, **options)


def deepstack(argument, *, game, seed=None, net: Optional[str] = None, iterations: Optional[int] = None, **options):
    """``deepstack``: continual re-solving.  Leduc family: exact leaves, or a value net
    (``net=PATH`` or ``deepstack:PATH``), options such as ``iterations`` go to
    :class:`~cfrkit.agents.deepstack.DeepStackAgent`; hold'em: as ``deepstack-holdem``."""
    if iterations is not None:
        options["iterations"] = int(iterations)
    if _is_holdem(game):
        if net is not None:
            options["nets"] = net
        return deepstack_holdem(argument, game=game, seed=seed, **options)
    path = argument or net
    if path:
        from cfrkit.value_nets.train import load_leaf_values  # torch: only for a net-backed agent

        options["leaf_values"] = load_leaf_values(path)
    return LeducDeepStackAgent(game, seed=seed or 0, **options)


def cfr_policy(argument, *, game, seed=None):
    """``cfr:N``: the average policy of CFR+ after ``N`` iterations (Leduc family)."""
    from cfrkit.solvers import CFRSolver

    if _is_holdem(game):
        raise GameError("the cfr agent solves small games (Leduc family); hold'em agents: blueprint:PATH")
    try:
        n = int(argument or "")
    except ValueError:
        raise GameError(f"cfr:N needs an integer N of iterations, got {argument!r}") from None
    if n <= 0:
        raise GameError(f"cfr:N needs a positive N, got {n}")
    solved = CFRSolver(game, algorithm="cfr+").run(n).average_policy()
    return LeducPolicyAgent(solved, game, name=f"cfr:{n}", seed=seed)
