"""Hand histories: ACPC dealer logs and the Poker Hand History (PHH) format -- read, write, replay.

ACPC log lines (as the ACPC dealer writes them; a trailing `` # <timestamp>`` is ignored)::

    STATE:<hand>:<betting>:<cards, all shown>:<net chips per seat, '|'>:<names per seat, '|'>
    SCORE:<total per player '|'>:<names '|'>

PHH (the TOML-based format of pokerkit) for ``NT`` (no-limit) and ``FT`` (fixed-limit) Texas
hold'em: ``antes``, ``blinds_or_straddles`` (heads-up listed small blind first, as PHH does;
``p1`` is seat 0), ``min_bet`` (NT) or ``small_bet``/``big_bet`` (FT), ``starting_stacks``,
``actions`` (``d dh p1 AcKd``, ``d db 2c3d4h``, ``p2 cbr 300``, ``p1 cc``, ``p1 f``,
``p1 sm AcKd``), optional ``finishing_stacks``, ``players``, ``hand``, ``ante_trimming_status``
(default false, as in PHH; see :mod:`cfrkit.games.holdem.game` for what it means).  Amounts may have
decimals (``0.50``, ``cbr 3.00``): they are replayed exactly in chips of ``1 / chip_scale`` of the
history's unit (:func:`phh_chip_scale`: 100 for cents), never rounded.  ``cbr`` amounts are the
street's bet-to amounts (antes excluded), as in PHH; cfrkit's raise-to totals add the chips put in on
earlier streets.  Limit games whose raise cap is not pokerkit's 4 per street carry it in the
user-defined field ``_max_raises``.

Replaying a history (:func:`replay_acpc_log`, :func:`replay_phh`) rebuilds every hand with the
rules, checks that it finishes with the recorded chips, and otherwise reports the first action the
rules reject (:class:`ReplayResult`).
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import IO, Any, Iterable, List, Optional, Sequence, Tuple

from cfrkit.games.base import CHANCE, GameError, IllegalActionError
from cfrkit.games.holdem.definition import GameDefinition, load_definition
from cfrkit.games.holdem.game import CALL, FOLD, RAISE, HoldemGame, HoldemState, raise_action
from cfrkit.games.holdem.matchstate import MatchState, MatchStateError, state_from_matchstate


class HistoryError(GameError):
    """A malformed hand history (the message names the line or action)."""


@dataclass
class ReplayResult:
    """Outcome of replaying one recorded hand."""

    hand_number: int
    ok: bool
    message: str = ""
    state: Optional[HoldemState] = None
    names: List[str] = field(default_factory=list)
    recorded_net: Optional[List[float]] = None
    #: chips per unit of the history's amounts (PHH with decimals: 100 for cents); the state counts
    #: chips, ``final_stacks`` and ``recorded_net`` are in the history's units
    chip_scale: int = 1

    def final_stacks(self) -> Optional[List[float]]:
        """Stacks at the end of the hand, in the history's units (e.g. dollars), or None."""
        if self.state is None or not self.state.is_terminal():
            return None
        return [(self.state.d.stack[p] + r) / self.chip_scale for p, r in enumerate(self.state.returns())]


def format_log_chips(value: float) -> str:
    """A chip amount as the ACPC logs write it: an integer without a decimal point ("100", "-50"), else
    at most 6 decimals without trailing zeros ("2.5")."""
    return str(int(value)) if float(value).is_integer() else f"{value:.6f}".rstrip("0").rstrip(".")


# =============================================================================== ACPC logs
def acpc_log_line(state: HoldemState, hand_number: int, names: Optional[Sequence[str]] = None) -> str:
    """``STATE:...`` line of a finished hand (all hole cards shown, as in the dealer's log)."""
    if not state.is_terminal():
        raise HistoryError("only finished hands go into an ACPC log")
    n = state.d.num_players
    names = list(names) if names is not None else [f"p{i + 1}" for i in range(n)]
    if len(names) != n:
        raise HistoryError(f"need {n} player names, got {len(names)}")
    values = "|".join(format_log_chips(v) for v in state.returns())
    return f"STATE:{hand_number}:{state.betting_string()}:{state.cards_string(viewer=None)}:{values}:{'|'.join(names)}"


