"""roost-report: turn roost-bench JSON lines into a comparison table, PNG charts and a Markdown report.

    roost-report out/bench.jsonl --out out        # writes out/report.md and out/<bench>.png

Ratios compare variants measured in the same run: time / serial time, and time / ws time at the same
worker count (lower is better for both). A variant that failed is listed with its reason; one that cannot run
for a benchmark (no such version of it) has no row, and is named once below the table.

Results of `roost-bench --rounds N` are shown as the driver summarized them (its summary lines; the rule is
bench/driver/rounds.hpp's): rounds with a measurement taken while the CPUs were far apart are left out
(unless all were), times are medians over the rounds used, and ratios are medians of each round's own ratios.
"""
from __future__ import annotations

import argparse
import sys
from collections import OrderedDict
from pathlib import Path

import numpy as np

from .results import LeftOut, Measurement, ResultsError, Summary, cannot_run, load_all


class Run:
    """One run of one benchmark at one size: its measurements, and the driver's summary rows if it had rounds."""

    def __init__(self) -> None:
        self.measurements: list[Measurement] = []
        self.summaries: list[Summary] = []
        self.left_out: list[LeftOut] = []
        self.seen: set = set()


def _group(records: list) -> "OrderedDict[str, Run]":
    """The runs in a file, in file order, under a name each.

    roost-bench appends to its --json file, so one file may hold several sizes of a benchmark (ratios are
    only meaningful within a size) and several runs of the same one (a measurement of a variant, worker
    count and round already seen starts the next run; summary lines belong to the latest run of their
    benchmark and size). Names: "heat2d", or "heat2d 512x200" when the benchmark has several sizes, with
    " (run 2)" and so on for repeated runs."""
    runs: list[tuple[tuple[str, str], Run]] = []
    current: dict[tuple[str, str], Run] = {}
    for r in records:
        key = (r.bench, r.size)
        run = current.get(key)
        if isinstance(r, LeftOut):  # written once per run, among its first round's measurements
            if run is None or run.summaries or any(x.variant == r.variant for x in run.left_out):
                run = current[key] = Run()
                runs.append((key, run))
            run.left_out.append(r)
            continue
        if isinstance(r, Summary):
            if run is None:
                run = current[key] = Run()
                runs.append((key, run))
            run.summaries.append(r)
            continue
        what = (r.variant, r.workers, r.round)
        if run is None or what in run.seen or run.summaries:
            run = current[key] = Run()
            runs.append((key, run))
        run.seen.add(what)
        run.measurements.append(r)
    sizes: dict[str, set[str]] = {}
    for (bench, size), _ in runs:
        sizes.setdefault(bench, set()).add(size)
    by: "OrderedDict[str, Run]" = OrderedDict()
    count: dict[tuple[str, str], int] = {}
    for key, run in runs:
        bench, size = key
        count[key] = count.get(key, 0) + 1
        name = bench if len(sizes[bench]) == 1 else f"{bench} {size}"
        if count[key] > 1:
            name += f" (run {count[key]})"
        by[name] = run
    return by


def far_apart(m: Measurement, best_c2c: float | None) -> bool:
    """Taken while the CPUs were far apart: a core-to-core round trip above 2x the best seen and 120 ns (the
    driver's own rule, bench/driver/main.cpp). Such a timing is not comparable with the others."""
    return m.c2c_ns is not None and best_c2c is not None and m.c2c_ns > 2 * best_c2c and m.c2c_ns > 120


def best_c2c(ms: list[Measurement]) -> float | None:
    seen = [m.c2c_ns for m in ms if m.c2c_ns is not None and m.c2c_ns > 0]
    return min(seen) if seen else None


def ratios(ms: list[Measurement], best: float | None = None) -> list[dict]:
    """One row per measurement of one benchmark, with its ratios to serial and to ws (a `V+trace` row's to V)."""
    if best is None:
        best = best_c2c(ms)
    serial = next((m.median for m in ms if m.variant == "serial" and m.ran), None)
    time_of = {(m.variant, m.workers): m.median for m in ms if m.ran}
    rows = []
    for m in ms:
        # roost-bench's rule (driver/rounds.hpp): a `V+trace` row is to V untraced, every other row to ws.
        ref = time_of.get((m.variant[: -len("+trace")] if m.variant.endswith("+trace") else "ws", m.workers))
        rows.append(
            {
                "variant": m.variant,
                "workers": m.workers,
                "median_ms": m.median * 1e3 if m.ran else None,
                "spread": (float(np.max(m.seconds) / np.min(m.seconds)) if m.ran and min(m.seconds) > 0 else None),
                "vs_serial": (m.median / serial) if m.ran and serial else None,
                "vs_ws": (m.median / ref) if m.ran and ref else None,
                "check": m.check if m.ran else None,
                "note": m.note,
                "size": m.size,
                "c2c_ns": m.c2c_ns,
                "far": far_apart(m, best),
            }
        )
    return rows


