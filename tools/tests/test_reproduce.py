"""roost-reproduce: a row that cannot run says failed and why, the others still run, the exit status says so;
a real row (seed 000 Fig. 8, a sub-second simulation) writes its figure."""
import os
import re
from pathlib import Path

import pytest

from roost_tools import reproduce, trace


def test_rows_that_cannot_run_fail_with_the_reason_and_the_rest_run(tmp_path):
    out = tmp_path / "r.md"
    # A roost-bench that cannot run (not an executable): the row fails, the next one runs.
    (tmp_path / "broken" / "bench").mkdir(parents=True)
    (tmp_path / "broken" / "bench" / "roost-bench").write_text("not a program")
    rc = reproduce.main(["--build", str(tmp_path / "broken"), "--out", str(out), "--work", str(tmp_path / "w"),
                         "--only", "000-fig8,003-baselines"])
    assert rc == 1
    text = out.read_text()
    assert "| failed |" in text
    assert "PermissionError" in text and "broken/bench/roost-bench" in text
    assert "| [003-baselines](#003-baselines) |" in text and "| missing |" in text  # the row after the failure ran
    assert "WS(ml)" in text
    # A new --out holds only these rows: it said "`make reproduce` took 0.0 minutes" as if every row had run.
    assert "`make reproduce` took" not in text and "Only the rows below ran" in text


def test_a_build_without_roost_bench_is_bad_input(tmp_path, capsys):
    # It made each row that needs the bench fail, exit status 1, a report of failures (an outside-user campaign).
    out = tmp_path / "r.md"
    assert reproduce.main(["--build", str(tmp_path / "nowhere"), "--out", str(out), "--work", str(tmp_path / "w"),
                           "--only", "000-fig8,003-baselines"]) == 2
    assert f"--build {tmp_path / 'nowhere'}: {tmp_path / 'nowhere' / 'bench' / 'roost-bench'} does not exist" in \
        capsys.readouterr().err
    assert not out.exists()
    # Rows that need no build run without one.
    assert reproduce.main(["--build", str(tmp_path / "nowhere"), "--out", str(out), "--work", str(tmp_path / "w"),
                           "--only", "003-baselines"]) == 0


def test_an_unknown_row_is_refused_naming_the_valid_ones(tmp_path, capsys):
    assert reproduce.main(["--out", str(tmp_path / "r.md"), "--only", "000-nope"]) == 2
    err = capsys.readouterr().err
    assert "--only 000-nope: no such row" in err and "000-heat" in err
    assert not (tmp_path / "r.md").exists()


def test_outputs_and_row_lists_are_checked_before_any_row_runs(tmp_path, capsys):
    """An --out that is a directory failed only after every row had run (a traceback); a --work that is a
    file failed in mkdir; --only '' ran every row and wrote over the whole --out."""
    assert reproduce.main(["--out", str(tmp_path), "--work", str(tmp_path / "w"), "--only", "003-baselines"]) == 2
    assert "--out" in capsys.readouterr().err
    (tmp_path / "file").write_text("x")
    assert reproduce.main(["--out", str(tmp_path / "r.md"), "--work", str(tmp_path / "file"), "--only", "003-baselines"]) == 2
    assert "--work" in capsys.readouterr().err
    for only in ("", ","):
        assert reproduce.main(["--out", str(tmp_path / "r.md"), "--work", str(tmp_path / "w"), "--only", only]) == 2
        assert "names no row" in capsys.readouterr().err
    # An empty item beside a row (a trailing comma) ran that row without a word; roost-bench refuses one.
    assert reproduce.main(["--out", str(tmp_path / "r.md"), "--work", str(tmp_path / "w"), "--only", "003-baselines,"]) == 2
    assert "an empty item" in capsys.readouterr().err
    # An option given twice ran with the last one.
    with pytest.raises(SystemExit) as exited:
        reproduce.main(["--out", str(tmp_path / "r.md"), "--only", "003-baselines", "--only", "000-fig8"])
    assert exited.value.code == 2 and "--only is given twice" in capsys.readouterr().err
    assert reproduce.main(["--out", str(tmp_path / "r.md"), "--work", str(tmp_path / "w"),
                           "--only", "003-baselines,003-baselines"]) == 2
    assert "003-baselines more than once" in capsys.readouterr().err
    assert not (tmp_path / "r.md").exists()


