"""The API's JSON of a position's answer, written out directly.

The bytes are those of ``ttt query --json``'s object (:func:`book.query.analysis_json`) as
Starlette's ``JSONResponse`` encodes it (:data:`ENCODER`); the tests hold the two equal, byte
for byte, on every position of a game and on answers searched live. Written out, an answer
costs no dict per move and no walk of the encoder over them: the server answers a position it
has not kept in about a fifth of the time the object and its encoding take.
"""

from __future__ import annotations

import functools
import json
import math

from ttt_solve.book.oracle import Analysis
from ttt_solve.book.reader import MoveEntry
from ttt_solve.solver.rules import Rules

ENCODER = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":"))
"""Starlette's ``JSONResponse`` encoding, made once (``json.dumps`` with options makes an
encoder per call)."""

_JSON_BOOL = {False: "false", True: "true"}


def _number(number: float) -> str:
    """A number as the encoder writes it (its ``repr``, for a finite float), without a call
    into the encoder."""
    if type(number) is float and math.isfinite(number):
        return repr(number)
    return ENCODER.encode(number)


@functools.cache
def _game_head(rules: Rules) -> str:
    """The answer's first field, the same for every position of a game, and the next's name."""
    game = rules.as_dict()
    return '{"game":' + ENCODER.encode(game) + ',"position":'


@functools.cache
def _move_text(move: MoveEntry, best: bool) -> str:
    """A move's object (few: a cell of each board served, three outcomes, a remoteness up to
    the board's cells, best or not)."""
    return (
        f'{{"cell":{ENCODER.encode(move.name)},"index":{move.cell},'
        f'"value":"{move.value.outcome.value}","remoteness":{move.value.remoteness},'
        f'"best":{_JSON_BOOL[best]}}}'
    )


def encode_analysis(analysis: Analysis) -> bytes:
    """``ENCODER.encode(analysis_json(analysis)).encode()``, without the object."""
    encode = ENCODER.encode
    position = analysis.position
    value = analysis.value
    # a best move keeps the position's value (Analysis.best_moves)
    moves = ",".join([_move_text(m, m.value == value) for m in analysis.moves])
    terminal = not analysis.moves  # as analysis_json tells a finished game
    winner = position.winner if terminal else None
    text = (
        f"{_game_head(position.rules)}{encode(str(position))},"
        f'"ply":{position.ply},"to_move":"{position.to_move}",'
        f'"terminal":{_JSON_BOOL[terminal]},'
        f'"winner":{"null" if winner is None else encode(winner)},'
        f'"value":"{value.outcome.value}","remoteness":{value.remoteness},'
        f'"source":{encode(analysis.source)},'
        f'"searched_live":{_JSON_BOOL[analysis.searched]},'
        f'"search_nodes":{analysis.nodes},'
        f'"search_seconds":{_number(round(analysis.seconds, 4))},'
        f'"moves":[{moves}]}}'
    )
    return text.encode()
