"""DRL-BR: a DQN best response on Leduc against fixed agents, checkpoints and resume."""
import os

import numpy as np
import pytest

#: long checks (minutes) run only with CFRKIT_LONG=1; their short forms always run
LONG = pytest.mark.skipif(not os.environ.get("CFRKIT_LONG"), reason="long check: set CFRKIT_LONG=1")

torch = pytest.importorskip("torch")

from cfrkit.agents.leduc_agents import make_leduc_agent  # noqa: E402
from cfrkit.evaluation.drl_br import DQNBestResponse, DQNConfig, drl_br  # noqa: E402
from cfrkit.evaluation.headtohead import exact_match_value  # noqa: E402
from cfrkit.evaluation.lbr import exact_best_response_values  # noqa: E402


def _weights(learner):
    return np.concatenate([p.detach().cpu().numpy().ravel() for p in learner.online.parameters()])


def test_short_training_exploits_uniform_random():
    agent = make_leduc_agent("random", "leduc", seed=0)
    br = sum(exact_best_response_values(agent, "leduc")) / 2
    learner, res = drl_br(agent, "leduc", 800, eval_hands=100, seed=0, exact=True)
    assert res.exact_mbb / 1000 >= 0.6 * br  # the full check (80%) is test_drl_br_reaches_80_percent
    assert res.exact_mbb / 1000 <= br + 1e-9  # a best response bounds every strategy
    assert abs(res.mbb_per_hand - res.exact_mbb) < 3 * res.ci95  # head-to-head estimate (AIVAT) agrees


def test_resume_after_interrupt_continues_the_same_run(tmp_path, monkeypatch):
    agent = make_leduc_agent("always-call", "leduc")
    cfg = DQNConfig(learn_start=100, replay=2000)
    straight = DQNBestResponse(agent, "leduc", cfg, seed=3).train(400)
    path = str(tmp_path / "br.pt")
    first = DQNBestResponse(agent, "leduc", cfg, seed=3)
    real = DQNBestResponse._episode

    def interrupted(self):
        if self.steps >= 200:
            raise KeyboardInterrupt
        real(self)

    monkeypatch.setattr(DQNBestResponse, "_episode", interrupted)
    with pytest.raises(KeyboardInterrupt):
        first.train(400, checkpoint=path)
    monkeypatch.setattr(DQNBestResponse, "_episode", real)
    resumed = DQNBestResponse(agent, "leduc", cfg, seed=3)
    resumed.train(400, checkpoint=path)
    assert resumed.steps == straight.steps and resumed.episodes == straight.episodes
    assert np.allclose(_weights(resumed), _weights(straight))
    from cfrkit.games.base import GameError

    with pytest.raises(GameError, match="other settings"):
        DQNBestResponse(agent, "leduc", DQNConfig(n_step=2), seed=3).train(500, checkpoint=path)


@pytest.mark.slow
@LONG
def test_drl_br_reaches_80_percent_of_the_exact_best_response():
    agent = make_leduc_agent("random", "leduc", seed=0)
    br = sum(exact_best_response_values(agent, "leduc")) / 2
    learner = DQNBestResponse(agent, "leduc", DQNConfig(), seed=0)  # budget: 10,000 learner decisions
    learner.train(10000)
    assert exact_match_value([learner, agent], "leduc") >= 0.8 * br
