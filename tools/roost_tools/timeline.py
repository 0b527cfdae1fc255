"""Per-worker timeline of a trace: tasks as bars on their worker, coloured by the subtree under the root they
belong to, or (colour="latency", seed 002 Fig. 8) by each task's average modelled memory time per cache line,
from the `memory` records of a simulated trace; looking for work in yellow, sleep in grey."""
from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np

from .trace import UNRECORDED, Trace, ancestry_loop


def task_spans(trace: Trace):
    """(worker, start_ns, end_ns, subtree) for each piece of every task: one per worker it ran on (see
    task_memory)."""
    return [s[:4] for s in task_memory(trace)]


def task_memory(trace: Trace, roots: bool = False):
    """(worker, start_ns, end_ns, subtree, lines, memory_ns, remote_lines) for each piece of every task, as the
    runtime's own timeline draws them (src/trace/chrome_json.cpp): one per worker it ran on, from its begin or
    first resumption there to its end there, or to that worker's next idle or sleep (it had suspended: the
    format has no record of a suspension, and an idle worker runs no task); a resumption where its piece is
    still open continues that piece. Only the piece on the worker it ended on was drawn, and a task that
    moved left the other worker blank for the time it ran there (an outside-user campaign). With each piece,
    the lines its kernels touched there and what the simulated memory hierarchy charged for them (the
    `memory` records, written after each touch of a simulated run; zeros otherwise): a record counts for the
    task that began or resumed last on its worker and has not ended or left it, the one running there. A
    run's root (the tracer records its end; it spans the whole run) only with `roots`, first, so that a drawing
    puts its children over it and shows what the root ran itself."""
    r = trace.records
    begins = r[r["kind"] == 1]
    parent = dict(zip(begins["a"].tolist(), begins["b"].tolist()))
    index = dict(zip(begins["a"].tolist(), begins["index"].tolist()))

    below_root: dict[int, int] = {}  # serial -> the root's child it descends from; never a root's own

    def subtree(serial: int) -> int:  # the root's child this task descends from
        # Walks up to a task whose answer is known (or to the root), then gives every task on the way the
        # answer: once per task, not once per piece and level (a trace of 10^6 tasks took minutes: an
        # outside-user campaign). A root's own answer (-1) is not kept: its children's differ from it.
        chain = [serial]
        on_chain = {serial}
        while True:
            cur = chain[-1]
            if cur in below_root:
                answer = below_root[cur]
                break
            up = parent.get(cur, 0)
            if up in (0, UNRECORDED):  # cur is the top: its child on the chain heads the subtree
                answer = index[chain[-2]] if len(chain) >= 2 else -1
                chain.pop()
                break
            if up in on_chain:  # a damaged file: the walk up would never end
                raise ancestry_loop(up)
            on_chain.add(up)
            chain.append(up)
        for x in chain:
            below_root[x] = answer
        return answer

    start = {}
    memory = {}  # key -> [lines, ns, remote]
    # worker -> keys begun or resumed, not ended, the running one last: an ordered dict, not a list, whose `in`
    # and remove took a chain of 20,000 nested groups 24-40 s (an outside-user campaign).
    running: dict[int, dict] = {}
    spans, root_spans = [], []

    def close(key, at: int) -> None:
        lines, ns, remote = memory.pop(key)
        span = (key[0], start.pop(key), at, subtree(key[1]), lines, ns, remote)
        if parent.get(key[1], 0) != 0:
            spans.append(span)
        elif roots:
            root_spans.append(span)

    last_ns: dict[int, int] = {}
    sel = r[np.isin(r["kind"], [1, 2, 3, 5, 14, 16])]
    # Columns as Python lists: reading a structured array's fields record by record was most of the time.
    for w, kind, t, a, b, ix in zip(sel["worker"].tolist(), sel["kind"].tolist(), sel["t_ns"].tolist(),
                                    sel["a"].tolist(), sel["b"].tolist(), sel["index"].tolist()):
        last_ns[w] = t
        stack = running.setdefault(w, {})
        if kind == 16:
            top = next(reversed(stack), None)
            if top is not None and top in memory:
                m = memory[top]
                m[0] += a
                m[1] += b
                m[2] += ix
            continue
        if kind in (5, 14):  # sleep or look for work: whatever ran on w had ended or suspended
            for key in stack:
                close(key, t)
            stack.clear()
            continue
        key = (w, a)
        if kind in (1, 3):
            stack.pop(key, None)
            stack[key] = None  # last: the running one
            if key not in start:  # a piece on this worker starts here
                start[key] = t
                memory[key] = [0, 0, 0]
        else:
            stack.pop(key, None)
            if key in start:
                close(key, t)
    # Pieces left open (a trace cut short, a worker that ended without going idle): to their worker's last
    # record, as the runtime's timeline does.
    if len(r):
        for w, t in zip(r["worker"].tolist(), r["t_ns"].tolist()):
            last_ns[w] = max(last_ns.get(w, t), t)
    for key in list(start):
        close(key, max(start[key], last_ns.get(key[0], start[key])))
    return root_spans + spans


