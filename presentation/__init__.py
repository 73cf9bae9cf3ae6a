"""The drawings: every board, value history, chart and HTML piece the project draws, and the
number formats of every report.

* :mod:`ttt_solve.presentation.palette`: the colours and value letters, named once;
* :mod:`ttt_solve.presentation.picture`: the cell model of a board and of a value history, and
  the terminal's text board;
* :mod:`ttt_solve.presentation.svg`: boards and value histories as SVG;
* :mod:`ttt_solve.presentation.charts`: line and bar charts (matplotlib, the ``plot`` extra);
* :mod:`ttt_solve.presentation.html`: the pieces of a notebook's HTML (tables, inline charts
  and pictures, headings);
* :mod:`ttt_solve.presentation.numbers`: counts, percentages and ratings as people read them.

This floor stands just above the solver: the drawings are functions of positions, values and
plain figures, and import nothing of the book, the agents or the reports
(:mod:`ttt_solve.reports`, which put them together into what the terminal prints and a
notebook shows). A value draws itself through a ``_repr_svg_`` or ``_repr_html_`` hook that
imports its drawing when it is called (python-chess's ``Board._repr_svg_`` and ``chess.svg``),
so a value imports none of this package until a picture of it is asked for.
"""
