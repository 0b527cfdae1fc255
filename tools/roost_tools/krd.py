"""Kernel Reuse Distance (seed 001 §3): stack distances in bytes over the kernel accesses of the workers that
share a last-level cache, merged by time, and their histogram close (<= L2), near (<= LLC), far, cold.

An element is a kernel's data structure, identified by its base address, with its size in bytes. The
distance of an access is the total size of the distinct elements accessed since the previous access to the
same element; a first access is cold. Computed with a Fenwick tree over access positions: each element is
counted at its latest position, so one access costs O(log n).

Each cache's distances come from its own accesses only, as the seed defines them: an element another cache
wrote since this cache last touched it still counts as a reuse, though the hardware lost the copy to that
write (a coherence miss). `written_elsewhere` counts those reuses, roost's addition beside the seed's bins.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .trace import KIND, Trace

COLD = -1


class _Fenwick:
    def __init__(self, n: int):
        self.t = np.zeros(n + 1, dtype=np.int64)

    def add(self, i: int, v: int) -> None:
        i += 1
        while i < len(self.t):
            self.t[i] += v
            i += i & -i

    def prefix(self, i: int) -> int:  # sum of [0, i)
        s = 0
        while i > 0:
            s += int(self.t[i])
            i -= i & -i
        return s


def stack_distances(keys, sizes) -> np.ndarray:
    """Distance in bytes of each access (COLD for a first access)."""
    n = len(keys)
    fw = _Fenwick(n)
    last: dict = {}
    size_at: dict = {}
    out = np.empty(n, dtype=np.int64)
    for i, (k, s) in enumerate(zip(keys, sizes)):
        if k in last:
            j = last[k]
            out[i] = fw.prefix(i) - fw.prefix(j + 1)
            fw.add(j, -size_at[k])
        else:
            out[i] = COLD
        fw.add(i, int(s))
        last[k] = i
        size_at[k] = int(s)
    return out


def stack_distances_brute(keys, sizes) -> np.ndarray:
    """The definition, O(n^2): the reference the tests compare against."""
    out = []
    for i, k in enumerate(keys):
        prev = max((j for j in range(i) if keys[j] == k), default=None)
        if prev is None:
            out.append(COLD)
            continue
        seen = {}
        for j in range(prev + 1, i):
            seen[keys[j]] = sizes[j]
        out.append(sum(seen.values()))
    return np.array(out, dtype=np.int64)


@dataclass
class Histogram:
    close: int
    near: int
    far: int
    cold: int

    @property
    def total(self) -> int:
        return self.close + self.near + self.far + self.cold

    def ratios(self) -> dict:
        t = max(1, self.total)
        return {"close": self.close / t, "near": self.near / t, "far": self.far / t, "cold": self.cold / t}

    def __add__(self, o: "Histogram") -> "Histogram":
        return Histogram(self.close + o.close, self.near + o.near, self.far + o.far, self.cold + o.cold)


def histogram(distances: np.ndarray, l2: int, llc: int) -> Histogram:
    """A bound of 0 is a cache the topology does not describe: its bin stays empty (a reuse at distance 0, the
    same element twice in a row, counted as close in a trace without cache sizes: an outside-user campaign)."""
    d = np.asarray(distances)
    cold = int(np.sum(d == COLD))
    warm = d[d != COLD]
    close = int(np.sum(warm <= l2)) if l2 > 0 else 0
    near = int(np.sum((warm > l2) & (warm <= llc))) if llc > 0 else 0
    return Histogram(close, near, int(len(warm) - close - near), cold)


def accesses(trace: Trace) -> np.ndarray:
    """Kernel accesses as (time, worker, base, bytes, write), in time order."""
    r = trace.of_kind("touch", "touch_rows_read", "touch_rows_write", "touch_rows_read_write")
    flat = r["kind"] == 4
    size = np.where(flat, r["b"], (r["b"] >> np.uint64(32)) * (r["b"] & np.uint64(0xFFFFFFFF)))
    # roost::touch keeps its mode in `index` (0 read, 1 write, 2 read-write); touch_rows in the kind.
    write = np.where(flat, r["index"] != 0, r["kind"] != 9)
    # An empty region names no byte: not an access (traces of roost before it stopped recording them counted
    # touch(nullptr, 0) of an empty vector as a reuse; an outside-user campaign).
    keep = size > 0
    order = np.argsort(r["t_ns"][keep], kind="stable")
    cols = [r["t_ns"][keep], r["worker"][keep], r["a"][keep], size[keep], write[keep]]
    return np.rec.fromarrays([c[order] for c in cols], names="t_ns,worker,base,bytes,write")


def bounds(trace: Trace) -> tuple[int, int]:
    """The close and near bounds in bytes: the L2 and LLC sizes, either one standing in for the other where
    the topology declares only one (a virtual one without an L2)."""
    l2 = trace.l2_bytes or trace.llc_bytes
    return l2, trace.llc_bytes or l2


def _domains(trace: Trace, acc: np.ndarray) -> np.ndarray:
    domain_of = np.array(trace.llc_domain or [0] * max(1, trace.workers))
    return domain_of[acc["worker"]] if len(acc) else np.array([], dtype=int)


def written_elsewhere(trace: Trace) -> dict:
    """Per cache domain (and 'all'): (accesses, reuses of an element that another cache wrote since this
    cache last accessed it). The second are reuses in KRD's bins that the hardware serves as misses."""
    acc = accesses(trace)
    doms = _domains(trace, acc).tolist()
    last_access: dict = {}  # (domain, element) -> position of the domain's latest access
    last_write: dict = {}   # element -> {domain: position of its latest write there}
    counts: dict = {}
    for i, (d, base, w) in enumerate(zip(doms, acc["base"].tolist(), acc["write"].tolist())):
        c = counts.setdefault(d, [0, 0])
        c[0] += 1
        p = last_access.get((d, base))
        if p is not None and any(pos > p for dom, pos in last_write.get(base, {}).items() if dom != d):
            c[1] += 1
        last_access[(d, base)] = i
        if w:
            last_write.setdefault(base, {})[d] = i
    out = {f"domain {d}": tuple(counts[d]) for d in sorted(counts)}
    out["all"] = (sum(c[0] for c in counts.values()), sum(c[1] for c in counts.values()))
    return out


def krd(trace: Trace) -> dict:
    """Histogram per last-level cache domain, and their sum under key 'all'."""
    acc = accesses(trace)
    l2, llc = bounds(trace)
    out = {}
    doms = _domains(trace, acc)
    total = Histogram(0, 0, 0, 0)
    for d in sorted(set(doms.tolist())):
        sel = acc[doms == d]
        h = histogram(stack_distances(sel["base"].tolist(), sel["bytes"].tolist()), l2, llc)
        out[f"domain {d}"] = h
        total = total + h
    out["all"] = total
    return out


def plot(hists: dict, out, title: str = "Kernel Reuse Distance"):
    """Bar chart of the close/near/far/cold ratios, one group of bars per cache domain."""
    from pathlib import Path

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    bins = ["close", "near", "far", "cold"]
    names = list(hists)
    fig, ax = plt.subplots(figsize=(max(4, 1.6 * len(names) + 1), 3))
    width = 0.8 / len(bins)
    x = np.arange(len(names))
    for i, b in enumerate(bins):
        ax.bar(x + i * width - 0.4 + width / 2, [hists[n].ratios()[b] for n in names], width, label=b)
    ax.set_xticks(x)
    ax.set_xticklabels(names, fontsize=8)
    ax.set_ylabel("share of kernel accesses")
    ax.set_ylim(0, 1)
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    out = Path(out)
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out
