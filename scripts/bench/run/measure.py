#!/usr/bin/env python3
"""Runs one command for scripts/bench/run and prints a JSON line: wall time and peak
RSS of the whole process tree (the sum over the command and every descendant, sampled
from /proc every 20 ms: a pipeline's stages run at once, so their memory adds up).
Usage: measure.py NAME -- CMD..."""
import json
import os
import subprocess
import sys
import time

name = sys.argv[1]
cmd = sys.argv[sys.argv.index("--") + 1:]


def tree_rss_kb(root):
    children = {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            children.setdefault(ppid, []).append(int(pid))
        except (OSError, IndexError, ValueError):
            pass
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        todo.extend(children.get(pid, []))
        try:
            with open(f"/proc/{pid}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
        except OSError:
            pass
    return total


started = time.monotonic()
p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)
peak = 0
while p.poll() is None:
    peak = max(peak, tree_rss_kb(p.pid))
    time.sleep(0.02)
wall = time.monotonic() - started
print(json.dumps({"tool": name, "seconds": round(wall, 2), "peakRssMb": round(peak / 1024, 1),
                  "exit": p.returncode}))
