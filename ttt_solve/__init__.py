"""ttt-solve: solved-game analysis and opening books for m,n,k-games (generalised tic-tac-toe).

The package's parts, each a subpackage:

* :mod:`ttt_solve.solver`: rules, positions and the solvers (knows nothing of storage);
* :mod:`ttt_solve.book`: storage of solved games and the reading API;
* :mod:`ttt_solve.agents`: agents that play, and the audit that grades them against a book;
* :mod:`ttt_solve.cli`: the ``ttt`` and ``ttt-solve`` commands.

Importing this package imports none of them.
"""

__version__ = "0.2.0"
