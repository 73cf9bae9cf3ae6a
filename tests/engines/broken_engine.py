#!/usr/bin/env python3
"""A deliberately broken engine for the tests of the protocol (docs/PROTOCOL.md).

It speaks the protocol, plays the first empty cell, and fails on purpose where it is told to:

    --fail KIND:PLIES   fail every request in a position with that many stones (PLIES is
                        N or N,M,...; may be repeated). KIND is one of
                        illegal   answer a taken cell (on an empty board: an off-board one)
                        offboard  answer a cell off the board (z9)
                        timeout   answer nothing, ever (sleeps until killed)
                        slow      answer, but a second late
                        garbage   answer a line that is no move
                        binary    answer bytes that are not UTF-8
                        longline  answer a line of 10,000 characters
                        crash     exit with status 3, a message on stderr
                        segv      kill itself with SIGSEGV
                        close     close its output and then idle
                        exit      answer properly, then exit before the next request
    --start KIND        fail at start: crash, garbage, noid, refuse (error to ttt 1),
                        norules (error to rules), silent (never says ready)
    --start-after N     apply --start only from the Nth start on (counts starts in --pidfile)
    --pidfile PATH      append this process's pid (and a grandchild's) to PATH
    --grandchild        start a child process that sleeps, to check the process group is killed

Like the reference engine it imports nothing from the ttt_solve package; it reads requests and
writes replies with the reference engine's own helpers.
"""

import argparse
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
from reference_engine import reply, requests  # noqa: E402 (found through the path above)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--fail", action="append", default=[])
    parser.add_argument("--start", default=None)
    parser.add_argument("--start-after", type=int, default=0)
    parser.add_argument("--pidfile", default=None)
    parser.add_argument("--grandchild", action="store_true")
    args = parser.parse_args()

    failures = {}
    for item in args.fail:
        kind, _, plies = item.partition(":")
        for ply in plies.split(","):
            failures[int(ply)] = kind

    starts = 0
    if args.pidfile:
        if os.path.exists(args.pidfile):
            with open(args.pidfile) as handle:
                starts = sum(1 for line in handle if line.startswith("engine "))
        with open(args.pidfile, "a") as handle:
            handle.write(f"engine {os.getpid()}\n")
            if args.grandchild:
                child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
                handle.write(f"grandchild {child.pid}\n")
    start_failure = args.start if starts >= args.start_after else None

    cols = 0
    board = ""
    for words in requests():
        command = words[0]
        if command == "ttt":
            if start_failure == "crash":
                sys.stderr.write("broken engine: crashing at start\n")
                sys.exit(4)
            if start_failure == "garbage":
                reply("hello there")
                continue
            if start_failure == "refuse":
                reply("error I only speak protocol 0")
                continue
            if start_failure != "noid":
                reply("id name broken-engine")
                reply("id version 0.1")
            if start_failure != "silent":
                reply("ready")
        elif command == "rules":
            if start_failure == "norules":
                reply("error boards are too big for me")
                continue
            cols = int(words[2])
            reply("ok")
        elif command == "position":
            board = words[1].replace("/", "")
        elif command == "go":
            ply = len(board) - board.count(".")
            kind = failures.get(ply)
            empty = board.index(".")
            if kind in ("illegal",):
                taken = [i for i, c in enumerate(board) if c != "."]
                reply(f"move {taken[0] if taken else len(board)}")
            elif kind == "offboard":
                reply("move z9")
            elif kind == "timeout":
                time.sleep(3600)
            elif kind == "slow":
                time.sleep(1.0)
                reply(f"move {empty}")
            elif kind == "garbage":
                reply("I think b2 is nice")
            elif kind == "binary":
                sys.stdout.buffer.write(b"move \xff\xfe\n")
                sys.stdout.flush()
            elif kind == "longline":
                reply("info " + "x" * 10_000)
            elif kind == "crash":
                sys.stderr.write(f"broken engine: ZeroDivisionError at ply {ply}\n")
                sys.stderr.flush()
                sys.exit(3)
            elif kind == "segv":
                os.kill(os.getpid(), signal.SIGSEGV)
            elif kind == "close":
                os.close(1)
                time.sleep(3600)
            else:
                reply("info first empty cell")
                reply(f"move {chr(ord('a') + empty % cols)}{empty // cols + 1}")
                if kind == "exit":
                    sys.exit(0)
        elif command == "quit":
            return


if __name__ == "__main__":
    main()
