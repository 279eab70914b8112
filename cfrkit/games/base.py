"""The extensive-form game protocol every cfrkit game implements.

A :class:`Game` describes the rules and creates :class:`State` objects.  A state is a node of the
game tree: a decision node of one player, a chance node with explicit outcome probabilities, a
node where several players move at once (simultaneous-move games only), or a terminal node with
returns for every player.

Actions are small non-negative integers, unique among the legal actions of a node (games choose a
stable numbering, e.g. fold=0, call=1, raise=2).  Chance outcomes are actions too, so a history is
just the list of actions from the root, which makes replay and serialisation trivial.

Subclasses implement the underscore methods (``_legal_actions``, ``_apply_action`` ...); the public
methods add validation so that an illegal action raises :class:`IllegalActionError` naming the legal
ones instead of silently corrupting the state.

Protocol misuse is checked once, here, for every game (subclass overrides included, see
:meth:`State.__init_subclass__`): a player argument outside ``0..num_players-1`` (or not an integer)
raises :class:`GameError`; an action id that is not an integer (``1.5``, ``1.0``, ``True``, ``"1"``)
raises :class:`IllegalActionError` instead of being truncated; ``chance_outcomes()`` away from a
chance node raises :class:`GameError`.
"""
from __future__ import annotations

import copy
import functools
import operator
from abc import ABC, abstractmethod
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

# the error classes live below the protocol (the game table raises them too); re-exported here
from cfrkit.games.errors import GameError, IllegalActionError
from cfrkit.games.specs import build_game, format_game_string, game_specs

#: ``State.current_player()`` of a chance node.
CHANCE = -1
#: ``State.current_player()`` of a node where all players move at once.
SIMULTANEOUS = -2
#: ``State.current_player()`` of a terminal node.
TERMINAL = -4


def check_action_id(action: Any) -> int:
    """``action`` as an ``int`` if it is an integer id (Python or numpy integer, not a bool);
    otherwise :class:`IllegalActionError` (floats are never truncated)."""
    if type(action) is int:
        return action
    if isinstance(action, bool) or not isinstance(action, (int, np.integer)):
        raise IllegalActionError(f"an action must be an integer id, got {type(action).__name__} {action!r:.40}")
    return int(action)


def _check_player(state: "State", player: Any, what: str, allow_chance: bool = False) -> None:
    """GameError unless ``player`` is None, a seat ``0..num_players-1`` (or CHANCE when allowed)."""
    if player is None:
        return
    n = state.game.num_players
    if type(player) is int and 0 <= player < n:
        return
    if isinstance(player, bool) or not isinstance(player, (int, np.integer)):
        raise GameError(f"{what}: player must be an integer seat, got {type(player).__name__} {player!r:.40}")
    if 0 <= int(player) < n or (allow_chance and int(player) == CHANCE):
        return
    raise GameError(f"{what}: player {int(player)} is out of range (seats 0..{n - 1}"
                    f"{', or CHANCE = -1' if allow_chance else ''})")


#: public State methods taking a ``player`` argument; overrides are wrapped with the player check
_PLAYER_METHODS = ("information_state_string", "information_state_tensor", "observation_string",
                   "observation_tensor")


def _with_player_check(method):
    name = method.__name__

    @functools.wraps(method)
    def checked(self, player=None, *args, **kwargs):
        if player is not None and not (type(player) is int and 0 <= player < self.game.num_players):
            _check_player(self, player, name)
            player = operator.index(player)
        return method(self, player, *args, **kwargs)

    checked._cfrkit_checked = True
    return checked


def _with_chance_check(method):
    @functools.wraps(method)
    def checked(self, *args, **kwargs):
        current = self.current_player()
        if current != CHANCE:
            where = "a terminal state" if current == TERMINAL else f"a decision node of player {current}"
            raise GameError(f"chance_outcomes() called at {where}, not at a chance node")
        return method(self, *args, **kwargs)

    checked._cfrkit_checked = True
    return checked


def _with_action_check(method):
    @functools.wraps(method)
    def checked(self, action):
        return method(self, check_action_id(action))

    checked._cfrkit_checked = True
    return checked


