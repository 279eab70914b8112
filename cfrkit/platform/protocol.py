"""The platform's JSON messages: the state a player sees, the action it returns, errors, limits.

One JSON object per line (TCP door) or per WebSocket message (browser door); the schema is in
``docs/platform.md``.  This module has no I/O: it builds views of a hold'em state for one viewer
and turns a client's action object into an action id, raising :class:`ProtocolError` with a code.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional

from cfrkit.cards.encoding import CARD_STRINGS
from cfrkit.games.base import GameError
from cfrkit.games.holdem.game import CALL, FOLD, RAISE, HoldemState, raise_action
from cfrkit.games.holdem.history import format_log_chips
from cfrkit.games.holdem.matchstate import format_matchstate
from cfrkit.platform.jsonlines import loads as _loads

#: longest accepted message (bytes, newline excluded)
MAX_MESSAGE_BYTES = 4096
#: token bucket per connection: sustained messages per second and burst (a client over it is read
#: later, never dropped)
RATE_PER_SECOND = 200.0
RATE_BURST = 400.0
#: deepest nesting of arrays and objects accepted in a message
MAX_NESTING = 32
#: a connection that has caused this many errors is closed
MAX_ERRORS_PER_CONNECTION = 1000

ERROR_CODES = {
    "bad_json": "the message is not valid JSON (UTF-8, one object per line)",
    "too_large": f"the message is longer than {MAX_MESSAGE_BYTES} bytes",
    "bad_message": "the message is not an object with a known string 'type', or a field has the wrong type",
    "rate_limited": "(no longer sent: a client over the rate limit is read more slowly, nothing is dropped)",
    "unknown_match": "no such match",
    "bad_token": "the token does not belong to this match's player",
    "not_joined": "join a match first",
    "not_your_turn": "no decision of yours is pending (out of turn, or already answered)",
    "stale": "the action names a hand or state that is not the current one",
    "illegal_action": "the rules do not allow this action here",
    "bad_request": "a create/play request with invalid settings",
    "server_busy": "too many matches are running",
    "replaced": "another connection joined with this seat's token",
    "timeout": "no action within the time per action plus the time bank: the default action was played",
    "server_error": "the match stopped on a server fault (the server and the other matches go on)",
    "seat_taken": "(ACPC seat port) the seat's player is connected already; a second connection is refused",
    "idle": "the connection sent nothing and holds no seat for the idle timeout; it is closed",
    "cancelled": "the match was cancelled by the operator or expired (no player connected for the match idle timeout)",
    "forbidden": "create, cancel and admin need the operator token on this server",
}


class ProtocolError(GameError):
    """A bad client message: ``code`` is one of ``ERROR_CODES``."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code
        self.message = message


def error_message(code: str, message: str, fatal: bool = False) -> Dict[str, Any]:
    return {"type": "error", "code": code, "message": message, "fatal": bool(fatal)}


def _nesting_depth(raw: bytes) -> int:
    """Deepest ``[`` / ``{`` nesting of a JSON text (brackets inside strings do not count)."""
    depth = deepest = 0
    in_string = escaped = False
    for byte in raw:
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:  # backslash
                escaped = True
            elif byte == 0x22:  # quote
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in (0x5B, 0x7B):
            depth += 1
            deepest = max(deepest, depth)
        elif byte in (0x5D, 0x7D):
            depth -= 1
    return deepest


def parse_message(raw: bytes) -> Dict[str, Any]:
    """Decode one client message into a dict with a string ``type`` (raises ProtocolError)."""
    if len(raw) > MAX_MESSAGE_BYTES:
        raise ProtocolError("too_large", f"message of {len(raw)} bytes; the limit is {MAX_MESSAGE_BYTES}")
    # no message of the protocol nests deeper than a few levels: refuse deep nesting before the
    # parser recurses (the exact scan runs only for the rare message with many brackets)
    if raw.count(b"[") + raw.count(b"{") > MAX_NESTING and _nesting_depth(raw) > MAX_NESTING:
        raise ProtocolError("bad_json", f"not valid JSON: nested too deeply (more than {MAX_NESTING} levels)")
    try:
        obj = _loads(raw)
    except (UnicodeDecodeError, ValueError) as exc:
        raise ProtocolError("bad_json", f"not valid JSON: {str(exc)[:120]}") from None
    except RecursionError:  # the parsers refuse deep nesting this way: one line, no traceback
        raise ProtocolError("bad_json", "not valid JSON: nested too deeply") from None
    if not isinstance(obj, dict) or not isinstance(obj.get("type"), str):
        raise ProtocolError("bad_message", "a message is a JSON object with a string field 'type'")
    return obj


