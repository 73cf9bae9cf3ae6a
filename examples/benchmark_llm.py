#!/usr/bin/env python3
"""Sit the benchmark with a language model: a ttt engine (docs/PROTOCOL.md) that asks a model.

For each position ``ttt`` sends (``position BOARD``, then ``go``), this script writes the board
as text into a prompt, hands it to :func:`ask_model`, reads the first empty cell named in the
answer and replies ``move CELL``. ``ttt`` grades the move exactly as it grades a built-in agent.
An answer that names no empty cell is sent back as it came (``move ?``): ``ttt`` counts it as a
failed move, a miss, and starts the script again for the next position.

It imports nothing from ttt-solve. Out of the box the "model" is a trivial local policy (the
empty cell nearest the centre; ties to the first in reading order) so that it runs anywhere,
the tests included, without a network; put your model's call in :func:`ask_model`:

    ttt benchmark --agent 'cmd:python3 examples/benchmark_llm.py' --size 4 --win 4
    ttt benchmark --agent 'cmd:"python3 examples/benchmark_llm.py --model my-model",timeout=60' \\
        --size 5 --win 4 --jobs 1

A model answers slowly: give it ``timeout=SECONDS`` a move (the default is 5); ``--jobs 1``
keeps to one conversation at a time (an engine runs in one process anyway).
"""

import argparse
import re
import sys

NAME = "benchmark-llm-example"
VERSION = "1.0"


def prompt_of(board, rows, cols, k):
    """The position as a language model reads it: the rules, the board drawn with its
    coordinates, whose turn it is, the empty cells, and the answer wanted."""
    grid = board.split("/")
    mover = "x" if board.count("x") == board.count("o") else "o"
    letters = [chr(ord("a") + c) for c in range(cols)]
    drawn = ["    " + " ".join(letters)]
    drawn += [f"{r + 1:>3} " + " ".join(row) for r, row in enumerate(grid)]
    empty = [f"{letters[c]}{r + 1}" for r in range(rows) for c in range(cols) if grid[r][c] == "."]
    return "\n".join(
        [
            f"We play {k} in a row on a board of {rows} rows and {cols} columns: the first to "
            f"make {k} of their marks in a line (across, down or diagonally) wins.",
            "Rows are numbered from the top, columns lettered from the left; b3 is column b, "
            "row 3. Empty cells are dots.",
            *drawn,
            f"You play {mover}, and it is your move. Empty cells: {' '.join(empty)}.",
            "Answer with the one cell you play, like b3.",
        ]
    )


def ask_model(prompt, model, seed):
    """The model's answer to ``prompt``. Replace the body with a call to your model, e.g. an
    HTTP request to its API with ``prompt`` as the user message and ``seed`` as its sampling
    seed where it takes one, returning the text of its reply.

    ``local`` (the default) answers without any model: the empty cell nearest the centre, ties
    to the first in reading order, read back from the prompt's own list of empty cells."""
    if model != "local":
        raise SystemExit(f"no model {model!r} here: put its call in ask_model()")
    empty = re.search(r"Empty cells: ([a-z0-9 ]+)\.", prompt).group(1).split()
    rows, cols = (int(n) for n in re.search(r"(\d+) rows and (\d+) columns", prompt).groups())
    centre_row, centre_col = (rows - 1) / 2, (cols - 1) / 2

    def distance(cell):
        col, row = ord(cell[0]) - ord("a"), int(cell[1:]) - 1
        return (row - centre_row) ** 2 + (col - centre_col) ** 2

    return f"I play {min(empty, key=distance)}."


def cell_in(answer, board, cols):
    """The first empty cell ``answer`` names, or ``None``."""
    grid = board.split("/")
    for name in re.findall(r"\b([a-z])(\d{1,2})\b", answer.lower()):
        col, row = ord(name[0]) - ord("a"), int(name[1]) - 1
        if col < cols and 0 <= row < len(grid) and grid[row][col] == ".":
            return f"{name[0]}{name[1]}"
    return None


def reply(text):
    """One line, flushed: ttt waits for whole lines."""
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="local", help="the model to ask (default: local)")
    args = parser.parse_args()
    rules = board = None
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        if words[0] == "ttt":
            reply(f"id name {NAME}")
            reply(f"id version {VERSION}")
            reply("ready")
        elif words[0] == "rules":
            rules = tuple(int(w) for w in words[1:4])
            reply("ok")
        elif words[0] == "position":
            board = words[1].lower()
        elif words[0] == "go":
            seed = int(words[words.index("seed") + 1]) if "seed" in words else 0
            rows, cols, k = rules
            answer = ask_model(prompt_of(board, rows, cols, k), args.model, seed)
            cell = cell_in(answer, board, cols)
            if cell is None:
                reply(f"info the model answered {answer[:200]!r}, which names no empty cell")
            reply(f"move {cell or '?'}")
        elif words[0] == "quit":
            return


if __name__ == "__main__":
    main()
