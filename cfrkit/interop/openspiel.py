"""Interoperability with OpenSpiel (``pyspiel``), imported lazily: cfrkit does not depend on it.

* :class:`OpenSpielGame` loads any OpenSpiel game with explicit chance (or none) into the cfrkit
  game protocol.  It is registered as ``openspiel(name=GAME)`` where ``GAME`` is the OpenSpiel game
  string written as OpenSpiel writes it, parameters included:
  ``load("openspiel(name=leduc_poker)")``, ``load("openspiel(name=kuhn_poker(players=3))")``,
  ``load("openspiel(name=turn_based_simultaneous_game(game=goofspiel(num_cards=4)))")``.
  No quoting is needed: cfrkit's game-string parser splits parameters only on commas outside
  parentheses, so an OpenSpiel string with its own ``(k=v,k=v)`` is taken whole as the value of
  ``name``.  The game string of the loaded game holds OpenSpiel's canonical form of ``GAME``
  (``str(pyspiel_game)``, e.g. ``openspiel(name=leduc_poker())``), so equal games compare equal.
* :func:`to_openspiel_policy` / :func:`from_openspiel_policy` convert tabular policies between a
  cfrkit game and the corresponding OpenSpiel game (e.g. cfrkit ``kuhn`` and OpenSpiel
  ``kuhn_poker``, cfrkit ``leduc`` and ``leduc_poker``), by walking both game trees in parallel and
  pairing the information states met at the same histories.  The walk checks that the two games
  really are the same (players to act, legal actions, chance outcomes and probabilities, terminal
  returns) and that the information sets correspond one to one; otherwise it raises
  :class:`~cfrkit.games.base.GameError` naming the first difference.
"""
from __future__ import annotations

import importlib.util
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np

from cfrkit.games.base import CHANCE, TERMINAL, Game, GameError, State
from cfrkit.games.registry import load, register
from cfrkit.games.sequential import as_sequential
from cfrkit.policy import Policy, TabularPolicy


def _pyspiel():
    try:
        import pyspiel
    except ImportError:
        raise GameError("OpenSpiel is not installed: pip install open_spiel") from None
    return pyspiel


def _load_pyspiel_game(game: Any):
    """A pyspiel game from a pyspiel game object, an OpenSpiel game string, or an :class:`OpenSpielGame`."""
    pyspiel = _pyspiel()
    if isinstance(game, OpenSpielGame):
        return game.os_game
    if isinstance(game, str):
        try:
            return pyspiel.load_game(game)
        except pyspiel.SpielError as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise GameError(f"OpenSpiel cannot load {game!r}: {first} "
                            f"(OpenSpiel games: {', '.join(pyspiel.registered_names())})") from None
    return game


class OpenSpielGame(Game):
    """An OpenSpiel game behind the cfrkit protocol (``openspiel(name=leduc_poker)``).

    Player ids, chance (-1), simultaneous (-2) and terminal (-4) markers, action ids, chance
    outcomes, returns and information-state strings are OpenSpiel's own.  Games whose chance is only
    sampled (``SAMPLED_STOCHASTIC``) are refused: the protocol needs explicit chance probabilities.
    """

    short_name = "openspiel"

    def __init__(self, name: str = "kuhn_poker"):
        pyspiel = _pyspiel()
        os_game = _load_pyspiel_game(str(name).strip())
        game_type = os_game.get_type()
        if game_type.chance_mode == pyspiel.GameType.ChanceMode.SAMPLED_STOCHASTIC:
            raise GameError(f"OpenSpiel game {name!r} has sampled chance without explicit outcome "
                            f"probabilities; the cfrkit protocol needs explicit chance")
        super().__init__({"name": str(os_game)})
        self.os_game = os_game
        self.num_players = os_game.num_players()
        utility = game_type.utility
        if utility == pyspiel.GameType.Utility.ZERO_SUM:
            self.constant_sum, self.utility_sum = True, 0.0
        elif utility == pyspiel.GameType.Utility.CONSTANT_SUM:
            self.constant_sum, self.utility_sum = True, float(os_game.utility_sum())
        else:
            self.constant_sum, self.utility_sum = False, None
        self.simultaneous = game_type.dynamics == pyspiel.GameType.Dynamics.SIMULTANEOUS
        self.has_information_state = bool(game_type.provides_information_state_string)
        # OpenSpiel's information-state strings are perfect-recall by definition; without them we
        # fall back to observation strings, which need not be
        self.perfect_recall = self.has_information_state
        #: whether OpenSpiel provides the tensors (else the protocol's defaults, :class:`~cfrkit.games.base.State`)
        self.has_information_state_tensor = bool(game_type.provides_information_state_tensor)
        self.has_observation_tensor = bool(game_type.provides_observation_tensor)

    def new_initial_state(self) -> "OpenSpielState":
        return OpenSpielState(self, self.os_game.new_initial_state())

    def num_distinct_actions(self) -> int:
        return int(self.os_game.num_distinct_actions())

    def max_utility(self) -> float:
        return float(self.os_game.max_utility())

    def min_utility(self) -> float:
        return float(self.os_game.min_utility())

    def information_state_tensor_shape(self) -> Optional[Tuple[int, ...]]:
        return tuple(self.os_game.information_state_tensor_shape()) if self.has_information_state_tensor else None

    def observation_tensor_shape(self) -> Optional[Tuple[int, ...]]:
        return tuple(self.os_game.observation_tensor_shape()) if self.has_observation_tensor else None

    def max_game_length(self) -> Optional[int]:
        return int(self.os_game.max_game_length())


