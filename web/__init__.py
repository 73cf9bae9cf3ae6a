"""``ttt serve``: a web explorer of the games in a book, their analysis, and audits of agents.

:func:`~ttt_solve.web.app.create_app` builds the Starlette application; the pages and the JSON
API call the same library functions as the command line (the book's oracle, the audit, the
agent specs) and only present their answers.
"""
