"""Per-worker timeline of a trace: tasks as bars on their worker, coloured by the subtree under the root they
belong to, or (colour="latency", seed 002 Fig. 8) by each task's average modelled memory time per cache line,
from the `memory` records of a simulated trace; looking for work in yellow, sleep in grey."""
from __future__ import annotations

import operator
import shutil
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from .trace import UNRECORDED, Trace, ancestry_loop


class Pieces(Sequence):
    """task_memory's pieces (task_spans's, their first four columns) as the list of tuples they were, held as
    numpy columns: a tuple of Python ints each, by index or in order; len; == compares with any list or tuple
    of tuples, element by element. A list of a 7-tuple per piece took 180 bytes a piece, more than the trace;
    `columns` gives the arrays themselves (worker, start_ns, end_ns, subtree, lines, memory_ns, remote_lines)."""

    __slots__ = ("columns",)
    __hash__ = None

    def __init__(self, columns):
        self.columns = tuple(columns)

    def __len__(self) -> int:
        return len(self.columns[0])

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        i = operator.index(i)
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError("piece index out of range")
        return tuple(c[i:i + 1].tolist()[0] for c in self.columns)

    def __iter__(self):
        step = 1 << 14
        for at in range(0, len(self), step):
            yield from zip(*(c[at:at + step].tolist() for c in self.columns))

    def __eq__(self, other):
        if not isinstance(other, (Pieces, list, tuple)):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other))

    def __repr__(self) -> str:
        return f"Pieces({len(self)} pieces)"


def task_spans(trace: Trace) -> Pieces:
    """(worker, start_ns, end_ns, subtree) for each piece of every task: one per worker it ran on (see
    task_memory)."""
    return Pieces(task_memory(trace).columns[:4])