class OpenSpielState(State):
    """A pyspiel state behind the cfrkit protocol."""

    def __init__(self, game: OpenSpielGame, os_state):
        super().__init__(game)
        self.os_state = os_state

    def clone(self) -> "OpenSpielState":
        new = OpenSpielState.__new__(OpenSpielState)
        new.game = self.game
        new._history = list(self._history)
        new.os_state = self.os_state.clone()
        return new

    def current_player(self) -> int:
        return int(self.os_state.current_player())

    def _legal_actions(self, player: int) -> List[int]:
        return list(self.os_state.legal_actions(player))

    def _apply_action(self, action: int) -> None:
        self.os_state.apply_action(action)

    def _apply_joint_action(self, actions) -> None:
        self.os_state.apply_actions(list(actions))

    def chance_outcomes(self) -> List[Tuple[int, float]]:
        return [(int(a), float(p)) for a, p in self.os_state.chance_outcomes()]

    def returns(self) -> List[float]:
        return [float(r) for r in self.os_state.returns()]

    def rewards(self) -> List[float]:
        return [float(r) for r in self.os_state.rewards()]

    def _player(self, player: Optional[int]) -> int:
        if player is None:
            player = self.current_player()
        if player < 0:
            raise GameError("pass the player whose information you want (none is to act here)")
        return player

    def information_state_string(self, player: Optional[int] = None) -> str:
        player = self._player(player)
        if self.game.has_information_state:
            return self.os_state.information_state_string(player)
        return self.os_state.observation_string(player)

    def information_state_tensor(self, player: Optional[int] = None) -> np.ndarray:
        if not self.game.has_information_state_tensor:
            return super().information_state_tensor(player)
        return np.asarray(self.os_state.information_state_tensor(self._player(player)), dtype=np.float32)

    def observation_string(self, player: Optional[int] = None) -> str:
        return self.os_state.observation_string(self._player(player))

    def observation_tensor(self, player: Optional[int] = None) -> np.ndarray:
        if not self.game.has_observation_tensor:
            return super().observation_tensor(player)
        return np.asarray(self.os_state.observation_tensor(self._player(player)), dtype=np.float32)

    def action_to_string(self, action: int, player: Optional[int] = None) -> str:
        if player is None:
            player = self.current_player()
        return self.os_state.action_to_string(player, int(action))


# Listed only where OpenSpiel is installed (find_spec does not import it), so that suites running
# over every registered game work on machines without it.
if importlib.util.find_spec("pyspiel") is not None:
    register("openspiel", OpenSpielGame, {"name": "kuhn_poker"},
             "Any OpenSpiel game with explicit chance: openspiel(name=leduc_poker), "
             "openspiel(name=kuhn_poker(players=3))")


