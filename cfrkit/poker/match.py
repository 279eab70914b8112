"""The match runner: every in-process poker hand in cfrkit is played here.

::

    from cfrkit.poker import make_agent, play_match
    result = play_match("holdem", [make_agent("fixed-range-raiser"), make_agent("always-call")], 1000,
                        seed=0, duplicate=True)
    result.estimate            # Estimate(mean, ci95, std, n) of agents[0]'s winnings in mbb/hand
    result.payoffs             # float64[hands, agents]: chips each agent won in each hand played
    print(result.summary())

:func:`play_match` plays seeded deals between agents (one per player) of a hold'em game (any table
size) or a Leduc-family game, with the seat schedule of :mod:`cfrkit.poker.schedule` (duplicate:
each deal once per rotation of the seats, the cards staying with the seat).  :func:`play_hand`
plays one hand on given cards.  Agents are called through :class:`~cfrkit.poker.agent.CheckedAgent`
(legal actions, a time limit per answer).

Whatever else watches a match attaches as a :class:`MatchObserver` instead of owning a loop: the
progress bar (:class:`ProgressObserver`, ``progress=True``), AIVAT
(:class:`cfrkit.evaluation.aivat.AivatObserver`), the ACPC and PHH hand logs
(:mod:`cfrkit.poker.logs`), LBR's range tracking (:mod:`cfrkit.evaluation.lbr`).  An observer may add
an estimator of its own at the end (:meth:`MatchResult.add_estimator`, e.g. ``"aivat"``).

Estimators (:class:`Estimate`), all in milli-big-blinds per hand (mbb/h) of ``agents[0]`` with 95%
intervals (1.96 standard errors): ``plain`` (the mean of the hands' winnings), ``duplicate`` (the
mean over deals of the rotations' average) and any added by observers (averaged over the rotations
of a deal when duplicate).  ``std`` is per hand played, so ``plain.std ** 2 / other.std ** 2`` is the
variance reduction factor.
"""
from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from cfrkit.games.base import CHANCE, TERMINAL, Game, GameError, IllegalActionError, State
from cfrkit.games.registry import load
from cfrkit.poker.agent import DEFAULT_TIME_LIMIT, AgentInterfaceError, CheckedAgent, agent_name
from cfrkit.poker.schedule import seatings
from cfrkit.poker.view import PokerView, poker_view

__all__ = ["Estimate", "Hand", "MatchInfo", "MatchObserver", "MatchResult", "ProgressObserver", "estimate",
           "play_hand", "play_match"]


# ============================================================================ estimates
@dataclass
class Estimate:
    """A mean with its 95% interval: ``mean`` and ``ci95`` (half-width) in mbb/hand,
    ``std`` per hand played (mbb), ``n`` independent samples (hands, or deals when duplicate)."""

    mean: float
    ci95: float
    std: float
    n: int

    def __str__(self) -> str:
        return f"{self.mean:+.1f} +- {self.ci95:.1f} mbb/h (std {self.std:.0f} per hand, n={self.n})"


def estimate(samples: np.ndarray, hands_per_sample: int = 1) -> Estimate:
    """:class:`Estimate` from independent samples (mbb/h), each the mean of ``hands_per_sample`` hands."""
    x = np.asarray(samples, dtype=np.float64)
    n = x.size
    if n == 0:
        return Estimate(float("nan"), float("nan"), float("nan"), 0)
    sd = float(x.std(ddof=1)) if n > 1 else float("nan")
    return Estimate(float(x.mean()), 1.96 * sd / math.sqrt(n) if n > 1 else float("inf"),
                    sd * math.sqrt(hands_per_sample), n)


# ============================================================================ what observers see
@dataclass
class MatchInfo:
    """A match as it starts: the game and its view, the agents' names (in ``agents`` order), the
    deals (``first_deal .. first_deal + deals - 1``), the seed, duplicate seating and hands in all."""

    game: Game
    view: PokerView
    agents: Tuple[str, ...]
    deals: int
    seed: int
    duplicate: bool
    first_deal: int
    hands: int


