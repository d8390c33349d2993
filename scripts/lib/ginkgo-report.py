#!/usr/bin/env python3
"""The summary of one or more Ginkgo JSON reports (-ginkgo.json-report), as the e2e scripts print it.

    python3 scripts/lib/ginkgo-report.py REPORT.json...

One line per spec (`<state> <file>: <containers> <text>`), a table per file, and last
`N passed, M failed, K skipped`. Several reports of one suite (run several times with different
label filters, as scripts/addon-e2e MODE=template does) are merged: a spec counts once, with the
state of the run that ran it (a failure wins over a pass if several did), skipped only if every
run skipped it.
Used by scripts/addon-e2e and scripts/upstream/e2e.
"""
import collections
import json
import os
import sys


def kind(state):
    return {"passed": "passed", "skipped": "skipped", "pending": "skipped"}.get(state, "failed")


RANK = {"skipped": 0, "passed": 1, "failed": 2}
# (file, name, line, nth) -> state, in the order first seen. Specs may share a name and even a
# line (table entries, loops): the nth of them in one report is the nth in another.
merged = {}
for path in sys.argv[1:]:
    report = json.load(open(path))
    seen = collections.Counter()
    for s in (s for r in report for s in (r.get("SpecReports") or []) if s.get("LeafNodeType") == "It"):
        name = (" ".join(s.get("ContainerHierarchyTexts") or []) + " " + s["LeafNodeText"]).strip()
        where = s["LeafNodeLocation"]
        spec = (os.path.basename(where["FileName"]), name, where.get("LineNumber"))
        seen[spec] += 1
        key = spec + (seen[spec],)
        if key not in merged or RANK[kind(s["State"])] > RANK[kind(merged[key])]:
            merged[key] = s["State"]
count = collections.Counter()
files = collections.defaultdict(collections.Counter)
for (where, name, _, _), state in merged.items():
    count[kind(state)] += 1
    files[where][kind(state)] += 1
    print(f"{state:12} {where}: {name}")
print()
print(f"{'file':40} passed failed skipped")
for f in sorted(files):
    c = files[f]
    print(f"{f:40} {c['passed']:6} {c['failed']:6} {c['skipped']:7}")
print()
print(f"{count['passed']} passed, {count['failed']} failed, {count['skipped']} skipped")
