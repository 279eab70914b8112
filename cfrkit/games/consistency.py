"""Consistency checks every registered game must pass (used by the test suite; usable on new games).

:func:`check_game` plays random games and checks: only legal actions are accepted, chance
probabilities are positive and sum to 1, returns sum to the declared constant (constant-sum games)
and lie within the declared utility bounds, serialising and replaying a history reproduces the
state, clones are independent, and -- where the game claims perfect recall -- every player's
information state determines the sequence of its own earlier information states and actions; information-state tensors have the declared shape.
It also checks that protocol misuse gives the documented errors (:func:`check_protocol_misuse`): a
player out of range, a non-integer or huge action id, ``chance_outcomes()`` away from chance nodes,
an action at a terminal state.
"""
from __future__ import annotations

import random
from typing import Dict, List, Tuple

from cfrkit.games.base import CHANCE, SIMULTANEOUS, TERMINAL, Game, GameError, IllegalActionError
from cfrkit.games.registry import game_specs, load


class ConsistencyError(AssertionError):
    pass


def _fail(game: Game, msg: str) -> None:
    raise ConsistencyError(f"{game.game_string()}: {msg}")


def _own_trajectory(trajectory: List[Tuple[int, str, int]], player: int) -> Tuple[Tuple[str, int], ...]:
    return tuple((key, action) for p, key, action in trajectory if p == player)


def _expect(game: Game, error, what: str, call) -> None:
    try:
        call()
    except error:
        return
    except Exception as exc:  # noqa: BLE001 -- any other type is the defect being checked for
        _fail(game, f"{what} raised {type(exc).__name__} ({str(exc)[:80]}), expected {error.__name__}")
    _fail(game, f"{what} was accepted, expected {error.__name__}")


def check_protocol_misuse(game: Game, state) -> None:
    """Misuse of ``state`` (not modified) must raise GameError / IllegalActionError, never answer."""
    n = game.num_players
    player = state.current_player()
    for bad in (n, 99, -7):
        _expect(game, GameError, f"legal_actions({bad})", lambda: state.legal_actions(bad))
        _expect(game, GameError, f"information_state_string({bad})", lambda: state.information_state_string(bad))
        _expect(game, GameError, f"observation_string({bad})", lambda: state.observation_string(bad))
    _expect(game, GameError, "legal_actions(1.5)", lambda: state.legal_actions(1.5))
    if player == TERMINAL:
        _expect(game, IllegalActionError, "apply_action at a terminal state", lambda: state.clone().apply_action(0))
        _expect(game, GameError, "chance_outcomes() at a terminal state", lambda: state.chance_outcomes())
        return
    if player != SIMULTANEOUS:
        legal = state.legal_actions()
        if legal:
            _expect(game, IllegalActionError, f"apply_action({float(legal[0])})",
                    lambda: state.clone().apply_action(float(legal[0])))
            _expect(game, IllegalActionError, f"apply_action({legal[0]} + 0.5)",
                    lambda: state.clone().apply_action(legal[0] + 0.5))
            _expect(game, IllegalActionError, f"apply_action(str({legal[0]}))",
                    lambda: state.clone().apply_action(str(legal[0])))
        for huge in (2 ** 40, 2 ** 70, -1):
            _expect(game, IllegalActionError, f"apply_action({huge})", lambda: state.clone().apply_action(huge))
    if player != CHANCE:
        _expect(game, GameError, "chance_outcomes() at a decision node", lambda: state.chance_outcomes())


