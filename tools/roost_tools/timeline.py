"""Per-worker timeline of a trace (in the spirit of seed 002 Fig. 8): tasks as bars on their worker, coloured
by the subtree under the root they belong to, sleep in grey."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from .trace import Trace


def task_spans(trace: Trace):
    """(worker, start_ns, end_ns, subtree) for every task that began and ended on the same worker."""
    r = trace.records
    begins = r[r["kind"] == 1]
    parent = dict(zip(begins["a"].tolist(), begins["b"].tolist()))
    index = dict(zip(begins["a"].tolist(), begins["index"].tolist()))

    def subtree(serial: int) -> int:  # the root's child this task descends from
        chain = [serial]
        while parent.get(chain[-1], 0):
            chain.append(parent[chain[-1]])
        return index[chain[-2]] if len(chain) >= 2 else -1

    start = {}
    spans = []
    for rec in r[np.isin(r["kind"], [1, 2])]:
        key = (int(rec["worker"]), int(rec["a"]))
        if rec["kind"] == 1:
            start[key] = int(rec["t_ns"])
        elif key in start:
            spans.append((key[0], start.pop(key), int(rec["t_ns"]), subtree(key[1])))
    return spans


def plot(trace: Trace, out: str | Path, title: str = "") -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    spans = task_spans(trace)
    fig, ax = plt.subplots(figsize=(10, 0.5 + 0.45 * max(1, trace.workers)))
    cmap = plt.get_cmap("tab20")
    for w, s, e, sub in spans:
        ax.barh(w, (e - s) / 1e6, left=s / 1e6, height=0.8, color=cmap(sub % 20) if sub >= 0 else "black", linewidth=0)
    r = trace.records
    for w in range(trace.workers):
        # Looking for work (idle, thin yellow) and asleep (grey).
        for begin, end, colour in ((14, 15, "gold"), (5, 6, "lightgrey")):
            mine = r[(r["worker"] == w) & np.isin(r["kind"], [begin, end])]
            t0 = None
            for rec in mine:
                if rec["kind"] == begin:
                    t0 = int(rec["t_ns"])
                elif t0 is not None:
                    ax.barh(w, (int(rec["t_ns"]) - t0) / 1e6, left=t0 / 1e6, height=0.3, color=colour, linewidth=0)
                    t0 = None
    ax.set_yticks(range(trace.workers))
    ax.set_yticklabels([f"worker {w}" for w in range(trace.workers)], fontsize=8)
    ax.set_xlabel("time (ms)")
    ax.set_title(title or "tasks by worker, coloured by subtree of the root; looking for work in yellow, asleep in grey",
                 fontsize=9)
    fig.tight_layout()
    out = Path(out)
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out
