"""LBR FC/1-4 against bp_s0 in one process: hands per CPU second (time.process_time) and a hash of the per-deal values.

Usage: PYTHONPATH=<checkout> python benchmarks/lbr_fc_cpu.py [DEALS]   (10 warm-up deals first, deals 1000-1009)
"""
import hashlib
import sys
import time

import cfrkit
from cfrkit.poker import make_agent
from cfrkit.evaluation.lbr import lbr_deals, settings_from
agent = make_agent("blueprint:/work/runs/bp_s0.npz", seed=1)
game = getattr(agent, "game", "holdem")
st = settings_from("FC", "1-4")
lbr_deals(agent, game, 0, 1000, 1010, st)
n = int(sys.argv[1]) if len(sys.argv) > 1 else 300
t = time.process_time()
v = lbr_deals(agent, game, 0, 0, n, st)
dt = time.process_time() - t
print(cfrkit.__file__, f"{2*n/dt:.0f} hands per CPU s ({dt:.1f} CPU s)", hashlib.sha1(v.tobytes()).hexdigest()[:12], f"mean {v[:, :2].mean():.6f}")