class Game(ABC):
    """Rules of a game and a factory of initial states.

    To write a game (a complete example: ``docs/writing_a_game.md``), subclass :class:`Game` and
    :class:`State` and implement: ``Game.new_initial_state``, ``Game.num_distinct_actions``,
    ``Game.max_utility``, ``Game.min_utility``; ``State.current_player``,
    ``State._legal_actions(player)`` (empty for a player not to act), ``State._apply_action(action)``,
    ``State.chance_outcomes`` (at chance nodes), ``State.returns``,
    ``State.information_state_string(player)``.  Check it with
    :func:`cfrkit.games.consistency.check_game`.

    Attributes that every game sets in ``__init__``:

    * ``num_players`` -- number of players (>= 1).
    * ``short_name`` -- the registry name, e.g. ``"leduc"``.
    * ``params`` -- the parameters the game was built with (a dict; part of the game string).
    """

    short_name: str = "game"
    num_players: int = 2
    #: True when every state's returns sum to :attr:`utility_sum` (e.g. 0 for poker).
    constant_sum: bool = True
    utility_sum: Optional[float] = 0.0
    #: True when players never forget their own information or actions.
    perfect_recall: bool = True
    #: True when some states have ``current_player() == SIMULTANEOUS``.
    simultaneous: bool = False
    #: Multiplier from game utility units to chips (poker): used to report mbb/g.
    big_blind: Optional[float] = None

    def __init__(self, params: Optional[Dict[str, Any]] = None):
        self.params: Dict[str, Any] = dict(params or {})

    # ----------------------------------------------------------------- required
    @abstractmethod
    def new_initial_state(self) -> "State":
        """The root of the game tree."""

    @abstractmethod
    def num_distinct_actions(self) -> int:
        """Upper bound (exclusive) on every player action id."""

    @abstractmethod
    def max_utility(self) -> float:
        """Largest return any player can get (game units, e.g. chips)."""

    @abstractmethod
    def min_utility(self) -> float:
        """Smallest return any player can get (game units, e.g. chips)."""

    # ----------------------------------------------------------------- optional
    def information_state_tensor_shape(self) -> Optional[Tuple[int, ...]]:
        """Shape of :meth:`State.information_state_tensor`, or None if the game defines none."""
        return None

    def observation_tensor_shape(self) -> Optional[Tuple[int, ...]]:
        """Shape of :meth:`State.observation_tensor`, or None if the game defines none."""
        return None

    def max_game_length(self) -> Optional[int]:
        """Maximum number of actions (chance outcomes included) in a history, when known."""
        return None

    # ----------------------------------------------------------------- helpers
    def game_string(self) -> str:
        """Canonical string that :func:`cfrkit.games.load` turns back into an equal game."""
        spec = game_specs().get(self.short_name)
        defaults = spec.defaults if spec is not None else {}
        shown = {k: v for k, v in self.params.items() if k not in defaults or defaults[k] != v}
        return format_game_string(self.short_name, shown)

    def __str__(self) -> str:
        return self.game_string()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.game_string()}>"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Game) and self.game_string() == other.game_string()

    def __hash__(self) -> int:
        return hash(self.game_string())

    def state_from_history(self, actions: Sequence[int]) -> "State":
        """Replay ``actions`` from the root; an illegal one raises naming its position."""
        state = self.new_initial_state()
        try:
            actions = [check_action_id(a) for a in actions]
        except IllegalActionError as exc:
            raise IllegalActionError(f"history: {exc}") from None
        position = 0
        while position < len(actions):
            try:
                if state.current_player() == SIMULTANEOUS:
                    joint = actions[position : position + self.num_players]
                    if len(joint) < self.num_players:
                        raise IllegalActionError("history ends inside a simultaneous move")
                    state.apply_actions(joint)
                    position += self.num_players
                else:
                    state.apply_action(actions[position])
                    position += 1
            except IllegalActionError as exc:
                raise IllegalActionError(f"history position {position}: {exc}") from None
        return state

    def deserialize_state(self, text: str) -> "State":
        """Inverse of :meth:`State.serialize`."""
        if "|" not in text:
            raise GameError(f"serialized state must look like 'GAME|a,b,c', got {text!r}")
        game_part, actions_part = text.rsplit("|", 1)
        # a game of the user's own is not in the registry: its own string is enough
        if game_part != self.game_string() and build_game(game_part).game_string() != self.game_string():
            raise GameError(f"state belongs to game {game_part!r}, not {self.game_string()!r}")
        try:
            actions = [int(a) for a in actions_part.split(",") if a.strip() != ""]
        except ValueError:
            raise GameError(f"history {actions_part!r} is not a comma-separated list of action ids") from None
        return self.state_from_history(actions)


