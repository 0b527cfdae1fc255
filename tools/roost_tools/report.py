"""roost-report: turn roost-bench JSON lines into a comparison table, PNG charts and a Markdown report.

    roost-report out/bench.jsonl --out out        # writes out/report.md and out/<bench>.png

Ratios compare variants measured in the same run: time / serial time, and time / ws time at the same
worker count (lower is better for both). A variant that failed is listed with its reason; one that cannot run
for a benchmark (no such version of it) has no row, and is named once below the table.

Results of `roost-bench --rounds N` are shown as the driver summarized them (its summary lines; the rule is
bench/driver/rounds.hpp's): rounds with a measurement taken while the CPUs were far apart are left out
(unless all were), times are medians over the rounds used, and ratios are medians of each round's own ratios.

Results of `roost-bench --platform sim` are a run of their own, named "(simulated)": their times are the
simulated machine's virtual time, shown as such with the simulated misses and remote DRAM lines the driver
wrote, and without the host's core-to-core round trip (which says nothing about virtual time).
"""
from __future__ import annotations

import re
import argparse
import os
import sys
from collections import OrderedDict
from pathlib import Path

import numpy as np

from .cli import Once
from .results import LeftOut, Measurement, ResultsError, Summary, cannot_run, load_all

# The note of a variant the driver leaves out of a run on the simulated platform (bench/driver/main.cpp).
NOT_SIMULATED_NOTE = "not simulated"


class Run:
    """One run of one benchmark at one size: its measurements, and the driver's summary rows if it had rounds."""

    def __init__(self, run_id: str = "") -> None:
        self.run_id = run_id  # the invocation of roost-bench that wrote it ("": a file from before the ids)
        self.measurements: list[Measurement] = []
        self.summaries: list[Summary] = []
        self.left_out: list[LeftOut] = []
        self.seen: set = set()
        self.simulated: bool | None = None  # on roost-bench --platform sim; None: nothing says yet


def _simulated(r) -> bool | None:
    """Whether a line belongs to a run on the simulated platform (None: it does not say)."""
    if isinstance(r, Measurement):
        return r.simulated if r.ran else None
    if isinstance(r, LeftOut) and r.note.startswith(NOT_SIMULATED_NOTE):
        return True
    return None


def _group(records: list) -> "OrderedDict[str, Run]":
    """The runs in a file, in file order, under a name each.

    roost-bench appends to its --json file, so one file may hold several sizes of a benchmark (ratios are
    only meaningful within a size) and several runs of the same one. Each line names the invocation that
    wrote it ("run"): another one starts another run. In files written before lines carried it, a
    measurement of a variant, worker count and round already seen starts the next run, and so does one on
    the other platform, simulated or native: their times are not comparable; summary lines belong to the
    latest run of their benchmark and size. Names: "heat2d", or "heat2d 512x200" when the benchmark has several sizes, with " (simulated)" for
    a run on the simulated platform and " (run 2)" and so on for repeated runs."""
    runs: list[tuple[tuple[str, str], Run]] = []
    current: dict[tuple[str, str], Run] = {}
    for r in records:
        key = (r.bench, r.size)
        run = current.get(key)
        if run is not None and r.run != run.run_id:
            run = None  # another invocation of roost-bench: another run, whatever it measured
        sim = _simulated(r)
        if run is not None and sim is not None and run.simulated is not None and sim != run.simulated:
            run = None  # the other platform: another run
        if isinstance(r, LeftOut):  # written once per run, among its first round's measurements
            if run is None or run.summaries or any(x.variant == r.variant for x in run.left_out):
                run = current[key] = Run(r.run)
                runs.append((key, run))
            run.left_out.append(r)
            run.simulated = sim if run.simulated is None else run.simulated
            continue
        if isinstance(r, Summary):
            if run is None:
                run = current[key] = Run(r.run)
                runs.append((key, run))
            run.summaries.append(r)
            continue
        what = (r.variant, r.workers, r.round)
        if run is None or what in run.seen or run.summaries:
            run = current[key] = Run(r.run)
            runs.append((key, run))
        run.seen.add(what)
        run.measurements.append(r)
        run.simulated = sim if run.simulated is None else run.simulated
    sizes: dict[str, set[str]] = {}
    for (bench, size), _ in runs:
        sizes.setdefault(bench, set()).add(size)
    by: "OrderedDict[str, Run]" = OrderedDict()
    count: dict[tuple[str, str, bool, str], int] = {}
    for (bench, size), run in runs:
        hints = next((m.hint_error for m in run.measurements if m.hint_error), "")
        which = (bench, size, bool(run.simulated), hints)
        count[which] = count.get(which, 0) + 1
        name = bench if len(sizes[bench]) == 1 else f"{bench} {size}"
        if run.simulated:
            name += " (simulated)"
        if hints:
            name += f" (hint error {hints})"
        if count[which] > 1:
            name += f" (run {count[which]})"
        by[name] = run
    return by