def summary_rows(summaries: list[Summary]) -> list[dict]:
    """The driver's summary of a run with rounds, as table rows."""
    return [
        {
            "variant": r.variant,
            "workers": r.workers,
            "median_ms": r.median * 1e3 if r.median is not None else None,
            "spread": r.spread,
            "vs_serial": r.vs_serial,
            "vs_ws": r.vs_ws,
            "check": r.check if r.median is not None else None,
            "note": r.note or ("" if r.median is not None else "ran only in rounds left out"),
            "size": r.size,
            "c2c_ns": None,
            "far": False,
            "rounds": r.rounds_used,
        }
        for r in summaries
    ]


def left_out_line(run: Run) -> str:
    """The variants that cannot run for this benchmark, by reason, in one line ("" if none): from the
    driver's left_out lines, and from the rows older files wrote for them."""
    by: "OrderedDict[str, list[str]]" = OrderedDict()
    old = [(m.variant, m.note) for m in run.measurements if not m.ran and cannot_run(m.note)]
    old += [(s.variant, s.note) for s in run.summaries if s.median is None and cannot_run(s.note)]
    for variant, note in [(x.variant, x.note) for x in run.left_out] + old:
        names = by.setdefault(note, [])
        if variant not in names:
            names.append(variant)
    return "; ".join(f"{note}: {', '.join(names)}" for note, names in by.items())


def bench_rows(run: Run, best: float | None = None) -> tuple[list[dict], str]:
    """The rows for one run, and a line that says how they were summarized (empty for one round). Variants
    that cannot run for the benchmark have no row (left_out_line names them)."""
    rows, how = _all_rows(run, best)
    return [r for r in rows if r["median_ms"] is not None or not cannot_run(r["note"])], how


def _all_rows(run: Run, best: float | None) -> tuple[list[dict], str]:
    ms = run.measurements
    if run.summaries:
        total, near = run.summaries[0].rounds, run.summaries[0].near_rounds
        if near == 0:
            return summary_rows(run.summaries), (
                f"{total} interleaved rounds, all taken while the CPUs were far apart: not comparable.")
        used = f"its {total} interleaved rounds" if near == total else (
            f"{near} of {total} interleaved rounds ({total - near} left out: the CPUs were far apart)")
        return summary_rows(run.summaries), (
            f"Medians over {used}; ratios are medians of each round's own ratios; max/min is the spread of the "
            "round medians.")
    if any(m.round for m in ms):  # rounds, but the run ended before its summary was written
        return ratios(ms, best), "Rounds without the driver's summary (the run did not finish): every measurement."
    return ratios(ms, best), ""


def _fmt(x, pattern):
    return "-" if x is None else pattern.format(x)


def markdown_table(bench: str, rows: list[dict]) -> str:
    size = rows[0]["size"] if rows else ""
    lines = [
        f"### {bench}" + ("" if size in bench else f" ({size})"),
        "",
        "| variant | workers | median ms | max/min | vs serial | vs ws | check | c2c ns |",
        "|---|---:|---:|---:|---:|---:|---|---:|",
    ]
    for r in rows:
        if r["median_ms"] is None:
            lines.append(f"| {r['variant']} | - | - | - | - | - | {r['note']} | - |")
            continue
        c2c = _fmt(r.get("c2c_ns"), "{:.0f}") + (" **far**" if r.get("far") else "")
        lines.append(
            f"| {r['variant']} | {r['workers']} | {r['median_ms']:.2f} | {_fmt(r['spread'], '{:.2f}')} | "
            f"{_fmt(r['vs_serial'], '{:.2f}x')} | {_fmt(r['vs_ws'], '{:.2f}x')} | "
            f"{'ok' if r['check'] else 'FAILED'} | {c2c} |"
        )
    return "\n".join(lines) + "\n"