def write_acpc_log(hands: Iterable[Tuple[HoldemState, int, Sequence[str]]], out: IO[str],
                   game: Optional[HoldemGame] = None) -> None:
    """Write ``(state, hand number, names)`` hands as an ACPC log, with a final ``SCORE`` line."""
    totals: dict = {}
    order: List[str] = []
    if game is not None:
        out.write(f"# cfrkit ACPC log of {game.game_string()}\n")
    for state, number, names in hands:
        line = acpc_log_line(state, number, names)
        out.write(line + "\n")
        for name, value in zip(line.split(":")[5].split("|"), state.returns()):
            if name not in totals:
                order.append(name)
                totals[name] = 0.0
            totals[name] += value
    if order:
        out.write(f"SCORE:{'|'.join(format_log_chips(totals[n]) for n in order)}:{'|'.join(order)}\n")


def parse_acpc_log_line(line: str, lineno: int = 0) -> Tuple[int, str, str, List[float], List[str]]:
    """Fields of a ``STATE:`` log line: hand number, betting, cards, net chips, names."""
    parts = line.strip().split(":")
    where = f"line {lineno}" if lineno else "log line"
    if len(parts) != 6 or parts[0] != "STATE":
        raise HistoryError(f"{where}: expected STATE:hand:betting:cards:values:names, got {line.strip()[:100]!r}")
    _, hand, betting, cards, values, names = parts
    if not re.fullmatch(r"[0-9]{1,18}", hand):
        raise HistoryError(f"{where}: hand number {hand[:40]!r} is not a number")
    nets = []
    for v in values.split("|"):
        if not re.fullmatch(r"-?[0-9]{1,18}(\.[0-9]{1,12})?", v.strip()):
            raise HistoryError(f"{where}: values {values[:80]!r} are not numbers separated by '|'")
        nets.append(float(v))
    return int(hand), betting, cards, nets, names.split("|")


def replay_acpc_log(text: str, game: HoldemGame) -> List[ReplayResult]:
    """Replay every ``STATE`` line of an ACPC log with ``game``'s rules.

    A hand is ok when the rules accept every action, the hand is over, and each player's net chips
    equal the recorded value (within 1 chip for a split pot, since ACPC splits odd chips into
    fractions).  Otherwise ``message`` names the line and the first action the rules reject.
    """
    results = []
    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = raw.split(" #")[0].strip()  # some logs append ' # <timestamp>'
        if not line or line[0] in "#;" or line.startswith("SCORE:"):
            continue
        hand, betting, cards, nets, names = parse_acpc_log_line(line, lineno)
        if len(nets) != game.num_players or len(names) != game.num_players:
            results.append(ReplayResult(hand, False, f"line {lineno}: {len(nets)} values / {len(names)} names for "
                                                     f"{game.num_players} players", names=names))
            continue
        try:
            state = state_from_matchstate(game, MatchState(0, hand, betting, cards))
        except MatchStateError as exc:
            results.append(ReplayResult(hand, False, f"line {lineno}: {exc}", names=names, recorded_net=nets))
            continue
        results.append(_check_finish(state, nets, hand, names, f"line {lineno}"))
    return results


def _check_finish(state: HoldemState, nets: Optional[Sequence[float]], hand: int, names, where: str,
                  chip_scale: int = 1) -> ReplayResult:
    """``nets`` are in the history's units (chips divided by ``chip_scale``)."""
    if not state.is_terminal():
        return ReplayResult(hand, False, f"{where}: the history ends before the hand is over "
                                         f"(betting {state.betting_string()!r})", state, list(names), nets,
                            chip_scale)
    got = [r / chip_scale for r in state.returns()]
    if nets is not None:
        if not state.reached_showdown():
            tolerance = 1e-6
        else:  # integer splits differ from ACPC's fractional ones by less than a chip
            tolerance = (1e-3 if state.game.fractional_split else 1.0) / chip_scale
        for p, (a, b) in enumerate(zip(got, nets)):
            if abs(a - b) > tolerance + 1e-9 * abs(b):
                units = "chips" if chip_scale == 1 else "(history units)"
                return ReplayResult(hand, False, f"{where}: seat {p} nets {format_log_chips(a)} {units} under the rules, "
                                                 f"the history says {format_log_chips(b)}", state, list(names), list(nets),
                                    chip_scale)
    return ReplayResult(hand, True, "", state, list(names), None if nets is None else list(nets), chip_scale)


