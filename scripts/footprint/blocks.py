#!/usr/bin/env python3
"""blocks.py BIN OURS.txt BARE.txt

Which 64 KiB blocks of BIN's file each footprint child touched first, and
where from. OURS.txt and BARE.txt are `perf script -F
comm,pid,tid,time,addr,ip,sym --no-demangle` of `perf record -e page-faults
-c 1 -d -g` of one child each (blocks.sh makes them). A child's faults count
until the first one whose stack holds benchfloor.ResidentKiB, the moment it
measures itself. The kernel maps a file's pages in 64 KiB blocks around a
fault (fault-around), so the first fault in a block costs the whole block:
this prints, for every block of .text, .gopclntab and .rodata that ours
faulted in and bare did not, the Go stack of that first fault, then the
count of such blocks by section."""
import collections
import os
import re
import subprocess
import sys

SECTIONS = (".text", ".gopclntab", ".rodata", ".typelink", ".itablink")


def sections(binary):
    out = subprocess.run(["readelf", "-SW", binary], capture_output=True, text=True, check=True).stdout
    secs = []
    for line in out.splitlines():
        m = re.match(r"\s*\[\s*\d+\]\s+(\S+)\s+\S+\s+([0-9a-f]+)\s+([0-9a-f]+)\s+([0-9a-f]+)", line)
        if m and m.group(1) in SECTIONS:
            secs.append((m.group(1), int(m.group(2), 16), int(m.group(3), 16), int(m.group(4), 16)))
    return secs


def samples(path):
    """Yields (comm, addr, [frames]) per perf sample."""
    cur = None
    with open(path, errors="replace") as f:
        for line in f:
            if not line.strip():
                if cur:
                    yield cur
                cur = None
            elif not line[0].isspace():
                m = re.match(r"\s*(\S.*?)\s+\d+/\d+\s+[\d.]+:\s+([0-9a-f]+)\s", line)
                cur = (m.group(1), int(m.group(2), 16), []) if m else None
            elif cur:
                parts = line.split(None, 1)
                if len(parts) == 2 and not parts[1].startswith("[unknown]"):
                    cur[2].append(parts[1].strip())
    if cur:
        yield cur


def first_touches(binary, path):
    secs = sections(binary)
    comm = os.path.basename(binary)[:15]
    first = {}
    for c, addr, frames in samples(path):
        if c != comm:
            continue
        if any("benchfloor.ResidentKiB" in fr for fr in frames):
            break
        for name, va, off, size in secs:
            if va <= addr < va + size:
                key = (name, (off + addr - va) >> 16)
                first.setdefault(key, frames[:14])
                break
    return first


def main():
    binary, ours, bare = sys.argv[1:4]
    o, b = first_touches(binary, ours), first_touches(binary, bare)
    extra = sorted(k for k in o if k not in b)
    for name, blk in extra:
        stack = " < ".join(fr.replace("github.com/browserpool/browserpool", "bp") for fr in o[(name, blk)])
        print(f"{name} block 0x{blk:x}: {stack}")
    by = collections.Counter(name for name, _ in extra)
    print(f"ours touched {len(extra)} blocks ({len(extra) * 64} KiB) that bare did not:",
          ", ".join(f"{n} {c}" for n, c in by.most_common()),
          f"; bare touched {sum(1 for k in b if k not in o)} that ours did not")


if __name__ == "__main__":
    main()
