"""Hold'em rules from ACPC game definitions, ACPC protocol strings, action abstraction, hand histories.

* :mod:`.definition` -- ACPC ``.game`` files: parse, validate, format; shipped ones in ``data/acpc/``.
* :mod:`.game` -- :class:`HoldemGame` (registered as ``holdem``): exact limit / no-limit betting.
* :mod:`.actions` -- :class:`ActionView` (fold / check-call / raise to ``[min, max]``, from
  ``state.action_view()``) and :class:`LegalActions` (the lazy id list ``legal_actions()`` returns).
* :mod:`.matchstate` -- ACPC ``MATCHSTATE`` strings to and from states.
* :mod:`.abstraction` -- action-abstracted wrapper game and pseudo-harmonic bet translation.
* :mod:`.history` -- ACPC logs and PHH hand histories: read, write, replay.

See docs/holdem.md.
"""
from cfrkit.games.holdem.actions import ActionView, LegalActions
from cfrkit.games.holdem.definition import (DefinitionError, GameDefinition, data_dir, data_path, list_definitions,
                                            load_definition, parse_definition)
from cfrkit.games.holdem.game import (CALL, FOLD, RAISE, RAISE_OFFSET, HoldemGame, HoldemState, hand_strength,
                                      raise_action, raise_amount)

__all__ = ["ActionView", "LegalActions", "DefinitionError", "GameDefinition", "data_dir", "data_path", "list_definitions", "load_definition",
           "parse_definition", "CALL", "FOLD", "RAISE", "RAISE_OFFSET", "HoldemGame", "HoldemState",
           "hand_strength", "raise_action", "raise_amount"]
from cfrkit.games.holdem.abstraction import (AbstractHoldemGame, AbstractHoldemState, parse_bet_spec,  # noqa: E402
                                             pseudo_harmonic_probability)

__all__ += ["AbstractHoldemGame", "AbstractHoldemState", "parse_bet_spec", "pseudo_harmonic_probability"]
