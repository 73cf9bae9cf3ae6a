"""The table's one sampler (``solver.tablebase.sample``): every canonical position of a ply once,
with its record, when asked for more than there are; a sample of ``n`` is the start of one of
``n + 1``; ``keep`` restricts the records; drawn at random numbers, each canonical position is
equally likely (a chi-square test over many seeds)."""

from __future__ import annotations

import csv
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from ttt_solve.agents.intervals import chi_square_tail
from ttt_solve.solver.position import Position
from ttt_solve.solver.rules import Rules
from ttt_solve.solver.tablebase import sample
from ttt_solve.solver.tablebase.build import build_table
from ttt_solve.solver.tablebase.probe import open_tablebase
from ttt_solve.solver.tablebase.record import DECIDED, value_of_record
from ttt_solve.solver.tablebase.sample import PlySample

DATA = Path(__file__).parent.parent / "data"
TIC_TAC_TOE = Rules(3, 3, 3)
FOUR = Rules(4, 4, 3)


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    folder = tmp_path_factory.mktemp("sampled")
    for rules in (TIC_TAC_TOE, FOUR):
        build_table(rules, folder / rules.name)
    return folder


def keys(rules: Rules, drawn) -> list[int]:
    return [rules.canonical(int(x), int(o))[0] for x, o in zip(drawn.x, drawn.o)]


def test_asked_for_more_it_gives_every_canonical_position_of_each_ply_once(tables):
    with open(DATA / "positions_by_ply_3x3.csv") as rows:
        published = {int(row["ply"]): int(row["canonical"]) for row in csv.DictReader(rows)}
    table = open_tablebase(tables / TIC_TAC_TOE.name)
    for ply, canonical in published.items():
        drawn = PlySample(tables / TIC_TAC_TOE.name, TIC_TAC_TOE, ply).sample(10_000, seed=3)
        assert len(set(keys(TIC_TAC_TOE, drawn))) == len(drawn) == canonical
        for x, o, record in zip(drawn.x, drawn.o, drawn.records):
            position = Position(TIC_TAC_TOE, int(x), int(o))
            assert table.probe(position) == value_of_record(int(record), position.empty_count)


@pytest.mark.parametrize("whole", [sample.WHOLE, 0])
def test_a_sample_is_the_start_of_a_larger_one_and_depends_on_the_seed(tables, monkeypatch, whole):
    monkeypatch.setattr(sample, "WHOLE", whole)  # 0: drawn at random numbers
    monkeypatch.setattr(sample, "BATCH", 256)
    ply = PlySample(tables / FOUR.name, FOUR, 7)
    small, large = ply.sample(40, seed=5), ply.sample(700, seed=5)
    assert len(large) == 700 and len(set(keys(FOUR, large))) == 700
    assert keys(FOUR, small) == keys(FOUR, large)[:40]
    assert keys(FOUR, ply.sample(40, seed=6)) != keys(FOUR, small)


def test_drawn_at_random_numbers_the_order_is_the_documented_one(tables, monkeypatch):
    """Each number drawn once, in the order drawn, a batch at a time, until half the ply's
    numbers were drawn: worked out here with a plain set of the numbers seen."""
    monkeypatch.setattr(sample, "WHOLE", 0)
    monkeypatch.setattr(sample, "BATCH", 256)
    ply = PlySample(tables / FOUR.name, FOUR, 7)
    rng = np.random.default_rng([3, 7])
    seen: set[int] = set()
    order: list[int] = []
    while len(seen) < ply.numbers // 2:
        for number in rng.integers(0, ply.numbers, size=256, dtype=np.int64).tolist():
            if number not in seen:
                seen.add(number)
                order.append(number)
    expected = ply.at(np.array(order, dtype=np.int64))
    drawn = ply.sample(10**9, seed=3)
    assert len(drawn) > 700
    assert drawn.numbers.tolist() == expected.numbers.tolist()
    assert drawn.records.tolist() == expected.records.tolist()


def test_keep_restricts_the_records_and_a_rare_kind_is_found_whole(tables, monkeypatch):
    ply = PlySample(tables / FOUR.name, FOUR, 9)
    rare = DECIDED + 6  # lost in 6: a few hundred of the ply's canonical positions
    everything = ply.sample(10**9, seed=0)
    wanted = {key for key, r in zip(keys(FOUR, everything), everything.records) if r == rare}
    assert 0 < len(wanted) < len(everything) / 100
    read_whole = ply.sample(10**9, seed=1, keep=[rare])
    monkeypatch.setattr(sample, "WHOLE", 0)  # drawn at random numbers: the first batch holds
    monkeypatch.setattr(sample, "BATCH", 64)  # too few, so the ply's records are read whole
    drawn = ply.sample(10**9, seed=1, keep=[rare])
    for found in (read_whole, drawn):
        assert set(found.records.tolist()) == {rare}
        assert len(set(keys(FOUR, found))) == len(found) == len(wanted)
        assert set(keys(FOUR, found)) == wanted


def test_drawn_at_random_numbers_each_canonical_position_is_equally_likely(tables, monkeypatch):
    monkeypatch.setattr(sample, "WHOLE", 0)
    monkeypatch.setattr(sample, "BATCH", 64)
    ply = PlySample(tables / TIC_TAC_TOE.name, TIC_TAC_TOE, 4)  # 108 canonical positions
    seen: Counter[int] = Counter()
    draws = 600
    for seed in range(draws):
        seen.update(keys(TIC_TAC_TOE, ply.sample(10, seed)))
    assert len(seen) == 108
    expected = draws * 10 / 108
    statistic = sum((seen[key] - expected) ** 2 / expected for key in seen)
    assert chi_square_tail(statistic, 107) > 1e-3
