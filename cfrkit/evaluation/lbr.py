"""Local Best Response (Lisy and Bowling 2017): a lower bound on a poker agent's exploitability.

LBR plays real hands against the agent, in both seats on the same cards.  It tracks the agent's
range over its private hands by Bayes' rule (the agent's ``hand_action_probability`` of each action
it takes) and, at each of its own decisions in the rounds it is allowed to think in, picks the
action with the highest value under the assumption that the rest of the hand is checked / called
down, from:

* ``wp``: its equity (win + tie / 2) against the range over the board cards to come, exact in every
  round by default (hold'em: the exact preflop table of :mod:`cfrkit.cards.preflop`, and the
  runout kernels of :mod:`cfrkit.cards.range_equity` after the flop); with ``flop_samples`` /
  ``preflop_samples`` set, from that many sampled boards (the standard error is measured and reported);
* for each bet size ``a`` of its bet set, the agent's probability ``fp`` of folding to it
  (range-weighted ``hand_action_probability(state after a, fold)``).

With LBR's contribution ``m``, the agent's ``o`` and ``c`` what each will have in after a called
bet (capped by the agent's stack), in chips counted from the decision on::

    fold: 0      call: wp * 2 min(m', o) - (m' - m)      bet a: fp (m + o) + (1 - fp) (wp 2c - (c - m))

(``m'``: LBR's contribution after calling).  In the other rounds LBR checks or calls.  Any legal
raise size works (real no-limit betting): a bet of ``f`` pots raises to ``max bet + f * (pot after
calling)``, clamped to the legal sizes; all-in is the largest.  LBR is a real strategy, so its
winnings are a lower bound on the agent's exploitability up to sampling error.

Bet sets (``--bets``): ``FC`` (fold / call only), ``FCPA`` (also pot and all-in), or pot fractions
``0.5,1,A`` (fold and call always included).  Rounds (``--rounds``): ``1-4`` or ``3-4`` (1-based,
preflop = 1).  The four settings of the DeepStack supplement and OpenHoldem's Table 2 are
``FC/1-4``, ``FC/3-4``, ``FCPA/1-4``, ``FCPA/3-4``.

Results (:class:`LBRResult`) are in mbb/game of LBR (= of the agent's loss) with a 95% interval,
each deal counted once (the mean of LBR's two seats).  :func:`run_lbr` runs chunks of deals in
this process, in worker processes, or on a Ray cluster, and checkpoints finished chunks to a file
(atomically) so that a killed run resumes where it stopped.
"""
from __future__ import annotations

import copy
import math
import os
import time
from dataclasses import asdict, dataclass
from typing import List, Optional, Sequence, Tuple

import numpy as np

from cfrkit.cards.range_equity import RangeEquity
from cfrkit.games.base import GameError
from cfrkit.poker.agent import DEFAULT_TIME_LIMIT, AgentInterfaceError, CheckedAgent, agent_name
from cfrkit.poker.match import Hand, MatchObserver, play_match
from cfrkit.poker.view import PokerView, poker_view

FOLD, CALL = 0, 1
ALL_IN = math.inf


# ============================================================================ settings
@dataclass(frozen=True)
class LBRSettings:
    """LBR's bet set (pot fractions, ``inf`` = all-in), the 0-based rounds it acts in, and sampling.

    ``flop_samples``: None for exact flop equities, else that many sampled runouts;
    ``preflop_samples``: None for the exact preflop equity table in hold'em
    (:mod:`cfrkit.cards.preflop`), else that many sampled boards (the method before issue 27);
    ``calling_range``: value a called bet with the equity against the hands that do not fold (the
    range weighted by ``1 - P(fold | hand)``) instead of the whole range as Lisy and Bowling do
    (exact on the river against agents that only call or fold; still a real strategy, so still a
    lower bound; label suffix ``+cr``).
    """

    bets: Tuple[float, ...] = (1.0, ALL_IN)
    rounds: Tuple[int, ...] = (0, 1, 2, 3)
    flop_samples: Optional[int] = None
    preflop_samples: Optional[int] = None
    calling_range: bool = False

    def label(self) -> str:
        if not self.bets:
            b = "FC"
        elif self.bets == (1.0, ALL_IN):
            b = "FCPA"
        else:
            b = ",".join("A" if x == ALL_IN else f"{x:g}" for x in self.bets)
        r = sorted(self.rounds)
        rounds = f"{r[0] + 1}-{r[-1] + 1}" if r == list(range(r[0], r[-1] + 1)) else ",".join(str(x + 1) for x in r)
        return f"{b}/{rounds}" + ("+cr" if self.calling_range else "")