# =============================================================================== PHH
def _pokerkit_opener(blinds: Sequence[int]) -> int:
    """Seat acting first pre-flop under PHH/pokerkit's position rule (after the largest blind)."""
    n = len(blinds)
    top = max(range(n), key=lambda i: (blinds[i], i))
    return (top + 1) % n


def phh_compatible(d: GameDefinition) -> Optional[str]:
    """None if ``d`` can be written as PHH ``NT``/``FT`` Texas hold'em, else the reason."""
    if (d.num_suits, d.num_ranks, d.num_hole_cards, d.num_rounds) != (4, 13, 2, 4) or \
            tuple(d.num_board_cards) != (0, 3, 1, 1):
        return "PHH NT/FT is Texas hold'em (52 cards, 2 hole cards, boards 0 3 1 1)"
    if d.first_player[0] != _pokerkit_opener(d.blind) or any(f != 0 for f in d.first_player[1:]):
        return "PHH needs the first player after the largest blind pre-flop and seat 1 after the flop"
    if d.is_limit and (d.raise_size[0] != d.raise_size[1] or d.raise_size[2] != d.raise_size[3]):
        return "PHH FT has one small bet (pre-flop, flop) and one big bet (turn, river)"
    return None


def _phh_order(values: Sequence[int]) -> List[int]:
    """Per-seat values in PHH/pokerkit order: heads-up lists (antes, blinds) small blind first, i.e.
    pokerkit's seat ``i`` uses entry ``1 - i``; otherwise in seat order."""
    return list(values[::-1]) if len(values) == 2 else list(values)


def _phh_blinds(d: GameDefinition) -> List[int]:
    return _phh_order(d.blind)


def to_phh(state: HoldemState, names: Optional[Sequence[str]] = None, hand: Optional[int] = None) -> str:
    """PHH text of a hand (finished or not; all dealt hole cards written)."""
    from cfrkit.cards import cards_to_string

    d = state.d
    reason = phh_compatible(d)
    if reason:
        raise HistoryError(f"this game cannot be written as PHH: {reason}")
    n = d.num_players
    trimming = "true" if state.game.ante_trimming else "false"
    lines = [f"variant = \"{'FT' if d.is_limit else 'NT'}\"", f"ante_trimming_status = {trimming}",
             f"antes = {_phh_order(d.ante)}", f"blinds_or_straddles = {_phh_blinds(d)}"]
    if d.is_limit:
        lines += [f"small_bet = {d.raise_size[0]}", f"big_bet = {d.raise_size[2]}"]
        if any(m != 4 for m in d.max_raises):
            lines.append(f"_max_raises = {list(d.max_raises)}")
    else:
        lines.append(f"min_bet = {d.big_blind}")
    lines.append(f"starting_stacks = {list(d.stack)}")
    actions = []
    for p in range(n):
        if state.hole[p]:
            actions.append(f"d dh p{p + 1} {cards_to_string(state.hole[p])}")
    start = 0
    for r in range(state.round + 1):
        count = d.num_board_cards[r]
        if r > 0 and len(state.board) >= start + count and count:
            actions.append(f"d db {cards_to_string(state.board[start:start + count])}")
        start += count
        for p, code, total in state.actions[r]:
            if code == "f":
                actions.append(f"p{p + 1} f")
            elif code == "c":
                actions.append(f"p{p + 1} cc")
            else:
                actions.append(f"p{p + 1} cbr {total - _round_start(state, r, p)}")
    if state.reached_showdown():
        for p in _showdown_order(state):
            actions.append(f"p{p + 1} sm {cards_to_string(state.hole[p])}")
    lines.append("actions = [" + ", ".join(f'"{a}"' for a in actions) + "]")
    if names is not None:
        lines.append("players = [" + ", ".join(f'"{x}"' for x in names) + "]")
    if hand is not None:
        lines.append(f"hand = {hand}")
    if state.is_terminal():
        lines.append(f"finishing_stacks = {[int(d.stack[p] + r) for p, r in enumerate(state.returns())]}")
    return "\n".join(lines) + "\n"


