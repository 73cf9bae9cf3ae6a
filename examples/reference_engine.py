#!/usr/bin/env python3
"""The reference engine of the ttt engine protocol, version 1 (docs/PROTOCOL.md).

Written against the protocol only: it imports nothing from ttt-solve, so it shows everything an
engine in any language has to do. It plays perfectly (the fastest win, the slowest loss, a draw
when that is the best there is) by a memoised negamax over the whole game, which suits boards
of up to about 12 cells; ``--depth N`` limits the search to N plies (a position at the horizon
counts as a draw) for bigger boards. Ties between equally good moves are broken by a generator
seeded with the ``seed`` of each ``go``, so the same request always gets the same answer.

    ttt audit --agent "cmd:python3 examples/reference_engine.py" --size 3 --win 3
"""

import argparse
import random
import sys

NAME = "reference-engine"
VERSION = "1.0"


class Game:
    """An R-row, C-column board where k in a row wins; cells are 0-based, row-major."""

    def __init__(self, rows, cols, k):
        self.rows, self.cols, self.k = rows, cols, k
        self.cells = rows * cols
        self.lines_through = [[] for _ in range(self.cells)]
        for row in range(rows):
            for col in range(cols):
                for d_row, d_col in ((0, 1), (1, 0), (1, 1), (1, -1)):
                    end_row, end_col = row + d_row * (k - 1), col + d_col * (k - 1)
                    if 0 <= end_row < rows and 0 <= end_col < cols:
                        line = [(row + d_row * i) * cols + col + d_col * i for i in range(k)]
                        for cell in line:
                            self.lines_through[cell].append(line)
        self.memo = {}

    def name(self, cell):
        return f"{chr(ord('a') + cell % self.cols)}{cell // self.cols + 1}"

    def wins(self, board, cell):
        """Whether the stone on ``cell`` completes a line."""
        stone = board[cell]
        return any(all(board[c] == stone for c in line) for line in self.lines_through[cell])

    def move_scores(self, board, depth):
        """Each empty cell's score for the side to move: a win is positive, larger when it
        comes sooner (empty cells left at the end, plus one), a loss its negation, a draw 0."""
        mover = "x" if board.count("x") == board.count("o") else "o"
        empty = [i for i, c in enumerate(board) if c == "."]
        scores = {}
        for cell in empty:
            child = board[:cell] + mover + board[cell + 1 :]
            if self.wins(child, cell):
                scores[cell] = len(empty)
            elif len(empty) == 1 or depth == 1:
                scores[cell] = 0
            else:
                scores[cell] = -self.score(child, None if depth is None else depth - 1)
        return scores

    def score(self, board, depth):
        key = (board, depth)
        if key not in self.memo:
            self.memo[key] = max(self.move_scores(board, depth).values())
        return self.memo[key]


def describe(score, empty, limited):
    """A score in words, for an info line."""
    if score == 0:
        return "draw or unknown (past the horizon)" if limited else "draw"
    plies = empty - abs(score) + 1
    return f"{'win' if score > 0 else 'loss'} in {plies}"


def reply(text):
    """Write one line and flush it: the program on the other side waits for whole lines."""
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def requests():
    """The words of each request line, until the input closes (the same as quit)."""
    while True:
        line = sys.stdin.readline()
        if not line:
            return
        words = line.split()
        if words:
            yield words


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--depth", type=int, default=None, help="plies searched (default: to the end of the game)"
    )
    args = parser.parse_args()
    game = board = None
    for words in requests():
        command = words[0]
        if command == "ttt":
            if words[1:] != ["1"]:
                reply(f"error {NAME} speaks protocol 1 only")
                continue
            reply(f"id name {NAME}")
            reply(f"id version {VERSION}")
            reply("ready")
        elif command == "rules":
            try:
                rows, cols, k = (int(w) for w in words[1:])
            except ValueError:
                reply(f"error cannot read rules {' '.join(words[1:])!r}")
                continue
            if min(rows, cols, k) < 1 or k > max(rows, cols):
                reply(f"error no such game: {rows}x{cols} k={k}")
                continue
            game = Game(rows, cols, k)
            reply("ok")
        elif command == "position":
            board = words[1].replace("/", "").lower() if len(words) > 1 else ""
        elif command == "go":
            seed = int(words[words.index("seed") + 1]) if "seed" in words else 0
            scores = game.move_scores(board, args.depth)
            best = max(scores.values())
            choices = sorted(cell for cell, score in scores.items() if score == best)
            cell = random.Random(seed).choice(choices)
            mover = "x" if board.count("x") == board.count("o") else "o"
            reply(
                f"info value {describe(best, board.count('.'), args.depth is not None)} for {mover}"
            )
            reply(f"move {game.name(cell)}")
        elif command == "quit":
            return
        else:
            reply(f"info ignored {command!r}")


if __name__ == "__main__":
    main()