def chart(bench: str, rows: list[dict], path: Path) -> None:
    """Bars of the table's medians (rows from bench_rows), one group per variant, one bar per worker count."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ran = [r for r in rows if r["median_ms"] is not None and r["variant"] != "serial"]
    serial = next((r["median_ms"] for r in rows if r["variant"] == "serial" and r["median_ms"] is not None), None)
    variants = list(OrderedDict.fromkeys(r["variant"] for r in ran))
    workers = sorted({r["workers"] for r in ran})
    if not variants:
        return
    fig, ax = plt.subplots(figsize=(max(6, 0.6 * len(variants) + 2), 3.6))
    width = 0.8 / max(1, len(workers))
    x = np.arange(len(variants))
    for i, w in enumerate(workers):
        vals = [next((r["median_ms"] for r in ran if r["variant"] == v and r["workers"] == w), np.nan) for v in variants]
        ax.bar(x + i * width - 0.4 + width / 2, vals, width, label=f"{w} worker{'s' if w > 1 else ''}")
    if serial:
        ax.axhline(serial, color="black", linestyle="--", linewidth=1, label="serial")
    ax.set_xticks(x)
    ax.set_xticklabels(variants, rotation=40, ha="right", fontsize=8)
    ax.set_ylabel("median time (ms)")
    ax.set_title(bench if rows[0]["size"] in bench else f"{bench} ({rows[0]['size']})")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def report(records: list, out: Path, title: str = "roost benchmark report") -> Path:
    """records: load_all's lines (measurements and summary rows) or measurements alone."""
    out.mkdir(parents=True, exist_ok=True)
    parts = [
        f"# {title}",
        "",
        "Medians of the repetitions of one run of `roost-bench`. *vs serial* is time / serial time, *vs ws* is "
        "time / the `ws` scheduler's time at the same worker count: lower is better. *max/min* is the spread "
        "of the repetitions. Every measurement checked its result against the serial program. *c2c ns* is a "
        "cache line's round trip between two CPUs around the measurement; **far** marks one taken while it was "
        "above twice the run's best, when the host had placed the CPUs far apart: do not compare those.",
        "",
    ]
    ms = [r for r in records if isinstance(r, Measurement)]
    best = best_c2c(ms)
    for bench, run in _group(records).items():
        rows, how = bench_rows(run, best)
        parts.append(markdown_table(bench, rows))
        if how:
            parts.append(how + "\n")
        if left := left_out_line(run):
            parts.append(f"Left out (cannot run for this benchmark): {left}.\n")
        png = out / (bench.replace(" (run ", "-run").replace(")", "").replace(" ", "-") + ".png")
        chart(bench, rows, png)
        if png.exists():
            parts.append(f"![{bench}]({png.name})\n")
    failed = [m for m in ms if m.ran and not m.check]
    if failed:
        parts.append("**Failed checks:** " + ", ".join(f"{m.bench}/{m.variant}/{m.workers}" for m in failed) + "\n")
    path = out / "report.md"
    path.write_text("\n".join(parts))
    return path


def console_table(records: list) -> str:
    lines = []
    for bench, run in _group(records).items():
        rows, how = bench_rows(run)
        size = rows[0]["size"] if rows else ""
        lines.append((bench if size in bench else f"{bench} ({size})") + (f": {how}" if how else ""))
        lines.append(f"  {'variant':<18} {'workers':>7} {'median ms':>10} {'vs serial':>9} {'vs ws':>7}")
        for r in rows:
            if r["median_ms"] is None:
                lines.append(f"  {r['variant']:<18} {'-':>7} {'-':>10}  {r['note']}")
            else:
                lines.append(
                    f"  {r['variant']:<18} {r['workers']:>7} {r['median_ms']:>10.2f} "
                    f"{_fmt(r['vs_serial'], '{:.2f}x'):>9} {_fmt(r['vs_ws'], '{:.2f}x'):>7}"
                    + ("" if r["check"] else "  CHECK FAILED")
                )
        if left := left_out_line(run):
            lines.append(f"  left out: {left}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="roost-report", description=__doc__.split("\n\n")[0])
    ap.add_argument("results", help="JSON lines written by roost-bench --json")
    ap.add_argument("--out", default="out", help="folder for report.md and the charts (default: out)")
    ap.add_argument("--quiet", action="store_true", help="do not print the table")
    args = ap.parse_args(argv)
    try:
        records = load_all(args.results)
    except ResultsError as e:
        print(f"roost-report: {e}", file=sys.stderr)
        return 2
    path = report(records, Path(args.out))
    if not args.quiet:
        print(console_table(records))
    print(f"roost-report: wrote {path}")
    return 1 if any(isinstance(m, Measurement) and m.ran and not m.check for m in records) else 0


if __name__ == "__main__":
    sys.exit(main())