def parse_bets(spec: str) -> Tuple[float, ...]:
    """``FC`` -> (), ``FCPA`` -> (1, all-in), ``0.5,1,A`` -> (0.5, 1, all-in) (pot fractions)."""
    text = spec.strip().upper().replace(" ", "")
    if text == "FC":
        return ()
    if text == "FCPA":
        return (1.0, ALL_IN)
    out = []
    for tok in text.split(","):
        if tok in ("FC", ""):
            continue
        if tok in ("A", "ALLIN", "ALL-IN"):
            out.append(ALL_IN)
            continue
        if tok == "P":
            out.append(1.0)
            continue
        try:
            f = float(tok)
        except ValueError:
            raise GameError(f"bad LBR bet set {spec!r}: use FC, FCPA or pot fractions such as 0.5,1,A") from None
        if not f > 0 or not math.isfinite(f):
            raise GameError(f"bad LBR bet size {tok!r} in {spec!r}: pot fractions must be positive")
        out.append(f)
    return tuple(sorted(set(out)))


def parse_rounds(spec: str, num_rounds: int = 4) -> Tuple[int, ...]:
    """``1-4`` -> (0, 1, 2, 3); ``3-4`` -> (2, 3); ``2,4`` -> (1, 3) (1-based in, 0-based out)."""
    out = set()
    try:
        for part in spec.replace(" ", "").split(","):
            if "-" in part:
                a, b = part.split("-")
                out.update(range(int(a), int(b) + 1))
            elif part:
                out.add(int(part))
    except ValueError:
        raise GameError(f"bad LBR rounds {spec!r}: use e.g. 1-4, 3-4 or 2,4") from None
    if not out or min(out) < 1 or max(out) > num_rounds:
        raise GameError(f"LBR rounds {spec!r} must lie in 1..{num_rounds}")
    return tuple(sorted(r - 1 for r in out))


def settings_from(bets: str = "FCPA", rounds: str = "1-4", num_rounds: int = 4, **kw) -> LBRSettings:
    return LBRSettings(parse_bets(bets), parse_rounds(rounds, num_rounds), **kw)


# ============================================================================ one decision
def bet_actions(view: PokerView, state, fractions: Sequence[float]) -> List[int]:
    """Legal raise actions for LBR's bet sizes at ``state`` (pot fractions, ``inf`` = all-in)."""
    if not fractions:
        return []
    game = view.game
    short = game.short_name
    if short == "holdem":
        rng = state.raise_range()
        if rng is None:
            return []
        if state.d.is_limit:
            return [2]
        from cfrkit.games.holdem.game import raise_action

        p = state.current_player()
        out = []
        for f in fractions:
            if f == ALL_IN:
                total = rng[1]
            else:
                total = state.max_spent() + int(round(f * (state.pot() + state.call_amount(p))))
                total = min(rng[1], max(rng[0], total))
            a = raise_action(total)
            if a not in out:
                out.append(a)
        return out
    legal = state.legal_actions()
    if short == "leduc":
        return [2] if 2 in legal else []
    # no-limit Leduc: the game's sizes; each LBR fraction takes the nearest offered one
    offered = {a: (total - state.contrib[1 - state.player]) / float(2 * state.contrib[1 - state.player])
               for a, total in state.raise_to_amounts()}
    out = []
    for f in fractions:
        if f == ALL_IN:
            a = game.allin_action if game.allin_action in offered else None
        else:
            a = min(offered, key=lambda x: abs(offered[x] - f)) if offered else None
        if a is not None and a not in out:
            out.append(a)
    return out


