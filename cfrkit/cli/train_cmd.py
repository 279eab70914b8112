"""``cfrkit train``: torch learners (CPU by default, CUDA when present; checkpoints, resume, CSV scalars).

* ``cfrkit train hanabi-ippo --out runs/ippo --iterations 200 [--preset full --players 2]``
* ``cfrkit train hanabi-rainbow --out runs/rb --iterations 200``
* ``cfrkit train hanabi-eval runs/ippo [--games 1000] [--adhoc IGGI,Piers --trials 200]``
* ``cfrkit train symmtom-maddpg --variant ce --agents 3 --width 6 --pieces 3 --out runs/m``
* ``cfrkit train symmtom-eval runs/m [--episodes 1000] [--tom]``

Rerunning a training command on the same ``--out`` resumes from ``checkpoint.pt`` (bit-exact);
``--fresh`` starts over.  Ctrl-C saves a checkpoint and exits with code 130.
"""
from __future__ import annotations

import argparse
import os

from cfrkit.cli import CliError


def add_parser(sub) -> None:
    p = sub.add_parser("train", help="train and evaluate learning agents (Hanabi IPPO/DQN, SymmToM MADDPG family)")
    acts = p.add_subparsers(dest="train_command", metavar="ACTION")
    acts.required = True

    h = acts.add_parser("hanabi-ippo", help="self-play IPPO (shared-parameter actor-critic) on the batched engine")
    _hanabi_run_options(h)
    h.add_argument("--num-envs", type=int, default=256)
    h.add_argument("--hidden", default="256,256")
    h.add_argument("--lr", type=float, default=5e-4)
    h.add_argument("--epochs", type=int, default=4)
    h.add_argument("--minibatch", type=int, default=2048)
    h.add_argument("--entropy-coef", type=float, default=0.01)
    _common(h, eval_default=500)
    h.set_defaults(func=run_hanabi_ippo)

    r = acts.add_parser("hanabi-rainbow", help="self-play Rainbow-style DQN (C51, dueling, prioritised replay, n-step)")
    _hanabi_run_options(r)
    r.add_argument("--num-envs", type=int, default=16, help="games per iteration (default 16)")
    r.add_argument("--hidden", default="512,512")
    r.add_argument("--lr", type=float, default=2.5e-4)
    r.add_argument("--batch", type=int, default=128)
    r.add_argument("--updates", type=int, default=32, help="gradient steps per iteration (default 32)")
    r.add_argument("--n-step", type=int, default=3, help="n-step returns (default 3; the challenge used 1)")
    r.add_argument("--noisy", action=argparse.BooleanOptionalAction, default=True,
                   help="noisy nets (default); --no-noisy: epsilon-greedy annealed to 0 as the challenge")
    _common(r, eval_default=500)
    r.set_defaults(func=run_hanabi_rainbow)

    e = _eval_parser(acts, "hanabi-eval", "self-play report and ad-hoc protocol of a trained Hanabi learner",
                     "--games", 200, "ad-hoc trials per hold-out team", run_hanabi_eval)
    e.add_argument("--adhoc", default=None, help="comma-separated hold-out rule agents, e.g. IGGI,Piers,Outer")

    m = acts.add_parser("symmtom-maddpg", help="MADDPG / RMADDPG / MADDPG-CE/GE/EE/Oracle on the batched env")
    m.add_argument("--out", required=True, help=_OUT_HELP)
    m.add_argument("--variant", default="maddpg", help="maddpg, rmaddpg, ce, ge, ee, oracle")
    m.add_argument("--agents", type=int, default=3)
    m.add_argument("--width", type=int, default=6)
    m.add_argument("--pieces", type=int, default=3)
    m.add_argument("--iterations", type=int, default=100, help="total iterations (each: --num-envs episodes)")
    m.add_argument("--num-envs", type=int, default=128, help="episodes stepped together per iteration (default 128)")
    m.add_argument("--lr", type=float, default=1e-3)
    m.add_argument("--tau", type=float, default=0.005)
    m.add_argument("--batch", type=int, default=1024,
                   help="critic rows, (transition, ego agent) pairs, per gradient step (default 1024)")
    m.add_argument("--update-every", type=int, default=100,
                   help="joint environment steps per gradient step (default 100, MADDPG's)")
    m.add_argument("--updates", type=int, default=0,
                   help="gradient steps per iteration instead of --update-every (default 0: use --update-every)")
    m.add_argument("--warmup", type=int, default=25_600, help="joint steps in the replay before the first update")
    _common(m, eval_default=200)
    m.set_defaults(func=run_symmtom_maddpg)

    s = _eval_parser(acts, "symmtom-eval", "Table 1 reward and theory-of-mind tests of a trained SymmToM learner",
                     "--episodes", 100, "trials per theory-of-mind test", run_symmtom_eval)
    s.add_argument("--tom", action="store_true", help="also run the paper's four theory-of-mind tests")


