"""The picture module: the cell model, the SVG board, the text board and the value history,
checked against the book (each move's value) and the audit's grading (the changes of value)."""

from __future__ import annotations

import random
import xml.etree.ElementTree as ET

import pytest

from tests.support import random_walk
from ttt_solve.agents.audit import Truth, grade_move
from ttt_solve.book.oracle import Oracle
from ttt_solve.book.reader import open_book
from ttt_solve.presentation import picture, svg
from ttt_solve.presentation.palette import LETTERS, STONES, VALUES
from ttt_solve.solver.position import Position
from ttt_solve.solver.rules import Rules
from ttt_solve.solver.value import Outcome, Value

SVG = "{http://www.w3.org/2000/svg}"


def groups(root: ET.Element, cls: str) -> list[ET.Element]:
    return [g for g in root.iter(f"{SVG}g") if cls in (g.get("class") or "").split()]


def test_every_3x3_position_is_drawn_from_the_book(book_3x3: str) -> None:
    """Each cell of each drawn board shows the book's value of its move in the palette's
    colour, the best moves starred, the stones where they are."""
    rules = Rules(3, 3, 3)
    rng = random.Random(7)
    with open_book(book_3x3) as book:
        oracle = Oracle(rules, book)
        for _ in range(60):
            position = random_walk(rules, rng, rng.randrange(0, 9))
            analysis = oracle.analyse(position)
            root = ET.fromstring(svg.board(picture.of_analysis(analysis)))
            cells = groups(root, "cell")
            assert [g.get("data-cell") for g in cells] == [
                rules.cell_name(i) for i in range(rules.cells)
            ]
            values = {m.cell: m.value for m in analysis.moves}
            for index, group in enumerate(cells):
                rect = group.find(f"{SVG}rect")
                assert rect is not None
                assert (rect.get("width"), rect.get("height")) == (str(svg.CELL), str(svg.CELL))
                stone = position.cell(index)
                if stone != ".":
                    assert group.get("data-stone") == stone
                    assert group.get("data-value") is None
                    continue
                value = values.get(index)
                if value is None:  # a finished game: no move to value
                    assert position.is_terminal and group.get("data-value") is None
                    continue
                assert group.get("data-value") == value.outcome.value
                assert group.get("data-remoteness") == str(value.remoteness)
                assert rect.get("fill") == VALUES[value.outcome].fill
                label = "".join(group.itertext()).split(":")[-1]
                assert f"{LETTERS[value.outcome]}{value.remoteness}" in label
                best = index in analysis.best_moves
                assert (group.get("data-best") == "true") == best
                assert (group.find(f"{SVG}polygon") is not None) == best


def test_marks_last_move_line_and_links() -> None:
    rules = Rules(3, 3, 3)
    position = Position.parse("xo./.x./..o", rules)
    drawn = picture.board(position, lastmove=4, marked=[2], line=[2, 6], links={2: "/here?a=1&b=2"})
    root = ET.fromstring(svg.board(drawn))
    by_name = {g.get("data-cell"): g for g in groups(root, "cell")}
    assert "last" in by_name["b2"].get("class", "").split()
    assert "marked" in by_name["c1"].get("class", "").split()
    assert by_name["c1"].get("data-number") == "1"
    assert by_name["a3"].get("data-number") == "2"
    # the line's first move is X's (X is to move), the next O's: drawn in their stone colours
    texts = {g.get("data-cell"): g.find(f"{SVG}text") for g in groups(root, "cell")}
    assert texts["c1"] is not None and texts["c1"].get("fill") == STONES["x"]
    assert texts["a3"] is not None and texts["a3"].get("fill") == STONES["o"]
    links = [a.get("href") for a in root.iter(f"{SVG}a")]
    assert links == ["/here?a=1&b=2"]
    caption = next(t for t in root.iter(f"{SVG}text") if t.get("class") == "caption")
    assert caption.text == "X to move"


@pytest.mark.parametrize(
    ("text", "size", "k", "lines"),
    [
        ("xxx/oo./...", (3, 3), 3, 1),
        ("xoo/xo./x.x", (3, 3), 3, 1),
        ("xxxxx/oo.o./o..../...../.....", (5, 5), 4, 2),  # c1 made two lines of 4
        ("ooo./xx.x/..../....", (4, 4), 3, 1),
    ],
)
def test_winning_lines_are_struck_through(text: str, size: tuple[int, int], k: int, lines: int):
    rules = Rules(*size, k)
    position = Position.parse(text, rules)
    root = ET.fromstring(svg.board(position))
    struck = [e for e in root.iter(f"{SVG}line") if e.get("class") == "winning-line"]
    assert len(struck) == lines
    winner = position.winner
    assert winner is not None
    assert {e.get("stroke") for e in struck} == {STONES[winner]}
    on_line = {g.get("data-cell") for g in groups(root, "winning")}
    expected = set()
    for mask in picture.winning_lines(position):
        expected |= {rules.cell_name(c) for c in range(rules.cells) if mask >> c & 1}
    assert on_line == expected and expected