@dataclass
class LBRDecision:
    action: int
    utilities: dict
    equity: float
    equity_error: float


def lbr_decision(view: PokerView, agent: CheckedAgent, state, seat: int, agent_range: np.ndarray,
                 settings: LBRSettings, seed: int = 0, equity: Optional[RangeEquity] = None) -> LBRDecision:
    """LBR's action at ``state`` (its seat ``seat`` to act) given the agent's range (see module doc).

    ``equity``: the hold'em equity engine to use (a :class:`~cfrkit.cards.range_equity.RangeEquity`
    kept across decisions shares its runout strengths); None makes one for this call.
    """
    if view.round_of(state) not in settings.rounds:
        return LBRDecision(CALL, {}, float("nan"), 0.0)
    hand = view.hand_of(state, seat)
    w = np.array(agent_range, dtype=np.float64)
    w[view.blocked(list(view.hand_cards(hand)) + list(view.public_cards(state)))] = 0.0
    total = w.sum()
    if total <= 0:
        return LBRDecision(CALL, {}, float("nan"), 0.0)
    w /= total
    rnd = view.round_of(state)
    if view.game.short_name == "holdem" and not (rnd == 0 and settings.preflop_samples is not None):
        engine = equity if equity is not None else RangeEquity(settings.flop_samples)

        def equity_against(weights):
            return engine.equity(hand, weights, view.public_cards(state), seed=seed)
    else:
        samples = settings.preflop_samples if rnd == 0 and view.game.short_name == "holdem" else None

        def equity_against(weights):
            return view.equity_vs_range(state, hand, weights, samples=samples, seed=seed)
    wp, err = equity_against(w)
    if not math.isfinite(wp):
        return LBRDecision(CALL, {}, wp, err)
    c = view.contributions(state)
    m, o = c[seat], c[1 - seat]
    opp_stack = view.stacks()[1 - seat]
    utils = {}
    child = state.clone()
    child.apply_action(CALL)
    m_call = view.contributions(child)[seat]
    utils[CALL] = wp * 2.0 * min(m_call, o) - (m_call - m)
    for a in bet_actions(view, state, settings.bets):
        child = state.clone()
        child.apply_action(a)
        t = view.contributions(child)[seat]
        if child.is_terminal() or child.is_chance_node() or child.current_player() != 1 - seat:
            fp = 0.0
        else:
            fold = agent.hand_action_probability(child, FOLD)
            fp = float(np.dot(w, fold))
        wp_called = wp
        if settings.calling_range and 0.0 < fp < 1.0:
            # the hands that go on are not the whole range: weigh each by its probability of not folding
            wp_called, e = equity_against(w * (1.0 - fold))
            err = max(err, e)
        called = min(t, opp_stack)
        utils[a] = fp * (m + o) + (1.0 - fp) * (wp_called * 2.0 * called - (called - m))
    if view.legal(state, FOLD):
        utils[FOLD] = 0.0
    best = max(utils, key=lambda a: (utils[a], a == CALL, a != FOLD))
    return LBRDecision(int(best), utils, wp, err)