@dataclass
class Hand:
    """One hand as it is played; the runner passes the same object to every hook of the hand.

    ``number``: position in play order (0-based); ``deal``: deal index; ``seat_of_player[j]`` the
    seat of agent ``j`` and ``player_of_seat`` its inverse; ``cards``: the deal's chance outcomes in
    dealing order; ``seat_agents[s]`` the (checked) agent in seat ``s`` and ``seat_names[s]`` its
    name; ``state``: the hand's state (terminal at :meth:`MatchObserver.hand_end`); ``returns``:
    chips won per seat and ``payoffs`` per agent (set when the hand ends).
    """

    number: int
    deal: int
    seat_of_player: Tuple[int, ...]
    player_of_seat: Tuple[int, ...]
    cards: Sequence[int]
    seat_agents: Sequence[Any]
    seat_names: Sequence[str]
    state: Optional[State] = None
    returns: Optional[List[float]] = None
    payoffs: Optional[List[float]] = None


class MatchObserver:
    """What may watch a match; every hook is optional (the runner calls only those an observer has).

    Order within a hand: :meth:`hand_start`; per run of chance nodes :meth:`before_chance` and
    :meth:`after_chance`; per decision :meth:`decision` (before the agent is asked) and
    :meth:`action` (the chosen action, before it is applied); :meth:`hand_end` with the terminal
    state and the payoffs.  :meth:`match_end` gets the result, or None when the match stopped early
    (an exception; whatever the observer keeps, e.g. a log of the hands played, is still written).
    """

    def match_start(self, match: MatchInfo) -> None:
        """Called once before the first hand."""

    def hand_start(self, hand: Hand) -> None:
        """Called after the agents' ``new_hand`` and before the first chance node."""

    def before_chance(self, hand: Hand, state: State) -> None:
        """``state`` is the first chance node of a run of chance nodes."""

    def after_chance(self, hand: Hand, state: State) -> None:
        """``state`` is the first state after a run of chance nodes."""

    def decision(self, hand: Hand, state: State, seat: int) -> None:
        """``seat`` is to act at ``state``; called before its agent is asked."""

    def action(self, hand: Hand, state: State, seat: int, action: int) -> None:
        """``seat`` chose ``action`` at ``state`` (not yet applied)."""

    def hand_end(self, hand: Hand) -> None:
        """``hand.state`` is terminal; ``hand.returns`` (per seat) and ``hand.payoffs`` (per agent) are set."""

    def match_end(self, result: "Optional[MatchResult]") -> None:
        """Called once at the end (``result`` None when the match stopped on an exception)."""


_HOOKS = ("match_start", "hand_start", "before_chance", "after_chance", "decision", "action", "hand_end",
          "match_end")


class _Hooks:
    """Bound hook lists, built once per match: an observer's hook is listed only when it overrides
    the no-op of :class:`MatchObserver`, so a match without observers pays no call per action."""

    def __init__(self, observers: Sequence[Any]):
        for name in _HOOKS:
            base = getattr(MatchObserver, name)
            bound = []
            for obs in observers:
                fn = getattr(obs, name, None)
                if fn is None or getattr(type(obs), name, None) is base:
                    continue
                bound.append(fn)
            setattr(self, name, tuple(bound))


_NO_HOOKS = _Hooks(())


class ProgressObserver(MatchObserver):
    """A tqdm progress bar over the hands of a match (``play_match(progress=True)`` attaches one)."""

    def __init__(self, desc: Optional[str] = None, unit: str = "hand"):
        self.desc = desc
        self.unit = unit
        self.bar = None

    def match_start(self, match: MatchInfo) -> None:
        from tqdm.auto import tqdm  # the bar's dependency is loaded only when a bar is asked for

        self.bar = tqdm(total=match.hands, desc=self.desc or " vs ".join(match.agents), unit=self.unit)

    def hand_end(self, hand: Hand) -> None:
        self.bar.update(1)

    def match_end(self, result) -> None:
        if self.bar is not None:
            self.bar.close()


# ============================================================================ one hand
def _distinct(agents: Sequence[Any]) -> List[Any]:
    """``agents`` without repeats (by identity), in order: an agent in two seats resets once a hand."""
    out: List[Any] = []
    for ag in agents:
        if all(ag is not s for s in out):
            out.append(ag)
    return out