@pytest.mark.skipif("ROOST_BENCH" not in os.environ, reason="needs the built roost-bench (ctest sets ROOST_BENCH)")
def test_a_real_row_writes_its_figure_and_command(tmp_path):
    build = Path(os.environ["ROOST_BENCH"]).parent.parent
    out = tmp_path / "r.md"
    assert reproduce.main(["--build", str(build), "--out", str(out), "--work", str(tmp_path / "w"),
                           "--only", "000-fig8"]) == 0
    text = out.read_text()
    assert "largest error 0.00% over the top 4 levels" in text
    assert "| 0 | 1..1023 | 8,372,224 | 8,372,224 | +0.00% |" in text
    assert "ROOST_CATS_PROFILE=" in text and "--platform sim" in text


def test_a_run_of_some_rows_keeps_the_other_rows_of_the_report(tmp_path):
    ids = [r.id for r in reproduce.ROWS]
    first, second, third = ids[0], ids[1], ids[2]

    def report(rows: dict[str, str], took: str) -> list[str]:
        head = ["# Reproductions", "", f"Regenerated by `make reproduce` (method of the {took} run).", "",
                f"`make reproduce` took {took} minutes on this machine.", "",
                "| row | seed | claim | paper | roost | machine | verdict |", "|---|---|---|---|---|---|---|"]
        table = [f"| [{i}](#{i}) | x | claim | paper | {v} | m | ok |" for i, v in rows.items()]
        sections = [x for i, v in rows.items() for x in (f"### {i}", "", f"roost: {v}.", "")]
        return head + table + ["", "## Rows", ""] + sections + ["## Deviations from the seeds", "", "text"]

    old = report({first: "old 1", second: "old 2"}, "7.0")
    new = report({second: "new 2", third: "new 3"}, "0.5")
    merged = "\n".join(reproduce.merge(old, new, [second, third], 30))
    assert "`make reproduce` took 7.0 minutes" in merged and "took 0.5" not in merged
    # The paragraph on how rows are made is the newer run's; the whole run's time stays.
    assert "(method of the 0.5 run)" in merged and "(method of the 7.0 run)" not in merged
    assert f"oldest first: {second}, {third} (0.5 minutes). The others" in merged
    assert "old 1" in merged and "old 2" not in merged
    assert merged.count("new 2") == 2 and merged.count("new 3") == 2  # table row and section
    assert merged.index(f"| [{first}]") < merged.index(f"| [{second}]") < merged.index(f"| [{third}]")
    assert merged.index(f"### {first}") < merged.index(f"### {second}") < merged.index(f"### {third}")
    assert merged.endswith("text")
    # Merging again replaces the note, not adds one.
    again = "\n".join(reproduce.merge(merged.splitlines(), new, [third], 30))
    assert again.count("Rows run alone since") == 1
    # ... and keeps the earlier runs, oldest first; a row run again moves to the newest.
    assert f"oldest first: {second} (0.5 minutes); {third} (0.5 minutes). The others" in again
    assert "\n\n\n" not in again  # no blank line added per merge


def test_the_earlier_form_of_the_note_is_read():
    runs = reproduce._alone_runs("Rows last regenerated alone: 003-ch3 (`make reproduce ROWS=...`, 0.9 minutes); "
                                 "the others are from the run above.")
    assert runs == [(["003-ch3"], "0.9")]


