"""Hand-coded convention bots for Hanabi, run in the engine kernel (``pyx/hanabi_conventions.pxi``).

* ``SmartBot`` -- Arthur O'Dwyer's SmartBot: public card knowledge and its conventions (a hint marks
  the newest newly-possibly-playable touched card as playable; a rank hint on the left partner's
  next discard warns that the card is the last copy; no warning means the next discard is safe;
  discarding a known playable card is a "discard finesse" on a partner's newest card; late in the
  game a gamble on the likeliest playable card).  Published: 23.09 / 23.30 / 22.44 / 20.69 for
  2 / 3 / 4 / 5 players.  ``SmartBotSafe`` never gambles (the Hanabi challenge's SmartBot for 3-5
  players, 23.12 / 22.19 / 20.25 in HLE scoring).
* ``Information`` -- the hat-guessing information strategy (Cox et al. 2015) as generalised to
  2-5 players by hanabi.rs: every hint encodes, modulo the number of distinguishable hints, the sum of
  every other player's answers to a fixed sequence of questions about their own hand (is this card
  playable / dead, which block of its possible identities); each receiver subtracts the answers it
  can see and decodes its own.  Published (hanabi.rs): 22.37 / 24.78 / 24.93 / 24.92.

Both track public knowledge across the game, so whole games are played in C by
:func:`convention_scores` (or stepped with :class:`ConventionTeam`); :meth:`ConventionAgent.act`
on a bare state rebuilds the knowledge from the state's hints only.
"""
from __future__ import annotations

from typing import Dict, Optional, Tuple

import numpy as np

from cfrkit._kernels import hanabi_engine as _engine

ConventionTeam = _engine.ConventionTeam

#: Public name -> kernel bot id (names are case-insensitive; aliases included).
CONVENTION_AGENTS: Dict[str, str] = {
    "SmartBot": "smartbot",
    "SmartBotSafe": "smartbot_safe",
    "Information": "information",
    "InformationBot": "information",
    "WTFWThat": "information",
}

#: Published mean scores (2, 3, 4, 5 players) in the authors' own scoring (cards played).
PUBLISHED_SCORES: Dict[str, Tuple[float, float, float, float]] = {
    "smartbot": (23.09, 23.30, 22.44, 20.69),
    # the Hanabi challenge's SmartBot (HLE scoring, 0 when the last life is lost) risks lives only with
    # 2 players: its 3-5 player figures are for this variant, its 2-player one for "smartbot"
    "smartbot_safe": (22.99, 23.12, 22.19, 20.25),
    "information": (22.37, 24.78, 24.93, 24.92),
}


class ConventionAgent:
    """A convention bot by name; every seat of a game plays the same bot (they share conventions)."""

    def __init__(self, name: str):
        key = lookup_convention(name)
        if key is None:
            raise ValueError(f"unknown convention bot {name!r}; known: {', '.join(CONVENTION_AGENTS)}")
        self.name = key
        self.kind = CONVENTION_AGENTS[key]

    def act(self, state, seed: int = 0) -> int:
        """Move at an :class:`~cfrkit._kernels.hanabi_engine.EngineState` decision node (knowledge from hints only)."""
        return int(ConventionTeam(state, self.kind).act())

    def play_games(self, players: int, games: int, seed: int = 0, played_cards: bool = False):
        """``(scores, played, moves)`` of ``games`` seeded self-play games (see :func:`convention_scores`)."""
        return convention_scores(self.kind, players, games, seed, played_cards)

    def __repr__(self) -> str:
        return f"<ConventionAgent {self.name}>"


def lookup_convention(name: str) -> Optional[str]:
    """The canonical name of a convention bot (case-insensitive), or None."""
    if not isinstance(name, str):
        return None
    table = {k.lower(): k for k in CONVENTION_AGENTS}
    return table.get(name.lower())


def kernel_kind(kind: str) -> str:
    """The kernel's bot id for a public name (``"SmartBotSafe"``) or a kernel id (``"smartbot_safe"``)."""
    key = lookup_convention(kind)
    return CONVENTION_AGENTS[key] if key is not None else kind


def deal_team(kind: str, players: int, seed: int = 0) -> "ConventionTeam":
    """A freshly dealt game (deck from ``seed``) played by convention bot ``kind``, ready to ``step``."""
    if not 2 <= players <= 5:
        raise ValueError(f"players must be in [2, 5], got {players}")
    state = _engine.EngineState(_engine.EngineConfig(players=players), seed=seed)
    while state.current_player() == -1:
        state.deal_random()
    return ConventionTeam(state, kernel_kind(kind))


def convention_scores(kind: str, players: int, games: int, seed: int = 0, played_cards: bool = False):
    """Self-play of a convention bot: ``(scores, played, moves)`` as int32 arrays of length ``games``.

    ``scores`` is HLE's score (0 when the last life is lost) unless ``played_cards``; ``played`` is the
    number of cards on the fireworks (the score hanabi.rs and O'Dwyer's framework report).  Game i is
    dealt from seed ``(seed, 2i)`` like the rule agents' :func:`~cfrkit._kernels.hanabi_engine.play_games`.
    """
    if not 2 <= players <= 5:
        raise ValueError(f"players must be in [2, 5], got {players}")
    if games < 1:
        raise ValueError(f"games must be >= 1, got {games}")
    cfg = _engine.EngineConfig(players=players, played_cards_scoring=played_cards)
    scores, played, moves = _engine.convention_play_games(cfg, kernel_kind(kind), games, seed)
    return np.asarray(scores), np.asarray(played), np.asarray(moves)