class HandDriver:
    """One hand played step by step: the one definition of how cfrkit plays a hand (dealing the chance
    outcomes, legality, chips, the observers' hooks).  :func:`play_hand` and :func:`play_match` drive it
    synchronously; the platform server drives it from its event loop, awaiting remote decisions between
    the steps::

        driver = HandDriver(game, cards, hand, hooks)
        while (seat := driver.next_decision()) is not None:   # deals cards up to the next decision
            driver.apply(seat, agent_of[seat].act(driver.state))
        state = driver.finish()                              # terminal; state.returns(): chips per seat

    Args:
        game: the game; ``cards``: its chance outcomes in dealing order (GameError when they run out).
        hand: the :class:`Hand` the hooks get (None: no hooks, as the server).
        hooks: the match's bound observer hooks (``_Hooks``; default none).
        view: the game's poker view, for legality errors naming the agent (None: the engine's own errors).
        resets: agents whose ``new_hand`` is called first (each once).
        trusted: apply actions and cards unchecked (:meth:`State.apply_trusted`), for a caller that
            passes legal actions only (the server checks every answer before applying it).
        trusted_cards: apply the cards unchecked only (:func:`play_match`: a seeded deal of the view).
            With observers of ``action`` attached, an action is checked once, by the view, before they see it.
    """

    __slots__ = ("state", "hand", "cards", "hooks", "view", "trusted", "trusted_cards", "_k")

    def __init__(self, game: Game, cards: Sequence[int], hand: Optional[Hand] = None, hooks: "_Hooks" = None,
                 view: Optional[PokerView] = None, resets: Sequence[Any] = (), trusted: bool = False,
                 trusted_cards: bool = False):
        self.state = state = game.new_initial_state()
        self.hand, self.cards, self.view, self.trusted = hand, cards, view, bool(trusted)
        # the cards of a seeded deal (PokerView.deal) are distinct cards of the deck by construction
        self.trusted_cards = bool(trusted or trusted_cards)
        self.hooks = hooks = _NO_HOOKS if hooks is None else hooks
        self._k = 0
        if hand is not None:
            hand.state = state
        for ag in resets:
            ag.new_hand()
        for f in hooks.hand_start:
            f(hand)

    def next_decision(self) -> Optional[int]:
        """Deal the chance outcomes up to the next decision (hooks ``before_chance`` / ``after_chance``
        around each run of chance nodes, then ``decision``); the seat to act, or None once the hand is over."""
        state, hooks = self.state, self.hooks
        p = state.current_player()
        if p == CHANCE:
            for f in hooks.before_chance:
                f(self.hand, state)
            cards, k = self.cards, self._k
            while p == CHANCE:
                if k >= len(cards):
                    raise GameError(f"the deal ran out of cards after {k}")
                if self.trusted_cards:
                    state.apply_trusted(cards[k])
                else:
                    state.apply_action(int(cards[k]))
                k += 1
                p = state.current_player()
            self._k = k
            for f in hooks.after_chance:
                f(self.hand, state)
        if p == TERMINAL:
            return None
        for f in hooks.decision:
            f(self.hand, state, p)
        return p

    def apply(self, seat: int, action: int, agent: Any = None) -> None:
        """Apply ``action`` of ``seat`` (the seat :meth:`next_decision` returned), answered by ``agent``
        (named in errors); hook ``action`` sees legal actions only.  An illegal action raises
        :class:`~cfrkit.poker.agent.AgentInterfaceError` (with a view) or the engine's IllegalActionError."""
        state, view = self.state, self.view
        on_action = self.hooks.action
        if on_action:
            # observers see legal actions only; without them the engine's own check below suffices
            if view is not None:
                if not view.legal(state, action):
                    raise _illegal(agent, view, state, action)
                for f in on_action:
                    f(self.hand, state, seat, action)
                state.apply_trusted(action)  # checked just above: not again
                return
            for f in on_action:
                f(self.hand, state, seat, action)
        if self.trusted:
            state.apply_trusted(action)
            return
        try:
            state.apply_action(action)
        except IllegalActionError:
            if view is None:
                raise
            raise _illegal(agent, view, state, action) from None

    def finish(self) -> State:
        """The terminal state, after setting the hand's ``returns`` (chips per seat) and ``payoffs``
        (per agent) and calling hook ``hand_end``."""
        state, hand = self.state, self.hand
        if not state.is_terminal():
            raise GameError("the hand is not over: call next_decision until it returns None")
        if hand is not None:
            hand.returns = returns = [float(x) for x in state.returns()]
            hand.payoffs = [returns[s] for s in hand.seat_of_player]
            for f in self.hooks.hand_end:
                f(hand)
        return state


