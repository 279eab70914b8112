"""Bad input to card abstractions, blueprint training and the blueprint agent (issue 11's must-show).

Unknown bucket counts, a table or checkpoint for another game or abstraction, a corrupt checkpoint, an
off-tree bet larger than the stack: each gives one clear error (a named error class from Python; exit code 2
and one ``cfrkit CMD: error: ...`` line from the command line) and leaves every file on disk byte-identical
(hashed before and after).  Tiny inputs: 3-rank preflop abstractions (no k-means), 4-bucket E[HS]
blueprints of a 400-chip game.
"""
import hashlib
import json
import os
import shutil

import numpy as np
import pytest

from cfrkit.abstraction import AbstractionError, build_abstraction, load_abstraction
from cfrkit.cli import main
from cfrkit.games.base import GameError
from cfrkit.solvers.blueprint.betting_tree import BlueprintError
from cfrkit.solvers.blueprint.strategy import BlueprintStrategy
from cfrkit.solvers.blueprint.trainer import BlueprintTrainer

SMALL_GAME = "holdem(stacks=400;400)"
TINY = dict(features=("lossless",), num_ranks=3, progress=False, workers=1)  # 9 preflop classes, no k-means


def snapshot(root):
    """{path: sha256} of every file under ``root`` (the directory tree included)."""
    out = {}
    for d, dirs, files in os.walk(root):
        out[d + "/"] = "dir"
        for f in files:
            p = os.path.join(d, f)
            with open(p, "rb") as fh:
                out[p] = hashlib.sha256(fh.read()).hexdigest()
    return out


def cli_refuses(root, argv, capsys, match):
    """Run ``cfrkit argv``: exit code 2, one error line containing ``match``, nothing under ``root`` changed."""
    capsys.readouterr()
    before = snapshot(root)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"cfrkit {argv[0]}: error: "), err
    assert match in err, err
    assert snapshot(root) == before


def refuses(root, error, match, fn, *args, **kwargs):
    """``fn(*args)`` raises ``error`` with a one-line message containing ``match``; nothing under ``root`` changed."""
    before = snapshot(root)
    with pytest.raises(error) as info:
        fn(*args, **kwargs)
    msg = str(info.value)
    assert "\n" not in msg and match in msg, msg
    assert snapshot(root) == before


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("bad_input")
    build_abstraction((9,), str(root / "ab"), **TINY)
    build_abstraction((9,), str(root / "ab_seed1"), seed=1, **TINY)
    tr = BlueprintTrainer(SMALL_GAME, "0.5+1", 1, abstraction="ehs:169,4,4,4", seed=1)
    tr.iterate(3)
    tr.save(str(root / "bp.npz"))
    tr.save(str(root / "snap.npz"), strategy_only=True)
    return root


def _rewrite_checkpoint(src, dst, header_edit=None, array_edit=None):
    with np.load(src) as z:
        data = {k: z[k] for k in z.files}
    header = json.loads(bytes(data["__header__"]).decode())
    if header_edit is not None:
        header = header_edit(header)
    data["__header__"] = np.frombuffer(json.dumps(header).encode(), dtype=np.uint8)
    if array_edit is not None:
        array_edit(data)
    np.savez(dst, **data)


# ------------------------------------------------------------------------------------ abstraction

def test_abstraction_build_refuses_unknown_bucket_counts_and_features(files, tmp_path, capsys):
    out = str(tmp_path / "new")
    for buckets, match in (("9,x", "comma-separated integers"), ("", "comma-separated integers"),
                           ("169,10,10,10,10", "1..4 counts"), ("169,0", "1..4 counts"),
                           ("170,10,10,10", "must number 169")):
        cli_refuses(str(tmp_path), ["abstraction", "build", "--buckets", buckets, "--out", out], capsys, match)
    cli_refuses(str(tmp_path), ["abstraction", "build", "--buckets", "169,10", "--features", "lossless,zzz",
                                "--out", out], capsys, "unknown feature 'zzz'")
    assert not os.path.exists(out)  # refused before the directory is made
    refuses(str(tmp_path), AbstractionError, "must number 169", build_abstraction, (170, 10, 10, 10), out)


