"""Bring ``.ci/numpy-xfails.txt`` in line with a run of ``.ci/numpy-suite`` whose logs were kept.

Run the suite with wide summary lines and its logs kept, then this script::

    COLUMNS=2000 AUTODEV_NUMPY_SUITE_LOGS=/tmp/logs .ci/numpy-suite .venv/bin/python all
    python tests/numpy_suite/update_xfails.py .ci/numpy-xfails.txt /tmp/logs "# open: ..."

Entries that passed (a strict XPASS) are dropped for the mode they passed in (an entry for
both modes that passed in one keeps a tag for the other); failures not listed are appended
under the given heading, tagged with the modes they fail in. Give the new group a reason
before committing: the file's rule is that every group says why it fails.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

MODES = ("host", "sim-gpu")
_TAG = re.compile(r"^\[(host|sim-gpu|not-run)\]\s+")
_SUMMARY = re.compile(r"^(FAILED|ERROR|XPASS) (\S+)(?: - (.*))?$")


def outcomes(logs: Path) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """Per mode, the test ids that passed though listed (strict XPASS) and those that failed."""
    passed: dict[str, set[str]] = {m: set() for m in MODES}
    failed: dict[str, set[str]] = {m: set() for m in MODES}
    for mode in MODES:
        for log in logs.glob(f"{mode}-*.log"):
            for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
                found = _SUMMARY.match(line)
                if found is None:
                    continue
                kind, nodeid, message = found.group(1), found.group(2), found.group(3) or ""
                xpass = kind == "XPASS" or message.startswith("[XPASS(strict)]")
                (passed if xpass else failed)[mode].add(nodeid)
    return passed, failed


def entry(nodeid: str, modes: set[str], not_run: bool = False) -> str:
    """One line of the file: ``nodeid`` with the tags that say where it is expected to fail."""
    tags = "" if modes == set(MODES) else "".join(f"[{m}] " for m in sorted(modes))
    return ("[not-run] " if not_run else "") + tags + nodeid


def update(text: str, passed: dict[str, set[str]], failed: dict[str, set[str]],
           heading: str) -> str:
    """``text`` (the file) without what passed, with the unlisted failures added."""
    listed: dict[str, set[str]] = {}
    lines = []
    for line in text.splitlines():
        rest, tags = line.strip(), []
        if not rest or rest.startswith("#"):
            lines.append(line)
            continue
        while (tag := _TAG.match(rest)) is not None:
            tags.append(tag.group(1))
            rest = rest[tag.end():]
        modes = {t for t in tags if t in MODES} or set(MODES)
        kept = {m for m in modes if rest not in passed[m]}
        listed[rest] = listed.get(rest, set()) | kept
        if kept:
            lines.append(entry(rest, kept, "not-run" in tags))
    new: dict[str, set[str]] = {}
    for mode in MODES:
        for nodeid in failed[mode] - {n for n, ms in listed.items() if mode in ms}:
            new.setdefault(nodeid, set()).add(mode)
    out = re.sub(r"\n{3,}", "\n\n", "\n".join(lines).rstrip("\n") + "\n")
    if new:
        out += "\n" + heading + "\n" + "".join(entry(n, new[n]) + "\n" for n in sorted(new))
    return out


def main(argv: list[str]) -> None:
    path, logs, heading = Path(argv[0]), Path(argv[1]), argv[2]
    passed, failed = outcomes(logs)
    path.write_text(update(path.read_text(encoding="utf-8"), passed, failed, heading),
                    encoding="utf-8")
    print({m: {"passed": len(passed[m]), "failed": len(failed[m])} for m in MODES})


if __name__ == "__main__":
    main(sys.argv[1:])