def _play(game: Game, seat_agents: Sequence[Any], cards: Sequence[int], hand: Hand, hooks: _Hooks,
          view: Optional[PokerView], resets: Sequence[Any], trusted_cards: bool = False) -> State:
    driver = HandDriver(game, cards, hand, hooks, view, resets, trusted_cards=trusted_cards)
    seat = driver.next_decision()
    while seat is not None:
        agent = seat_agents[seat]
        driver.apply(seat, agent.act(driver.state), agent)
        seat = driver.next_decision()
    return driver.finish()


def _illegal(agent, view: PokerView, state: State, action: int) -> GameError:
    if isinstance(agent, CheckedAgent):
        return agent.illegal(state, action)
    return AgentInterfaceError(f"agent {agent_name(agent)!r} at {view.describe(state)}: act returned illegal "
                               f"action {action}")


def play_hand(game: "str | Game", seat_agents: Sequence[Any], cards: Sequence[int],
              observers: Sequence[Any] = (), number: int = 0, deal: int = 0) -> State:
    """Play one hand with ``seat_agents[s]`` in seat ``s`` on the chance outcomes ``cards`` (dealing order).

    Agents are called as given (wrap them in :class:`~cfrkit.poker.agent.CheckedAgent` for checks).
    Observers get the hand's hooks (not ``match_start`` / ``match_end``).  Returns the terminal state
    (``state.returns()``: chips won per seat).  Raises ``GameError`` when ``cards`` run out.
    """
    game = load(game)
    try:
        view: Optional[PokerView] = poker_view(game, heads_up=False)
    except GameError:  # another game: its engine's own errors
        view = None
    n = len(seat_agents)
    seats = tuple(range(n))
    hand = Hand(int(number), int(deal), seats, seats, cards, seat_agents,
                tuple(agent_name(a) for a in seat_agents))
    hooks = _Hooks(observers) if observers else _NO_HOOKS
    return _play(game, seat_agents, cards, hand, hooks, view, _distinct(seat_agents))


