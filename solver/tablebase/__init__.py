"""The tablebase: every position of a board of at most 25 cells in a byte, indexed by rank."""