def task_memory(trace: Trace, roots: bool = False) -> Pieces:
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
    puts its children over it and shows what the root ran itself. In the order the pieces closed (a worker's
    idle or sleep closes its open pieces in the order they last began or resumed; the pieces a trace left open,
    after all the others, in the order they began): a Pieces, a sequence of tuples."""
    # Column operations on the records (numpy), not a dict and tuples per task and a Python int per field of
    # every record: 0.74 GB for a 26 MB trace. Each worker's records in their order, split into segments at its
    # idle and sleep records (which close every open piece there: its running set starts empty after one); in
    # a segment, a task's records alone say its pieces (a begin or resume opens one unless one is open, an end
    # closes the open one), and what runs at a memory record is the task whose last begin or resume there is
    # the latest one not since followed by its end (an end, or a begin or resume again, of the same task).
    r = trace.records
    ix = np.int32 if len(r) < 2**31 - 2 else np.int64  # the places of records and events: half the memory
    sel = np.flatnonzero(np.isin(r["kind"], (1, 2, 3, 5, 14, 16))).astype(ix)
    if not len(sel):
        return Pieces(np.zeros(0, dtype) for dtype in (np.uint16, np.uint64, np.uint64, np.int64, np.int64,
                                                         np.int64, np.int64))
    w = r["worker"][sel]
    if len(w) > 1 and np.any(w[1:] < w[:-1]):  # records not lane by lane (read() gives them so): by worker
        by = np.argsort(w, kind="stable")
        sel, w = sel[by], w[by]
        del by
    # From here on an event is its place in `sel` (its rank); sel[rank] is its record.
    kind = r["kind"][sel]
    n = len(sel)
    idle = (kind == 5) | (kind == 14)
    mem = kind == 16
    new_segment = np.ones(n, bool)
    new_segment[1:] = idle[:-1] | (w[1:] != w[:-1])
    segment = np.cumsum(new_segment, dtype=ix) - 1
    seg_last = np.append(np.flatnonzero(new_segment)[1:] - 1, n - 1).astype(ix)
    del new_segment
    seg_idle = idle[seg_last]  # the segment ends with its worker's idle or sleep (else with its last record)
    seg_end = seg_last + ~seg_idle  # the idle record's rank, else one past the worker's last

    # A task's records in a segment, grouped (segment, serial), in their order.
    ev = np.flatnonzero(~(idle | mem)).astype(ix)
    serial = r["a"][sel[ev]]
    group = np.lexsort((serial, segment[ev])).astype(ix)  # stable: each group's records in their order
    g_seg, g_ser = segment[ev[group]], serial[group]
    same = np.zeros(len(ev), bool)
    same[1:] = (g_seg[1:] == g_seg[:-1]) & (g_ser[1:] == g_ser[:-1])
    del g_seg, g_ser
    runs = kind[ev[group]] != 2  # a begin or a resumption
    after_run = np.zeros(len(ev), bool)
    after_run[1:] = runs[:-1] & same[1:]
    last = np.ones(len(ev), bool)
    last[:-1] = ~same[1:]
    opens = runs & ~after_run
    closes = (~runs & after_run) | (runs & last)  # an end, or the group's last record while the piece is open
    o, c = group[opens], group[closes]  # the pieces' opening and closing records (as places in ev), paired
    p_serial = serial[o]
    del serial
    # Each begin or resumption: its piece, and the rank at which it stops being the running one.
    piece_of = np.empty(len(ev), ix)
    piece_of[group] = np.cumsum(opens, dtype=ix) - 1
    stops = np.empty(len(ev), ix)
    nxt = np.empty(len(ev), ix)
    nxt[:-1] = ev[group[1:]]
    stops[group] = np.where(last, seg_end[segment[ev[group]]], nxt)
    del nxt, same, after_run, last, opens, closes
    runs_ev = np.flatnonzero(kind[ev] != 2)
    run_rank, run_stop, run_piece = ev[runs_ev], stops[runs_ev], piece_of[runs_ev]
    del runs_ev, stops, piece_of, group, runs

    pieces = len(o)
    p_worker = w[ev[o]]
    t = r["t_ns"]
    p_start = t[sel[ev[o]]]
    # How each closed: at an end; at its segment's idle or sleep, with the others open there in the order
    # they last began or resumed; or not at all (a trace cut short): to its worker's last record, after all.
    c_rank = ev[c]
    by_end = kind[c_rank] == 2
    c_seg = segment[c_rank]
    by_idle = ~by_end & seg_idle[c_seg]
    left_open = ~(by_end | by_idle)
    close_rank = np.where(by_end, c_rank, seg_last[c_seg])
    p_end = t[sel[close_rank]]
    at = np.where(left_open, sel[ev[o]], sel[close_rank])
    then = np.where(by_idle, sel[c_rank], 0)
    del c_rank, c_seg, by_end, by_idle, close_rank, c, ev
    if np.any(left_open):
        last_ns = np.zeros(1 << 16, np.uint64)
        np.maximum.at(last_ns, r["worker"], t)
        p_end[left_open] = np.maximum(p_start[left_open], last_ns[p_worker[left_open]])
        del last_ns
    close_order = np.lexsort((then, at, left_open))
    del at, then, left_open

    # Memory records: credited to the piece of the task running on their worker.
    lines, ns, remote = (np.zeros(pieces, np.int64) for _ in range(3))
    m = np.flatnonzero(mem)
    if len(m) and len(run_rank):
        hit = _last_above(run_stop, np.searchsorted(run_rank, m) - 1, m)
        m = m[hit >= 0]
        credited = run_piece[hit[hit >= 0]]
        del hit
        records = sel[m]
        lines, ns, remote = (_sums(credited, r[f][records], pieces) for f in ("a", "b", "index"))
        del records, credited
    del m, run_rank, run_stop, run_piece, sel, w, kind, segment

    tree = _task_tree(r)
    sub, looped, is_root = _subtrees(*tree, p_serial)
    if np.any(looped):  # a damaged file: named at the first piece to close whose walk up would never end
        _raise_loop(*tree[:2], int(p_serial[close_order[np.argmax(looped[close_order])]]))
    del tree, looped, p_serial
    keep = close_order[~is_root[close_order]]
    if roots:
        keep = np.concatenate([close_order[is_root[close_order]], keep])
    del close_order, is_root
    columns = [p_worker, p_start, p_end, sub, lines, ns, remote]
    del p_worker, p_start, p_end, sub, lines, ns, remote
    for i, c in enumerate(columns):  # one column at a time: the unordered one goes as its copy comes
        columns[i] = None
        columns[i] = c[keep]
        del c
    return Pieces(columns)


def _task_tree(r: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each begun task once, by serial (ascending), with the parent serial and index of its last task_begin in
    the records (as a dict of them keeps the last)."""
    b = np.flatnonzero(r["kind"] == 1)
    s = r["a"][b]
    by = np.argsort(s, kind="stable")
    s = s[by]
    last = np.ones(len(s), bool)
    last[:-1] = s[1:] != s[:-1]
    keep = b[by[last]]
    return s[last], r["b"][keep], r["index"][keep]