NO_DATA_EDGE = "dimgrey"  # the outline of a task without data in the latency colouring

# Seed 002 Fig. 8's gradient: light green (short stalls) through dark green to blue (long ones).
_LATENCY_COLOURS = ("#c7e9c0", "#41ab5d", "#006d2c", "#08519c", "#08306b")


def latency_per_line(spans) -> list[float]:
    """Each task piece's modelled memory time per line touched (ns), for the pieces that touched any (a task
    that moved has a piece on each worker it ran on: task_memory)."""
    return [ns / lines for *_, lines, ns, _ in spans if lines]


def _bars(ax, bars, height: float, zorder: float) -> None:
    """Draws (worker, start_ns, end_ns, face, edge, line width) as one collection, in the list's order: a call
    of ax.barh per bar took about 2 ms each (minutes for a trace at ROOST_TRACE_DEPTH=all)."""
    from matplotlib.collections import PolyCollection

    if not bars:
        return
    polys, faces, edges, widths = [], [], [], []
    for w, s, e, face, edge, width in bars:
        x0, x1, y0, y1 = s / 1e6, e / 1e6, w - height / 2, w + height / 2
        polys.append(((x0, y0), (x0, y1), (x1, y1), (x1, y0)))
        faces.append(face)
        edges.append(edge if edge is not None else face)
        widths.append(width)
    ax.add_collection(PolyCollection(polys, facecolors=faces, edgecolors=edges, linewidths=widths, zorder=zorder))


def _draw(ax, trace: Trace, spans, colour: str, norm=None, grad=None) -> None:
    import matplotlib.pyplot as plt

    cmap = plt.get_cmap("tab20")
    # Outer pieces first, so that what ran inside them is drawn over them: task_memory lists a piece when it
    # ends, a parent after its children, and a parent without data painted its white over every coloured
    # leaf of a recursion (an outside-user campaign: 3,900 of 4,900 on a heat2d trace).
    bars = []
    # A bar that lies wholly inside the bar drawn last over its start on its worker, in the same colour, changes
    # no pixel: left out. Each worker's bars that reach past the current start, in the order drawn: the last
    # is the one on top there (a bar drawn later that covered any part of this one would start no later and
    # end after this start, so be on the stack above it). Most of a deep tree's tasks lie so inside their
    # parent (one subtree, one colour): a trace of fib(27) at ROOST_TRACE_DEPTH=all, 953,000 pieces, drew
    # them all, 1.77 GB for a 26 MB trace (an outside-user campaign).
    on_top: dict[int, list[tuple[int, tuple]]] = {}
    for w, s, e, sub, lines, ns, _ in sorted(spans, key=lambda sp: (sp[1], -sp[2])):
        if colour == "latency" and not lines:
            # A task that touched no data has no latency: an outline, not the grey of a sleeping worker.
            look = ("white", NO_DATA_EDGE, 0.5)
        else:
            look = (grad(norm(ns / lines)) if colour == "latency" else cmap(sub % 20) if sub >= 0 else "black",
                    None, 0)
        stack = on_top.setdefault(w, [])
        while stack and stack[-1][0] <= s:
            stack.pop()
        # Filled bars only: an outlined one (latency's task without data) draws its edges inside the other.
        if stack and stack[-1][0] >= e and stack[-1][1] == look and look[2] == 0:
            continue
        stack.append((e, look))
        bars.append((w, s, e) + look)
    _bars(ax, bars, 0.8, 1)
    r = trace.records
    states = []
    for w in range(trace.workers):
        # Looking for work (idle, thin yellow) and asleep (grey).
        for begin, end, state_colour in ((14, 15, "gold"), (5, 6, "lightgrey")):
            mine = r[(r["worker"] == w) & np.isin(r["kind"], [begin, end])]
            t0 = None
            for kind, t in zip(mine["kind"].tolist(), mine["t_ns"].tolist()):
                if kind == begin:
                    t0 = t
                elif t0 is not None:
                    states.append((w, t0, t, state_colour, None, 0))
                    t0 = None
    _bars(ax, states, 0.3, 2)
    ax.autoscale_view()  # the collections' extents (add_collection updated the data limits), as barh's
    ax.set_yticks(range(trace.workers))
    ax.set_yticklabels([f"worker {w}" for w in range(trace.workers)], fontsize=8 if trace.workers <= 16 else 5)
    ax.set_xlabel("time (ms)")


