"""roost-analyze: look inside a roost trace (ROOST_TRACE=file).

    roost-analyze krd TRACE               Kernel Reuse Distance histogram per last-level cache, and summed
    roost-analyze timeline TRACE --out P [--colour latency]  per-worker timeline PNG
    roost-analyze summary TRACE           workers, caches, event counts
    roost-analyze mapping TRACE           how many tasks ran on another worker than in the previous iteration
    roost-analyze markdown TRACE --name N --out-dir D   KRD table and timeline as a report section
    roost-analyze ovr TRACE_N TRACE_1 [--skip K]  OVR_N, WTI_N and the speed-up decomposition (seed 001)
"""
from __future__ import annotations

import argparse
import os
import sys
from collections import Counter
from pathlib import Path

from . import krd, mapping, ovr, timeline
from .cli import Once
import numpy as np

from .ovr import ITERATION_BEGIN, ITERATION_END
from .trace import KIND, RUNTIME_BLOCK, TraceError, read

TASK_BEGIN = next(k for k, v in KIND.items() if v == "task_begin")

_STEAL_FAILURES = next(k for k, v in KIND.items() if v == "steal_failures")


def _share(counts: tuple[int, int]) -> float:
    return counts[1] / max(1, counts[0])


def _warn_if_cut_short(path: str, t) -> None:
    if t.cut_at is not None:  # cut inside a chunk: no end chunk either, but not for the reason below
        print(f"roost-analyze: {path} was cut short at byte {t.cut_at}, inside a chunk (a write that failed "
              f"part-way: a full disk, a file size limit, a program killed while writing): read the whole chunks "
              f"before byte {t.lost_from}; the rest of the trace is lost", file=sys.stderr)
    elif not t.complete:
        print(f"roost-analyze: {path} was cut short (no end chunk): its runtime is still writing it, or its "
              f"program ended without destroying the runtime; the events its workers still held are missing, and "
              f"so are the iteration records (each runtime::run's begin and end) unless the runtime wrote them "
              f"before", file=sys.stderr)
    if t.cut_at is not None or not t.complete:
        # The runtime's lane, which holds the iteration records, is written less often than the workers': the
        # runs ovr measures and the roots mapping names then differ (a killed run: 64 against 81, which no
        # output explained: an outside-user campaign).
        r = t.records
        kind = r["kind"]
        runs = min(int(np.count_nonzero(kind == ITERATION_BEGIN)), int(np.count_nonzero(kind == ITERATION_END)))
        roots = int(np.count_nonzero((kind == TASK_BEGIN) & (r["b"] == 0) & (r["worker"] != RUNTIME_BLOCK)))
        if roots != runs:
            print(f"roost-analyze: {path}: its iteration records hold {runs} whole run(s), which ovr measures, and "
                  f"its tasks {roots} root(s), which mapping compares", file=sys.stderr)


def _l2_name(t) -> str:
    """What the close bound is: the L2, or the LLC standing in for a topology that declares no L2 (the header said
    "L2 1048576 B" of a trace whose summary says L2 0 B)."""
    return "L2" if t.l2_bytes else "L2 (none: the LLC stands in)"


def _warn_if_no_cache_sizes(path: str, t) -> None:
    if krd.bounds(t) == (0, 0):  # 0 in the header: not described
        print(f"roost-analyze: {path} describes no cache sizes (its topology had no cache level: "
              f"ROOST_TOPOLOGY such as 'pack:2 core:1 pu:1'): KRD's close and near bins are empty, and every reuse counts as far", file=sys.stderr)


