"""A Ctrl-C that comes while the pool of an audit forks its workers is not lost."""

from __future__ import annotations

import subprocess
import sys

SCRIPT = """
import os, signal
from ttt_solve.agents.match import SeedDeriver
from ttt_solve.agents.parallel import AgentMaker, Worker, chunked, run_chunks
from ttt_solve.solver.position import Position
from ttt_solve.solver.rules import Rules

sent = []

def interrupt_once():
    # Ctrl-C while the parent is in its after-fork hooks, where Python ignores exceptions.
    if not sent:
        sent.append(True)
        os.kill(os.getpid(), signal.SIGINT)

os.register_at_fork(after_in_parent=interrupt_once)
rules = Rules(3, 3, 3)
start = Position.start(rules)
tasks = [(start, SeedDeriver(seed, "position")) for seed in range(400)]
worker = Worker(rules, [AgentMaker("random").build()])
try:
    run_chunks(worker, "moves", chunked(tasks, 4), makers=[AgentMaker("random")], jobs=2,
               probe_seconds=0.0)
except KeyboardInterrupt:
    print("interrupted")
else:
    print("ran to the end")
"""


def test_ctrl_c_during_the_fork_of_the_workers_interrupts():
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120
    )
    assert result.stdout.strip() == "interrupted", result.stdout + result.stderr