def test_abstraction_build_never_overwrites_another_build_or_foreign_files(files, tmp_path, capsys):
    ab = str(files / "ab")
    cli_refuses(str(files), ["abstraction", "build", "--buckets", "9", "--features", "lossless", "--ranks", "3",
                             "--seed", "1", "--out", ab, "--no-progress"], capsys, "other parameters")
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "round1.bkt").write_bytes(b"someone else's file")
    cli_refuses(str(tmp_path), ["abstraction", "build", "--buckets", "9", "--features", "lossless", "--ranks",
                                "3", "--out", str(foreign), "--no-progress"], capsys, "holds no card abstraction")
    (foreign / "abstraction.json").write_text("{half a manifest")  # a damaged build is not resumed over
    cli_refuses(str(tmp_path), ["abstraction", "build", "--buckets", "9", "--features", "lossless", "--ranks",
                                "3", "--out", str(foreign), "--no-progress"], capsys, "damaged (not JSON)")
    (tmp_path / "afile").write_text("x")
    cli_refuses(str(tmp_path), ["abstraction", "build", "--buckets", "9", "--features", "lossless", "--ranks",
                                "3", "--out", str(tmp_path / "afile"), "--no-progress"], capsys, "File exists")


def test_abstraction_info_and_load_refuse_damaged_foreign_or_mismatched_tables(files, tmp_path, capsys):
    ab = str(files / "ab")
    cli_refuses(str(tmp_path), ["abstraction", "info", str(tmp_path / "nothing")], capsys, "does not exist")
    bad = tmp_path / "badjson"
    bad.mkdir()
    (bad / "abstraction.json").write_text("{not json")
    cli_refuses(str(tmp_path), ["abstraction", "info", str(bad)], capsys, "damaged (not JSON)")
    (bad / "abstraction.json").write_text('{"kind": "cfrkit-card-abstraction", "complete": true}')
    cli_refuses(str(tmp_path), ["abstraction", "info", str(bad)], capsys, "no abstraction parameters")
    (bad / "abstraction.json").write_text('{"kind": "cfrkit-card-abstraction", "complete": true, '
                                          '"params": {"buckets": ["x"]}}')
    cli_refuses(str(tmp_path), ["abstraction", "info", str(bad)], capsys, "malformed abstraction parameters")
    trunc = tmp_path / "trunc"
    shutil.copytree(ab, trunc)
    raw = (trunc / "round0.bkt").read_bytes()
    (trunc / "round0.bkt").write_bytes(raw[:-4])
    cli_refuses(str(tmp_path), ["abstraction", "info", str(trunc)], capsys, "truncated")
    flip = tmp_path / "flip"
    shutil.copytree(ab, flip)
    damaged = bytearray(raw)
    damaged[-1] ^= 0xFF
    (flip / "round0.bkt").write_bytes(bytes(damaged))
    cli_refuses(str(tmp_path), ["abstraction", "info", str(flip), "--verify"], capsys, "CRC-32 mismatch")
    refuses(str(tmp_path), AbstractionError, "CRC-32 mismatch", load_abstraction, str(flip))
    # a table of another abstraction (another seed) copied in
    mixed = tmp_path / "mixed"
    shutil.copytree(ab, mixed)
    shutil.copy(files / "ab_seed1" / "round0.bkt", mixed / "round0.bkt")
    cli_refuses(str(tmp_path), ["abstraction", "info", str(mixed)], capsys, "built with other parameters")
    refuses(str(tmp_path), AbstractionError, "built with other parameters", load_abstraction, str(mixed))
    refuses(str(files), AbstractionError, "has buckets [9], not [9, 7]", load_abstraction, ab, buckets=(9, 7))


# ------------------------------------------------------------------------------------ blueprint training