def legal_view(state: HoldemState, view=None) -> Dict[str, Any]:
    """The legal actions of the player to act: ``{"fold": bool, "check": bool, "call": chips to add,
    "raise": [min, max] raise-to totals or null}`` (raise-to = chips put in this hand, ACPC r<N>).
    ``view``: ``state.action_view()`` if the caller has it already."""
    v = state.action_view() if view is None else view  # one pass over the betting state
    return {"fold": bool(v.can_fold), "check": v.call_amount == 0, "call": int(v.call_amount),
            "raise": None if v.raise_min is None else [int(v.raise_min), int(v.raise_max)]}


def _cards(ids) -> List[str]:
    return [CARD_STRINGS[c] for c in ids]


def _cards_field(state: HoldemState, shown: List[bool], betting_board: str) -> str:
    """ACPC cards field with the hole cards of seats ``shown`` (the rest hidden)."""
    return "|".join("".join(CARD_STRINGS[c] for c in h) if ok else "" for h, ok in zip(state.hole, shown)) + betting_board


def _board_suffix(state: HoldemState) -> str:
    """The ``/flop/turn/river`` part of the ACPC cards field."""
    d = state.d
    out = []
    start = 0
    board = state.board
    for r in range(state.round + 1):
        count = d.num_board_cards[r]
        if r > 0 or count:
            out.append("/" + "".join(CARD_STRINGS[c] for c in board[start:start + count]))
        start += count
    return "".join(out)


def state_view(state: HoldemState, seat: int, *, match_id: str, hand: int, player: int,
               names_by_seat: List[str], time_left: Optional[float] = None, action_view=None) -> Dict[str, Any]:
    """What the player in ``seat`` sees: its own hole cards, the public state, and (when it is to
    act) its legal actions.  Chips are integers; ``spent`` counts every chip put in this hand.
    ``action_view``: ``state.action_view()`` if the caller has it already (the player to act's)."""
    d = state.d
    n = d.num_players
    actor = state.current_player() if not state.is_terminal() else -1
    to_act = actor == seat
    betting = state.betting_string()
    showdown = state.reached_showdown()
    folded = state.folded
    shown = [q == seat or (showdown and not folded[q]) for q in range(n)]
    spent = [int(x) for x in state.spent]
    view: Dict[str, Any] = {
        "type": "state", "match": match_id, "hand": int(hand), "player": int(player), "seat": int(seat),
        "matchstate": f"MATCHSTATE:{seat}:{hand}:{betting}:{_cards_field(state, shown, _board_suffix(state))}",
        "hole": _cards(state.hole[seat]),
        "board": _cards(state.board),
        "round": int(state.round),
        "pot": sum(spent),
        "spent": spent,
        "stacks": [int(d.stack[q]) - spent[q] for q in range(n)],
        "folded": list(folded),
        "names": list(names_by_seat),
        "actor": int(actor) if actor >= 0 else None,
        "to_act": bool(to_act),
        "betting": betting,
    }
    if to_act:
        view["legal"] = legal_view(state, action_view)
        if time_left is not None:
            view["time_left"] = round(float(time_left), 3)
    return view


class HandEndViews:
    """The ``hand_end`` message of a finished hand for every seat, the shared parts built once.

    ``view(seat, player)`` equals :func:`hand_end_view` for that seat (tests check this)."""

    def __init__(self, state: HoldemState, *, match_id: str, hand: int, names_by_seat: List[str],
                 returns: List[float], player_returns: List[float], totals: List[float]):
        self.state = state
        n = state.d.num_players
        self.showdown = bool(state.reached_showdown())
        self.holes = [_cards(h) or None for h in state.hole]
        self.public = [self.showdown and not state.folded[q] for q in range(n)]
        self.prefix = f"MATCHSTATE:{{}}:{hand}:{state.betting_string()}:"
        self.board_suffix = _board_suffix(state)
        self.common = {"match": match_id, "hand": int(hand), "board": _cards(state.board), "pot": int(state.pot()),
                       "names": list(names_by_seat), "returns": [float(x) for x in returns],
                       "player_returns": [float(x) for x in player_returns], "totals": [float(x) for x in totals],
                       "showdown": self.showdown}

    def view(self, seat: int, player: int) -> Dict[str, Any]:
        shown = [ok or q == seat for q, ok in enumerate(self.public)]
        out = {"type": "hand_end", "match": self.common["match"], "hand": self.common["hand"], "player": int(player),
               "seat": int(seat),
               "matchstate": self.prefix.format(seat) + _cards_field(self.state, shown, self.board_suffix),
               "holes": [h if ok else None for h, ok in zip(self.holes, shown)]}
        out.update((k, v) for k, v in self.common.items() if k not in ("match", "hand"))
        return out


