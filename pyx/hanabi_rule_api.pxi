# Included by hanabi_engine.pyx: the Python entry points of the rule agents: :class:`RuleTable`,
# :func:`agent_action`, :func:`rule_fires`, :func:`playable_probabilities`, :func:`play_games`,
# :func:`record_states` and :func:`actions_on_states`.

cdef class RuleTable:
    """The rule base as a C array: entry i = (kind, condition, threshold)."""
    cdef Rule* rules
    cdef readonly int size

    def __cinit__(self, kinds, conds, thresholds, params=None):
        cdef int i
        if params is None:
            params = [0] * len(kinds)
        if not len(kinds) == len(conds) == len(thresholds) == len(params):
            raise ValueError(f"kinds, conds, thresholds and params need equal lengths, got {len(kinds)}, "
                             f"{len(conds)}, {len(thresholds)}, {len(params)}")
        self.size = len(kinds)
        self.rules = <Rule*>malloc(max(1, self.size) * sizeof(Rule))
        if self.rules == NULL:
            raise MemoryError("RuleTable")
        for i in range(self.size):
            self.rules[i].kind = kinds[i]
            self.rules[i].cond = conds[i]
            self.rules[i].threshold = thresholds[i]
            self.rules[i].param = params[i]

    def __dealloc__(self):
        free(self.rules)


def agent_action(EngineState state not None, RuleTable table not None, rules, uint64_t seed=0):
    """Move the production-rule agent ``rules`` (rule indices) picks at ``state``, and the index of the rule that fired (-1: fallback)."""
    cdef int cur = st_current(&state.cfg, &state.st)
    if cur < 0:
        raise ValueError("agent_action needs a decision node")
    cdef cnp.ndarray[int, ndim=1, mode="c"] arr = np.ascontiguousarray(rules, dtype=np.intc)
    if arr.shape[0] and (arr.min() < 0 or arr.max() >= table.size):
        raise ValueError(f"rule indices must be in [0, {table.size})")
    cdef uint64_t rng = mix_seed(seed, 7)
    cdef int fired
    cdef int m = agent_act(&state.cfg, &state.st, <int*>arr.data, arr.shape[0], table.rules, &rng, NULL, &fired)
    return m, fired


def rule_fires(EngineState state not None, RuleTable table not None, int rule_index, uint64_t seed=0):
    """Move proposed by one rule of the table at ``state`` for the player to act, or -1."""
    cdef View v
    cdef uint64_t rng = mix_seed(seed, 11)
    cdef int p = st_current(&state.cfg, &state.st)
    if p < 0:
        raise ValueError("rule_fires needs a decision node")
    if not 0 <= rule_index < table.size:
        raise ValueError(f"rule index {rule_index} outside [0, {table.size})")
    compute_view(&state.cfg, &state.st, p, &v)
    return fire_rule(&state.cfg, &state.st, p, &table.rules[rule_index], &v, &rng)


def playable_probabilities(EngineState state not None, int player):
    """Per card of ``player``: P(playable), P(useless), P(critical) from that player's grounded view."""
    cdef View v
    if not 0 <= player < state.cfg.players:
        raise ValueError(f"player {player} outside [0, {state.cfg.players})")
    compute_view(&state.cfg, &state.st, player, &v)
    return [(v.pplay[i], v.puse[i], v.pcrit[i]) for i in range(state.st.hand_len[player])]