def test_a_run_at_several_seeds_gives_each_variant_its_median_seed_with_that_seeds_misses():
    def line(v, seed, t, l3):
        return {"variant": v, "median": t, "l3_misses": l3, "sim_seed": seed, "check": True}

    lines = [line("ws", 1, 3.0, 30), line("ws", 2, 1.0, 10), line("ws", 3, 2.0, 20),
             line("adws", 1, 0.5, 5), line("adws", 2, 0.7, 7), line("adws", 3, 0.6, 6)]
    r = reproduce.by_variant(lines)
    assert (r["ws"]["t"], r["ws"]["l3"]) == (2.0, 20)
    assert (r["adws"]["t"], r["adws"]["l3"]) == (0.6, 6)
    # Rounds of one seed: their median first, then the median over seeds.
    rounds = [line("ws", 1, 5.0, 50), line("ws", 1, 1.0, 11), line("ws", 1, 2.0, 21), line("ws", 2, 4.0, 40),
              line("ws", 3, 9.0, 90)]
    assert reproduce.by_variant(rounds)["ws"]["l3"] == 40  # seeds' middle rounds 2.0, 4.0, 9.0: seed 2's
    # Lines without a seed (native runs): the median over rounds, as before.
    assert reproduce.by_variant([line("ws", 0, 2.0, 1), line("ws", 0, 1.0, 2), line("ws", 0, 3.0, 3)])["ws"]["t"] == 2.0
    note = reproduce.seeds_note([("heat 64x32x4", reproduce._per_seed_times(lines))])
    assert note[0] == "" and "ROOST_SIM_SEED (1, 2, 3)" in note[1]  # apart from a table the row may end with
    assert "| heat 64x32x4 | ws | 3000.000 | 1000.000 | 2000.000 | 3.00x |" in note
    assert reproduce.seeds_note([]) == []


def test_bad_seed_lists_are_refused(tmp_path, capsys):
    for bad in ("", "1,,2", "x", "-1", "1,1", str(2**64), "1,2"):  # an even count has no median seed
        assert reproduce.main(["--out", str(tmp_path / "r.md"), "--work", str(tmp_path / "w"), "--only", "003-baselines",
                               "--sim-seeds", bad]) == 2
        assert f"--sim-seeds '{bad}'" in capsys.readouterr().err
    assert not (tmp_path / "r.md").exists()


@pytest.mark.skipif("ROOST_BENCH" not in os.environ, reason="needs the built roost-bench (ctest sets ROOST_BENCH)")
def test_a_simulated_measurement_runs_once_per_seed_and_a_traced_one_keeps_the_median_seeds_trace(tmp_path):
    build = Path(os.environ["ROOST_BENCH"]).parent.parent
    ctx = reproduce.Ctx(build, tmp_path, "python3", sim_seeds=(1, 2, 3))
    topo = "pack:2 l3:1(size=1MiB) core:1 pu:1"
    lines = ctx.bench("heat", "64x32x4", "ws,adws", 2, topology=topo, warmup=0, env={"ROOST_ADWS_STEAL": "true"})
    assert sorted((m["variant"], m["sim_seed"]) for m in lines) == [(v, s) for v in ("adws", "ws") for s in (1, 2, 3)]
    assert ctx.commands[-1].startswith("for S in 1 2 3; do ROOST_ADWS_STEAL=true ROOST_SIM_SEED=$S ")
    assert ctx.commands[-1].endswith("; done")
    (label, per_v), = ctx.seed_spreads
    # The settings that tell it from the row's other measurements are in its label.
    assert label == "heat 64x32x4 ROOST_ADWS_STEAL=true --warmup 0" and set(per_v) == {"ws", "adws"}
    assert set(per_v["ws"]) == {1, 2, 3}
    # A traced run writes a trace per seed; the median seed's is left where the row reads it, the others go.
    path = tmp_path / "t.trace"
    traced = ctx.bench("heat", "64x32x4", "ws", 2, topology=topo, env={"ROOST_TRACE": str(path)})
    assert sorted(m["sim_seed"] for m in traced) == [1, 2, 3]
    assert f"; do ROOST_TRACE={tmp_path}/t.s$S.trace ROOST_SIM_SEED=$S " in ctx.commands[-2]
    chosen = int(re.search(r"^# then each file of seed (\d) \(the median time\)", ctx.commands[-1]).group(1))
    times = {m["sim_seed"]: m["median"] for m in traced}
    assert times[chosen] == sorted(times.values())[1] == reproduce.by_variant(traced)["ws"]["t"]
    assert path.exists() and Path(str(path) + ".json").exists()
    assert sorted(p.name for p in tmp_path.glob("t*")) == ["t.trace", "t.trace.json"]
    assert trace.read(path).workers == 2
    assert len(ctx.seed_spreads) == 2
    with pytest.raises(ValueError, match="measures one variant"):
        ctx.bench("heat", "64x32x4", "ws,adws", 2, topology=topo, env={"ROOST_TRACE": str(path)})
    native = ctx.bench("heat", "64x32x4", "ws", 1)
    assert len(native) == 1 and "ROOST_SIM_SEED" not in ctx.commands[-1]


