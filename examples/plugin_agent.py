"""A ttt-solve plugin in ten lines: ttt audit --agent py:examples.plugin_agent:make"""

from ttt_solve.agents import Agent


class WinOrRandom(Agent):
    """Completes a line when it can, else plays a random empty cell."""

    def search(self, position):
        moves = position.legal_moves()
        wins = [cell for cell in moves if position.play(cell).winner]
        return self.rng.choice(wins or moves)


def make(rng, **params):
    return WinOrRandom(rng, **params)