# ============================================================================ the match
@dataclass
class MatchResult:
    """Outcome of :func:`play_match`: chips per hand and agent, and estimates in mbb/h of ``agents[0]``.

    ``payoffs``: float64[hands, agents], chips each agent won in each hand played (play order);
    ``hand_deal``: int64[hands] deal index of each hand; ``seats``: int64[hands, agents], the seat of
    each agent; ``estimators``: per-hand values (chips, ``agents[0]``) of estimators added by
    observers (``"aivat"``).
    """

    game: str
    agents: Tuple[str, ...]
    deals: int
    seed: int
    duplicate: bool
    big_blind: float
    payoffs: np.ndarray
    hand_deal: np.ndarray
    seats: np.ndarray
    first_deal: int = 0
    estimators: Dict[str, np.ndarray] = field(default_factory=dict)

    # -------------------------------------------------------------- per hand
    @property
    def hands_played(self) -> int:
        return int(self.payoffs.shape[0])

    @property
    def num_agents(self) -> int:
        return int(self.payoffs.shape[1])

    @property
    def hand_values(self) -> np.ndarray:
        """float64[hands]: chips ``agents[0]`` won in each hand played."""
        return self.payoffs[:, 0]

    @property
    def hand_seat(self) -> np.ndarray:
        """int64[hands]: the seat of ``agents[0]`` in each hand played."""
        return self.seats[:, 0]

    @property
    def returns(self) -> np.ndarray:
        """Alias of :attr:`payoffs` (``returns[hand, agent]``, chips)."""
        return self.payoffs

    @property
    def groups(self) -> np.ndarray:
        """int64[hands]: rotation group of each hand (duplicate: its deal; else ``hand // agents``)."""
        if self.duplicate:
            return self.hand_deal - self.first_deal
        return np.arange(self.hands_played, dtype=np.int64) // self.num_agents

    @property
    def aivat_values(self) -> Optional[np.ndarray]:
        """AIVAT values (chips, ``agents[0]``) per hand played, or None without an AIVAT observer."""
        return self.estimators.get("aivat")

    # -------------------------------------------------------------- estimates
    def _scale(self) -> float:
        return 1000.0 / self.big_blind

    def _combined(self, values: np.ndarray) -> Estimate:
        """Estimate of per-hand values: averaged over a deal's rotations when duplicate."""
        v = np.asarray(values, dtype=np.float64) * self._scale()
        if self.duplicate:
            n = self.num_agents
            return estimate(v.reshape(-1, n).mean(axis=1), n)
        return estimate(v)

    def plain_of(self, agent: int = 0) -> Estimate:
        """The mean of ``agents[agent]``'s winnings per hand (mbb/h), each hand a sample."""
        return estimate(self.payoffs[:, agent] * self._scale())

    def duplicate_of(self, agent: int = 0) -> Optional[Estimate]:
        """``agents[agent]``'s winnings averaged over each deal's rotations (None unless duplicate)."""
        return self._combined(self.payoffs[:, agent]) if self.duplicate else None

    @property
    def plain(self) -> Estimate:
        return self.plain_of(0)

    @property
    def duplicate_estimate(self) -> Optional[Estimate]:
        return self.duplicate_of(0)

    @property
    def aivat(self) -> Optional[Estimate]:
        values = self.estimators.get("aivat")
        return None if values is None else self._combined(values)

    def add_estimator(self, name: str, values: np.ndarray) -> None:
        """Add per-hand values (chips of ``agents[0]``, float64[hands]) of another unbiased estimator."""
        values = np.asarray(values, dtype=np.float64)
        if values.shape != (self.hands_played,):
            raise GameError(f"estimator {name!r} gave {values.shape} values for {self.hands_played} hands")
        self.estimators[str(name)] = values

    def estimates(self) -> Dict[str, Estimate]:
        """Every estimator of ``agents[0]``: ``plain``, ``duplicate`` (when duplicate) and the added ones."""
        out = {"plain": self.plain}
        if self.duplicate:
            out["duplicate"] = self.duplicate_estimate
        for name, values in self.estimators.items():
            out[name] = self._combined(values)
        return out

    @property
    def estimate(self) -> Estimate:
        """The lowest-variance estimator run: AIVAT, else duplicate, else plain."""
        return self.aivat or self.duplicate_estimate or self.plain

    def mbb_per_hand(self, player: int = 0, confidence: float = 0.95) -> Tuple[float, float]:
        """``(mean, half-width)`` of ``agents[player]``'s winnings in mbb/hand with samples the rotation
        groups (:attr:`groups`; duplicate: the hands of one deal); normal interval, 95% or 99%."""
        per_group = np.bincount(self.groups, weights=self.payoffs[:, player])
        hands_per_group = np.bincount(self.groups)
        x = per_group / hands_per_group * self._scale()
        z = {0.95: 1.959964, 0.99: 2.575829}.get(confidence, 1.959964)
        half = z * x.std(ddof=1) / math.sqrt(len(x)) if len(x) > 1 else float("inf")
        return float(x.mean()), float(half)

    def variance_reduction(self) -> dict:
        """Variance of plain winnings over each estimator's, per hand played (x times fewer hands)."""
        out = {}
        base = self.plain.std ** 2
        for key, est in self.estimates().items():
            if key != "plain" and est is not None and est.std > 0:
                out[key] = base / est.std ** 2
        return out

    def summary(self) -> str:
        lines = [f"{' vs '.join(self.agents)} in {self.game}: {self.hands_played} hands "
                 f"({self.deals} deals{', duplicate' if self.duplicate else ''}, seed {self.seed})"]
        for key, est in self.estimates().items():
            lines.append(f"  {key:<9} {est}")
        vr = self.variance_reduction()
        if vr:
            lines.append("  variance reduction vs plain: " + ", ".join(f"{k} x{v:.1f}" for k, v in vr.items()))
        return "\n".join(lines)

    def to_dict(self) -> dict:
        out = {"game": self.game, "agents": list(self.agents), "deals": self.deals, "seed": self.seed,
               "duplicate": self.duplicate, "hands_played": self.hands_played, "big_blind": self.big_blind,
               "plain": asdict(self.plain), "variance_reduction": self.variance_reduction()}
        for key, est in self.estimates().items():
            if key != "plain":
                out["duplicate_estimate" if key == "duplicate" else key] = asdict(est)
        return out

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2)