# ============================================================================ LBR at the table
class LBRPlayer(MatchObserver):
    """LBR as a player of the match runner (:func:`cfrkit.poker.match.play_match`): ``agents[0]``.

    It acts (:meth:`act`) and, as an observer, tracks the agent's range: public cards remove the
    hands they block (:meth:`after_chance`), the agent's actions multiply the range by their
    likelihood (:meth:`action`, the agent's ``hand_action_probability``).  Equity sampling at deal
    ``i`` in seat ``s`` is seeded ``(2 i + s) * 1000 + decision``.  ``values`` / ``errors`` hold, per
    hand played, LBR's chips and the largest equity standard error it used.
    """

    name = "lbr"

    def __init__(self, view: PokerView, agent: CheckedAgent, settings: LBRSettings):
        self.view = view
        self.agent = agent
        self.settings = settings
        self.errors: List[float] = []
        self.seat = 0
        # runout strengths are shared by both seats of a deal and every decision on a street
        self.equity = RangeEquity(settings.flop_samples) if view.game.short_name == "holdem" else None

    def hand_start(self, hand: Hand) -> None:
        self.seat = hand.seat_of_player[0]
        self.seed = hand.deal * 2 + self.seat
        self.range = np.ones(self.view.num_hands)
        self.decisions = 0
        self.max_err = 0.0
        self.expecting = False

    def after_chance(self, hand: Hand, state) -> None:
        if self.equity is not None and not self.expecting and self.view.hands_dealt(state):
            # both seats' pairs: the other one is LBR's hand in the deal's other seating (same board),
            # so one kernel pass on the flop serves both; only the engine's caching sees it
            self.equity.expect_hands([self.view.hand_of(state, 0), self.view.hand_of(state, 1)])
            self.expecting = True
        public = self.view.public_cards(state)
        if public:
            self.range[self.view.blocked(public)] = 0.0

    def act(self, state) -> int:
        d = lbr_decision(self.view, self.agent, state, self.seat, self.range, self.settings,
                         seed=self.seed * 1000 + self.decisions, equity=self.equity)
        self.decisions += 1
        self.max_err = max(self.max_err, d.equity_error)
        return d.action

    def action(self, hand: Hand, state, seat: int, action: int) -> None:
        if seat == self.seat:
            return
        rng = self.range * self.agent.hand_action_probability(state, action)
        s = rng.sum()
        if s <= 0:
            raise AgentInterfaceError(f"agent {self.agent.name!r} at {self.view.describe(state)}: it played {action}, "
                                      f"to which hand_action_probability gives probability 0 for every hand")
        self.range = rng / s

    def hand_end(self, hand: Hand) -> None:
        self.errors.append(self.max_err)


def lbr_deals(agent, game, seed: int, start: int, stop: int, settings: LBRSettings,
              time_limit: float = DEFAULT_TIME_LIMIT) -> np.ndarray:
    """float64[stop - start, 3]: per deal, LBR's chips in seat 0, in seat 1, and the largest equity
    standard error used.  ``agent`` is deep-copied first, so a chunk's result does not depend on
    which worker ran it or what ran before.  The hands are a duplicate match of the runner (LBR in
    seat 0, then seat 1, on the same cards)."""
    view = poker_view(game)
    checked = CheckedAgent(copy.deepcopy(agent), view, time_limit)
    lbr = LBRPlayer(view, checked, settings)
    res = play_match(view.game, [lbr, checked], stop - start, seed=seed, duplicate=True, first_deal=start,
                     observers=[lbr], time_limit=time_limit)
    out = np.zeros((stop - start, 3))
    out[:, :2] = res.hand_values.reshape(-1, 2)
    out[:, 2] = np.asarray(lbr.errors).reshape(-1, 2).max(axis=1)
    return out


