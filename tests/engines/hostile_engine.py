#!/usr/bin/env python3
"""An engine that speaks the protocol (docs/PROTOCOL.md) but abuses its caller, for the tests of
ttt-solve's defences. It plays the first empty cell, and on request:

    --refuse TEXT       answer ``error TEXT`` to the handshake (TEXT may hold escapes: \\x1b)
    --refuse-rules TEXT answer ``error TEXT`` to ``rules``
    --name TEXT         give this name in the handshake (escapes as above)
    --stderr-mb N       write N MiB to standard error before every move
    --twice PLY         answer twice in positions with PLY stones (a second, different move)
    --escape FILE       start a child that leaves the process group and session (setsid) and
                        sleeps for ever; write its pid to FILE

Like the reference engine it imports nothing from the project.
"""

import argparse
import os
import sys
import time


def reply(text):
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def unescape(text):
    return text.encode().decode("unicode_escape") if text is not None else None


def escape(pid_file):
    """A child in a session of its own: a kill of the engine's process group misses it."""
    if os.fork() == 0:
        os.setsid()
        with open(pid_file + ".part", "w") as handle:
            handle.write(str(os.getpid()))
        os.replace(pid_file + ".part", pid_file)
        for stream in (0, 1, 2):  # not holding the engine's pipes open
            os.close(stream)
        while True:
            time.sleep(60)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--refuse", default=None)
    parser.add_argument("--refuse-rules", default=None)
    parser.add_argument("--name", default="hostile-engine")
    parser.add_argument("--stderr-mb", type=int, default=0)
    parser.add_argument("--twice", type=int, default=None)
    parser.add_argument("--escape", default=None)
    args = parser.parse_args()
    if args.escape is not None:
        escape(args.escape)

    cols = 0
    board = ""
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        command = words[0]
        if command == "ttt":
            if args.refuse is not None:
                reply("error " + unescape(args.refuse))
                continue
            reply("id name " + unescape(args.name))
            reply("id version 1")
            reply("ready")
        elif command == "position":
            board = words[1].replace("/", "")
        elif command == "rules":
            if args.refuse_rules is not None:
                reply("error " + unescape(args.refuse_rules))
                continue
            cols = int(words[2])
            reply("ok")
        elif command == "go":
            chunk = "noise " * 100 + "\n"
            for _ in range(args.stderr_mb * 2**20 // len(chunk)):
                sys.stderr.write(chunk)
            sys.stderr.flush()
            empty = [i for i, c in enumerate(board) if c == "."]
            ply = len(board) - len(empty)
            answer = f"move {chr(ord('a') + empty[0] % cols)}{empty[0] // cols + 1}"
            if ply == args.twice and len(empty) > 1:
                # one write: both lines reach ttt together, before it sends the next request
                answer += f"\nmove {chr(ord('a') + empty[-1] % cols)}{empty[-1] // cols + 1}"
            reply(answer)
        elif command == "quit":
            return


if __name__ == "__main__":
    main()
