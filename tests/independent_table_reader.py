"""A reader of compressed tablebase files written from docs/table-format.md alone.

It imports nothing of ttt_solve: the standard library and zstandard only. The tests hold it
to the package on every record of 3x3 k=3 and 4x4 k=4. Usage:

    python tests/independent_table_reader.py FOLDER x../.o./...   # a position's record
"""

import bisect
import hashlib
import json
import struct
import sys
from itertools import combinations
from math import comb
from pathlib import Path

import zstandard

HEADER = struct.Struct("<8sH8B6x5Q12Q32s")


def lines(rows, cols, k):
    found = set()
    for r in range(rows):
        for c in range(cols):
            for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
                cells = [(r + dr * i, c + dc * i) for i in range(k)]
                if all(0 <= rr < rows and 0 <= cc < cols for rr, cc in cells):
                    found.add(sum(1 << (rr * cols + cc) for rr, cc in cells))
    return sorted(found)


def symmetries(rows, cols):
    maps = [
        lambda r, c: (r, c),
        lambda r, c: (r, cols - 1 - c),
        lambda r, c: (rows - 1 - r, c),
        lambda r, c: (rows - 1 - r, cols - 1 - c),
    ]
    if rows == cols:
        maps += [
            lambda r, c: (c, r),
            lambda r, c: (cols - 1 - c, r),
            lambda r, c: (c, rows - 1 - r),
            lambda r, c: (cols - 1 - c, rows - 1 - r),
        ]
    return [
        [m(i // cols, i % cols)[0] * cols + m(i // cols, i % cols)[1] for i in range(rows * cols)]
        for m in maps
    ]


def permute(stones, perm):
    return sum(1 << perm[i] for i in range(len(perm)) if stones >> i & 1)


def rank(stones):
    cells = [i for i in range(stones.bit_length()) if stones >> i & 1]
    return sum(comb(cell, m) for m, cell in enumerate(cells, 1))


def unrank(number, size):
    stones = 0
    for m in range(size, 0, -1):
        cell = m - 1
        while comb(cell + 1, m) <= number:
            cell += 1
        stones |= 1 << cell
        number -= comb(cell, m)
    return stones


def free_cells(full, taken):
    return [i for i in range(full.bit_length()) if not (taken >> i & 1)]


def count(stones):
    return bin(stones).count("1")


def known(x, o, ply, cells, game_lines, k):
    """The record the stones give (section "Records known from the stones"), or None."""
    mover, last = (x, o) if ply % 2 == 0 else (o, x)
    empty = (1 << cells) - 1 & ~(x | o)
    mine = [line for line in game_lines if mover & line == line]
    theirs = [line for line in game_lines if last & line == line]
    common = -1
    for line in theirs:
        common &= line
    if mine or (theirs and common == 0):
        return 0
    if theirs:
        return 2
    if ply == cells:
        return 1

    def threats(side, other):
        return [
            line & empty for line in game_lines if other & line == 0 and count(side & line) == k - 1
        ]

    if threats(mover, last):
        return 3
    blocks = 0
    for cell in threats(last, mover):
        blocks |= cell
    if count(blocks) >= 2:
        return 4
    for move in [1 << i for i in range(cells) if (blocks or empty) >> i & 1]:
        made = 0
        for line in game_lines:
            if line & move and last & line == 0 and count(mover & line) == k - 2:
                made |= line & empty & ~move
        if count(made) >= 2:
            return 5
    return None


class CompressedPly:
    def __init__(self, path):
        self.data = Path(path).read_bytes()
        fields = HEADER.unpack_from(self.data)
        assert fields[0] == b"TTTBLOCK" and fields[1] == 1, "not a compressed ply file"
        self.rows, self.cols, self.k, self.ply = fields[2:6]
        assert fields[6:10] == (1, 1, 1, 1), "an index, record, codec or rule kind I don't know"
        self.classes, self.per_class, self.count, self.per_block, self.blocks = fields[10:15]
        self.counts = fields[15:27]
        self.table = 256 + 4 * self.classes
        start = self.table + 16 * self.blocks
        head = bytearray(self.data[:start])
        head[160:192] = bytes(32)
        assert hashlib.blake2b(head, digest_size=32).digest() == fields[27], "head damaged"
        self.reps = struct.unpack_from(f"<{self.classes}I", self.data, 256)
        self.cells = self.rows * self.cols
        self.lines = lines(self.rows, self.cols, self.k)
        self.x, self.o = (self.ply + 1) // 2, self.ply // 2
        self.decoded = {}

    def block(self, number):
        if number not in self.decoded:
            at = self.table + 16 * number
            start, digest = struct.unpack_from("<Q8s", self.data, at)
            end = (
                struct.unpack_from("<Q", self.data, at + 16)[0]
                if number + 1 < self.blocks
                else len(self.data)
            )
            frame = self.data[start:end]
            assert hashlib.blake2b(frame, digest_size=8).digest() == digest, "block damaged"
            self.decoded = {number: zstandard.ZstdDecompressor().decompress(frame)}
        return self.decoded[number]

    def stones(self, number):
        x = unrank(self.reps[number // self.per_class], self.x)
        free = free_cells((1 << self.cells) - 1, x)
        positions = unrank(number % self.per_class, self.o)
        return x, sum(1 << free[i] for i in range(len(free)) if positions >> i & 1)

    def record(self, number, stones=None):
        stored = self.block(number // self.per_block)[number % self.per_block]
        if stored != 1:
            return stored
        x, o = stones or self.stones(number)
        found = known(x, o, self.ply, self.cells, self.lines, self.k)
        return 1 if found is None else found

    def records(self):
        """Every record in the order of the numbers: O sets in colex order within a class."""
        colex = sorted(combinations(range(self.cells - self.x), self.o), key=lambda s: s[::-1])
        number = 0
        for rep in self.reps:
            x = unrank(rep, self.x)
            free = free_cells((1 << self.cells) - 1, x)
            for positions in colex:
                yield self.record(number, (x, sum(1 << free[i] for i in positions)))
                number += 1

    def number(self, x, o):
        images = [
            (rank(permute(x, p)), permute(x, p), permute(o, p))
            for p in symmetries(self.rows, self.cols)
        ]
        best, rep, image = min(images)
        cls = bisect.bisect_left(self.reps, best)
        free = free_cells((1 << self.cells) - 1, rep)
        positions = sum(1 << i for i, cell in enumerate(free) if image >> cell & 1)
        return cls * self.per_class + rank(positions)


def describe(record, empty):
    if record == 0:
        return "no position of a game"
    if record == 1:
        return f"draw, remoteness {empty}"
    return f"{'win' if (record - 2) % 2 else 'loss'}, remoteness {record - 2}"


if __name__ == "__main__":
    folder, text = Path(sys.argv[1]), sys.argv[2].replace("/", "").lower()
    game = json.loads((folder / "table.json").read_text())["rules"]
    x = sum(1 << i for i, c in enumerate(text) if c == "x")
    o = sum(1 << i for i, c in enumerate(text) if c == "o")
    ply_file = CompressedPly(folder / f"ply-{count(x | o):02d}.tbz")
    print(describe(ply_file.record(ply_file.number(x, o)), text.count(".")))