def plot_panels(panels: list[tuple[str, Trace]], out: str | Path, colour: str = "subtree", title: str = "") -> Path:
    """One timeline per (label, trace), stacked, on one time axis; colour "subtree" (the root's child each task
    descends from) or "latency" (each task's modelled memory time per line touched, one scale for all panels,
    so that they compare: seed 002 Fig. 8)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.colors import LinearSegmentedColormap, Normalize

    if colour not in ("subtree", "latency"):
        raise ValueError(f"colour='{colour}': must be subtree or latency")
    # Roots in both colourings: a run's root that touched data itself is coloured by it (left out, a root that
    # swept 512 KiB before spawning one small child left its worker blank, and a run whose root alone touched
    # data was refused as having no memory records: an outside-user campaign).
    spans = [task_memory(t, roots=True) for _, t in panels]
    norm = grad = None
    if colour == "latency":
        per_line = [x for sp in spans for x in latency_per_line(sp)]
        if not per_line:
            raise ValueError("colour='latency' needs a simulated trace whose tasks touched data (roost::touch): "
                             "this one has no memory records")
        lo, hi = min(per_line), max(per_line)
        norm = Normalize(vmin=lo, vmax=hi if hi > lo else lo + 1)
        grad = LinearSegmentedColormap.from_list("fig8", _LATENCY_COLOURS)
    # A lane 0.12 in high from 17 workers on, a panel at most 40 in (4,400 px at 110 dpi: a lane a pixel at
    # 4,096 workers); 4,096 lanes of 0.12 in made a 54,000 px image, 37 s and 412 MB (an outside-user campaign).
    heights = [0.5 + min(40.0, (0.12 if t.workers > 16 else 0.45) * max(1, t.workers)) for _, t in panels]
    fig, axes = plt.subplots(len(panels), 1, sharex=True, squeeze=False, height_ratios=heights, layout="constrained",
                             figsize=(10, sum(heights) + 0.4 * len(panels) + (0.8 if colour == "latency" else 0)))
    what = "modelled memory time per line" if colour == "latency" else "subtree of the root"
    for (label, t), sp, ax in zip(panels, spans, axes[:, 0]):
        _draw(ax, t, sp, colour, norm, grad)
        ax.set_title(label, fontsize=9)
    no_data = "; tasks that touched no data outlined in white" if colour == "latency" else ""
    fig.suptitle(title or f"tasks by worker, coloured by {what}{no_data}; looking for work in yellow, asleep in grey",
                 fontsize=9)
    if colour == "latency":
        bar = fig.colorbar(plt.cm.ScalarMappable(norm=norm, cmap=grad), ax=list(axes[:, 0]), orientation="horizontal",
                           fraction=0.04, aspect=60)
        bar.set_label("modelled memory time per cache line touched (ns), per task", fontsize=8)
    out = Path(out)
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def image_path(out: str | Path, what: str = "out") -> Path:
    """Where an image asked for as `out` goes: its format from its suffix (png when it has none, which
    matplotlib would add), in an existing directory. ValueError naming `what` (the option) otherwise."""
    from matplotlib.backend_bases import FigureCanvasBase

    if not str(out):  # Path("") is ".", which the test below took for a directory the user named
        raise ValueError(f"{what} '': empty; give the image's file name, e.g. timeline.png")
    p = Path(out)
    if p.is_dir():
        raise ValueError(f"{what} {out}: a directory; give the image's file name, e.g. {p / 'timeline.png'}")
    # A device or a pipe is not an image file: with the suffix added below, --out /dev/full made a file
    # /dev/full.png (an outside-user campaign).
    if p.exists() and not p.is_file():
        raise ValueError(f"{what} {out}: not a regular file (a device, a pipe); give the image's file name")
    if not p.suffix:
        p = p.with_suffix(".png")
    fmt = p.suffix[1:].lower()
    formats = dict(FigureCanvasBase.get_supported_filetypes())  # what savefig writes; no figure made to ask
    # pgf is written through LaTeX: without its TeX system matplotlib failed only in savefig, with a traceback
    # of 35 frames (an outside-user campaign).
    import matplotlib

    tex = matplotlib.rcParams["pgf.texsystem"]
    if shutil.which(tex) is None:
        formats.pop("pgf", None)
        if fmt == "pgf":
            raise ValueError(f"{what} {out}: matplotlib writes pgf through {tex} (LaTeX), which is not installed; "
                             f"use one of {', '.join(sorted(formats))}")
    if fmt not in formats:
        raise ValueError(f"{what} {out}: matplotlib writes no '{fmt}' images; use one of {', '.join(sorted(formats))}")
    if not p.parent.is_dir():
        raise ValueError(f"{what} {out}: its directory '{p.parent}' does not exist")
    return p


def plot(trace: Trace, out: str | Path, title: str = "", colour: str = "subtree") -> Path:
    """One trace's timeline (plot_panels with one panel)."""
    return plot_panels([("", trace)], out, colour=colour, title=title)