def play_match(game: "str | Game", agents: Sequence[Any], hands: int, *, seed: int = 0, duplicate: bool = True,
               observers: Sequence[Any] = (), progress: bool = False, first_deal: int = 0,
               time_limit: float = DEFAULT_TIME_LIMIT) -> MatchResult:
    """Play ``hands`` deals of ``game`` between ``agents`` (one per player; the same object may sit twice).

    Args:
        game: a hold'em game (any table size) or a Leduc-family game (string or Game).
        agents: poker agents (``act``, ``new_hand``; see :class:`~cfrkit.poker.agent.PokerAgent`).
            An agent with ``check_game(game)`` is asked whether it plays these rules.
        hands: number of deals; with ``duplicate`` each is played once per rotation of the seats
            (heads-up: twice), so ``hands * len(agents)`` hands in all.
        seed: match seed (deal ``i`` is the view's ``deal(seed, i)``).
        duplicate: play each deal in every rotation (else deal ``first_deal + k`` once, rotated by ``k``).
        observers: :class:`MatchObserver` objects (AIVAT, hand logs, storage, ...).
        progress: attach a :class:`ProgressObserver` (tqdm bar).
        first_deal: index of the first deal, so a long match can be split over processes and the
            parts combined.
        time_limit: seconds an agent may take per answer (``float("inf")`` for none).

    Returns a :class:`MatchResult` (estimates in mbb/hand of ``agents[0]``).  Raises ``GameError``
    for bad input and :class:`~cfrkit.poker.agent.AgentInterfaceError` for a wrong agent answer.
    """
    view = poker_view(game, heads_up=False)
    g = view.game
    n = g.num_players
    if len(agents) != n:
        raise GameError(f"{g.game_string()} needs {n} agents, got {len(agents)}")
    hands = int(hands)
    if hands <= 0:
        raise GameError(f"hands must be positive, got {hands}")
    first_deal = int(first_deal)
    if first_deal < 0:
        raise GameError(f"first_deal must be >= 0, got {first_deal}")
    if not float(time_limit) > 0:  # NaN fails this too; float("inf") means no limit
        raise GameError(f"time_limit must be a positive number of seconds, got {time_limit!r}")
    for a in agents:
        check = getattr(a, "check_game", None)
        if check is not None:
            check(g)
    checked: List[Any] = []
    for a in agents:  # one checked wrapper per distinct agent object
        same = [c for c, b in zip(checked, agents) if b is a]
        checked.append(same[0] if same else CheckedAgent(a, view, time_limit, check_legal=False))
    shared = len(_distinct(checked)) < len(checked)  # one agent object in several seats
    names = [agent_name(a) for a in agents]
    if len(set(names)) < len(names):
        names = [f"{nm}-{chr(ord('A') + j)}" if n <= 26 else f"{nm}-{j}" for j, nm in enumerate(names)]
    names = tuple(names)
    observers = list(observers)
    if progress:
        observers.append(ProgressObserver())
    hooks = _Hooks(observers) if observers else _NO_HOOKS
    total = hands * n if duplicate else hands
    info = MatchInfo(g, view, names, hands, int(seed), bool(duplicate), first_deal, total)
    payoffs: List[List[float]] = []
    deal_of: List[int] = []
    seats: List[Tuple[int, ...]] = []
    result = None
    for f in hooks.match_start:
        f(info)
    try:
        cards: Sequence[int] = ()
        last_deal = -1
        for seating in seatings(n, hands, duplicate, first_deal):
            if seating.deal != last_deal:  # a duplicate deal's rotations share the cards
                cards = view.deal(seed, seating.deal)
                last_deal = seating.deal
            by_seat = [checked[j] for j in seating.player_of_seat]
            resets = _distinct(by_seat) if shared else by_seat
            hand = Hand(seating.hand, seating.deal, seating.seat_of_player, seating.player_of_seat, cards, by_seat,
                        [names[j] for j in seating.player_of_seat])
            _play(g, by_seat, cards, hand, hooks, view, resets, trusted_cards=True)
            payoffs.append(hand.payoffs)
            deal_of.append(seating.deal)
            seats.append(seating.seat_of_player)
        result = MatchResult(game=g.game_string(), agents=names, deals=hands, seed=int(seed),
                             duplicate=bool(duplicate), big_blind=view.big_blind,
                             payoffs=np.array(payoffs, dtype=np.float64).reshape(total, n),
                             hand_deal=np.array(deal_of, dtype=np.int64),
                             seats=np.array(seats, dtype=np.int64).reshape(total, n), first_deal=first_deal)
    finally:
        for f in hooks.match_end:
            f(result)
    return result
