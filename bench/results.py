"""Writing benchmark results into docs/BENCHMARKS.md: each run appends one row to its section's table."""
import os
import platform
import statistics
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parent.parent / "docs" / "BENCHMARKS.md"


def cpu_model() -> str:
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def machine() -> str:
    """One line naming the machine: cores, CPU model, memory."""
    mem_gib = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return f"{len(os.sched_getaffinity(0))} cores, {cpu_model()}, {mem_gib:.0f} GiB"


def median_cell(values: list[float], unit: str = "s") -> str:
    """A table cell: the median in bold, then every run's value (``**8.2 s** (7.2 · 9.9 · 8.2)``)."""
    return f"**{statistics.median(values):.1f} {unit}** ({' · '.join(f'{v:.1f}' for v in values)})"


def record(heading: str, table_header: str, row: str) -> None:
    """Append ``row`` to the table under ``heading`` (section and table created when missing)."""
    text = BENCHMARKS.read_text() if BENCHMARKS.exists() else "# Benchmarks\n"
    if heading + "\n" not in text:
        text = text.rstrip("\n") + f"\n\n{heading}\n\n"
    start = text.index(heading + "\n") + len(heading) + 1
    nxt = text.find("\n## ", start)
    end = len(text) if nxt < 0 else nxt + 1
    section = text[start:end]
    if table_header not in section:
        section = section.rstrip("\n") + "\n\n" + table_header
    lines = section.rstrip("\n").split("\n")
    last_row = max(i for i, line in enumerate(lines) if line.startswith("|"))
    lines.insert(last_row + 1, row)
    BENCHMARKS.write_text(text[:start] + "\n".join(lines) + "\n" + ("\n" if nxt >= 0 else "") + text[end:])