def _find(sorted_values: np.ndarray, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where each of x is in sorted_values, and whether it is there."""
    at = np.searchsorted(sorted_values, x)
    found = at < len(sorted_values)
    found[found] = sorted_values[at[found]] == x[found]
    return at, found


def _subtrees(ser, par, idx, serials) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For each of `serials`: the root's child it descends from (the index of its ancestor whose spawner is
    the top: a task spawned by 0, by an unrecorded one or by one that never began here; -1 for the top
    itself), whether its ancestry loops instead (a damaged file), and whether it is a run's root (spawner 0,
    or none begun). By pointer jumping: each task's answer is its ancestor's, a few passes over the tasks
    whatever the depth (a walk per piece and level took minutes on 10^6 tasks; a chain of 20,000 nested
    groups is a few passes: outside-user campaigns)."""
    n = len(ser)
    here = np.arange(n, dtype=np.int32 if n < 2**31 else np.int64)
    top = (par == 0) | (par == UNRECORDED)
    up, found = _find(ser, par)
    up = up.astype(here.dtype)
    found &= ~top
    head = ~top & (~found | top[np.where(found, up, 0)])  # its spawner is the top
    jump = np.where(top | head, here, up)
    del up, found
    for _ in range(n.bit_length() + 1):
        nxt = jump[jump]
        if np.array_equal(nxt, jump):
            break
        jump = nxt
    ends = top | head
    sub_of = np.where(top, -1, idx[jump].astype(np.int64))
    loops = ~ends[jump]
    at, found = _find(ser, serials)
    at = np.where(found, at, 0)
    sub = np.where(found, sub_of[at] if n else -1, -1)
    looped = found & (loops[at] if n else False)
    is_root = ~found | (par[at] == 0 if n else True)
    return sub, looped, is_root


def _raise_loop(ser: np.ndarray, par: np.ndarray, serial: int) -> None:
    """The walk up from `serial`, whose ancestry loops: ancestry_loop of the first task it meets again."""
    on_chain = {serial}
    cur = serial
    while True:
        i = int(np.searchsorted(ser, cur))
        up = int(par[i]) if i < len(ser) and int(ser[i]) == cur else 0
        if up in (0, UNRECORDED):
            raise AssertionError(f"task serial {serial}: its ancestry ends, it does not loop")
        if up in on_chain:
            raise ancestry_loop(up)
        on_chain.add(up)
        cur = up


def _last_above(values: np.ndarray, upto: np.ndarray, above: np.ndarray) -> np.ndarray:
    """For each query q, the largest i <= upto[q] with values[i] > above[q] (values and above >= 0), or -1:
    a descent of a tree of maxima (2 values a value), all queries a level at a time."""
    out = np.full(len(upto), -1, np.int64)
    n = len(values)
    if not n or not len(upto):
        return out
    size = 1 << (n - 1).bit_length()
    tree = np.full(2 * size, -1, values.dtype)
    tree[size:size + n] = values
    half = size // 2
    while half:
        np.maximum(tree[2 * half:4 * half:2], tree[2 * half + 1:4 * half:2], out=tree[half:2 * half])
        half //= 2
    q = np.flatnonzero(upto >= 0)
    node = upto[q] + size
    thr = above[q]
    hit = tree[node] > thr
    out[q[hit]] = upto[q[hit]]
    q, node, thr = q[~hit], node[~hit], thr[~hit]
    found_q, found_node, found_thr = [q[:0]], [node[:0]], [thr[:0]]
    while len(q):
        keep = node > 1
        q, node, thr = q[keep], node[keep], thr[keep]
        left = (node & 1).astype(bool)  # a right child: its left sibling holds places before it
        left[left] = tree[node[left] - 1] > thr[left]
        found_q.append(q[left])
        found_node.append(node[left] - 1)
        found_thr.append(thr[left])
        q, node, thr = q[~left], node[~left] >> 1, thr[~left]
    q, node, thr = np.concatenate(found_q), np.concatenate(found_node), np.concatenate(found_thr)
    while True:
        inner = np.flatnonzero(node < size)
        if not len(inner):
            break
        right = 2 * node[inner] + 1
        go_right = tree[right] > thr[inner]
        node[inner] = np.where(go_right, right, right - 1)
    out[q] = node - size
    return out


def _sums(piece: np.ndarray, values: np.ndarray, pieces: int) -> np.ndarray:
    """Each piece's sum of `values` (record by record), exactly: Python ints where it could pass 2^53."""
    if not len(values) or int(values.max()) * len(values) < 2**53:
        return np.bincount(piece, weights=values.astype(np.float64), minlength=pieces).astype(np.int64)
    out = np.zeros(pieces, dtype=object)
    np.add.at(out, piece, values.astype(object))
    return out


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


# tab20 without its two greys (14, 15), which read as a sleeping worker (an outside-user campaign), nor its
# olive and khaki (16, 17), which read as the gold of looking for work (a review).
SUBTREE_COLOURS = [i for i in range(20) if i not in (14, 15, 16, 17)]


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
            look = (grad(norm(ns / lines)) if colour == "latency" else cmap(SUBTREE_COLOURS[sub % len(SUBTREE_COLOURS)]) if sub >= 0 else "black",
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