# --------------------------------------------------------------------------- policies
def _walk_pairs(cfr_game: Game, os_game, visit: Callable[[State, Any, int], None]) -> int:
    """Walk both trees in lockstep; call ``visit(cfr_state, os_state, player)`` once per information set.

    Checks that the games match and that their information sets correspond one to one.  Returns the
    number of information sets visited.
    """
    pyspiel = _pyspiel()
    if os_game.get_type().dynamics == pyspiel.GameType.Dynamics.SIMULTANEOUS:
        raise GameError(f"OpenSpiel game {os_game} is simultaneous; convert it with "
                        f"turn_based_simultaneous_game(game=...) to pair it with a cfrkit game")
    if cfr_game.num_players != os_game.num_players():
        raise GameError(f"{cfr_game.game_string()} has {cfr_game.num_players} players, "
                        f"OpenSpiel {os_game} has {os_game.num_players()}")
    cfr_to_os: Dict[Tuple[int, str], str] = {}
    os_to_cfr: Dict[Tuple[int, str], str] = {}
    stack = [(cfr_game.new_initial_state(), os_game.new_initial_state())]
    while stack:
        ours, theirs = stack.pop()
        player = ours.current_player()
        os_player = int(theirs.current_player())
        where = f"after history {ours.history()}"
        if player != os_player:
            raise GameError(f"games differ {where}: player to act is {player} in {cfr_game.game_string()} "
                            f"and {os_player} in OpenSpiel {os_game}")
        if player == TERMINAL:
            a, b = ours.returns(), list(theirs.returns())
            if any(abs(x - y) > 1e-9 for x, y in zip(a, b)):
                raise GameError(f"games differ {where}: returns {a} vs OpenSpiel {b}")
            continue
        if player == CHANCE:
            a = [(int(o), round(float(p), 12)) for o, p in ours.chance_outcomes()]
            b = [(int(o), round(float(p), 12)) for o, p in theirs.chance_outcomes()]
            if sorted(a) != sorted(b):
                raise GameError(f"games differ {where}: chance outcomes {a} vs OpenSpiel {b}")
            actions = [o for o, _ in a]
        else:
            actions = ours.legal_actions()
            os_actions = list(theirs.legal_actions())
            if actions != os_actions:
                raise GameError(f"games differ {where}: legal actions of player {player} are {actions} "
                                f"vs OpenSpiel {os_actions}")
            key = ours.information_state_string(player)
            os_key = theirs.information_state_string(player)
            known = cfr_to_os.get((player, key))
            if known is None:
                other = os_to_cfr.get((player, os_key))
                if other is not None:
                    raise GameError(f"information sets differ: OpenSpiel {os_key!r} pairs with cfrkit {other!r} "
                                    f"and {key!r}")
                cfr_to_os[(player, key)] = os_key
                os_to_cfr[(player, os_key)] = key
                visit(ours, theirs, player)
            elif known != os_key:
                raise GameError(f"information sets differ: cfrkit {key!r} pairs with OpenSpiel {known!r} "
                                f"and {os_key!r}")
        for action in actions:
            child = ours.clone()
            child.apply_action(action)
            os_child = theirs.clone()
            os_child.apply_action(action)
            stack.append((child, os_child))
    return len(cfr_to_os)


def openspiel_counterpart(game: "str | Game") -> str:
    """The OpenSpiel game string of the same game as a cfrkit game (``kuhn`` -> ``kuhn_poker``,
    ``leduc`` -> ``leduc_poker``, ``openspiel(name=X)`` -> ``X``); GameError when there is none."""
    game = load(game)
    inner = getattr(game, "inner", None)
    if isinstance(game, OpenSpielGame):
        return str(game.os_game)
    if inner is not None and isinstance(inner, OpenSpielGame):
        return str(inner.os_game)
    if game.short_name == "kuhn":
        players = int(game.params.get("players", 2))
        return "kuhn_poker" if players == 2 else f"kuhn_poker(players={players})"
    if game.short_name == "leduc" and game.game_string() == "leduc":
        return "leduc_poker"
    raise GameError(f"no OpenSpiel counterpart of {game.game_string()!r} is known: pass os_game explicitly "
                    f"(an OpenSpiel game string)")


def cfrkit_counterpart(os_game: Any) -> str:
    """The cfrkit game string of an OpenSpiel game: ``kuhn_poker`` -> ``kuhn``, ``leduc_poker`` ->
    ``leduc``, anything else -> ``openspiel(name=...)``."""
    text = str(_load_pyspiel_game(os_game))
    simple = {"kuhn_poker()": "kuhn", "kuhn_poker(players=2)": "kuhn", "leduc_poker()": "leduc",
              "leduc_poker(players=2)": "leduc"}
    if text in simple:
        return simple[text]
    if text.startswith("kuhn_poker(players=") and text.endswith(")"):
        return f"kuhn(players={text[len('kuhn_poker(players='):-1]})"
    return f"openspiel(name={text})"


