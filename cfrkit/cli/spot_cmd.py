"""``cfrkit spot``: solve a hold'em postflop spot and print the strategy by hand class."""
from __future__ import annotations


def add_parser(sub) -> None:
    p = sub.add_parser("spot", help="solve a postflop spot (flop, turn or river) and print its strategy table")
    p.add_argument("board", help="board cards, e.g. Ks7h2d (flop), Ks7h2dQc (turn)")
    p.add_argument("--oop", required=True, help="out-of-position range, e.g. '22+,A2s+,KTo+,QJs:0.5'")
    p.add_argument("--ip", required=True, help="in-position range")
    p.add_argument("--pot", type=int, required=True, help="chips in the pot")
    p.add_argument("--stack", type=int, required=True, help="effective stack behind (chips)")
    p.add_argument("--bets", default="33%, 75%, a",
                   help="bet and raise sizes for every street and player, postflop-solver notation "
                        "(default '33%%, 75%%, a')")
    p.add_argument("--target", type=float, default=0.5, help="exploitability target, %% of the pot (default 0.5)")
    p.add_argument("--max-iterations", type=int, default=1000)
    p.add_argument("--node", default="", help="comma-separated action labels from the root, e.g. 'check,bet 25'")
    p.add_argument("--by", choices=("class", "category"), default="class", help="rows by hand class or made hand")
    p.add_argument("--csv", default=None, help="write the per-hand table of the node to this CSV file")
    p.add_argument("--save", default=None, help="save the solved spot (.npz) for cfrkit.solvers.public.spot.load_spot")
    p.set_defaults(func=run)


def run(args) -> int:
    from cfrkit.solvers.public.spot import solve_spot

    result = solve_spot(args.board, args.oop, args.ip, pot=args.pot, stack=args.stack, bet_sizes=args.bets,
                        target=args.target, max_iterations=args.max_iterations)
    labels = [s.strip() for s in args.node.split(",") if s.strip()]
    node = result.node(*labels)
    print(f"{result.game.describe()}")
    print(f"solved in {result.iterations} iterations, {result.seconds:.2f} s: exploitability "
          f"{result.exploitability:.3f} chips ({result.exploitability_pct:.3f}% of the pot)")
    print(f"{node!r}")
    rows = result.report(node, by=args.by)
    labels_out = list(node.labels)
    print(f"{'group':16s} {'combos':>7s} " + " ".join(f"{label:>12s}" for label in labels_out))
    for r in rows:
        print(f"{r['group']:16s} {r['combos']:7.2f} " + " ".join(f"{r[l]:12.3f}" for l in labels_out))
    if args.csv:
        result.to_csv(args.csv, node)
        print(f"wrote {args.csv}")
    if args.save:
        result.save(args.save)
        print(f"saved {args.save}")
    return 0
