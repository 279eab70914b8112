"""Learning agents for SymmToM in torch: MADDPG, RMADDPG, MADDPG-CE/GE/EE/Oracle on the batched environment."""
from cfrkit.agents.symmtom.learning.knowledge import BatchedKnowledge
from cfrkit.agents.symmtom.learning.maddpg import LearnedSymmToMAgent, MADDPGTrainer
from cfrkit.agents.symmtom.learning.settings import VARIANTS, MADDPGSettings
from cfrkit.agents.symmtom.learning.training import SCALAR_FIELDS, load_maddpg, make_trainer, train_maddpg

__all__ = ["BatchedKnowledge", "VARIANTS", "LearnedSymmToMAgent", "MADDPGSettings", "MADDPGTrainer",
           "SCALAR_FIELDS", "load_maddpg", "make_trainer", "train_maddpg"]
