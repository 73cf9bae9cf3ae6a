"""Constants of the book that the read path and the commands' help need without importing
SQLAlchemy."""

SCHEMA_VERSION = 5
"""Bump on any change to the tables; readers refuse newer books, writers upgrade older ones
(:mod:`book.migrate`). Version 2 added the ``wide_positions`` table (boards of 32 to 64 cells);
version 3 replaced it and ``positions`` (a row per position) by ``position_blocks``; version 4
added ``ladder_games``, the cache of rating games; version 5 the ``games`` column
``table_folder``, the folder of a game stored as a tablebase."""

DEFAULT_DB = "ttt.sqlite"
"""The book used when ``--db`` is not given: a SQLite file in the current directory."""

DEFAULT_BOOK_DEPTH = 2
"""The last ply an opening book holds (``--method alphabeta``) unless told otherwise."""

DEFAULT_MAX_ROWS = 2_000_000
"""Rows ``ttt serve`` keeps in memory unless told otherwise: 4x4 k=4 and the smaller games,
about 30 MiB at most (:mod:`book.memory`)."""