def test_a_traced_run_that_fails_at_one_seed_leaves_no_seeds_file(tmp_path):
    # A stand-in roost-bench: writes its trace (and timeline), then fails at seed 2. The trace seed 1 wrote
    # must not stay, where a later run could take it for its own.
    bench = tmp_path / "build" / "bench" / "roost-bench"
    bench.parent.mkdir(parents=True)
    bench.write_text("#!/bin/sh\n"
                     ": > \"$ROOST_TRACE\"; : > \"$ROOST_TRACE.json\"\n"
                     "[ \"$ROOST_SIM_SEED\" = 2 ] && { echo failed >&2; exit 1; }\n"
                     "while [ $# -gt 0 ]; do [ \"$1\" = --json ] && out=$2; shift; done\n"
                     "echo '{\"bench\":\"heat\",\"variant\":\"ws\",\"median\":0.001,\"check\":true}' > \"$out\"\n")
    bench.chmod(0o755)
    work = tmp_path / "work"
    work.mkdir()
    ctx = reproduce.Ctx(tmp_path / "build", work, "python3", sim_seeds=(1, 2, 3))
    with pytest.raises(reproduce.RowFailed, match="ROOST_SIM_SEED=2"):
        ctx.bench("heat", "64x32x4", "ws", 2, topology="pack:2 core:1 pu:1", env={"ROOST_TRACE": str(work / "t.trace")})
    assert sorted(p.name for p in work.iterdir()) == []


PREEMPT_TIMERS_OUT = """\
The floor under preemption's overhead: 2 busy threads (one per CPU), a 1 ms interval, an empty handler, median of 5 interleaved rounds
  no timer                   617.3 ms   1.0000x        0 ticks/s per thread
  per-worker aligned         637.3 ms   1.0324x      980 ticks/s per thread
  per-worker CPU time        618.3 ms   1.0016x      248 ticks/s per thread
What one interruption costs: one busy thread pinned to one CPU counts the gaps over 1 us between its reads of the time-stamp counter, 1 s, median of 5 interleaved rounds
  no timer           1460 gaps/s    1.54% of the time lost
  a 1 ms timer       2642 gaps/s    4.66% of the time lost   31.2 us a tick
  a 1 ms monitor     2098 gaps/s    4.63% of the time lost   30.9 us a tick
  so a design that interrupts a busy CPU once a ms costs it about 3.1% here; one wake a ms for the whole process, spread over its 2 busy CPUs, about 1.5% of them
"""


def test_the_preemption_rows_floor_is_the_lesser_tick_and_its_shares():
    rates, floor = reproduce.read_preempt_timers(PREEMPT_TIMERS_OUT)
    assert rates == {"per-worker aligned": 980, "per-worker CPU time": 248}
    assert floor == (30.9, 3.1, 2, 1.5)
    # Without the second table (a host without a time-stamp counter) the row goes on without a floor.
    cut = PREEMPT_TIMERS_OUT[:PREEMPT_TIMERS_OUT.index("What one")]
    assert reproduce.read_preempt_timers(cut) == (rates, None)
    with pytest.raises(reproduce.RowFailed, match="no tick rate for \\['per-worker CPU time'\\]"):
        reproduce.read_preempt_timers(cut.replace("per-worker CPU time", "per-worker other"))


@pytest.mark.skipif("ROOST_BENCH" not in os.environ, reason="needs the built roost-bench (ctest sets ROOST_BENCH)")
@pytest.mark.skipif(os.uname().machine != "x86_64", reason="the floor reads the x86-64 time-stamp counter")
def test_roost_bench_prints_the_floor_the_row_reads():
    import subprocess
    out = subprocess.run([os.environ["ROOST_BENCH"], "--preempt-timers", "1"], capture_output=True, text=True,
                         check=True).stdout
    rates, floor = reproduce.read_preempt_timers(out)
    assert set(rates) == {"per-worker aligned", "per-worker CPU time"}
    # On a loaded machine a round with no timer can lose more time than one with a tick a ms: the tool then says
    # the cost lies below the noise and gives no floor (make test failed so while other work ran beside it).
    assert (floor is not None and floor[2] >= 1) or "less than this machine's noise" in out, out