def play_games(EngineConfig config not None, RuleTable table not None, seat_rules, int num_games, uint64_t seed=0):
    """Play ``num_games`` games with one rule chromosome per seat (array players x L).

    Returns ``(scores, played, stats)``: the HLE-style score per game (0 when the last life is lost,
    unless the config scores played cards), the cards on the fireworks per game, and per-seat
    statistics ``[turns, hint_turns, hints, plays, risk_sum]`` summed over games.
    Game i uses seed ``(seed, i)`` so results are reproducible and independent of batching.
    """
    cdef Cfg g = config.cfg
    cdef cnp.ndarray[int, ndim=2, mode="c"] rules = np.ascontiguousarray(seat_rules, dtype=np.intc)
    if rules.shape[0] != g.players:
        raise ValueError(f"need one chromosome per seat ({g.players}), got {rules.shape[0]}")
    if rules.size and (rules.min() < 0 or rules.max() >= table.size):
        raise ValueError(f"rule indices must be in [0, {table.size})")
    cdef int L = rules.shape[1]
    cdef cnp.ndarray[cnp.int32_t, ndim=1] scores = np.zeros(num_games, dtype=np.int32)
    cdef cnp.ndarray[cnp.int32_t, ndim=1] played = np.zeros(num_games, dtype=np.int32)
    cdef cnp.ndarray[cnp.float64_t, ndim=2] stats = np.zeros((g.players, 5), dtype=np.float64)
    cdef SeatStats seat[MAXP]
    cdef St s
    cdef int gi, m, p, fired
    cdef uint64_t rng
    cdef int* rp = <int*>rules.data
    memset(seat, 0, sizeof(seat))
    with nogil:
        for gi in range(num_games):
            st_reset(&g, &s, mix_seed(seed, 2 * gi))
            rng = mix_seed(seed, 2 * gi + 1)
            st_auto_deal(&g, &s)
            while not st_terminal(&g, &s):
                p = s.cur
                m = agent_act(&g, &s, rp + p * L, L, table.rules, &rng, &seat[p], &fired)
                st_apply(&g, &s, m)
                st_auto_deal(&g, &s)
            scores[gi] = st_score(&g, &s)
            played[gi] = fireworks_total(&g, &s)
    for p in range(g.players):
        stats[p, 0] = seat[p].turns
        stats[p, 1] = seat[p].hint_turns
        stats[p, 2] = seat[p].hints
        stats[p, 3] = seat[p].plays
        stats[p, 4] = seat[p].risk_sum
    return scores, played, stats


def record_states(EngineConfig config not None, RuleTable table not None, seat_rules, int num_games,
                  uint64_t seed=0):
    """Play games like :func:`play_games` and return every decision state visited (list of EngineState)."""
    cdef Cfg g = config.cfg
    cdef cnp.ndarray[int, ndim=2, mode="c"] rules = np.ascontiguousarray(seat_rules, dtype=np.intc)
    if rules.shape[0] != g.players:
        raise ValueError(f"need one chromosome per seat ({g.players}), got {rules.shape[0]}")
    if rules.size and (rules.min() < 0 or rules.max() >= table.size):
        raise ValueError(f"rule indices must be in [0, {table.size})")
    cdef int L = rules.shape[1], gi, m, p, fired
    cdef EngineState es
    cdef uint64_t rng
    cdef St s
    out = []
    for gi in range(num_games):
        st_reset(&g, &s, mix_seed(seed, 2 * gi))
        rng = mix_seed(seed, 2 * gi + 1)
        st_auto_deal(&g, &s)
        while not st_terminal(&g, &s):
            es = EngineState.__new__(EngineState)
            es.config = config
            es.cfg = g
            es.st = s
            out.append(es)
            p = s.cur
            m = agent_act(&g, &s, <int*>rules.data + p * L, L, table.rules, &rng, NULL, &fired)
            st_apply(&g, &s, m)
            st_auto_deal(&g, &s)
    return out


def actions_on_states(states, RuleTable table not None, rules, uint64_t seed=0):
    """The move a rule agent picks at each recorded state (int32 array)."""
    cdef cnp.ndarray[int, ndim=1, mode="c"] arr = np.ascontiguousarray(rules, dtype=np.intc)
    if arr.shape[0] and (arr.min() < 0 or arr.max() >= table.size):
        raise ValueError(f"rule indices must be in [0, {table.size})")
    cdef cnp.ndarray[cnp.int32_t, ndim=1] out = np.empty(len(states), dtype=np.int32)
    cdef EngineState es
    cdef uint64_t rng
    cdef int i, fired
    for i in range(len(states)):
        es = states[i]
        if es is None or st_current(&es.cfg, &es.st) < 0:
            raise ValueError(f"states[{i}] is not a decision state")
        rng = mix_seed(seed, i)
        out[i] = agent_act(&es.cfg, &es.st, <int*>arr.data, arr.shape[0], table.rules, &rng, NULL, &fired)
    return out