class State(ABC):
    """A node of the game tree.  Mutable: :meth:`apply_action` changes it in place.

    Subclasses implement ``current_player``, ``_legal_actions(player)``, ``_apply_action(action)``,
    ``chance_outcomes`` (games with chance), ``returns`` and ``information_state_string(player)``;
    the public methods (``legal_actions``, ``apply_action``, ``child``, ``clone``, ``serialize``)
    validate and call them.  See ``docs/writing_a_game.md``.
    """

    def __init__(self, game: Game):
        self.game = game
        self._history: List[int] = []

    def __init_subclass__(cls, **kwargs):
        """Give every game's overrides of the public methods the protocol checks (module docstring)."""
        super().__init_subclass__(**kwargs)
        for name in _PLAYER_METHODS:
            method = cls.__dict__.get(name)
            if callable(method) and not getattr(method, "_cfrkit_checked", False):
                setattr(cls, name, _with_player_check(method))
        method = cls.__dict__.get("chance_outcomes")
        if callable(method) and not getattr(method, "_cfrkit_checked", False):
            setattr(cls, "chance_outcomes", _with_chance_check(method))
        method = cls.__dict__.get("apply_action")
        if callable(method) and not getattr(method, "_cfrkit_checked", False):
            setattr(cls, "apply_action", _with_action_check(method))

    # ----------------------------------------------------------------- required
    @abstractmethod
    def current_player(self) -> int:
        """Player to act (0-based), or :data:`CHANCE`, :data:`SIMULTANEOUS`, :data:`TERMINAL`."""

    @abstractmethod
    def _legal_actions(self, player: int) -> List[int]:
        """Legal actions of ``player`` (sorted ascending); empty if the player is not to act."""

    @abstractmethod
    def _apply_action(self, action: int) -> None:
        """Apply an already-validated action (a chance outcome at chance nodes)."""

    @abstractmethod
    def returns(self) -> List[float]:
        """Total return of every player (game units); meaningful at terminal states."""

    @abstractmethod
    def information_state_string(self, player: Optional[int] = None) -> str:
        """A key that is equal for exactly the states ``player`` cannot tell apart."""

    def chance_outcomes(self) -> List[Tuple[int, float]]:
        """``(outcome, probability)`` pairs at a chance node; probabilities sum to 1."""
        raise GameError(f"{type(self).__name__} has no chance nodes")

    # ----------------------------------------------------------------- optional
    def information_state_tensor(self, player: Optional[int] = None) -> np.ndarray:
        raise NotImplementedError(f"{self.game.short_name} defines no information-state tensor")

    def card_tensor(self, player: Optional[int], cards: Sequence[int]) -> Tuple[int, np.ndarray]:
        """``(player, tensor)``: a zero float32 tensor of the game's information-state shape with the one-hot
        of ``player`` (default: the player to act; first ``num_players`` entries) and of its private card
        ``cards[player]`` (next ``num_cards`` entries; left out while not dealt) set, for card games whose
        tensors start that way and fill the rest themselves."""
        player, card = self.player_card(player, cards)
        g = self.game
        out = np.zeros(g.information_state_tensor_shape(), dtype=np.float32)
        out[player] = 1
        if card is not None:
            out[g.num_players + card] = 1
        return player, out

    def player_card(self, player: Optional[int], cards: Sequence[int]) -> Tuple[int, Optional[int]]:
        """``(player, its private card cards[player])``, the card None while not dealt; ``player`` defaults
        to the player to act.  GameError at chance and terminal nodes (no player to ask about)."""
        if player is None:
            player = self.current_player()
        if player < 0:
            raise GameError("an information state needs a player at chance or terminal nodes")
        return player, (cards[player] if player < len(cards) else None)

    def observation_string(self, player: Optional[int] = None) -> str:
        """What ``player`` observes now (defaults to the information state)."""
        return self.information_state_string(player)

    def observation_tensor(self, player: Optional[int] = None) -> np.ndarray:
        raise NotImplementedError(f"{self.game.short_name} defines no observation tensor")

    def public_state_string(self) -> str:
        """What every player observes (no private information); games override when meaningful."""
        raise NotImplementedError(f"{self.game.short_name} defines no public state")

    def action_to_string(self, action: int, player: Optional[int] = None) -> str:
        return str(action)

    def _apply_joint_action(self, actions: Sequence[int]) -> None:
        raise GameError(f"{type(self).__name__} has no simultaneous-move nodes")

    def rewards(self) -> List[float]:
        """Rewards received on the last transition (defaults to returns at terminals, else 0)."""
        if self.is_terminal():
            return list(self.returns())
        return [0.0] * self.game.num_players

    # ----------------------------------------------------------------- public API
    def is_terminal(self) -> bool:
        return self.current_player() == TERMINAL

    def is_chance_node(self) -> bool:
        return self.current_player() == CHANCE

    def is_simultaneous_node(self) -> bool:
        return self.current_player() == SIMULTANEOUS

    def legal_actions(self, player: Optional[int] = None) -> List[int]:
        """Legal actions of ``player`` (default: the player to act; chance outcomes at chance nodes).

        ``player`` is a seat ``0..num_players-1`` or CHANCE; others raise :class:`GameError`.
        """
        if player is not None:
            _check_player(self, player, "legal_actions", allow_chance=True)
            player = int(player)
        current = self.current_player()
        if current == TERMINAL:
            return []
        if current == CHANCE:
            if player is not None and player != CHANCE:
                return []
            return [a for a, _ in self.chance_outcomes()]
        if player is None:
            if current == SIMULTANEOUS:
                raise GameError("simultaneous node: pass the player whose legal actions you want")
            player = current
        return self._legal_actions(player)

    def legal_actions_mask(self, player: Optional[int] = None) -> np.ndarray:
        mask = np.zeros(self.game.num_distinct_actions(), dtype=np.int8)
        mask[self.legal_actions(player)] = 1
        return mask

    def apply_action(self, action: int) -> None:
        """Apply ``action`` in place; raises :class:`IllegalActionError` listing the legal ones."""
        action = check_action_id(action)
        current = self.current_player()
        if current == TERMINAL:
            raise IllegalActionError(f"action {action} applied to a terminal state")
        if current == SIMULTANEOUS:
            raise IllegalActionError("simultaneous node: use apply_actions([a0, a1, ...])")
        legal = self.legal_actions()
        if action not in legal:
            who = "chance" if current == CHANCE else f"player {current}"
            names = ", ".join(f"{a} ({self.action_to_string(a, current)})" for a in legal)
            raise IllegalActionError(f"action {action} is not legal for {who}; legal: {names}")
        self._apply_action(int(action))
        self._history.append(int(action))

    def apply_trusted(self, action: int) -> None:
        """Apply ``action`` in place without checking it, for callers that have checked it already (the
        platform server's decisions, the cards of a seeded deal): an illegal action corrupts the state."""
        action = int(action)
        self._apply_action(action)
        self._history.append(action)

    def apply_actions(self, actions: Sequence[int]) -> None:
        """Apply one action per player at a simultaneous node."""
        if self.current_player() != SIMULTANEOUS:
            raise IllegalActionError("apply_actions is only for simultaneous nodes")
        if len(actions) != self.game.num_players:
            raise IllegalActionError(f"need {self.game.num_players} actions, got {len(actions)}")
        actions = [check_action_id(a) for a in actions]
        for p, a in enumerate(actions):
            legal = self._legal_actions(p)
            if a not in legal:
                raise IllegalActionError(f"action {a} is not legal for player {p}; legal: {legal}")
        self._apply_joint_action([int(a) for a in actions])
        self._history.extend(int(a) for a in actions)

    def child(self, action: int) -> "State":
        """A new state: this one after ``action`` (this one is unchanged)."""
        new = self.clone()
        new.apply_action(action)
        return new

    def clone(self) -> "State":
        """An independent copy (games with large immutable members override for speed)."""
        return copy.deepcopy(self, memo={id(self.game): self.game})

    def history(self) -> List[int]:
        """Actions applied from the root (chance outcomes included)."""
        return list(self._history)

    def serialize(self) -> str:
        """``'GAME_STRING|a,b,c'``: enough to rebuild the state with :func:`deserialize_state`."""
        return f"{self.game.game_string()}|{','.join(map(str, self._history))}"

    def __str__(self) -> str:
        return self.serialize()


def deserialize_state(text: str) -> State:
    """Rebuild a state from :meth:`State.serialize` output (the game is loaded from the string)."""
    if "|" not in text:
        raise GameError(f"serialized state must look like 'GAME|a,b,c', got {text!r}")
    game_part, _ = text.rsplit("|", 1)
    return build_game(game_part).deserialize_state(text)