_OUT_HELP = "run directory (checkpoint.pt, scalars.csv); rerun to resume"


def _eval_parser(acts, name: str, help: str, count_flag: str, trials: int, trials_help: str, func):
    """The parser of an evaluation command: a trained run, how many games (``count_flag``, default 1000),
    seed, trials and device."""
    p = acts.add_parser(name, help=help)
    p.add_argument("run", help="run directory or checkpoint.pt")
    p.add_argument(count_flag, type=int, default=1000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--trials", type=int, default=trials, help=f"{trials_help} (default {trials})")
    p.add_argument("--device", default="auto")
    p.set_defaults(func=func)
    return p


def _hanabi_run_options(p) -> None:
    """Run directory, game and length of a Hanabi training command."""
    p.add_argument("--out", required=True, help=_OUT_HELP)
    p.add_argument("--preset", default="full", help="full, full-minimal, small, very-small (default full)")
    p.add_argument("--players", type=int, default=2)
    p.add_argument("--config", default=None,
                   help="explicit k=v,... HanabiConfig overrides, e.g. colors=1,ranks=2,hand_size=1")
    p.add_argument("--iterations", type=int, default=100, help="total iterations (each: --num-envs games)")


def _common(p, eval_default: int) -> None:
    """Seed, evaluation, checkpoint and device options of a training command."""
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--eval-every", type=int, default=10, help="greedy evaluation every N iterations (0: never)")
    p.add_argument("--eval-games", type=int, default=eval_default)
    p.add_argument("--checkpoint-every", type=int, default=10)
    p.add_argument("--device", default="auto", help="auto (CUDA when present), cpu, cuda[:k]")
    p.add_argument("--fresh", action="store_true", help="delete the run's checkpoint and start over")
    p.add_argument("--threads", type=int, default=1,
                   help="torch CPU threads (default 1: small networks gain nothing from more on a shared machine)")
    p.add_argument("--no-progress", action="store_true")


def _threads(args) -> None:
    import torch

    if args.threads < 1:
        raise CliError(f"--threads must be >= 1, got {args.threads}")
    torch.set_num_threads(args.threads)


def _positive(args, *names) -> None:
    for name in names:
        if getattr(args, name) < 1:
            raise CliError(f"--{name.replace('_', '-')} must be >= 1, got {getattr(args, name)}")


def _checkpoint_path(run: str) -> str:
    path = os.path.join(run, "checkpoint.pt") if os.path.isdir(run) else run
    if not os.path.exists(path):
        raise CliError(f"no checkpoint at {path}")
    return path


def _hanabi_config(args):
    from cfrkit.games.hanabi import preset

    overrides = {}
    if args.config:
        for item in args.config.split(","):
            key, _, value = item.partition("=")
            if not value:
                raise CliError(f"bad --config item {item!r}: expected key=value")
            overrides[key.strip()] = value.strip() if key.strip() in ("observation_type", "scoring") else int(value)
    try:
        return preset(args.preset, args.players, **overrides)
    except TypeError as exc:
        raise CliError(f"bad --config: {exc}") from None


def _hidden(text: str):
    try:
        sizes = tuple(int(x) for x in text.split(","))
    except ValueError:
        raise CliError(f"--hidden must be comma-separated integers, got {text!r}") from None
    if not sizes or min(sizes) < 1:
        raise CliError(f"--hidden sizes must be >= 1, got {text!r}")
    return sizes


def _train(args, train, config, settings, summary) -> int:
    """Run ``train`` (a ``train_*`` learner entry point) with the common options; Ctrl-C / SIGTERM save a
    checkpoint and exit with 128 + signal. ``summary(t)`` is the first part of the closing line."""
    from cfrkit.cli._runtime import GracefulStop

    with GracefulStop() as stop:
        t = train(config, settings, args.out, args.iterations, args.eval_every, args.eval_games,
                  args.checkpoint_every, args.device, args.fresh, not args.no_progress, stop.requested)
    print(f"{summary(t)}  -> {args.out}/checkpoint.pt, {args.out}/scalars.csv")
    return stop.exit_code() if stop.requested() else 0


def _hanabi_summary(t) -> str:
    return f"iteration {t.iteration}  env steps {t.env_steps}  games {t.games}  cpu {t.cpu_seconds:.0f} s"


def run_hanabi_ippo(args) -> int:
    from cfrkit.agents.hanabi.learning import IPPOSettings, train_ippo

    _positive(args, "iterations", "num_envs", "epochs", "minibatch", "checkpoint_every")
    config = _hanabi_config(args)
    _threads(args)
    settings = IPPOSettings(num_envs=args.num_envs, hidden=_hidden(args.hidden), lr=args.lr, epochs=args.epochs,
                            minibatch=args.minibatch, entropy_coef=args.entropy_coef, seed=args.seed)
    return _train(args, train_ippo, config, settings, _hanabi_summary)


def run_hanabi_rainbow(args) -> int:
    from cfrkit.agents.hanabi.learning import RainbowSettings, train_rainbow

    _positive(args, "iterations", "num_envs", "batch", "updates", "n_step", "checkpoint_every")
    config = _hanabi_config(args)
    _threads(args)
    hidden = _hidden(args.hidden)
    if len(hidden) != 2:
        raise CliError("--hidden for rainbow takes two sizes (trunk, streams), e.g. 512,512")
    settings = RainbowSettings(num_envs=args.num_envs, hidden=hidden, lr=args.lr, batch=args.batch,
                               updates=args.updates, n_step=args.n_step, noisy=args.noisy, seed=args.seed)
    return _train(args, train_rainbow, config, settings, _hanabi_summary)


def run_hanabi_eval(args) -> int:
    from cfrkit.agents.hanabi.learning import LearnedChallenger, greedy_policy, load_ippo, selfplay_scores
    from cfrkit.evaluation.hanabi_protocols import ScoreStats, adhoc_evaluate

    _positive(args, "games", "trials")
    trainer = load_ippo(_checkpoint_path(args.run), args.device)
    trainer.net.eval()
    policy = greedy_policy(trainer.net, trainer.device)
    scores = selfplay_scores(policy, trainer.config, args.games, args.seed)
    st = ScoreStats.of(scores, trainer.config.max_score)
    print(f"self-play ({args.games} games, {trainer.config.players} players): mean {st.mean:.2f}  "
          f"s.e. {st.sem:.2f}  std {st.std:.2f}  perfect {st.perfect_rate:.1%}")
    if args.adhoc:
        from cfrkit.games.hanabi import preset

        if trainer.config != preset("full", trainer.config.players):
            raise CliError("the ad-hoc protocol plays Full Hanabi: train with --preset full")
        teams = {name: name for name in args.adhoc.split(",")}
        for r in adhoc_evaluate(LearnedChallenger(policy), teams, trainer.config.players, args.trials, seed=args.seed):
            print(f"ad-hoc with {r.team}: {r.mean:.2f} +- {r.sem:.2f}  (team self-play {r.team_selfplay_mean:.2f})")
    return 0


def run_symmtom_maddpg(args) -> int:
    from cfrkit.agents.symmtom.learning import MADDPGSettings, train_maddpg
    from cfrkit.games.symmtom import SymmToMConfig

    _positive(args, "iterations", "num_envs", "checkpoint_every", "agents", "width", "pieces", "batch",
              "update_every")
    config = SymmToMConfig(agents=args.agents, width=args.width, pieces=args.pieces)
    _threads(args)
    settings = MADDPGSettings(variant=args.variant, num_envs=args.num_envs, lr=args.lr, tau=args.tau,
                              batch=args.batch, update_every=args.update_every, updates=args.updates,
                              warmup=args.warmup, seed=args.seed)
    return _train(args, train_maddpg, config, settings,
                  lambda t: f"iteration {t.iteration}  episodes {t.episodes}  cpu {t.cpu_seconds:.0f} s")


def run_symmtom_eval(args) -> int:
    from cfrkit.agents.symmtom.learning import load_maddpg

    _positive(args, "episodes", "trials")
    trainer = load_maddpg(_checkpoint_path(args.run), args.device)
    rewards = trainer.evaluate(args.episodes, seed=args.seed)
    cfg = trainer.config
    print(f"{trainer.settings.variant} n={cfg.agents} w={cfg.width} c={cfg.pieces}: reward per agent "
          f"{rewards.mean():.1f} [{rewards.std(ddof=1):.1f}] over {args.episodes} episodes")
    if args.tom:
        import numpy as np

        from cfrkit.evaluation.symmtom_tests import PAPER_TESTS, build_trial, run_tom_test

        ran = 0
        for k, (name, w) in enumerate(PAPER_TESTS):
            tc = build_trial(name, w, np.random.default_rng(0)).config
            if (tc.agents, tc.width, tc.pieces) != (cfg.agents, cfg.width, cfg.pieces):
                continue   # the paper tests agents trained in the test's own setting
            ran += 1
            r = run_tom_test(name, w, trainer.make_agent, args.trials, args.seed + k,
                             oracle=trainer.settings.variant == "oracle", progress=False)
            print(f"  {name} w={w}: SR {r.success_rate:.0%}  FR {r.failure_rate:.0%}  "
                  f"1-SR-FR {r.neither_rate:.0%}  RATSO {r.ratso_text()}")
        if not ran:
            print("  no theory-of-mind test is set in this setting (tests: n=c=3 with w=6 or 12; n=4, c=3)")
    return 0
