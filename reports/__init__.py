"""Reports for people: what the terminal prints and a notebook shows of the values that the
book and the agents hand back, one module per kind of report.

* :mod:`ttt_solve.reports.analysis`: a position's analysis (:class:`book.oracle.Analysis`);
* :mod:`ttt_solve.reports.benchmark`: a benchmark's grids and heatmaps
  (:class:`agents.benchmark.BenchmarkReport`) and the leaderboard of several agents;
* :mod:`ttt_solve.reports.audit`: an audit (:class:`agents.audit.AuditReport`): its summary,
  by-ply and games tables, its costliest moves and failures;
* :mod:`ttt_solve.reports.game`: a played game, its moves and value history;
* :mod:`ttt_solve.reports.curve`: strength curves (:class:`agents.curve.CurveReport`);
* :mod:`ttt_solve.reports.ratings`: ratings and the reference ladder
  (:class:`agents.ladder.LadderRatings`);
* :mod:`ttt_solve.reports.tournament`: a round robin (:class:`agents.tournament.TournamentResult`).

This floor stands above the agents and the book, whose values it reads, and below the command
line, the web server and the notebook session, which print and show what it writes. It draws
with :mod:`ttt_solve.presentation` (boards, charts, HTML pieces, number formats), which knows
nothing of it. A value shows itself through a ``text()``, ``__repr__`` or ``_repr_html_`` that
imports its report module when it is called, so the values import none of this floor.
"""
