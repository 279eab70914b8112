"""Learning agents for SymmToM in torch: MADDPG, RMADDPG, MADDPG-CE/GE/EE/Oracle on the batched environment."""
from cfrkit.agents.symmtom.learning.knowledge import BatchedKnowledge
from cfrkit.agents.symmtom.learning.maddpg import (VARIANTS, LearnedSymmToMAgent, MADDPGSettings, MADDPGTrainer,
                                                   load_maddpg, make_trainer, train_maddpg)

__all__ = ["BatchedKnowledge", "VARIANTS", "LearnedSymmToMAgent", "MADDPGSettings", "MADDPGTrainer",
           "load_maddpg", "make_trainer", "train_maddpg"]
