"""The exhaustive solver: every reachable position of a game, ply by ply, on arrays."""
