"""Hostile parameter values reach agent construction and play: only AgentSpecError may come out.

The spec parser's own fuzz test (tests/test_fuzz.py) checks parsing; this one goes on to build
the agent and ask it for a move, where a value that parses (``c=nan``) once crashed the search.
Budgets are kept small so that every example plays quickly.
"""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support import random_walk
from ttt_solve.agents.spec import AGENTS, AgentSpecError, make_agent
from ttt_solve.solver.rules import Rules

EXAMPLES = 150
FLOATS = ["nan", "inf", "-inf", "-1", "0", "1e308", "1e-320", "2.5", "1.4", "x", ""]
SMALL_INTS = ["-1", "0", "1", "2", "3", "x", "1.5", ""]
BUDGET_KEYS = {"iterations", "playouts", "depth"}


@st.composite
def specs(draw):
    name = draw(st.sampled_from(sorted(n for n in AGENTS if n != "perfect")))
    params = AGENTS[name][1]
    items = []
    for key in draw(st.lists(st.sampled_from(sorted(params) + ["nope"]), max_size=3, unique=True)):
        kind = params[key].kind if key in params else "float"
        values = (
            FLOATS
            if kind == "float"
            else SMALL_INTS
            if key in BUDGET_KEYS or kind == "int"
            else ["true", "false", "random", "heuristic", "maybe", ""]
        )
        items.append(f"{key}={draw(st.sampled_from(values))}")
    return name + (":" + ",".join(items) if items else "")


@settings(max_examples=EXAMPLES, deadline=None, database=None)
@given(spec=specs(), moves=st.integers(min_value=0, max_value=6), seed=st.integers(0, 2**32))
def test_agents_built_from_hostile_specs_play_or_refuse(spec, moves, seed):
    rules = Rules(3, 3, 3)
    rng = random.Random(seed)
    position = random_walk(rules, rng, moves)
    try:
        agent = make_agent(spec, random.Random(seed))
    except AgentSpecError:
        return
    if position.is_terminal:
        return
    assert agent.select_move(position) in position.legal_moves()