def _warn_if_no_accesses(path: str, t) -> None:
    """A trace with no kernel accesses gives a KRD of zeros: said, rather than left to read as a measurement (an
    outside-user campaign)."""
    if len(krd.accesses(t)) == 0:
        print(f"roost-analyze: {path} holds no kernel accesses (no task called roost::touch or roost::touch_rows "
              f"while it was traced): every KRD count is 0", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="roost-analyze", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name in ("krd", "summary", "mapping", "timeline", "markdown"):
        p = sub.add_parser(name)
        p.add_argument("trace", metavar="TRACE")
        if name == "timeline":
            p.add_argument("--out", required=True, action=Once)
            p.add_argument("--colour", choices=("subtree", "latency"), default="subtree", action=Once,
                           help="latency: by each task's modelled memory time per line (a simulated trace; "
                                "seed 002 Fig. 8)")
        if name == "markdown":
            p.add_argument("--name", required=True, action=Once, help="the section's title and the images' file-name stem "
                                                         "(NAME-timeline.png, NAME-krd.png in --out-dir)")
            p.add_argument("--out-dir", required=True, action=Once)
    p = sub.add_parser("ovr")
    p.add_argument("trace", metavar="TRACE")
    p.add_argument("trace_1", metavar="TRACE_1", help="the same program traced with 1 worker")
    p.add_argument("--skip", type=int, default=0, metavar="K", action=Once,
                   help="leave out the first K iterations (runtime::run calls) of both traces: warm-up")
    args = ap.parse_args(argv)
    try:
        status = _command(args)
        sys.stdout.flush()  # here, where a reader that stopped is caught, not at the interpreter's exit
        return status
    except BrokenPipeError:  # output piped into a reader that stopped (head): nothing of ours went wrong
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit's flush
        return 1
    except OSError as e:  # an image that cannot be written: the file and the system's reason, not "[Errno N]"
        print(f"roost-analyze: {e.filename}: {e.strerror}" if e.filename and e.strerror else f"roost-analyze: {e}",
              file=sys.stderr)
        return 2
    except (TraceError, ValueError) as e:
        print(f"roost-analyze: {e}", file=sys.stderr)
        return 2


def _read(path: str, what: str):
    """The trace the argument `what` names, after a word on it if it was cut short."""
    if Path(path).is_dir():
        raise ValueError(f"{what} {path}: a directory; give a trace file (the file ROOST_TRACE named)")
    if not Path(path).exists():
        raise ValueError(f"{what} {path}: no such file; give a trace file (the file ROOST_TRACE named)")
    t = read(path)
    _warn_if_cut_short(path, t)
    return t


def _check_markdown_args(args) -> None:
    """Before the trace is read: --name is a file-name stem of the images, --out-dir where they go."""
    if not args.name or "/" in args.name:
        raise ValueError(f"--name '{args.name}': must be a plain file-name stem, non-empty and without '/' (the "
                         f"images are written as NAME-timeline.png and NAME-krd.png in --out-dir)")
    if not Path(args.out_dir).is_dir():
        raise ValueError(f"--out-dir {args.out_dir}: not an existing directory; make it first")


def _not_the_trace(image: Path, trace: str, what: str) -> Path:
    """An image path that is not the trace being read: `timeline run.png --out run.png` overwrote its own trace
    (an outside-user campaign). ValueError naming `what` otherwise."""
    if image.exists() and Path(trace).exists() and os.path.samefile(image, trace):
        raise ValueError(f"{what} {image}: is the trace being read (TRACE {trace}); give the image another name")
    return image


def _command(args) -> int:
    if args.cmd == "markdown":
        _check_markdown_args(args)
        for kind in ("timeline", "krd"):
            _not_the_trace(Path(args.out_dir) / f"{args.name}-{kind}.png", args.trace, "--name/--out-dir:")
    if args.cmd == "timeline":
        _not_the_trace(timeline.image_path(args.out, "--out"), args.trace, "--out")
    t = _read(args.trace, "TRACE")
    if args.cmd == "ovr":
        t_1 = _read(args.trace_1, "TRACE_1")
        d = ovr.decompose(t, t_1, args.skip, (f"TRACE_N {args.trace}", f"TRACE_1 {args.trace_1}"))
        print(f"N = {d.workers}: T_N {d.t_n / 1e6:.3f} ms, T_1 {d.t_1 / 1e6:.3f} ms, Work_N {d.work_n / 1e6:.3f} ms, "
              f"Work_1 {d.work_1 / 1e6:.3f} ms")
        print(f"OVR_N {d.ovr:.3f}  WTI_N {d.wti:.3f}  speed-up over the serial work {d.speedup:.3f} "
              f"= N / (OVR_N * WTI_N) = {d.workers / (d.ovr * d.wti):.3f}; the 1-worker run's OVR_1 {d.ovr_1:.3f}")
    elif args.cmd == "summary":
        counts = Counter(KIND.get(int(k), str(k)) for k in t.records["kind"])
        print(f"{t.workers} workers; L2 {t.l2_bytes} B, LLC {t.llc_bytes} B, LLC domains {t.llc_domain}; {t.topology}")
        for k, v in sorted(counts.items()):
            print(f"  {k:22} {v}")
        failures = t.records[t.records["kind"] == _STEAL_FAILURES]
        if len(failures):
            print(f"  {'(failed steal attempts)':22} {int(failures['a'].sum())}")
    elif args.cmd == "krd":
        _warn_if_no_cache_sizes(args.trace, t)
        _warn_if_no_accesses(args.trace, t)
        l2, llc = krd.bounds(t)
        print(f"KRD (close <= {_l2_name(t)} {l2} B, near <= LLC {llc} B, far, cold; written elsewhere: reuses "
              f"another cache wrote in between)")
        elsewhere = krd.written_elsewhere(t)
        for name, h in krd.krd(t).items():
            r = h.ratios()
            print(f"  {name:10} accesses {h.total:8}  close {r['close']:.3f}  near {r['near']:.3f}  far {r['far']:.3f}  "
                  f"cold {r['cold']:.3f}  written elsewhere {_share(elsewhere[name]):.3f}")
    elif args.cmd == "mapping":
        for line in mapping.describe(mapping.mapping(t)):
            print(line)
    elif args.cmd == "timeline":
        print(f"roost-analyze: wrote {timeline.plot(t, timeline.image_path(args.out, '--out'), colour=args.colour)}")
    else:
        _warn_if_no_cache_sizes(args.trace, t)
        _warn_if_no_accesses(args.trace, t)
        out_dir = Path(args.out_dir)
        png = out_dir / f"{args.name}-timeline.png"
        timeline.plot(t, png, title=f"{args.name}: tasks by worker (colour: subtree of the root); looking for work "
                                    f"yellow, asleep grey")
        hist_png = krd.plot(krd.krd(t), out_dir / f"{args.name}-krd.png", title=f"{args.name}: Kernel Reuse Distance")
        print(f"### {args.name}\n")
        if t.cut_at is not None or not t.complete:  # said in the section too, not only on stderr (a campaign)
            print("*This trace was cut short: events, iteration records among them, may be missing from what "
                  "follows (roost-analyze said why on stderr).*\n")
        if len(krd.accesses(t)) == 0:  # the table below would be zeros with no word (a review)
            print("*No task called `roost::touch` while this trace was recorded: every Kernel Reuse Distance count "
                  "below is 0.*\n")
        l2, llc = krd.bounds(t)
        print(f"Kernel Reuse Distance (seed 001): close <= {_l2_name(t)} ({l2} B), near <= LLC ({llc} B), far, cold. "
              f"*Written elsewhere* (roost's addition): the reuses in those bins whose data another cache wrote in "
              f"between, which the hardware serves as misses.\n")
        print("| cache domain | accesses | close | near | far | cold | written elsewhere |\n"
              "|---|---:|---:|---:|---:|---:|---:|")
        elsewhere = krd.written_elsewhere(t)
        for name, h in krd.krd(t).items():
            r = h.ratios()
            print(f"| {name} | {h.total} | {r['close']:.3f} | {r['near']:.3f} | {r['far']:.3f} | {r['cold']:.3f} | "
                  f"{_share(elsewhere[name]):.3f} |")
        print("\nMapping across iterations: " + "; ".join(mapping.describe(mapping.mapping(t))) + ".")
        # Link targets percent-encoded: a --name with spaces made links Markdown does not read.
        from urllib.parse import quote
        print(f"\n![{args.name} KRD]({quote(hist_png.name)}) ![{args.name} timeline]({quote(png.name)})\n")
    return 0

if __name__ == "__main__":
    sys.exit(main())