def hand_end_view(state: HoldemState, seat: int, *, match_id: str, hand: int, player: int,
                  names_by_seat: List[str], player_returns: List[float], totals: List[float]) -> Dict[str, Any]:
    """End of a hand for the player in ``seat``: every shown card (showdown only), chips won per
    seat and per player, and the match totals so far per player."""
    from cfrkit.cards import parse_cards

    cards = state.cards_string(viewer=seat)
    holes = cards.split("/")[0].split("|")
    return {"type": "hand_end", "match": match_id, "hand": int(hand), "player": int(player), "seat": int(seat),
            "matchstate": format_matchstate(state, seat, hand),
            "holes": [_cards(parse_cards(h)) if h else None for h in holes],
            "board": _cards(state.board), "pot": int(state.pot()), "names": list(names_by_seat),
            "returns": [float(x) for x in state.returns()],
            "player_returns": [float(x) for x in player_returns], "totals": [float(x) for x in totals],
            "showdown": bool(state.reached_showdown())}


def acpc_log_line(state: HoldemState, hand: int, names: List[str], returns: List[float]) -> str:
    """``STATE:...`` dealer-log line of a finished hand (as ``history.acpc_log_line``, with the
    returns already computed)."""
    cards = _cards_field(state, [True] * state.d.num_players, _board_suffix(state))
    return (f"STATE:{hand}:{state.betting_string()}:{cards}:{'|'.join(format_log_chips(v) for v in returns)}:"
            f"{'|'.join(names)}")


def action_from_message(state: HoldemState, msg: Dict[str, Any], view=None) -> int:
    """Action id of ``{"action": "fold"|"check"|"call"|"raise", "amount": raise-to total}``.

    ``"check"`` is accepted only when nothing is to call and ``"call"`` also checks; a raise needs
    an integer ``amount`` in the legal ``[min, max]`` (limit games: the amount may be omitted).
    ``view``: ``state.action_view()`` if the caller has it already (the same answers, no second pass)."""
    kind = msg.get("action")
    if not isinstance(kind, str):
        raise ProtocolError("bad_message", "an action message needs a string field 'action' "
                                           "(fold, check, call or raise)")
    kind = kind.lower()
    if view is None:
        view = state.action_view()
    if kind == "fold":
        if not view.can_fold:
            raise ProtocolError("illegal_action", "fold is not allowed when checking is free")
        return FOLD
    if kind == "check":
        if view.call_amount != 0:
            raise ProtocolError("illegal_action", f"cannot check: {view.call_amount} to call")
        return CALL
    if kind == "call":
        return CALL
    if kind in ("raise", "bet"):
        rng = None if view.raise_min is None else (view.raise_min, view.raise_max)
        if rng is None:
            raise ProtocolError("illegal_action", "no raise is allowed here")
        if state.d.is_limit:
            return RAISE
        amount = msg.get("amount")
        if isinstance(amount, bool) or not isinstance(amount, int):
            raise ProtocolError("bad_message", f"a raise needs an integer 'amount' (raise-to total, "
                                               f"{rng[0]}..{rng[1]})")
        if not rng[0] <= amount <= rng[1]:
            raise ProtocolError("illegal_action", f"raise to {amount} outside the legal {rng[0]}..{rng[1]}")
        return raise_action(amount)
    raise ProtocolError("bad_message", f"unknown action {kind[:20]!r} (fold, check, call, raise)")


def action_to_message(state: HoldemState, action: int) -> Dict[str, Any]:
    """The JSON action of an action id (inverse of :func:`action_from_message`)."""
    if action == FOLD:
        return {"type": "action", "action": "fold"}
    if action == CALL:
        return {"type": "action", "action": "call"}
    if state.d.is_limit:
        return {"type": "action", "action": "raise"}
    return {"type": "action", "action": "raise", "amount": int(action) - 2}


def default_action(state: HoldemState) -> int:
    """What a player who times out, disconnects or misbehaves does: fold, or check when free."""
    return FOLD if state.is_legal(FOLD) else CALL
