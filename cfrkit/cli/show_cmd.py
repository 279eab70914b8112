"""``cfrkit show POLICY``: what a policy file holds (game, solver, coverage, a strategy)."""
from __future__ import annotations

from typing import List

from cfrkit.cli import CliError


def add_parser(sub) -> None:
    p = sub.add_parser("show", help="describe a policy file: game, solver, coverage, strategy at a state")
    p.add_argument("policy", help="policy file (.npz) written by cfrkit solve or TabularPolicy.save")
    p.add_argument("--state", "-s", action="append", default=[], metavar="KEY",
                   help="print the strategy at this information-state key (repeatable)")
    p.add_argument("--list", type=int, default=5, metavar="N",
                   help="print the first N information-state keys (default 5; 0 for none)")
    p.add_argument("--max-nodes", type=int, default=2_000_000,
                   help="coverage is computed when the game tree has at most this many nodes")
    p.set_defaults(func=run)


def _coverage(policy, max_nodes: int) -> str:
    """Share of the game's information states that the policy's table covers (compiled trees only)."""
    from cfrkit.solvers.tabular.compiled import TreeTooLargeError, compile_game

    try:
        tree = compile_game(policy.game, max_nodes=max_nodes)
    except TreeTooLargeError:
        return "not computed (game tree larger than --max-nodes)"
    keys = set(tree.infoset_keys)
    covered = len(keys & set(policy.table))
    return f"{covered} of {len(keys)} information states ({100.0 * covered / max(1, len(keys)):.1f}%)"


def run(args) -> int:
    from cfrkit.policy import TabularPolicy

    policy = TabularPolicy.load(args.policy)
    meta = dict(policy.metadata)
    lines: List[str] = [f"policy    {args.policy}", f"game      {policy.game.game_string()}"]
    solver = ", ".join(f"{k}={meta[k]}" for k in ("algorithm", "iterations", "seconds", "seed") if k in meta)
    if solver:
        lines.append(f"solver    {solver}")
    lines.append(f"table     {len(policy.table)} information states")
    lines.append(f"coverage  {_coverage(policy, args.max_nodes)}")
    keys = sorted(policy.table)
    if args.list > 0:
        lines.append("keys      " + ", ".join(repr(k) for k in keys[:args.list]) + (" ..." if len(keys) > args.list else ""))
    print("\n".join(lines))
    for key in args.state:
        if key not in policy.table:
            close = [k for k in keys if k.startswith(key[:max(1, len(key) - 1)])][:5]
            hint = f"; similar keys: {', '.join(map(repr, close))}" if close else ""
            raise CliError(f"information state {key!r} is not in the policy{hint}")
        probs = policy.table[key]
        print(f"\nstrategy at {key!r}:")
        for action, p in sorted(probs.items()):
            print(f"  action {action:>6}  {p:8.4f}")
    return 0