def _round_start(state: HoldemState, r: int, p: int) -> int:
    """Chips ``p`` had put in before round ``r`` (antes included; blinds count as round-0 bets)."""
    antes = state.game.posted_antes  # after ante trimming
    if r == 0:
        return antes[p]
    spent = antes[p] + state.d.blind[p]
    for rr in range(r):
        for q, code, total in state.actions[rr]:
            if q == p and code in "cr":
                spent = total
    return spent


def _showdown_order(state: HoldemState) -> List[int]:
    """Order in which PHH/pokerkit players show: from the last aggressor of the last betting round
    (or that round's first player), in seat order, over the players who have not folded."""
    d = state.d
    n = d.num_players
    opener = d.first_player[state.round]
    for r in range(state.round, -1, -1):
        raises = [p for p, code, _ in state.actions[r] if code == "r"]
        if raises:
            if r == state.round:
                opener = raises[-1]
            break
    return [(opener + i) % n for i in range(n) if not state.folded[(opener + i) % n]]


def _parse_toml(text: str, source: str) -> dict:
    try:
        import tomllib
    except ImportError:  # Python < 3.11
        try:
            import tomli as tomllib  # type: ignore
        except ImportError:
            raise HistoryError("reading PHH needs Python 3.11+ (tomllib) or the 'tomli' package") from None
    try:
        fields = tomllib.loads(text)
    except ValueError as exc:  # TOMLDecodeError, or an integer too long to convert
        raise HistoryError(f"{source}: not valid PHH/TOML: {str(exc)[:200]}") from None
    return fields


#: PHH amounts may have at most this many decimal places (dollars and cents need 2).
MAX_PHH_DECIMALS = 6
#: and at most this many digits in all (amounts beyond are refused, not rounded).
MAX_PHH_DIGITS = 18
_PHH_AMOUNT = re.compile(r"[0-9]+(?:\.[0-9]+)?")


def _phh_amount(value: Any, what: str, source: str) -> Decimal:
    """A PHH amount as an exact decimal (ints, TOML floats and strings such as ``"3.00"``)."""
    if isinstance(value, bool):
        raise HistoryError(f"{source}: {what} must be a number, got {value!r}")
    if isinstance(value, int):
        exact = Decimal(value)
    elif isinstance(value, float):
        if not math.isfinite(value):
            raise HistoryError(f"{source}: {what} must be a finite number, got {value!r}")
        exact = Decimal(repr(value))  # the shortest decimal that reads back as this float: 0.1 -> 0.1
    elif isinstance(value, str) and _PHH_AMOUNT.fullmatch(value) and value.isascii():
        exact = Decimal(value)
    else:
        raise HistoryError(f"{source}: {what} must be a non-negative number, got {str(value)[:40]!r}")
    if exact < 0:
        raise HistoryError(f"{source}: {what} must not be negative, got {value!r}")
    if exact >= Decimal(10) ** (MAX_PHH_DIGITS - MAX_PHH_DECIMALS):
        raise HistoryError(f"{source}: {what} {str(value)[:40]!r} is too large")
    if _decimals(exact) > MAX_PHH_DECIMALS:
        raise HistoryError(f"{source}: {what} {str(value)[:40]!r} has more than {MAX_PHH_DECIMALS} decimal places")
    return exact


def _decimals(amount: Decimal) -> int:
    exponent = amount.normalize().as_tuple().exponent
    return max(0, -exponent)


def _phh_amount_fields(fields: dict, source: str) -> List[Tuple[str, Any]]:
    """Every ``(what, value)`` amount of a PHH hand: header amounts and ``cbr`` amounts."""
    found: List[Tuple[str, Any]] = []
    for key in ("antes", "blinds_or_straddles", "starting_stacks", "finishing_stacks", "min_bet",
                "small_bet", "big_bet"):
        value = fields.get(key)
        if value is None:
            continue
        if isinstance(value, list):
            found += [(f"{key}[{i}]", v) for i, v in enumerate(value)]
        else:
            found.append((key, value))
    actions = fields.get("actions", [])
    if isinstance(actions, list):
        for i, act in enumerate(actions):
            tokens = str(act).split("#")[0].split()
            if len(tokens) >= 3 and tokens[1] == "cbr":
                found.append((f"action {i + 1} {str(act)[:60]!r}: amount", tokens[2]))
    return found