def far_apart(m: Measurement, best_c2c: float | None) -> bool:
    """Taken while the CPUs were far apart: a core-to-core round trip above 2x the best seen and 120 ns (the
    driver's rule, bench/driver/main.cpp, against the best of the whole run rather than of the run so far, so
    it flags what the driver flagged and perhaps more). Such a timing is not comparable with the others.
    Never a simulated one: virtual time does not depend on where the host placed its threads."""
    return (not m.simulated and m.c2c_ns is not None and best_c2c is not None and m.c2c_ns > 2 * best_c2c
            and m.c2c_ns > 120)


def best_c2c(ms: list[Measurement]) -> float | None:
    """The best core-to-core round trip around a native measurement (a simulated one's times are virtual)."""
    # Each line's c2c_best_ns too: the driver's opening measurement, in no line as c2c_ns, was its best, and
    # the report left unflagged measurements the driver had said were far (an outside-user campaign).
    seen = [v for m in ms if not m.simulated for v in (m.c2c_ns, m.c2c_best_ns) if v is not None and v > 0]
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
                "c2c_ns": None if m.simulated else m.c2c_ns,
                "far": far_apart(m, best),
                "simulated": m.simulated,
                "topology": m.topology,
                "sim_seed": m.sim_seed,
                "sim_params": m.sim_params,
                **{k: getattr(m, k) for k in MISSES},
            }
        )
    return rows


# A simulated measurement's counts, of its median repetition, as the JSON names them, and their column titles.
MISSES = {"l2_misses": "L2 misses", "l3_misses": "L3 misses", "remote_dram": "remote DRAM lines"}


def _median_count(values: list) -> int | None:
    values = [v for v in values if v is not None]
    return int(np.median(values) + 0.5) if values else None


def summary_rows(summaries: list[Summary], ms: list[Measurement] = ()) -> list[dict]:
    """The driver's summary of a run with rounds, as table rows. A simulated run's counts (which its summary
    lines lack) are the medians of its rounds' (`ms`)."""
    def counts(r: Summary) -> dict:
        mine = [m for m in ms if (m.variant, m.workers) == (r.variant, r.workers) and m.ran]
        return {k: _median_count([getattr(m, k) for m in mine]) for k in MISSES}
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
            "topology": next((m.topology for m in ms if m.topology), ""),
            "sim_seed": next((m.sim_seed for m in ms if m.sim_seed is not None), None),
            "sim_params": next((m.sim_params for m in ms if m.sim_params is not None), None),
            **counts(r),
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
            return summary_rows(run.summaries, ms), (
                f"{total} interleaved rounds, all taken while the CPUs were far apart: not comparable.")
        used = f"its {total} interleaved rounds" if near == total else (
            f"{near} of {total} interleaved rounds ({total - near} left out: the CPUs were far apart)")
        return summary_rows(run.summaries, ms), (
            f"Medians over {used}; ratios are medians of each round's own ratios; max/min is the spread of the "
            "round medians.")
    if any(m.round for m in ms):  # rounds, but the run ended before its summary was written
        return ratios(ms, best), "Rounds without the driver's summary (the run did not finish): every measurement."
    return ratios(ms, best), ""


def _fmt(x, pattern):
    return "-" if x is None else pattern.format(x)


def simulated_line(topology: str = "", seed: int | None = None, params: str | None = None) -> str:
    machine = (f"the simulated machine `{topology}`" if topology else
               "the simulated machine (the results file does not name it: written before roost-bench did)")
    if seed is not None:  # what the numbers depend on besides the program and the machine
        machine += f", seed {seed}, " + (f"parameters `{params}`" if params else "default parameters")
    return (f"Simulated platform (`roost-bench --platform sim`): times are the virtual time of {machine}, not "
            "this host's; compare them only with runs on the same topology. Misses and remote DRAM lines are the "
            "simulated caches' counts of the median repetition; the host's core-to-core round trip says nothing about "
            "virtual time and is left out.")


