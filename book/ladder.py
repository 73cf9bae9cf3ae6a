"""The cache of rating games in a book: the ``ladder_games`` table.

A reference ladder (:mod:`agents.ladder`) is a fixed set of agents, its rungs, that play each
other once per game; agents rated later play the rungs. Both kinds of games are kept here, a
row per pair of agents and colour (``x_wins``, ``draws``, ``o_wins``), under a
:class:`LadderKey`: the ladder's name (which stands for its rungs), the games per pair and the
seed. ``rated`` says which batch wrote a row: ``""`` for the ladder's own games, else what the
agent rated runs (:func:`agents.identity.identity`: a program or a Python file by its contents),
the agents being named in ``x_agent`` and ``o_agent`` by their specs. A rated agent's batch
also holds its forfeits, in a row of its own (:data:`NO_AGENT`).

A batch is written in **one transaction** (:func:`write_batch`): the ladder is in the book
whole or not at all, and so is each rated agent's set of games. Two runs that play the same
batch at once both write nothing twice: the second finds the first's rows under the write lock
and keeps them. The rows go with their game: re-solving the game (``--force``) deletes them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from typing import Any, NamedTuple

import sqlalchemy as sa

from ttt_solve.book import schema
from ttt_solve.book.errors import GameNotFoundError
from ttt_solve.book.migrate import write_lock
from ttt_solve.solver.rules import Rules

LADDER = ""
"""``rated`` of the ladder's own games."""
NO_AGENT = ""
"""``o_agent`` of the one row of a rated agent's batch that holds no games but its forfeits:
``x_agent`` is the agent, ``x_wins`` how many of its games it forfeited by failing a move.
No agent has this name, so what pairs agents up passes the row by."""


class LadderKey(NamedTuple):
    """Which ladder: its name (its rungs), the games per pair and the seed of those games."""

    ladder: str
    games: int
    seed: int


class LadderRow(NamedTuple):
    """The games of one pair with one colour: ``x_agent`` played X, ``o_agent`` O."""

    x_agent: str
    o_agent: str
    x_wins: int
    draws: int
    o_wins: int
    rated: str = LADDER


def ladder_lock(rules: Rules) -> int:
    """The PostgreSQL advisory-lock key of a game's ladder cache (``ttl`` then the rules)."""
    return 0x7474_6C00_0000_0000 | rules.rows << 16 | rules.cols << 8 | rules.k


def _game_id(conn: sa.Connection, rules: Rules) -> int | None:
    games = schema.games
    found = conn.execute(
        sa.select(games.c.id).where(
            games.c.rows == rules.rows, games.c.cols == rules.cols, games.c.k == rules.k
        )
    ).scalar()
    return None if found is None else int(found)


def _where(game_id: int, key: LadderKey) -> Any:
    table = schema.ladder_games
    return sa.and_(
        table.c.game_id == game_id,
        table.c.ladder == key.ladder,
        table.c.games_per_pair == key.games,
        table.c.seed == key.seed,
    )


def _select(book: Any, rules: Rules, query: Callable[[int], Any]) -> list[Any]:
    """The rows of ``query(game_id)`` for the game of ``rules`` (none if the book lacks it)."""
    with book.engine.connect() as conn:
        game_id = _game_id(conn, rules)
        return [] if game_id is None else list(conn.execute(query(game_id)).all())


def read_rows(book: Any, rules: Rules, key: LadderKey) -> list[LadderRow]:
    """Every cached row of a ladder: the ladder's games and those of the agents rated on it."""
    table = schema.ladder_games
    found = _select(
        book,
        rules,
        lambda game_id: (
            sa.select(
                table.c.x_agent,
                table.c.o_agent,
                table.c.x_wins,
                table.c.draws,
                table.c.o_wins,
                table.c.rated,
            )
            .where(_where(game_id, key))
            .order_by(table.c.rated, table.c.x_agent, table.c.o_agent)
        ),
    )
    return [
        LadderRow(str(x), str(o), int(wins), int(draws), int(losses), str(rated))
        for x, o, wins, draws, losses, rated in found
    ]


def forfeits_of(rows: Sequence[LadderRow]) -> int | None:
    """How many games the rated agent of a batch forfeited (``None``: a batch cached before
    forfeits were kept)."""
    for row in rows:
        if row.o_agent == NO_AGENT:
            return row.x_wins
    return None


def cached_ladders(book: Any, rules: Rules) -> list[tuple[LadderKey, list[str]]]:
    """The ladders cached for a game, each with the agents rated on it (in spec order)."""
    table = schema.ladder_games
    found = _select(
        book,
        rules,
        lambda game_id: (
            sa.select(table.c.ladder, table.c.games_per_pair, table.c.seed, table.c.rated)
            .where(table.c.game_id == game_id)
            .distinct()
            .order_by(table.c.ladder, table.c.games_per_pair, table.c.seed, table.c.rated)
        ),
    )
    ladders: dict[LadderKey, list[str]] = {}
    for ladder, games, seed, rated in found:
        agents = ladders.setdefault(LadderKey(str(ladder), int(games), int(seed)), [])
        if rated != LADDER:
            agents.append(str(rated))
    return list(ladders.items())


def write_batch(
    book: Any, rules: Rules, key: LadderKey, rated: str, rows: Sequence[LadderRow]
) -> bool:
    """Store one batch of games (the ladder's, ``rated == LADDER``, or one rated agent's) in
    one transaction; ``False`` if the book held that batch already (another run wrote it
    first) and nothing was written."""
    from ttt_solve.processes import interrupts_deferred

    table = schema.ladder_games
    played_at = datetime.now(timezone.utc)
    conn = book.engine.connect().execution_options(write=True)
    transaction = conn.begin()
    try:
        write_lock(conn, ladder_lock(rules))
        game_id = _game_id(conn, rules)
        if game_id is None:  # removed since the caller found it
            raise GameNotFoundError(f"{book.describe()} holds no {rules.name} game")
        there = conn.execute(
            sa.select(sa.func.count()).where(_where(game_id, key), table.c.rated == rated)
        ).scalar()
        if there:
            transaction.rollback()
            conn.close()
            return False
        conn.execute(
            sa.insert(table),
            [
                {
                    "game_id": game_id,
                    "ladder": key.ladder,
                    "games_per_pair": key.games,
                    "seed": key.seed,
                    "x_agent": row.x_agent,
                    "o_agent": row.o_agent,
                    "x_wins": row.x_wins,
                    "draws": row.draws,
                    "o_wins": row.o_wins,
                    "rated": rated,
                    "played_at": played_at,
                }
                for row in rows
            ],
        )
    except BaseException:
        with interrupts_deferred():
            transaction.rollback()
            conn.close()
        raise
    with interrupts_deferred():
        transaction.commit()
        conn.close()
    return True