def check_game(game: "str | Game", num_playthroughs: int = 200, seed: int = 0,
               max_steps: int = 100_000) -> Dict[str, int]:
    """Run random playthroughs and raise :class:`ConsistencyError` on the first violation.

    Returns simple counts (states visited, terminals) so callers can see the check did work.
    """
    game = load(game)
    rng = random.Random(seed)
    n = game.num_players
    # information-state key -> the player's own earlier (key, action) sequence (perfect recall)
    recall: Dict[Tuple[int, str], Tuple[Tuple[str, int], ...]] = {}
    visited = terminals = 0
    legal_of_key: Dict[Tuple[int, str], Tuple[int, ...]] = {}
    for playthrough in range(num_playthroughs):
        state = game.new_initial_state()
        trajectory: List[Tuple[int, str, int]] = []
        steps = 0
        while not state.is_terminal():
            steps += 1
            visited += 1
            if playthrough < 3 and steps <= 40:  # misuse probes at the first nodes of a few playthroughs
                check_protocol_misuse(game, state)
            if steps > max_steps:
                _fail(game, f"no terminal state after {max_steps} steps")
            player = state.current_player()
            if player == CHANCE:
                outcomes = state.chance_outcomes()
                total = sum(p for _, p in outcomes)
                if abs(total - 1.0) > 1e-9 or any(p <= 0 for _, p in outcomes):
                    _fail(game, f"chance probabilities {outcomes} do not form a distribution")
                if len({a for a, _ in outcomes}) != len(outcomes):
                    _fail(game, "duplicate chance outcomes")
                r, acc = rng.random(), 0.0
                action = outcomes[-1][0]
                for a, p in outcomes:
                    acc += p
                    if r < acc:
                        action = a
                        break
                state.apply_action(action)
                continue
            if player == SIMULTANEOUS:
                joint = []
                for p in range(n):
                    legal = state.legal_actions(p)
                    if not legal:
                        _fail(game, f"player {p} has no legal action at a simultaneous node")
                    joint.append(rng.choice(legal))
                state.apply_actions(joint)
                continue
            if not 0 <= player < n:
                _fail(game, f"current_player {player} is out of range")
            legal = state.legal_actions()
            if not legal:
                _fail(game, "a decision node with no legal actions")
            if sorted(set(legal)) != list(legal):
                _fail(game, f"legal actions {legal} are not sorted and unique")
            if max(legal) >= game.num_distinct_actions() or min(legal) < 0:
                _fail(game, f"legal actions {legal} outside [0, {game.num_distinct_actions()})")
            for other in range(n):
                if other != player and len(state.legal_actions(other)) > 0:
                    _fail(game, f"player {other} is offered legal actions while player {player} is to act "
                                f"(_legal_actions must be empty for a player who is not to act)")
            illegal = next((a for a in range(game.num_distinct_actions() + 1) if a not in legal), None)
            if illegal is not None:
                probe = state.clone()
                try:
                    probe.apply_action(illegal)
                    _fail(game, f"illegal action {illegal} was accepted (legal: {legal})")
                except IllegalActionError:
                    pass
            key = state.information_state_string(player)
            seen_legal = legal_of_key.setdefault((player, key), tuple(legal))
            if seen_legal != tuple(legal):
                _fail(game, f"information state {key!r} of player {player} has different legal actions in "
                            f"different states ({list(seen_legal)[:8]} vs {list(legal)[:8]})")
            if game.perfect_recall:
                own = _own_trajectory(trajectory, player)
                previous = recall.setdefault((player, key), own)
                if previous != own:
                    _fail(game, f"perfect recall violated at information state {key!r} of player {player}")
                if state.legal_actions() != legal:
                    _fail(game, "legal_actions changed between calls")
            shape = game.information_state_tensor_shape()
            if shape is not None:
                tensor = state.information_state_tensor(player)
                if tuple(tensor.shape) != tuple(shape):
                    _fail(game, f"information_state_tensor shape {tensor.shape} != declared {shape}")
            action = rng.choice(legal)
            before = state.serialize()
            child = state.child(action)
            if state.serialize() != before:
                _fail(game, "child() modified the parent state")
            trajectory.append((player, key, action))
            state.apply_action(action)
            if child.serialize() != state.serialize():
                _fail(game, "child(a) and apply_action(a) disagree")
        terminals += 1
        if playthrough < 3:
            check_protocol_misuse(game, state)
        if any(len(state.legal_actions(p)) > 0 for p in range(n)):
            _fail(game, "a terminal state offers legal actions")
        returns = state.returns()
        if len(returns) != n:
            _fail(game, f"returns has {len(returns)} entries for {n} players")
        if game.constant_sum and game.utility_sum is not None and abs(sum(returns) - game.utility_sum) > 1e-6:
            _fail(game, f"returns {returns} do not sum to {game.utility_sum}")
        lo, hi = game.min_utility(), game.max_utility()
        if any(r < lo - 1e-9 or r > hi + 1e-9 for r in returns):
            _fail(game, f"returns {returns} outside the declared bounds [{lo}, {hi}]")
        replayed = game.deserialize_state(state.serialize())
        if replayed.serialize() != state.serialize() or replayed.returns() != returns:
            _fail(game, "replaying the serialized history does not reproduce the terminal state")
        if replayed.history() != state.history():
            _fail(game, "history differs after replay")
    if game.short_name in game_specs():  # a game of the user's own need not be registered
        try:
            loaded = load(game.game_string())
        except GameError as exc:
            _fail(game, f"game string does not load back: {exc}")
        if loaded != game:
            _fail(game, "game string does not load back to an equal game")
    return {"states": visited, "terminals": terminals}