# ============================================================================ the run
@dataclass
class LBRResult:
    """LBR's winnings against ``agent``: ``mbb_per_game`` with ``ci95`` (half-width), per seat, and speed."""

    game: str
    agent: str
    settings: str
    deals: int
    mbb_per_game: float
    ci95: float
    seat_mbb: Tuple[float, float]
    max_equity_error: float
    hands_per_second: float
    values: np.ndarray  # float64[deals, 2] chips of LBR per deal and seat

    def __str__(self) -> str:
        return (f"LBR {self.settings} vs {self.agent} in {self.game}: {self.mbb_per_game:+.1f} +- {self.ci95:.1f} "
                f"mbb/g over {self.deals} deals ({2 * self.deals} hands; seats {self.seat_mbb[0]:+.0f} / "
                f"{self.seat_mbb[1]:+.0f}; {self.hands_per_second:.1f} hands/s)")

    def to_dict(self) -> dict:
        d = asdict(self)
        d.pop("values")
        return d


def _summarise(view: PokerView, agent: str, settings: LBRSettings, values: np.ndarray, errors: np.ndarray,
               seconds: float, hands_timed: int) -> LBRResult:
    scale = 1000.0 / view.big_blind
    per_deal = values.mean(axis=1) * scale
    n = len(per_deal)
    sd = float(per_deal.std(ddof=1)) if n > 1 else float("nan")
    return LBRResult(view.game.game_string(), agent, settings.label(), n, float(per_deal.mean()),
                     1.96 * sd / math.sqrt(n) if n > 1 else float("inf"),
                     (float(values[:, 0].mean() * scale), float(values[:, 1].mean() * scale)),
                     float(errors.max()) if errors.size else 0.0,
                     hands_timed / seconds if seconds > 0 else float("nan"), values)


def _checkpoint_header(view, agent, settings, seed, deals, chunk):
    return {"kind": "lbr", "game": view.game.game_string(), "agent": agent, "settings": settings.label(),
            "flop_samples": settings.flop_samples, "preflop_samples": settings.preflop_samples,
            "seed": int(seed), "deals": int(deals), "chunk": int(chunk)}


def _load_checkpoint(path, header):
    from cfrkit.policy import load_npz_checked

    got, arrays = load_npz_checked(path, "cfrkit-lbr", ["values", "done"])
    for key, value in header.items():
        if key != "deals" and got.get(key) != value:  # deal i depends on (seed, i) only: any count extends
            raise GameError(f"checkpoint {path} was made with {key}={got.get(key)!r}, this run has {value!r}; "
                            f"use another --checkpoint file or the same settings")
    return arrays["values"], arrays["done"]


def _save_checkpoint(path, header, values, done):
    from cfrkit.policy import save_npz_atomic

    save_npz_atomic(path, dict(header, magic="cfrkit-lbr"), values=values, done=done)


