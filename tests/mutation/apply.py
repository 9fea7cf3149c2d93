#!/usr/bin/env python3
"""Applies one mutation (tests/mutation/NN-name.mut) to a source tree.

A .mut file holds `# comment` lines, one `file:` line, an optional `tags:`
line (the Catch test spec to run; the whole suite when absent) and hunks:
a run of `old:` lines (consecutive lines of the file, matched exactly) then
a run of `new:` lines that replace them. Every hunk must match exactly once,
or the mutation is stale: the code it was written for has changed.

usage: apply.py MUTATION TREE      apply it (exit 3 if stale)
       apply.py --tags MUTATION    print its test spec
       apply.py --describe MUTATION
"""
import sys


def parse(path):
    spec = {"file": None, "tags": "", "about": [], "hunks": []}
    cur = None
    with open(path) as f:
        for raw in f:
            line = raw.rstrip("\n")
            if line.startswith("#"):
                spec["about"].append(line.lstrip("# ").strip())
                continue
            if not line.strip():
                continue
            tag, _, text = line.partition(": ")
            if tag == "file":
                spec["file"] = text
            elif tag == "tags":
                spec["tags"] = text
            elif tag in ("old", "old:") or line == "old:":
                if cur is None or cur["new"]:
                    cur = {"old": [], "new": []}
                    spec["hunks"].append(cur)
                cur["old"].append(text)
            elif tag in ("new", "new:") or line == "new:":
                if cur is None:
                    raise SystemExit(f"{path}: new: before old:")
                cur["new"].append(text)
            else:
                raise SystemExit(f"{path}: unknown line: {line}")
    if not spec["file"] or not spec["hunks"]:
        raise SystemExit(f"{path}: needs a file: line and at least one hunk")
    return spec


def apply(spec, tree):
    target = f"{tree}/{spec['file']}"
    try:
        with open(target) as f:
            lines = f.read().split("\n")
    except OSError as e:
        print(f"stale: {spec['file']}: {e.strerror}")
        return 3
    for h in spec["hunks"]:
        n = len(h["old"])
        at = [i for i in range(len(lines) - n + 1) if lines[i:i + n] == h["old"]]
        if len(at) != 1:
            print(f"stale: {spec['file']}: {len(at)} matches (want 1) for: "
                  + " / ".join(s.strip() for s in h["old"]))
            return 3
        lines[at[0]:at[0] + n] = h["new"]
    with open(target, "w") as f:
        f.write("\n".join(lines))
    return 0


def main(argv):
    if len(argv) == 3 and argv[1] == "--tags":
        print(parse(argv[2])["tags"])
        return 0
    if len(argv) == 3 and argv[1] == "--describe":
        print(" ".join(parse(argv[2])["about"]))
        return 0
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    return apply(parse(argv[1]), argv[2])


if __name__ == "__main__":
    sys.exit(main(sys.argv))