def phh_chip_scale(fields: dict, source: str = "<phh>") -> int:
    """Chips per unit of a PHH hand's amounts: 1 for whole numbers, ``10**k`` when amounts have up to
    ``k`` decimal places (``0.50`` blinds: 100, i.e. cents), so every amount is an exact whole number of
    chips.  Amounts with more than :data:`MAX_PHH_DECIMALS` decimals raise :class:`HistoryError`."""
    places = 0
    for what, value in _phh_amount_fields(fields, source):
        places = max(places, _decimals(_phh_amount(value, what, source)))
    return 10 ** places


def _phh_chips(value: Any, chip_scale: int, what: str, source: str) -> int:
    """``value`` (history units) in chips; exact or :class:`HistoryError`, never rounded."""
    chips = _phh_amount(value, what, source) * chip_scale
    if chips != chips.to_integral_value():
        raise HistoryError(f"{source}: {what} {value!r} is not a whole number of chips at a chip scale of "
                           f"{chip_scale}")
    return int(chips)


def game_from_phh(fields: dict, source: str = "<phh>", chip_scale: Optional[int] = None) -> HoldemGame:
    """The hold'em game a PHH header describes (``NT`` or ``FT`` only), amounts in chips.

    Amounts are multiplied by ``chip_scale`` (default :func:`phh_chip_scale`: 1 for whole-number
    histories, 100 for dollars and cents), so decimal amounts are represented exactly.
    ``ante_trimming_status`` (default false, as in PHH) becomes the game's ``ante_trimming``.
    """
    variant = fields.get("variant")
    if variant not in ("NT", "FT"):
        raise HistoryError(f"{source}: variant {str(variant)[:40]!r} is not supported "
                           f"(cfrkit reads NT and FT Texas hold'em)")
    for key in ("antes", "blinds_or_straddles", "starting_stacks", "actions"):
        if key not in fields:
            raise HistoryError(f"{source}: required field {key!r} missing")
    if chip_scale is None:
        chip_scale = phh_chip_scale(fields, source)
    raw_stacks = fields["starting_stacks"]
    if not isinstance(raw_stacks, list) or not 2 <= len(raw_stacks) <= 10:
        raise HistoryError(f"{source}: starting_stacks must list 2 to 10 stacks, got {str(raw_stacks)[:60]}")
    if not isinstance(fields["actions"], list):
        raise HistoryError(f"{source}: actions must be a list of strings")
    stacks = [_phh_chips(v, chip_scale, f"starting_stacks[{i}]", source) for i, v in enumerate(raw_stacks)]
    n = len(stacks)

    def per_player(key):
        value = fields[key]
        if not isinstance(value, list):
            return [_phh_chips(value, chip_scale, key, source)] * n
        if len(value) != n:
            raise HistoryError(f"{source}: {key} has {len(value)} entries for {n} players")
        return [_phh_chips(v, chip_scale, f"{key}[{i}]", source) for i, v in enumerate(value)]

    antes = _phh_order(per_player("antes"))
    blinds = _phh_order(per_player("blinds_or_straddles"))
    base = load_definition("holdem.limit.2p.reverse_blinds" if variant == "FT" else "holdem.nolimit.2p.reverse_blinds")
    changes = dict(num_players=n, stack=tuple(stacks), blind=tuple(blinds), ante=tuple(antes),
                   first_player=(_pokerkit_opener(blinds), 0, 0, 0))
    if variant == "FT":
        for key in ("small_bet", "big_bet"):
            if key not in fields:
                raise HistoryError(f"{source}: FT needs {key!r}")
        small = _phh_chips(fields["small_bet"], chip_scale, "small_bet", source)
        big = _phh_chips(fields["big_bet"], chip_scale, "big_bet", source)
        changes["raise_size"] = (small, small, big, big)
        caps = fields.get("_max_raises", [4, 4, 4, 4])
        if not isinstance(caps, list) or len(caps) != 4 or not all(
                isinstance(m, int) and not isinstance(m, bool) and 0 <= m <= 1000 for m in caps):
            raise HistoryError(f"{source}: _max_raises must list 4 raise caps (0..1000), got {str(caps)[:60]}")
        changes["max_raises"] = tuple(caps)
    else:
        if "min_bet" not in fields:
            raise HistoryError(f"{source}: NT needs 'min_bet'")
        if _phh_chips(fields["min_bet"], chip_scale, "min_bet", source) != max(blinds):
            raise HistoryError(f"{source}: min_bet {fields['min_bet']} differs from the big blind "
                               f"{format_log_chips(max(blinds) / chip_scale)}; cfrkit's minimum raise is the big blind")
    trimming = fields.get("ante_trimming_status", False)  # PHH's default
    if not isinstance(trimming, bool):
        raise HistoryError(f"{source}: ante_trimming_status must be true or false, got {str(trimming)[:40]!r}")
    try:
        definition = base.with_changes(**changes)
    except GameError as exc:
        raise HistoryError(f"{source}: {exc}") from None
    return HoldemGame(definition, ante_trimming=trimming)


