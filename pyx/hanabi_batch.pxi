# Included by hanabi_engine.pyx: :class:`BatchEngine`, many games stepped together without the GIL.

# ----------------------------------------------------------------------------- batched games
cdef class BatchEngine:
    """``num_envs`` independent games stepped together (auto-dealing, auto-reset on terminal).

    The player to act's observation and legal mask are written into the arrays ``obs`` (N x L uint8)
    and ``mask`` (N x num_moves uint8) after :meth:`reset` and every :meth:`step`.
    """
    cdef Cfg cfg
    cdef St* states
    cdef readonly int num_envs
    cdef uint64_t seed
    cdef uint64_t games_started
    cdef readonly cnp.ndarray obs
    cdef readonly cnp.ndarray mask
    cdef readonly cnp.ndarray current_player
    cdef readonly cnp.ndarray last_score
    cdef readonly bint encode
    cdef readonly EngineConfig config
    cdef readonly bint started
    cdef object mask_bool

    def __cinit__(self, EngineConfig config not None, int num_envs, uint64_t seed=0, bint encode=True):
        if not 1 <= num_envs <= 1 << 24:
            raise ValueError(f"num_envs must be in [1, 2**24], got {num_envs}")
        self.config = config
        self.cfg = config.cfg
        self.num_envs = num_envs
        self.seed = seed
        self.encode = encode
        self.states = <St*>malloc(num_envs * sizeof(St))
        if self.states == NULL:
            raise MemoryError(f"BatchEngine of {num_envs} games")
        memset(self.states, 0, num_envs * sizeof(St))
        self.started = False  # the games exist only after reset()
        self.obs = np.zeros((num_envs, self.cfg.enc_len if encode else 1), dtype=np.uint8)
        self.mask = np.zeros((num_envs, self.cfg.num_moves), dtype=np.uint8)
        self.mask_bool = self.mask.view(np.bool_)  # the same memory (0/1 bytes), as a boolean mask
        self.current_player = np.zeros(num_envs, dtype=np.int32)
        self.last_score = np.zeros(num_envs, dtype=np.int32)
        self.games_started = 0

    def __dealloc__(self):
        free(self.states)

    cdef void _start(self, int i) noexcept nogil:
        st_reset(&self.cfg, &self.states[i], mix_seed(self.seed, self.games_started))
        self.games_started += 1
        st_auto_deal(&self.cfg, &self.states[i])

    cdef void _observe(self, int i, unsigned char* obs, unsigned char* mask, int* cur) noexcept nogil:
        cdef St* s = &self.states[i]
        cur[i] = s.cur
        st_legal_mask(&self.cfg, s, mask + i * self.cfg.num_moves)
        if self.encode:
            st_encode(&self.cfg, s, s.cur, obs + i * self.cfg.enc_len)

    def _require_started(self):
        if not self.started:
            raise ValueError("call reset() before step(), random_steps(), state() or encode_all()")

    def reset(self):
        """Start a new game in every slot; returns ``(obs, mask, current_player)`` (``mask``: bool)."""
        cdef int i
        cdef unsigned char* o = <unsigned char*>self.obs.data
        cdef unsigned char* mk = <unsigned char*>self.mask.data
        cdef int* cur = <int*>self.current_player.data
        for i in range(self.num_envs):
            self._start(i)
            self._observe(i, o, mk, cur)
        self.started = True
        return self.obs, self.mask_bool, self.current_player

    def step(self, actions):
        """Apply one move per game.  Returns ``(obs, mask, current_player, rewards, dones, final_scores)``.

        ``rewards`` is the score change (HLE's rl_env reward); finished games restart at once, their
        final score in ``final_scores`` (-1 for games still running).  ``mask`` and ``dones`` are bool.
        """
        self._require_started()
        raw = np.asarray(actions)
        if raw.ndim != 1 or raw.shape[0] != self.num_envs:
            raise ValueError(f"need a 1-D array of {self.num_envs} actions, got shape {raw.shape}")
        if raw.dtype.kind not in "iu":
            raise ValueError(f"actions must be integers, got dtype {raw.dtype}")
        if raw.dtype.kind == "u" and raw.size and raw.max() > np.iinfo(np.int64).max:
            raise ValueError("actions out of range")
        cdef cnp.ndarray[cnp.int64_t, ndim=1] acts = np.ascontiguousarray(raw, dtype=np.int64)
        cdef cnp.ndarray[cnp.float32_t, ndim=1] rewards = np.zeros(self.num_envs, dtype=np.float32)
        cdef cnp.ndarray[cnp.uint8_t, ndim=1] dones = np.zeros(self.num_envs, dtype=np.uint8)
        cdef long long num_moves = self.cfg.num_moves
        cdef cnp.ndarray[cnp.int32_t, ndim=1] finals = np.full(self.num_envs, -1, dtype=np.int32)
        cdef int i, bad = -1, before, after
        cdef unsigned char* o = <unsigned char*>self.obs.data
        cdef unsigned char* mk = <unsigned char*>self.mask.data
        cdef int* cur = <int*>self.current_player.data
        with nogil:
            for i in range(self.num_envs):
                # range first: the cast to int must not wrap a huge id onto a legal one
                if acts[i] < 0 or acts[i] >= num_moves or not st_move_legal(&self.cfg, &self.states[i], <int>acts[i]):
                    bad = i
                    break
        if bad >= 0:
            raise ValueError(f"action {acts[bad]} is not legal in game {bad}")
        with nogil:
            for i in range(self.num_envs):
                before = st_score(&self.cfg, &self.states[i])
                st_apply(&self.cfg, &self.states[i], <int>acts[i])
                st_auto_deal(&self.cfg, &self.states[i])
                after = st_score(&self.cfg, &self.states[i])
                rewards[i] = after - before
                if st_terminal(&self.cfg, &self.states[i]):
                    dones[i] = 1
                    finals[i] = after
                    self._start(i)
                self._observe(i, o, mk, cur)
        return self.obs, self.mask_bool, self.current_player, rewards, dones.view(np.bool_), finals

    def random_steps(self, long num_steps, uint64_t seed=0):
        """Play ``num_steps`` uniformly random legal moves spread over all games (no encoding).

        Returns ``(steps, finished_games, score_sum)``.  Used by the benchmark.
        """
        cdef long k = 0
        cdef int i, m, stuck = -1
        cdef long finished = 0, score_sum = 0
        cdef uint64_t rng = mix_seed(seed, 3)
        self._require_started()
        with nogil:
            while k < num_steps and stuck < 0:
                for i in range(self.num_envs):
                    m = random_legal(&self.cfg, &self.states[i], &rng)
                    if m < 0:
                        stuck = i
                        break
                    st_apply(&self.cfg, &self.states[i], m)
                    st_auto_deal(&self.cfg, &self.states[i])
                    if st_terminal(&self.cfg, &self.states[i]):
                        finished += 1
                        score_sum += st_score(&self.cfg, &self.states[i])
                        self._start(i)
                k += self.num_envs
        if stuck >= 0:
            raise ValueError(f"game {stuck} has no legal move")
        return k, finished, score_sum

    def encode_all(self):
        """Re-encode every game's observation for its player to act (into ``obs``)."""
        cdef int i
        cdef unsigned char* o = <unsigned char*>self.obs.data
        self._require_started()
        if not self.encode:
            raise ValueError("this batch was built with encode=False")
        with nogil:
            for i in range(self.num_envs):
                st_encode(&self.cfg, &self.states[i], self.states[i].cur, o + i * self.cfg.enc_len)
        return self.obs

    def state(self, int i):
        """A copy of game ``i`` as an :class:`EngineState`."""
        self._require_started()
        if not 0 <= i < self.num_envs:
            raise ValueError(f"game index {i} outside [0, {self.num_envs})")
        cdef EngineState es = EngineState.__new__(EngineState)
        es.config = self.config
        es.cfg = self.cfg
        es.st = self.states[i]
        return es