def test_train_refuses_unknown_bucket_counts_and_abstractions_for_another_game(files, tmp_path, capsys):
    common = ["--game", SMALL_GAME, "--raise-cap", "1", "--iterations", "1", "--no-progress"]
    path = str(tmp_path / "new.npz")
    for spec, match in (("ehs:169,x,4,4", "invalid literal"), ("ehs:170,4,4,4", "must be 169"),
                        ("ehs:169,4,4", "must be 169 and three counts"), ("ehs:169,4,4,2000", "1..1326"),
                        ("foo:1", "unknown card abstraction"), (f"emd:{tmp_path / 'none'}", "does not exist"),
                        (f"emd:{files / 'ab'}", "has 1 round;")):
        cli_refuses(str(tmp_path), ["blueprint", "train", path, "--abstraction", spec] + common, capsys, match)
    cli_refuses(str(tmp_path), ["blueprint", "train", path, "--game", "kuhn", "--iterations", "1"], capsys,
                "wraps a holdem game")
    cli_refuses(str(tmp_path), ["blueprint", "train", path, "--raise-cap", "0", "--iterations", "1"], capsys,
                "raise cap must be at least 1")
    assert not os.path.exists(path)
    refuses(str(files), BlueprintError, "has 1 round;", BlueprintTrainer, SMALL_GAME,
            abstraction=load_abstraction(str(files / "ab")))