def read_phh(text: str, source: str = "<phh>") -> Tuple[HoldemGame, dict]:
    """Parse PHH text into its game (amounts in chips, see :func:`phh_chip_scale`) and its fields."""
    if not isinstance(text, str):
        raise HistoryError(f"{source}: PHH text must be a string, got {type(text).__name__}")
    fields = _parse_toml(text, source)
    return game_from_phh(fields, source), fields


def replay_phh(text: str, source: str = "<phh>") -> ReplayResult:
    """Replay a PHH hand; ok if the rules accept it and it ends with ``finishing_stacks`` (if given).

    Decimal amounts are replayed exactly in chips of ``1 / chip_scale`` units (the result's
    ``chip_scale``); :meth:`ReplayResult.final_stacks` is in the history's units.  Unknown hole cards
    (``????``) get stand-in cards so the betting can be replayed; a hand that reaches a showdown
    with a live player's cards unknown is not ok (the pots cannot be settled without them).
    Malformed histories raise :class:`HistoryError`.
    """
    from cfrkit.cards import CardError, parse_cards

    if not isinstance(text, str):
        raise HistoryError(f"{source}: PHH text must be a string, got {type(text).__name__}")
    fields = _parse_toml(text, source)
    chip_scale = phh_chip_scale(fields, source)
    game = game_from_phh(fields, source, chip_scale)
    d = game.definition
    n = d.num_players
    if not all(isinstance(a, str) for a in fields["actions"]):
        raise HistoryError(f"{source}: actions must be a list of strings")
    actions = [a.split("#")[0].strip() for a in fields["actions"]]
    hand = fields.get("hand", 0) or 0
    if not isinstance(hand, int) or isinstance(hand, bool):
        raise HistoryError(f"{source}: hand must be an integer, got {str(hand)[:40]!r}")
    players = fields.get("players", [f"p{i + 1}" for i in range(n)])
    if not isinstance(players, list) or len(players) != n:
        raise HistoryError(f"{source}: players must list {n} names")
    names = [str(x) for x in players]
    # hole cards from dealing and showing actions ('????' unknown)
    hole: List[Optional[List[int]]] = [None] * n
    dealt: List[List[int]] = [[] for _ in range(n)]
    shown: List[Optional[List[int]]] = [None] * n
    for i, act in enumerate(actions):
        tokens = act.split()
        try:
            if len(tokens) >= 4 and tokens[:2] == ["d", "dh"]:
                seat = _seat(tokens[2], n, source, i, act)
                if "?" not in tokens[3]:
                    dealt[seat] += parse_cards(tokens[3])
            elif len(tokens) >= 3 and tokens[1] == "sm" and "?" not in tokens[2]:
                shown[_seat(tokens[0], n, source, i, act)] = parse_cards(tokens[2])
        except CardError as exc:
            raise HistoryError(f"{source}: action {i + 1} {act[:60]!r}: {exc}") from None
    for p in range(n):
        hole[p] = dealt[p] or shown[p]
    unknown = [p for p in range(n) if hole[p] is None]
    visible = set(c for h in hole if h for c in h)
    for i, act in enumerate(actions):
        tokens = act.split()
        if tokens[:2] == ["d", "db"]:
            if len(tokens) < 3:
                raise HistoryError(f"{source}: action {i + 1} {act[:60]!r}: board dealing without cards")
            try:
                visible.update(parse_cards(tokens[2]))
            except CardError as exc:
                raise HistoryError(f"{source}: action {i + 1} {act[:60]!r}: {exc}") from None
    unseen = [c for c in d.deck() if c not in visible]
    state = game.new_initial_state()

    def failed(message: str) -> ReplayResult:
        return ReplayResult(hand, False, message, state, names, chip_scale=chip_scale)

    for p in range(n):
        cards = hole[p] if hole[p] is not None else [unseen.pop(0) for _ in range(d.num_hole_cards)]
        if len(cards) != d.num_hole_cards:
            return failed(f"{source}: p{p + 1} is dealt {len(cards)} hole cards")
        try:
            for c in cards:
                state.apply_action(c)
        except IllegalActionError as exc:
            return failed(f"{source}: dealing p{p + 1}'s hole cards: {exc}")
    for i, act in enumerate(actions):
        tokens = act.split()
        if not tokens:
            continue
        where = f"{source}: action {i + 1} {act[:60]!r}"
        try:
            if tokens[0] == "d":
                if len(tokens) < 2 or tokens[1] not in ("db", "dh"):
                    raise HistoryError(f"{where}: unknown dealer operation (cfrkit reads d dh, d db)")
                if tokens[1] == "db":
                    if state.current_player() != CHANCE or state.is_terminal():
                        return failed(f"{where}: board dealt while the betting is not over")
                    cards = parse_cards(tokens[2])
                    if len(cards) != state.cards_needed():
                        return failed(f"{where}: {len(cards)} board cards dealt, the round needs "
                                      f"{state.cards_needed()}")
                    for c in cards:
                        state.apply_action(c)
                continue  # hole cards were dealt above
            seat = _seat(tokens[0], n, source, i, act)
            op = tokens[1] if len(tokens) > 1 else ""
            if op == "sm":
                continue
            if state.current_player() != seat:
                who = state.current_player()
                expected = "nobody (the hand is over)" if state.is_terminal() else \
                    ("the dealer" if who == CHANCE else f"p{who + 1}")
                return failed(f"{where}: p{seat + 1} acts but it is {expected}'s turn")
            if op == "f":
                action = FOLD
            elif op == "cc":
                action = CALL
            elif op == "cbr":
                if len(tokens) < 3:
                    raise HistoryError(f"{where}: cbr needs an amount")
                amount = _phh_chips(tokens[2], chip_scale, "cbr amount", where)
                total = amount + _round_start(state, state.round, seat)
                if d.is_limit:
                    rr = state.raise_range()
                    if rr is None or rr[0] != total:
                        return failed(f"{where}: the rules reject it: legal: {state.legal_actions_summary()}")
                    action = RAISE
                else:
                    action = raise_action(total)
            else:
                raise HistoryError(f"{where}: unknown operation {op[:20]!r} (cfrkit reads f, cc, cbr, sm, d dh, d db)")
            state.apply_action(action)
        except HistoryError:
            raise
        except IllegalActionError as exc:
            return failed(f"{where}: the rules reject it: {exc}")
        except (CardError, ValueError) as exc:
            return failed(f"{where}: {exc}")
    if state.reached_showdown():
        hidden = [p for p in unknown if not state.folded[p]]
        if hidden:
            return failed(f"{source}: the hand reaches a showdown but the hole cards of "
                          f"{', '.join(f'p{p + 1}' for p in hidden)} are unknown (????): the pots cannot be settled")
    finishing = fields.get("finishing_stacks")
    nets = None
    if finishing is not None:
        if not isinstance(finishing, list) or len(finishing) != n:
            raise HistoryError(f"{source}: finishing_stacks must list {n} stacks")
        nets = [(_phh_chips(finishing[p], chip_scale, f"finishing_stacks[{p}]", source) - d.stack[p]) / chip_scale
                for p in range(n)]
    return _check_finish(state, nets, hand, names, source, chip_scale)


def _seat(token: str, n: int, source: str, i: int, act: str) -> int:
    m = re.fullmatch(r"p(\d+)", token)
    if not m or not 1 <= int(m.group(1)) <= n:
        raise HistoryError(f"{source}: action {i + 1} {act!r}: {token!r} is not a player p1..p{n}")
    return int(m.group(1)) - 1