def run_lbr(agent, game, deals: int, settings: LBRSettings = LBRSettings(), seed: int = 0,
            processes: int = 1, ray_address: Optional[str] = None, chunk: int = 25,
            checkpoint: Optional[str] = None, progress: bool = False,
            time_limit: float = DEFAULT_TIME_LIMIT, start_method: str = "spawn") -> LBRResult:
    """LBR against ``agent`` over ``deals`` deals (2 hands each, one per seat) of ``game``.

    Args:
        agent: a poker agent with the per-hand interface (picklable for processes / Ray).
        game: heads-up hold'em or a Leduc-family game.
        settings: bet set and rounds (:func:`settings_from`).
        seed: deal seed (deal ``i`` = ``deal_for_hand(game, seed, i)``).
        processes: worker processes on this machine (1 = in this process).
        start_method: how they start: ``"spawn"`` (a fresh interpreter: imports and the agent sent
            once per worker, about a CPU second in all) or ``"fork"`` (POSIX: a copy of this process,
            nearly free; only safe when this process runs no other threads).  The results are the
            same (every chunk copies the agent first).
        ray_address: run chunks as Ray tasks: ``"local"`` starts a local instance with ``processes``
            CPUs, anything else is passed to ``ray.init(address=...)``.
        chunk: deals per task (the checkpoint's granularity).
        checkpoint: ``.npz`` file of finished chunks, written after each; an existing file with the
            same settings is resumed, also with more (or fewer) ``deals``: its finished chunks are kept.
    """
    view = poker_view(game)
    deals = int(deals)
    if deals <= 0 or chunk <= 0:
        raise GameError(f"deals and chunk must be positive, got {deals}, {chunk}")
    if max(settings.rounds) >= view.num_rounds():
        raise GameError(f"LBR rounds {settings.label()} exceed the game's {view.num_rounds()} rounds")
    name = agent_name(agent)
    # the interface is there before any work starts
    probe, _ = _first_agent_state(view)
    CheckedAgent(agent, view, time_limit).hand_action_probability(probe, CALL) if probe is not None else None
    chunks = [(s, min(deals, s + chunk)) for s in range(0, deals, chunk)]
    header = _checkpoint_header(view, name, settings, seed, deals, chunk)
    values = np.zeros((deals, 3))
    done = np.zeros(len(chunks), dtype=bool)
    if checkpoint and os.path.exists(checkpoint):
        old_values, old_done = _load_checkpoint(checkpoint, header)
        old_deals = len(old_values)
        old_chunks = [(s, min(old_deals, s + chunk)) for s in range(0, old_deals, chunk)]
        for k, bounds in enumerate(chunks):
            # a chunk is reused only with the same bounds (a partial last chunk of a shorter run is redone)
            if k < len(old_chunks) and old_chunks[k] == bounds and bool(old_done[k]):
                values[bounds[0]:bounds[1]] = old_values[bounds[0]:bounds[1]]
                done[k] = True
    todo = [k for k in range(len(chunks)) if not done[k]]
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=deals, initial=int(sum(chunks[k][1] - chunks[k][0] for k in range(len(chunks)) if done[k])),
                   desc=f"LBR {settings.label()} vs {name}", unit="deal")
    start_time = time.perf_counter()
    timed = 0

    def finish(k, out):
        nonlocal timed
        s, e = chunks[k]
        values[s:e] = out
        done[k] = True
        timed += 2 * (e - s)
        if checkpoint:
            _save_checkpoint(checkpoint, header, values, done)
        if bar is not None:
            bar.update(e - s)

    try:
        game_string = view.game.game_string()
        if ray_address:
            _run_ray(agent, game_string, seed, settings, time_limit, chunks, todo, processes, ray_address, finish)
        elif processes > 1 and len(todo) > 1:
            import multiprocessing as mp
            from concurrent.futures import ProcessPoolExecutor, as_completed

            if start_method not in mp.get_all_start_methods():
                raise GameError(f"start_method must be one of {mp.get_all_start_methods()}, got {start_method!r}")

            # the agent (a blueprint: tens of MB) goes to each worker once, not with every chunk
            with ProcessPoolExecutor(max_workers=min(processes, len(todo)), mp_context=mp.get_context(start_method),
                                     initializer=_set_worker_agent, initargs=(agent,)) as pool:
                futures = {pool.submit(_worker_deals, game_string, seed, chunks[k][0], chunks[k][1], settings,
                                       time_limit): k for k in todo}
                for fut in as_completed(futures):
                    finish(futures[fut], fut.result())
        else:
            for k in todo:
                finish(k, lbr_deals(agent, view.game, seed, chunks[k][0], chunks[k][1], settings, time_limit))
    finally:
        if bar is not None:
            bar.close()
    seconds = time.perf_counter() - start_time
    return _summarise(view, name, settings, values[:, :2], values[:, 2], seconds, timed)


_WORKER_AGENT = None


def _set_worker_agent(agent) -> None:
    """Pool initializer: the agent every chunk of this worker process copies."""
    global _WORKER_AGENT
    _WORKER_AGENT = agent


def _worker_deals(game_string, seed, start, stop, settings, time_limit):
    return lbr_deals(_WORKER_AGENT, game_string, seed, start, stop, settings, time_limit)