def test_resume_refuses_corrupt_foreign_or_mismatched_checkpoints_and_keeps_them(files, tmp_path, capsys):
    from cfrkit.policy import TabularPolicy

    bp = str(files / "bp.npz")
    raw = open(bp, "rb").read()
    cases = {"truncated.npz": (raw[: len(raw) // 2], "corrupt or truncated"),
             "text.npz": (b"not a checkpoint\n", "corrupt or truncated")}
    for name, (data, match) in cases.items():
        (tmp_path / name).write_bytes(data)
    _rewrite_checkpoint(bp, tmp_path / "nokey.npz", header_edit=lambda h: {k: v for k, v in h.items() if k != "bets"})
    _rewrite_checkpoint(bp, tmp_path / "listhdr.npz", header_edit=lambda h: [1, 2])
    _rewrite_checkpoint(bp, tmp_path / "newer.npz", header_edit=lambda h: dict(h, version=99))
    _rewrite_checkpoint(bp, tmp_path / "othergame.npz", header_edit=lambda h: dict(h, game="holdem(stacks=500;500)"))
    _rewrite_checkpoint(bp, tmp_path / "f64.npz",
                        array_edit=lambda d: d.update(strategy_sum=d["strategy_sum"].astype(np.float64)))
    _rewrite_checkpoint(bp, tmp_path / "short.npz", array_edit=lambda d: d.update(regrets=d["regrets"][:-3]))
    _rewrite_checkpoint(bp, tmp_path / "otherabs.npz",
                        header_edit=lambda h: dict(h, abstraction="ehs:169,5,5,5", num_buckets=[169, 5, 5, 5]))
    TabularPolicy("kuhn", {}).save(str(tmp_path / "policy.npz"))
    shutil.copy(files / "snap.npz", tmp_path / "snap.npz")
    expected = {"truncated.npz": "corrupt or truncated", "text.npz": "corrupt or truncated",
                "nokey.npz": "header lacks bets", "listhdr.npz": "not a JSON object", "newer.npz": "is newer",
                "othergame.npz": "does not match its header", "f64.npz": "must be a float32 vector",
                "short.npz": "do not fit the tree", "otherabs.npz": "trained with card abstraction",
                "policy.npz": "expected a cfrkit-blueprint file", "snap.npz": "strategy-only file"}
    for name, match in expected.items():
        path = str(tmp_path / name)
        cli_refuses(str(tmp_path), ["blueprint", "train", path, "--iterations", "5", "--no-progress"], capsys, match)
        refuses(str(tmp_path), BlueprintError, match, BlueprintTrainer.load, path)
        if name not in ("snap.npz", "short.npz"):  # those hold a playable strategy
            refuses(str(tmp_path), BlueprintError, match, BlueprintStrategy.load, path)
            cli_refuses(str(tmp_path), ["blueprint", "info", path], capsys,
                        "do not fit the tree" if name == "otherabs.npz" else match)
            cli_refuses(str(tmp_path), ["blueprint", "play", path, "--deals", "1"], capsys, match)


def test_resume_refuses_options_that_contradict_the_checkpoint(files, tmp_path, capsys):
    bp = tmp_path / "bp.npz"
    shutil.copy(files / "bp.npz", bp)
    for extra, match in ((["--abstraction", "ehs:169,5,5,5"], "--abstraction ehs:169,5,5,5 (file: ehs:169,4,4,4)"),
                         (["--game", "holdem(stacks=500;500)"], "--game"), (["--raise-cap", "2"], "--raise-cap 2"),
                         (["--bets", "1"], "--bets 1"), (["--seed", "7"], "--seed 7"),
                         (["--game", "nosuchgame"], "--game 'nosuchgame'")):
        cli_refuses(str(tmp_path), ["blueprint", "train", str(bp), "--iterations", "5", "--no-progress"] + extra,
                    capsys, match)
    # the same settings spelled out resume normally
    assert main(["blueprint", "train", str(bp), "--iterations", "4", "--game", SMALL_GAME, "--raise-cap", "1",
                 "--abstraction", "ehs:169,4,4,4", "--no-progress"]) == 0
    assert BlueprintTrainer.load(str(bp)).iterations == 4


def test_loading_with_another_abstraction_is_refused(files):
    bp = str(files / "bp.npz")
    refuses(str(files), BlueprintError, "trained with card abstraction", BlueprintStrategy.load, bp,
            abstraction="ehs:169,4,4,5")
    refuses(str(files), BlueprintError, "trained with card abstraction", BlueprintTrainer.load, bp,
            abstraction="ehs:169,4,4,5")
    from cfrkit.agents.blueprint import BlueprintAgent

    refuses(str(files), BlueprintError, "trained with card abstraction", BlueprintAgent, bp,
            abstraction="ehs:169,4,4,5")


# ------------------------------------------------------------------------------------ the agent

def test_agent_refuses_bets_larger_than_the_stack(files):
    from cfrkit.agents.blueprint import BlueprintAgent
    from cfrkit.cards import parse_cards
    from cfrkit.games import load
    from cfrkit.games.holdem.game import raise_action
    from cfrkit.games.holdem.matchstate import MatchStateError, state_from_matchstate

    agent = BlueprintAgent(str(files / "bp.npz"), seed=0)
    game = load(SMALL_GAME)
    state = game.new_initial_state()
    for c in parse_cards("AhAcKdKc"):
        state.apply_action(c)
    refuses(str(files), BlueprintError, "larger than player 1's stack of 400", agent.translate_raise, 0, state, 5000)
    # an off-tree raise within the stack is translated and played
    off = state.clone()
    off.apply_action(raise_action(260))
    hs = agent.hand_strategy(off)
    assert np.allclose(hs.probs[hs.probs.sum(axis=1) > 0].sum(axis=1), 1.0)
    # a dealer's line with a raise past the stack never reaches the agent: one MatchStateError
    refuses(str(files), MatchStateError, "illegal", state_from_matchstate, game, "MATCHSTATE:0:0:r5000:AhAc|")
    # the same raise in a deeper-stacked game: the agent refuses the other game's state
    deep = load("holdem(stacks=20000;20000)")
    big = deep.new_initial_state()
    for c in parse_cards("AhAcKdKc"):
        big.apply_action(c)
    big.apply_action(raise_action(5000))
    refuses(str(files), GameError, "whose rules differ", agent.act, big)
    refuses(str(files), GameError, "whose rules differ", agent.hand_strategy, big)
