"""A stand-in for the value network that solves every input situation exactly (diagnostics and tests).

:class:`SolvedBucketModel` has the value net's interface (``inputs (N, 2M+1) -> (N, 2M)``: both players'
normalised bucketed ranges and the contribution over the stack in; both players' bucket cfvs as fractions
of the pot out) but computes its outputs by decoding each input back into a Leduc situation (board rank
from the bucket block that holds the mass, board suit 0, hand ranges from the buckets, contribution =
fraction x stack) and solving it with CFR+, exactly as the training data are made.  Plugged into
:class:`~cfrkit.value_nets.leaf_values.NetLeafValues` it separates errors of the interface (units,
normalisation, bucketing, player order) from errors of the network: with the interface right, a
depth-limited solve with this model at the leaves equals one with
:class:`~cfrkit.solvers.public.leaf_functions.ExactContinuationValues` (exact leaves) to rounding.
"""
from __future__ import annotations

from typing import Dict, Tuple

import numpy as np
import torch
from torch import nn

from cfrkit.solvers.public.games import public_game_for
from cfrkit.solvers.public.public_tree import build_public_tree
from cfrkit.solvers.public.solver import SubgameSolver
from cfrkit.value_nets.bucketing import LeducBucketer


class SolvedBucketModel(nn.Module):
    """Exact "value net" for a Leduc-family game (one bucket per hand and board rank; see module docstring).

    Args:
        game: the Leduc-family game (protocol Game).
        stack: chips per player (the net's pot fraction is contribution / stack).
        iterations, skip: CFR+ settings of each situation's solve.
        targets: ``"average_values"`` (cfvs averaged over the iterations after ``skip``, DeepStack's targets
            and the data generator's default) or ``"average_strategy"`` (cfvs of the average strategy).
    """

    def __init__(self, game, stack: float, iterations: int = 300, skip: int = 0,
                 targets: str = "average_values"):
        super().__init__()
        self.pgame = public_game_for(game)
        self.bucketer = LeducBucketer(self.pgame.deck_size, game.suits)
        self.num_buckets = self.bucketer.num_buckets
        self.stack = float(stack)
        self.iterations, self.skip, self.targets = int(iterations), int(skip), targets
        self.register_buffer("_dtype_marker", torch.zeros(1, dtype=torch.float64))
        self._trees: Dict[Tuple[int, float], object] = {}
        self.solves = 0

    def _tree(self, board: int, contrib: float):
        key = (board, contrib)
        if key not in self._trees:
            self._trees[key] = build_public_tree(self.pgame, self.pgame.round_start_state(board, contrib))
        return self._trees[key]

    @torch.no_grad()
    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        x = inputs.detach().cpu().double().numpy()
        N = x.shape[0]
        M, C = self.num_buckets, self.bucketer.num_cards
        suits = self.bucketer.suits
        r = x[:, :2 * M].reshape(N, 2, M // C, C)  # (N, player, board rank, hand)
        mass = r.sum(axis=(1, 3))  # (N, board ranks)
        ranks = mass.argmax(1)
        contribs = np.round(x[:, -1] * self.stack, 6)
        out = np.zeros((N, 2 * M))
        for rank in np.unique(ranks):
            for contrib in np.unique(contribs[ranks == rank]):
                idx = np.nonzero((ranks == rank) & (contribs == contrib))[0]
                board = int(rank) * suits
                hand_ranges = r[idx, :, rank, :] * self.pgame.hand_mask([board])
                ok = hand_ranges.sum(axis=(1, 2)) > 0
                if not ok.any():
                    continue
                idx, hand_ranges = idx[ok], hand_ranges[ok]
                solver = SubgameSolver(self._tree(board, float(contrib)), hand_ranges, backend="numpy",
                                       algorithm="cfr+", skip=self.skip)
                solver.run(self.iterations)
                self.solves += 1
                # (B, 2, H) chips
                vals = solver.average_root_cfvs() if self.targets == "average_values" else solver.root_cfvs()
                pot = 2.0 * float(contrib)
                for p in (0, 1):
                    out[idx, p * M + rank * C:p * M + (rank + 1) * C] = vals[:, p] / pot
        return torch.as_tensor(out, dtype=inputs.dtype if inputs.dtype == torch.float64 else torch.float32)
