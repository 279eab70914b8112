"""Learning agents for Hanabi in torch on the batched engine: IPPO (actor-critic) and a Rainbow-style DQN."""
from cfrkit.agents.hanabi.learning.ippo import IPPOSettings, IPPOTrainer, load_ippo, train_ippo
from cfrkit.agents.hanabi.learning.rainbow import RainbowSettings, RainbowTrainer, train_rainbow
from cfrkit.agents.hanabi.learning.play import LearnedChallenger, greedy_policy, selfplay_scores

__all__ = ["IPPOSettings", "IPPOTrainer", "load_ippo", "train_ippo", "RainbowSettings", "RainbowTrainer",
           "train_rainbow", "LearnedChallenger", "greedy_policy",
           "selfplay_scores"]
