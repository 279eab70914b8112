import os
import tempfile

# Compiled-tree disk cache of the test session goes to a private directory.
os.environ.setdefault("CFRKIT_CACHE", tempfile.mkdtemp(prefix="cfrkit-test-cache-"))


# CI (`.ci/run`) sets CFRKIT_REQUIRE_REFERENCES=1: a reference implementation the comparison tests need
# (open_spiel, eval7, phevaluator, pokerkit, the Hanabi Learning Environment, ray, matplotlib) that does
# not import is then a failure, not a silent skip, so a broken install cannot turn CI green.
if os.environ.get("CFRKIT_REQUIRE_REFERENCES") == "1":
    import pytest

    _importorskip = pytest.importorskip

    def _import_or_fail(modname, *args, **kwargs):
        try:
            return _importorskip(modname, *args, **kwargs)
        except pytest.skip.Exception as exc:
            pytest.fail(f"reference {modname!r} is required (CFRKIT_REQUIRE_REFERENCES=1) but does not import: "
                        f"{exc}", pytrace=False)

    pytest.importorskip = _import_or_fail


import importlib.util  # noqa: E402

import pytest  # noqa: E402


@pytest.fixture(scope="session")
def benchmark_script():
    """``benchmark_script("deepstack_holdem_eval")``: a script of ``benchmarks/`` imported as a module (the
    scripts are not a package), once per test session."""
    loaded = {}

    def load(name: str):
        if name not in loaded:
            path = os.path.join(os.path.dirname(__file__), "..", "benchmarks", f"{name}.py")
            spec = importlib.util.spec_from_file_location(f"benchmarks_{name}", path)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            loaded[name] = module
        return loaded[name]

    return load


@pytest.fixture
def torch_one_thread():
    """torch on one thread for the test (the learners' bit-exact comparisons and timings assume it)."""
    torch = pytest.importorskip("torch")
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="session")
def tiny_blueprint(tmp_path_factory):
    """``tiny_blueprint(game)``: the path of a 20-iteration blueprint of ``game`` (bets 0.5 and 1 pot, one raise
    per round, E[HS] buckets 169/4/4/4, seed 2), trained once per game and test session for the AIVAT tests."""
    from cfrkit.solvers.blueprint.betting_tree import build_betting_tree
    from cfrkit.solvers.blueprint.trainer import BlueprintTrainer

    paths = {}

    def path_for(game: str = "holdem(stacks=400;400)") -> str:
        if game not in paths:
            trainer = BlueprintTrainer(game, "0.5+1", 1, abstraction="ehs:169,4,4,4", seed=2,
                                       tree=build_betting_tree(game, "0.5+1", 1))
            trainer.iterate(20)
            paths[game] = str(tmp_path_factory.mktemp("tiny_bp") / "bp.npz")
            trainer.save(paths[game])
        return paths[game]

    return path_for


@pytest.fixture(scope="session")
def small_flop_spot():
    """``(tree, ranges)``: a flop spot small enough for thread and update-rule checks of the range solver (board
    As Kh Ts on a 10-card deck, pot 100, stacks 300, bets half pot and all-in; random ranges, seed 1)."""
    import numpy as np

    from cfrkit.cards.encoding import parse_cards
    from cfrkit.solvers.public.postflop_game import PostflopPublicGame
    from cfrkit.solvers.public.tree import build_public_tree

    g = PostflopPublicGame("AsKhTs", 100, 300, "50%, a", deck=parse_cards("AsKsQsJsTs9sAhKhQhJh"))
    ranges = (np.random.default_rng(1).random((2, 1326)) + 0.05) * g.hand_mask(g.board_cards)
    return build_public_tree(g), ranges