SIMULATED_LINE = simulated_line()


def _title(bench: str, rows: list[dict]) -> str:
    size = rows[0]["size"] if rows else ""
    return bench if size in bench else f"{bench} ({size})"


def markdown_table(bench: str, rows: list[dict], simulated: bool = False) -> str:
    """The table of one run (rows from bench_rows); a simulated run's in virtual ms, with its misses."""
    if simulated:
        extra = list(MISSES.values())
        head = ["variant", "workers", "virtual ms (simulated)", "max/min", "vs serial", "vs ws", "check", *extra]
    else:
        extra = ["c2c ns"]
        head = ["variant", "workers", "median ms", "max/min", "vs serial", "vs ws", "check", *extra]
    lines = [f"### {_title(bench, rows)}", "", "| " + " | ".join(head) + " |",
             "|---|---:|---:|---:|---:|---:|---|" + "---:|" * len(extra)]
    for r in rows:
        if r["median_ms"] is None:
            lines.append(f"| {r['variant']} | {r['workers']} | - | - | - | - | {r['note'] or 'did not run'} |"
                         + " - |" * len(extra))
            continue
        if simulated:
            tail = [_fmt(r.get(k), "{:d}") for k in MISSES]
        else:
            tail = [_fmt(r.get("c2c_ns"), "{:.0f}") + (" **far**" if r.get("far") else "")]
        lines.append(
            f"| {r['variant']} | {r['workers']} | {r['median_ms']:.2f} | {_fmt(r['spread'], '{:.2f}')} | "
            f"{_fmt(r['vs_serial'], '{:.2f}x')} | {_fmt(r['vs_ws'], '{:.2f}x')} | "
            f"{'ok' if r['check'] else 'FAILED'} | " + " | ".join(tail) + " |"
        )
    if simulated:
        first = next((r for r in rows if r.get("topology")), {})
        lines += ["", simulated_line(first.get("topology", ""), first.get("sim_seed"), first.get("sim_params"))]
    return "\n".join(lines) + "\n"


def chart(bench: str, rows: list[dict], path: Path, simulated: bool = False) -> None:
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
    ax.set_ylabel("median virtual time (ms), simulated" if simulated else "median time (ms)")
    ax.set_title(_title(bench, rows))
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def chart_file_name(bench: str) -> str:
    """The chart's file name in --out for a benchmark's name as _group gives it: one name, never a path. A name
    from the results file that held "../" wrote its chart outside --out (an outside-user campaign): every
    character but letters, digits, '.', '_' and '-' becomes '-', and a leading '.' too."""
    name = (bench.replace(" (run ", "-run").replace(" (simulated)", "-simulated")
            .replace(" (hint error ", "-hint-error-").replace(")", ""))
    name = re.sub(r"[^A-Za-z0-9._-]", "-", name)
    name = re.sub(r"^\.+", lambda m: "-" * len(m.group(0)), name)
    return (name or "-") + ".png"


def unique_chart_name(name: str, used: set) -> str:
    """name, or name with -2, -3, ... before .png when an earlier benchmark of the report took it: two names
    that differ only in characters chart_file_name replaces ("a/b" and "a?b") drew over each other's chart."""
    stem, candidate, k = name[: -len(".png")], name, 1
    while candidate in used:
        k += 1
        candidate = f"{stem}-{k}.png"
    used.add(candidate)
    return candidate


