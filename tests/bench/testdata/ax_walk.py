#!/usr/bin/python3
"""Walks one app's accessibility tree with pyatspi, the Python AT-SPI2
library desktop MCP servers such as linux-desktop-mcp are built on, reading
each element's role, name and states as domo-ax does. libatspi keeps what
it read, so each walk first clears that cache, as reading a changed window
must. Prints the node count, then each walk's time in milliseconds: first
the uncached walks, then as many with the cache kept.""" 
import sys
import time

import pyatspi

target, runs = sys.argv[1], int(sys.argv[2])


def walk(node):
    node.getRoleName()
    node.name
    node.getState()
    count = 1
    for i in range(node.childCount):
        child = node.getChildAtIndex(i)
        if child is not None:
            count += walk(child)
    return count


desktop = pyatspi.Registry.getDesktop(0)
app = None
for a in desktop:
    if a is not None and a.name == target:
        app = a
if app is None:
    sys.exit("no app named %s" % target)
print(walk(app))
for cached in (False, True):
    for _ in range(runs):
        if not cached:
            app.clearCache()
        t0 = time.perf_counter()
        walk(app)
        print("%.3f" % ((time.perf_counter() - t0) * 1000))
