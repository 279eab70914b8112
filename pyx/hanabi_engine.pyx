# cython: language_level=3
"""Hanabi engine kernel: HLE rules, canonical encodings, batched stepping and rule agents in C.

Everything hot runs on plain C structs without the GIL:

* ``Cfg``  -- game parameters and derived sizes (move counts, encoding section lengths).
* ``St``   -- one game state: hands, card knowledge from hints (positive and negative), deck counts,
  fireworks, tokens, lives, the last move (for the encoding) and the end-game counter.
* ``Rule`` -- one production rule of the Walton-Rivers / MAP-Elites rule base (kind, threshold,
  condition).  An agent is an array of rule indices into a rule table; the first rule that fires
  gives the move, LegalRandom is the fallback.

Python sees small classes: :class:`EngineConfig`, :class:`EngineState` (one game, chance handled
either explicitly by :meth:`EngineState.deal` or by the seeded sampler), :class:`BatchEngine`
(many games stepped at once) and the module functions :func:`play_games` / :func:`agent_action`.
The Python packages ``cfrkit.games.hanabi`` and ``cfrkit.agents.hanabi`` wrap these.

Move ids follow HLE: discards ``0..H-1``, plays ``H..2H-1``, colour hints ``2H + (offset-1)*C + c``,
rank hints after all colour hints.  Card ids are ``colour * ranks + rank`` (0-based).
"""
from libc.string cimport memset, memcpy
from libc.stdlib cimport malloc, free
from libc.stdint cimport uint64_t
cimport numpy as cnp
import numpy as np

cnp.import_array()

DEF MAXP = 5
DEF MAXC = 5
DEF MAXR = 5
DEF MAXH = 5
DEF MAXK = 25
DEF MAXM = 50

# The kernel is one module split by idea into included files (order matters: each uses the ones
# before it): the C state and transition, the canonical encoding, the rule agents, the Python classes
# over one game, the rule-agent entry points, the batched engine, and the convention bots.
include "hanabi_state.pxi"
include "hanabi_encoding.pxi"
include "hanabi_rules.pxi"
include "hanabi_api.pxi"
include "hanabi_rule_api.pxi"
include "hanabi_batch.pxi"
include "hanabi_conventions.pxi"
