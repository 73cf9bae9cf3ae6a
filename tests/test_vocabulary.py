"""The project's vocabularies: each word reads, prints and serialises as its plain value, every
value parses back to its word, and anything else is refused in one line that quotes it."""

import csv
import io
import json
import string

import pytest

from ttt_solve.agents.audit import AuditMode
from ttt_solve.agents.engine import EngineFailure, FailureKind
from ttt_solve.book import errors
from ttt_solve.book.errors import BookError, ErrorKind
from ttt_solve.book.records import SolveMethod
from ttt_solve.book.solving import Solve, SolveError
from ttt_solve.fixes import FIXES, fix
from ttt_solve.solver.rules import Rules
from ttt_solve.solver.value import BlunderKind, Grade, Outcome
from ttt_solve.solver.vocabulary import Device, Side, UnknownWordError, Word
from ttt_solve.web.audits import AuditRequest, JobStatus

VOCABULARIES = {
    Side: ["x", "o"],
    Outcome: ["win", "draw", "loss"],
    Grade: ["best", "sound", "blunder"],
    BlunderKind: ["win->draw", "win->loss", "draw->loss"],
    FailureKind: ["illegal", "timeout", "garbage", "crash"],
    AuditMode: ["positions", "games"],
    SolveMethod: ["exhaustive", "alphabeta", "table"],
    JobStatus: ["running", "done", "failed"],
    Device: ["cpu", "gpu", "auto"],
    ErrorKind: [
        "book",
        "unreadable",
        "no-book",
        "not-a-book",
        "schema",
        "older-schema",
        "missing-game",
        "game-exists",
        "damaged",
        "damaged-table",
        "damaged-tables",
        "unwritable-folder",
        "out-of-reach",
        "server-failed",
        "server-failed-commit",
        "solve",
        "needs-opening-book",
        "depth-past-end",
        "unwritable",
        "too-large-for-table",
        "too-many-positions",
    ],
}
WORDS = [(vocabulary, word) for vocabulary, words in VOCABULARIES.items() for word in words]


@pytest.mark.parametrize("vocabulary", VOCABULARIES)
def test_each_vocabulary_holds_its_words_in_order(vocabulary):
    assert [word.value for word in vocabulary] == VOCABULARIES[vocabulary]
    assert issubclass(vocabulary, Word) and issubclass(vocabulary, str)


@pytest.mark.parametrize(("vocabulary", "text"), WORDS)
def test_a_word_is_its_plain_value_in_every_output(vocabulary, text):
    word = vocabulary(text)
    assert word == text and hash(word) == hash(text) and {text: 1}[word] == 1
    assert (str(word), f"{word}", format(word)) == (text,) * 3
    # the older ways of formatting, as templates and logging use them
    assert ("%s" % word, "{}".format(word)) == (text,) * 2  # noqa: UP031, UP032
    assert string.Template("$w").substitute(w=word) == text
    assert f"[{word:>12}]" == f"[{text:>12}]"
    plain = {"word": text, "words": [text], text: text}
    assert json.dumps({"word": word, "words": [word], word: word}) == json.dumps(plain)
    row = io.StringIO()
    csv.writer(row).writerow([word])
    assert row.getvalue().strip() == text.replace(",", "")


@pytest.mark.parametrize(("vocabulary", "text"), WORDS)
def test_every_value_parses_back_from_json(vocabulary, text):
    read = json.loads(json.dumps({"word": vocabulary(text)}))["word"]
    assert type(read) is str
    assert vocabulary.parse(read) is vocabulary(text)
    assert vocabulary.parse(f" {read.upper()} ") is vocabulary(text)


@pytest.mark.parametrize("vocabulary", VOCABULARIES)
@pytest.mark.parametrize("text", ["wn", "", "x o", "WIN->"])
def test_a_bad_value_is_refused_in_one_line_that_quotes_it(vocabulary, text):
    with pytest.raises(UnknownWordError) as refused:
        vocabulary.parse(text, "choice")
    message = str(refused.value)
    assert "\n" not in message
    assert message == f"choice {text!r} is not one of {', '.join(VOCABULARIES[vocabulary])}"
    assert isinstance(refused.value, ValueError)


def test_a_side_knows_its_opponent():
    assert (Side.X.other, Side.O.other) == (Side.O, Side.X)


def test_a_blunder_kind_is_named_by_the_outcomes_before_and_after():
    assert BlunderKind.of(Outcome.DRAW, Outcome.LOSS) is BlunderKind.DRAW_LOSS
    with pytest.raises(ValueError):
        BlunderKind.of(Outcome.LOSS, Outcome.WIN)


def test_an_audit_request_reads_its_mode_and_refuses_a_misspelt_one():
    request = AuditRequest(Rules(3, 3, 3), "random", mode="Games")
    assert request.mode is AuditMode.GAMES
    with pytest.raises(UnknownWordError, match="^mode 'gmes' is not one of positions, games$"):
        AuditRequest(Rules(3, 3, 3), "random", mode="gmes")


def test_a_solve_refuses_an_unknown_method_in_one_line(tmp_path):
    db = str(tmp_path / "book.sqlite")
    with pytest.raises(SolveError) as refused:
        Solve(Rules(3, 3, 3), db, method="exhastive")
    assert str(refused.value) == ("method 'exhastive' is not one of exhaustive, alphabeta, table")
    assert Solve(Rules(3, 3, 3), db, method="exhaustive").method is SolveMethod.EXHAUSTIVE


def test_a_table_build_reads_its_device_as_a_word_and_refuses_a_misspelt_one(tmp_path):
    from ttt_solve.solver.tablebase.build import build_table
    from ttt_solve.solver.tablebase.gpu import gpu_chosen

    assert gpu_chosen(" CPU ") is False and gpu_chosen(Device.CPU) is False
    with pytest.raises(UnknownWordError, match="^device 'tpu' is not one of cpu, gpu, auto$"):
        build_table(Rules(3, 3, 3), tmp_path / "t", device="tpu")
    assert not (tmp_path / "t").exists()


def test_every_book_error_says_its_kind_in_a_word():
    classes = [BookError, *(c for c in vars(errors).values() if isinstance(c, type))]
    for error_class in classes:
        if issubclass(error_class, BookError):
            assert isinstance(error_class.kind, ErrorKind), error_class
    refused = SolveError(Rules(3, 3, 3), "too big", ErrorKind.NEEDS_OPENING_BOOK)
    assert refused.kind is ErrorKind.NEEDS_OPENING_BOOK
    assert SolveError(Rules(3, 3, 3), "no").kind is ErrorKind.SOLVE


def test_each_kind_of_error_has_its_fix_and_another_vocabulary_none():
    rules = Rules(3, 3, 3)
    missing = BookError("no 3x3 k=3", database="b.sqlite", rules=rules, kind=ErrorKind.MISSING_GAME)
    assert fix(missing) == "; build it with: ttt-solve --size 3 --win 3 --db b.sqlite"
    assert set(FIXES) <= set(ErrorKind)
    failure = EngineFailure(FailureKind.CRASH, rules, 0, 0, "it exited", "cmd:./engine")
    assert failure.kind == "crash" and fix(failure) == ""  # a failure kind: no fix
