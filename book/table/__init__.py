"""The table book: games stored as a tablebase's files rather than as rows of SQL tables.

A game of method ``table`` has a ``games`` row naming its folder (:mod:`book.table.catalogue`
writes it); the book reads its positions through :mod:`book.table.rows`, a backend over the
table's files, and ``ttt verify`` checks it with :mod:`book.table.verify`. The rest of
:mod:`book` is the SQL storage and the reading API over both.
"""