def _run_ray(agent, game_string, seed, settings, time_limit, chunks, todo, processes, address, finish):
    try:
        import ray
    except ImportError:  # pragma: no cover - ray is an extra
        raise GameError("Ray is not installed (pip install 'cfrkit[distributed]')") from None
    started = False
    if not ray.is_initialized():
        if address == "local":
            ray.init(num_cpus=max(1, processes), include_dashboard=False, log_to_driver=False)
        else:
            ray.init(address=address, log_to_driver=False)
        started = True
    try:
        task = ray.remote(num_cpus=1)(lbr_deals)
        agent_ref = ray.put(agent)
        refs = {task.remote(agent_ref, game_string, seed, chunks[k][0], chunks[k][1], settings, time_limit): k
                for k in todo}
        pending = list(refs)
        while pending:
            ready, pending = ray.wait(pending, num_returns=1)
            for r in ready:
                finish(refs[r], ray.get(r))
    finally:
        if started:
            ray.shutdown()


def _first_agent_state(view: PokerView):
    """A state where seat 0 acts after the deal of hand 0 (to probe an agent's interface early)."""
    state = view.game.new_initial_state()
    cards = view.deal(0, 0)
    k = 0
    while state.is_chance_node():
        state.apply_action(cards[k])
        k += 1
    if state.is_terminal():
        return None, None
    return state, cards


# ============================================================================ exact LBR (small games)
class _LBRPolicy:
    """LBR (seat ``seat``) and the agent as one policy of a Leduc-family game, for exact evaluation.

    The agent's part plays its ``hand_strategy`` row for the hand it holds; LBR's part replays the
    public history to rebuild the agent's range and takes :func:`lbr_decision`'s action.
    """

    def __init__(self, view: PokerView, agent: CheckedAgent, seat: Optional[int], settings: LBRSettings):
        self.view, self.agent, self.seat, self.settings = view, agent, seat, settings

    def agent_probs(self, state, player):
        hs = self.agent.hand_strategy(state)
        row = hs.probs[self.view.hand_of(state, player)]
        return {int(a): float(q) for a, q in zip(hs.actions, row) if q > 0}

    def action_probabilities(self, state, player=None):
        if player is None:
            player = state.current_player()
        if player != self.seat:
            return self.agent_probs(state, player)
        # rebuild the agent's range along the public history
        view = self.view
        replay = view.game.new_initial_state()
        rng = np.ones(view.num_hands)
        for action in state.history():
            if replay.is_chance_node():
                replay.apply_action(action)
                if not replay.is_chance_node() and view.public_cards(replay):
                    rng[view.blocked(view.public_cards(replay))] = 0.0
                continue
            if replay.current_player() != self.seat:
                rng = rng * self.agent.hand_action_probability(replay, action)
                if rng.sum() > 0:
                    rng /= rng.sum()
            replay.apply_action(action)
        return {lbr_decision(view, self.agent, state, self.seat, rng, self.settings).action: 1.0}


def exact_lbr_values(agent, game, settings: LBRSettings) -> Tuple[float, float]:
    """Exact expected chips of LBR in seat 0 and in seat 1 against ``agent`` (compiled-tree walk;
    Leduc-family and other small games only)."""
    from cfrkit.evaluation.exploitability import expected_values

    view = poker_view(game)
    checked = CheckedAgent(agent, view)
    out = []
    for seat in (0, 1):
        ev = expected_values(view.game, _LBRPolicy(view, checked, seat, settings))
        out.append(float(ev[seat]))
    return out[0], out[1]


def exact_best_response_values(agent, game) -> Tuple[float, float]:
    """Exact best-response value (chips) of each seat against ``agent`` (compiled-tree walk)."""
    from cfrkit.evaluation.exploitability import best_response_value

    view = poker_view(game)
    policy = _LBRPolicy(view, CheckedAgent(agent, view), None, LBRSettings())
    return (best_response_value(view.game, policy, 0), best_response_value(view.game, policy, 1))
