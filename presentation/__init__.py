"""The pictures: every board, value history, chart, table and notebook page the project draws.

* :mod:`ttt_solve.presentation.palette`: the colours and value letters, named once;
* :mod:`ttt_solve.presentation.picture`: the cell model of a board and of a value history, and
  the terminal's text board;
* :mod:`ttt_solve.presentation.svg`: boards and value histories as SVG;
* :mod:`ttt_solve.presentation.charts`: line and bar charts (matplotlib, the ``plot`` extra);
* :mod:`ttt_solve.presentation.display`: the tables of the terminal and the HTML of a notebook.

The drawings are functions of the values they are given. They import the solver's, the book's
and the agents' types, never the other way round: a value draws itself through a ``_repr_svg_``
or ``_repr_html_`` hook that imports its drawing when it is called (python-chess's
``Board._repr_svg_`` and ``chess.svg``), so a value imports none of this package until a picture
of it is asked for.
"""
