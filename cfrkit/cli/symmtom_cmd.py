"""``cfrkit symmtom``: evaluate SymmToM agents.

* ``cfrkit symmtom eval --agent ge [--episodes 1000] [--seed 0] [--metrics] [--settings 3,6,1;4,12,3]``
  prints Table 1's layout (mean [std] reward per agent) beside the paper's heuristic row.
* ``cfrkit symmtom tom --agent ge [--trials 100]`` prints the four theory-of-mind tests (Table 2 layout).
"""
from __future__ import annotations

from cfrkit.cli import CliError


def add_parser(sub) -> None:
    p = sub.add_parser("symmtom", help="SymmToM: Table 1 rewards and theory-of-mind tests of an agent")
    actions = p.add_subparsers(dest="symmtom_command", metavar="ACTION")
    actions.required = True
    e = actions.add_parser("eval", help="average reward per agent in Table 1's 12 settings")
    e.add_argument("--agent", required=True, action="append",
                   help="agent name (repeatable): heuristic, ce, ge, oracle, random")
    e.add_argument("--episodes", type=int, default=1000, help="episodes per setting (default 1000)")
    e.add_argument("--seed", type=int, default=0, help="base seed (episode e uses seed + e)")
    e.add_argument("--settings", default="all",
                   help="'all' or semicolon-separated n,w,k triples (c = k n), e.g. '3,6,1;4,12,3'")
    e.add_argument("--metrics", action="store_true", help="also print the post-hoc metrics")
    e.add_argument("--checkpoint", default=None,
                   help="JSON file: finished settings are saved there and reused when rerun (resume)")
    e.add_argument("--no-progress", action="store_true", help="hide the progress bars")
    e.set_defaults(func=run_eval)
    t = actions.add_parser("tom", help="the paper's four theory-of-mind tests")
    t.add_argument("--agent", required=True, action="append", help="agent name (repeatable)")
    t.add_argument("--trials", type=int, default=100, help="trials per test (default 100)")
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("--no-progress", action="store_true")
    t.set_defaults(func=run_tom)


def _check_agents(names):
    from cfrkit.agents.symmtom import AGENT_NAMES

    for name in names:
        if name not in AGENT_NAMES:
            raise CliError(f"unknown agent {name!r}; known: {', '.join(AGENT_NAMES)}")


def _parse_settings(text: str):
    from cfrkit.evaluation.symmtom_eval import TABLE1_SETTINGS

    if text == "all":
        return TABLE1_SETTINGS
    settings = []
    for item in text.split(";"):
        try:
            n, w, k = (int(x) for x in item.split(","))
        except ValueError:
            raise CliError(f"bad setting {item!r}: expected n,w,k (three integers, c = k n)") from None
        settings.append((n, w, k))
    return tuple(settings)


def run_eval(args) -> int:
    from cfrkit.evaluation.symmtom_eval import evaluate_table1, format_metrics, format_table1
    from cfrkit.games.symmtom.core import SymmToMConfig

    _check_agents(args.agent)
    if args.episodes < 1:
        raise CliError(f"--episodes must be >= 1, got {args.episodes}")
    settings = _parse_settings(args.settings)
    for n, w, k in settings:
        SymmToMConfig(agents=n, width=w, pieces=k * n)  # validates, raising a one-line GameError
    rows = {}
    for name in args.agent:
        rows[name] = evaluate_table1(name, args.episodes, args.seed, settings, args.metrics, not args.no_progress,
                                     args.checkpoint)
    print(f"Average reward per agent over {args.episodes} episodes (mean [std]), h=1, 5w steps")
    print(format_table1(rows, settings))
    if args.metrics:
        print()
        print(format_metrics(rows, settings))
    return 0


def run_tom(args) -> int:
    from cfrkit.agents.symmtom import ORACLE_AGENTS, make_agent
    from cfrkit.evaluation.symmtom_tests import PAPER_TESTS, run_tom_test

    _check_agents(args.agent)
    if args.trials < 1:
        raise CliError(f"--trials must be >= 1, got {args.trials}")
    header = f"{'agent':<12}" + "".join(f"{f'{name} w={w}':>34}" for name, w in PAPER_TESTS)
    sub = f"{'':<12}" + "".join(f"{'SR   FR  1-SR-FR  RATSO':>34}" for _ in PAPER_TESTS)
    lines = [header, sub]
    for agent in args.agent:
        cells = []
        for k, (name, w) in enumerate(PAPER_TESTS):
            counter = iter(range(10 ** 9))
            r = run_tom_test(name, w, lambda: make_agent(agent, seed=args.seed * 1_000_003 + next(counter)),
                             args.trials, args.seed + k,
                             oracle=agent in ORACLE_AGENTS, progress=not args.no_progress)
            cells.append(f"{r.success_rate:4.0%} {r.failure_rate:4.0%} {r.neither_rate:6.0%} {r.ratso_text():>9}")
        lines.append(f"{agent:<12}" + "".join(f"{c:>34}" for c in cells))
    lines.append("RATSO: turns / per-trial optimum over successful trials (>= 1); after '/', against the "
                 "optimum expected by a red that cannot see what green heard (the paper's 1.5)")
    print("\n".join(lines))
    return 0