def to_openspiel_policy(policy: Policy, cfr_game: "str | Game | None" = None, os_game: Any = None):
    """A cfrkit policy on ``cfr_game`` as an ``open_spiel.python.policy.TabularPolicy`` on ``os_game``.

    ``cfr_game`` defaults to the game the policy records (``policy.game``); ``os_game`` (a pyspiel
    game or an OpenSpiel game string) to the game the policy was converted from, if it was, else
    to :func:`openspiel_counterpart` of ``cfr_game``.  Every information set of the OpenSpiel game
    gets the probabilities ``policy`` gives at the paired cfrkit information set.
    (``open_spiel.python.policy.python_policy_to_pyspiel_policy`` turns the result into a C++ policy.)
    """
    from open_spiel.python import policy as os_policy_module

    if cfr_game is None:
        cfr_game = getattr(policy, "game", None)
        if cfr_game is None:
            raise GameError("this policy records no game: pass cfr_game")
    cfr_game = as_sequential(load(cfr_game))
    if os_game is None:
        os_game = (getattr(policy, "metadata", None) or {}).get("openspiel_game") or openspiel_counterpart(cfr_game)
    os_game = _load_pyspiel_game(os_game)
    result = os_policy_module.TabularPolicy(os_game)

    def visit(ours: State, theirs, player: int) -> None:
        key = theirs.information_state_string(player)
        if key not in result.state_lookup:
            raise GameError(f"OpenSpiel TabularPolicy has no row for information state {key!r}")
        probs = policy.action_probabilities(ours, player)
        legal = set(ours.legal_actions(player))
        illegal = sorted(a for a, p in probs.items() if a not in legal and p > 0)
        if illegal:
            raise GameError(f"policy gives probability to illegal action(s) {illegal} at information state "
                            f"{ours.information_state_string(player)!r} (legal: {sorted(legal)})")
        row = result.action_probability_array[result.state_lookup[key]]
        row[:] = 0.0
        for action, p in probs.items():
            if action in legal:
                row[int(action)] = float(p)

    _walk_pairs(cfr_game, os_game, visit)
    return result


def from_openspiel_policy(os_policy: Any, os_game: Any = None, cfr_game: "str | Game | None" = None
                          ) -> TabularPolicy:
    """An OpenSpiel policy on ``os_game`` as a cfrkit :class:`TabularPolicy` on ``cfr_game``.

    ``os_policy`` is any ``open_spiel.python.policy.Policy`` (``action_probabilities(state, player)``)
    or a C++ ``pyspiel.TabularPolicy`` (``get_state_policy``), e.g. from ``pyspiel.CFRSolver``.
    ``os_game`` defaults to the Python policy's own game (``os_policy.game``); ``cfr_game`` to
    :func:`cfrkit_counterpart` of ``os_game``.  The result records ``openspiel_game`` in its
    metadata, so :func:`to_openspiel_policy` converts it back without naming the games.
    """
    if os_game is None:
        os_game = getattr(os_policy, "game", None)
        if os_game is None:
            raise GameError("this OpenSpiel policy records no game: pass os_game")
    os_game = _load_pyspiel_game(os_game)
    cfr_game = as_sequential(load(cfr_game if cfr_game is not None else cfrkit_counterpart(os_game)))
    table: Dict[str, Dict[int, float]] = {}
    if hasattr(os_policy, "get_state_policy"):  # C++ pyspiel policy
        def query(state, player):
            return dict(os_policy.get_state_policy(state.information_state_string(player)))
    elif hasattr(os_policy, "action_probabilities"):
        def query(state, player):
            return os_policy.action_probabilities(state, player)
    else:
        raise TypeError(f"expected an OpenSpiel policy, got {type(os_policy).__name__}")

    def visit(ours: State, theirs, player: int) -> None:
        probs = query(theirs, player)
        table[ours.information_state_string(player)] = {int(a): float(p) for a, p in probs.items()}

    _walk_pairs(cfr_game, os_game, visit)
    return TabularPolicy(cfr_game, table, metadata={"source": "openspiel", "openspiel_game": str(os_game)})