def report(records: list, out: Path, title: str = "roost benchmark report") -> Path:
    """records: load_all's lines (measurements and summary rows) or measurements alone."""
    out.mkdir(parents=True, exist_ok=True)
    parts = [
        f"# {title}",
        "",
        "Medians of the repetitions of one run of `roost-bench`. *vs serial* is time / serial time, *vs ws* is "
        "time / the `ws` scheduler's time at the same worker count (a `V+trace` row's: / V's, untraced, what "
        "tracing costs): lower is better. *max/min* is the spread "
        "of the repetitions. Every measurement checked its result against the serial program. *c2c ns* is a "
        "cache line's round trip between two CPUs around the measurement; **far** marks one taken while it was "
        "above twice the run's best, when the host had placed the CPUs far apart: do not compare those.",
        "",
    ]
    ms = [r for r in records if isinstance(r, Measurement)]
    # The best round trip of each invocation of roost-bench, as its driver flagged against: a file may hold
    # runs from several hosts (a review: another host's lines were all marked far against this one's best).
    by_invocation: dict = {}
    for m in ms:
        by_invocation.setdefault(m.run, []).append(m)
    best_of = {rid: best_c2c(group) for rid, group in by_invocation.items()}
    used_names: set = set()
    for bench, run in _group(records).items():
        rows, how = bench_rows(run, best_of.get(run.run_id))
        parts.append(markdown_table(bench, rows, bool(run.simulated)))
        if how:
            parts.append(how + "\n")
        if left := left_out_line(run):
            parts.append(f"Left out (cannot run for this benchmark): {left}.\n")
        png = out / unique_chart_name(chart_file_name(bench), used_names)
        # A chart left by an earlier report under this name is not this benchmark's: gone before drawing, so
        # that a chart that cannot be drawn (no matplotlib) is not replaced by it.
        png.unlink(missing_ok=True)
        chart(bench, rows, png, bool(run.simulated))
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
        sim = bool(run.simulated)
        what = "virtual time of the simulated machine, misses of the median repetition" if sim else ""
        lines.append(_title(bench, rows) + "".join(f": {x}" for x in (what, how) if x))
        extra = "".join(f" {k:>11}" for k in ("L2 misses", "L3 misses", "remote DRAM")) if sim else ""
        lines.append(f"  {'variant':<18} {'workers':>7} {'virtual ms' if sim else 'median ms':>10} {'vs serial':>9} "
                     f"{'vs ws':>7}" + extra)
        for r in rows:
            if r["median_ms"] is None:
                lines.append(f"  {r['variant']:<18} {r['workers']:>7} {'-':>10}  {r['note'] or 'did not run'}")
            else:
                lines.append(
                    f"  {r['variant']:<18} {r['workers']:>7} {r['median_ms']:>10.2f} "
                    f"{_fmt(r['vs_serial'], '{:.2f}x'):>9} {_fmt(r['vs_ws'], '{:.2f}x'):>7}"
                    + ("".join(f" {_fmt(r.get(k), '{:d}'):>11}" for k in MISSES) if sim else "")
                    + ("" if r["check"] else "  CHECK FAILED")
                )
        if left := left_out_line(run):
            lines.append(f"  left out: {left}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="roost-report", description=__doc__.split("\n\n")[0])
    ap.add_argument("results", metavar="RESULTS", help="JSON lines written by roost-bench --json")
    ap.add_argument("--out", default="out", action=Once, help="folder for report.md and the charts (default: out)")
    ap.add_argument("--quiet", action="store_true", help="do not print the table")
    args = ap.parse_args(argv)
    out = Path(args.out)
    try:
        # Path("") is ".": an empty --out (an unset shell variable) wrote into the working directory unsaid.
        if not args.out:
            raise ResultsError("--out '': expected the folder for report.md and the charts (default: out)")
        if Path(args.results).is_dir():
            raise ResultsError(f"RESULTS {args.results}: a directory; give the JSON lines file that roost-bench "
                               f"--json wrote")
        # A line a failed write cut short is left out with a word, the rest reported: refused, the whole file
        # could not be reported without an edit by hand (an outside-user campaign).
        skipped: list[str] = []
        records = load_all(args.results, skipped)
        for note in skipped:
            print(f"roost-report: {note}", file=sys.stderr)
        if out.exists() and not out.is_dir():
            raise ResultsError(f"--out {args.out}: a file, not a directory; give the folder for report.md and "
                               f"the charts")
        path = report(records, out)
    except ResultsError as e:
        print(f"roost-report: {e}", file=sys.stderr)
        return 2
    except OSError as e:  # --out cannot be made or written: the path and the system's reason
        print(f"roost-report: --out {args.out}: cannot write {e.filename or 'there'}: {e.strerror or e}",
              file=sys.stderr)
        return 2
    try:
        if not args.quiet:
            print(console_table(records))
        print(f"roost-report: wrote {path}")
        sys.stdout.flush()  # here, not at the interpreter's exit, where a failure was a traceback
    except BrokenPipeError:  # piped into a reader that stopped (head): nothing of ours went wrong
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit's flush
        return 1
    except OSError as e:  # a standard output that cannot take the table (a full disk)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        print(f"roost-report: cannot write the table to standard output: {e.strerror or e} (the report is in "
              f"{path})", file=sys.stderr)
        return 2
    return 1 if any(isinstance(m, Measurement) and m.ran and not m.check for m in records) else 0


if __name__ == "__main__":
    sys.exit(main())