@pytest.mark.parametrize("shape", [(1, 3), (1, 8), (3, 3), (4, 4), (6, 6), (8, 8), (2, 7)])
def test_cells_are_equal_whatever_the_shape(shape: tuple[int, int]) -> None:
    rules = Rules(*shape, min(3, max(shape)))
    rng = random.Random(sum(shape))
    position = random_walk(rules, rng, min(rules.cells - 1, 5))
    root = ET.fromstring(svg.board(position, size=400))
    assert root.get("width") == "400"
    rects = [g.find(f"{SVG}rect") for g in groups(root, "cell")]
    assert len(rects) == rules.cells
    xs = sorted({float(r.get("x")) for r in rects if r is not None})
    ys = sorted({float(r.get("y")) for r in rects if r is not None})
    assert len(xs) == rules.cols and len(ys) == rules.rows
    gaps = {round(b - a, 6) for a, b in zip(xs, xs[1:])} | {
        round(b - a, 6) for a, b in zip(ys, ys[1:])
    }
    assert gaps <= {float(svg.CELL)}


def test_hidden_values_keep_stones_and_links() -> None:
    rules = Rules(3, 3, 3)
    position = Position.parse("x../.o./...", rules)
    values = {1: Value(Outcome.DRAW, 7)}
    drawn = picture.board(position, values=values, best=[1], links={1: "/p"}, show_values=False)
    assert all(c.value is None and not c.best for c in drawn.cells)
    root = ET.fromstring(svg.board(drawn))
    assert not [g for g in groups(root, "cell") if g.get("data-value")]
    assert [a.get("href") for a in root.iter(f"{SVG}a")] == ["/p"]


def test_text_board_writes_each_cell_under_its_letter(book_3x3: str) -> None:
    rules = Rules(3, 3, 3)
    with open_book(book_3x3) as book:
        analysis = Oracle(rules, book).analyse(Position.parse("x.o/.x./...", rules))
    drawn = picture.of_analysis(analysis)
    lines = picture.text(drawn).splitlines()
    assert lines[0].split() == ["a", "b", "c"]
    for row, line in zip(drawn.rows, lines[1:]):
        words = line.split()
        assert words[0] == str(row[0].row + 1)
        assert words[1:] == [c.label or c.stone or "." for c in row]
    coloured = picture.text(drawn, colour=True)
    assert "\x1b[" in coloured and picture.text(drawn) != coloured
    import click

    assert click.unstyle(coloured) == picture.text(drawn)


def test_value_history_marks_exactly_the_blunders(book_3x3: str) -> None:
    """The moves the history says changed a value are the audit's blunders, one for one."""
    rules = Rules(3, 3, 3)
    rng = random.Random(11)
    with open_book(book_3x3) as book:
        oracle = Oracle(rules, book)
        truth = Truth(book, rules)
        for _ in range(40):
            position = Position.start(rules)
            pairs = [(position, oracle.analyse(position).value)]
            blunders = []
            while not position.is_terminal:
                cell = rng.choice(position.legal_moves())
                graded = grade_move(truth, position, cell)
                assert graded is not None
                if graded.kind is not None:
                    blunders.append((position.ply, rules.cell_name(cell), graded.kind))
                position = position.play(cell)
                pairs.append((position, oracle.analyse(position).value))
            made = picture.history(rules, pairs)
            found = [(c.ply, c.move, f"{c.before.value}->{c.after.value}") for c in made.changes]
            assert found == [(p, m, k.replace("→", "->")) for p, m, k in blunders]
            root = ET.fromstring(svg.value_history(made))
            points = groups(root, "point")
            assert len(points) == len(pairs)
            assert [p.get("data-changed") == "true" for p in points] == [
                any(c.ply + 1 == i for c in made.changes) for i in range(len(pairs))
            ]
            for point, (pos, value) in zip(points, pairs):
                circle = point.findall(f"{SVG}circle")[-1]
                assert circle.get("fill") == VALUES[value.outcome].fill
                assert point.get("data-value") == value.outcome.value
                middle = 64 + 300 / 2
                x = float(circle.get("cx") or 0)
                winner = (
                    None
                    if value.outcome is Outcome.DRAW
                    else pos.to_move
                    if value.outcome is Outcome.WIN
                    else ("o" if pos.to_move == "x" else "x")
                )
                assert (x < middle, x == middle, x > middle) == (
                    winner == "x",
                    winner is None,
                    winner == "o",
                )
            ticks = [t.text for t in root.iter(f"{SVG}text") if t.get("class") == "tick"]
            assert ticks and all(t is not None and t.isdigit() for t in ticks)


@pytest.mark.parametrize("rules", [Rules(3, 3, 3), Rules(4, 5, 4), Rules(5, 5, 4), Rules(8, 8, 5)])
@pytest.mark.parametrize("notes", [True, False], ids=["notes", "narrow"])
def test_the_value_historys_tick_labels_stand_apart(rules, notes):
    """Scaled to the game's cells, as the web draws it: each remoteness label clear of the
    next, the innermost of each side clear of the other side's, 0 at both edges."""
    position = Position.start(rules)
    pairs = []
    for remoteness in range(rules.cells, rules.cells - 6, -1):
        pairs.append((position, Value(Outcome.WIN, remoteness)))
        position = position.play(position.legal_moves()[0])
    drawn = svg.value_history(
        picture.history(rules, pairs), max_remoteness=rules.cells, notes=notes
    )
    ticks = [t for t in ET.fromstring(drawn).iter(f"{SVG}text") if t.get("class") == "tick"]
    placed = sorted((float(t.get("x") or 0), t.text or "") for t in ticks)
    digit = 0.62 * 11  # a digit's width at the labels' 11 px, about
    for (x1, a), (x2, b) in zip(placed, placed[1:]):
        assert x2 - x1 >= (len(a) + len(b)) * digit / 2 + 4, (a, b, x2 - x1)
    assert placed[0][1] == placed[-1][1] == "0"
    assert len(placed) >= 6
