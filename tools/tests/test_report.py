"""roost-report on synthetic results with known ratios, and on bad input."""
import json
import re
import os
import subprocess
import tempfile
from pathlib import Path

import pytest

from roost_tools import report
from roost_tools.results import LeftOut, Measurement, ResultsError, load, load_all


def write(path: Path, records):
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n")


def rec(variant, workers, median, check=True, note=None, c2c=None):
    r = {"bench": "heat", "variant": variant, "size": "64x32x4", "workers": workers,
         "seconds": [median, median * 1.1, median * 0.9] if median else [], "median": median, "check": check}
    if note:
        r["note"] = note
    if c2c is not None:
        r["c2c_ns"] = c2c
    return r


def test_ratios_to_serial_and_ws(tmp_path):
    p = tmp_path / "r.jsonl"
    write(p, [rec("serial", 1, 0.100), rec("ws", 2, 0.050), rec("ws-help", 2, 0.040), rec("cats", 1, 0, note="scheduler not implemented yet")])
    rows = {(r["variant"], r["workers"]): r for r in report.ratios(load(p))}
    assert rows[("ws", 2)]["vs_serial"] == pytest.approx(0.5)
    assert rows[("ws-help", 2)]["vs_ws"] == pytest.approx(0.8)
    assert rows[("cats", 1)]["median_ms"] is None


def test_sizes_and_appended_runs_get_tables_of_their_own(tmp_path):
    # roost-bench appends to its --json file: two sizes of heat2d, the second size run twice. Ratios must
    # stay within one size and one run (once, the report took the first size's serial for all of them).
    def at(size, variant, workers, median):
        r = rec(variant, workers, median)
        r["bench"], r["size"] = "heat2d", size
        return r
    p = tmp_path / "r.jsonl"
    write(p, [at("512x200", "serial", 1, 0.100), at("512x200", "ws", 2, 0.060),
              at("1024x100", "serial", 1, 0.400), at("1024x100", "ws", 2, 0.200),
              at("1024x100", "serial", 1, 0.800), at("1024x100", "ws", 2, 0.600)])
    groups = report._group(load(p))  # measurements alone group the same way
    assert list(groups) == ["heat2d 512x200", "heat2d 1024x100", "heat2d 1024x100 (run 2)"]
    ws = [next(r for r in report.bench_rows(g)[0] if r["variant"] == "ws") for g in groups.values()]
    assert [round(r["vs_serial"], 3) for r in ws] == [0.6, 0.5, 0.75]
    out = tmp_path / "out"
    assert report.main([str(p), "--out", str(out), "--quiet"]) == 0
    assert {f.name for f in out.glob("*.png")} == {"heat2d-512x200.png", "heat2d-1024x100.png",
                                                  "heat2d-1024x100-run2.png"}


def test_runs_with_wrong_hints_are_named_apart(tmp_path):
    """roost-bench --hint-error is recorded with each measurement: two runs with different errors looked like
    two runs of the same thing."""
    def at(median, hints):
        r = rec("adws", 2, median)
        if hints:
            r["hint_error"] = hints
        return r
    p = tmp_path / "r.jsonl"
    write(p, [at(0.010, ""), at(0.015, "det:1")])
    assert list(report._group(load(p))) == ["heat", "heat (hint error det:1)"]
    out = tmp_path / "out"
    assert report.main([str(p), "--out", str(out), "--quiet"]) == 0
    assert {f.name for f in out.glob("*.png")} == {"heat.png", "heat-hint-error-det-1.png"}


def test_report_writes_markdown_and_chart(tmp_path):
    p = tmp_path / "r.jsonl"
    write(p, [rec("serial", 1, 0.100), rec("ws", 1, 0.110), rec("ws", 2, 0.060), rec("tbb", 2, 0.070)])
    out = tmp_path / "out"
    assert report.main([str(p), "--out", str(out), "--quiet"]) == 0
    md = (out / "report.md").read_text()
    assert "| ws | 2 | 60.00 |" in md
    assert "0.60x" in md  # ws at 2 workers vs serial
    assert "1.17x" in md  # tbb vs ws at 2 workers
    assert (out / "heat.png").stat().st_size > 1000


def test_timings_taken_far_apart_are_marked(tmp_path):
    p = tmp_path / "r.jsonl"
    write(p, [rec("serial", 1, 0.1, c2c=55), rec("ws", 2, 0.05, c2c=60), rec("adws", 2, 0.09, c2c=310),
              rec("tbb", 2, 0.07)])
    rows = {r["variant"]: r for r in report.ratios(load(p))}
    assert not rows["ws"]["far"] and rows["adws"]["far"] and not rows["tbb"]["far"]
    out = tmp_path / "o"
    assert report.main([str(p), "--out", str(out), "--quiet"]) == 0
    md = (out / "report.md").read_text()
    assert "| 310 **far** |" in md and "| 60 |" in md


def test_the_drivers_opening_round_trip_counts_as_the_runs_best(tmp_path):
    # roost-bench measured 89 ns before its first measurement and flagged every one above 178 ns; none carries
    # that 89 as c2c_ns, only as c2c_best_ns, and the report took 201 ns as the best and flagged less (an
    # outside-user campaign).
    p = tmp_path / "r.jsonl"
    lines = [rec("serial", 1, 0.1, c2c=406), rec("ws", 1, 0.05, c2c=401), rec("adws", 1, 0.09, c2c=201)]
    for r in lines:
        r["c2c_best_ns"] = 89
    write(p, lines)
    rows = {r["variant"]: r for r in report.ratios(load(p))}
    assert rows["serial"]["far"] and rows["ws"]["far"] and rows["adws"]["far"]


def test_far_is_judged_against_each_invocations_own_best(tmp_path):
    # Two invocations of roost-bench in one file, from two hosts: the second's lines (250, 260 ns around a best
    # of 200) were marked far against the first's 50 ns (a review). Each is judged against its own best.
    p = tmp_path / "r.jsonl"
    a = [rec("serial", 1, 0.1, c2c=50), rec("ws", 1, 0.05, c2c=55)]
    b = [rec("serial", 1, 0.1, c2c=250), rec("ws", 1, 0.05, c2c=260)]
    for r in a:
        r["run"] = "host-a"
    for r in b:
        r["run"], r["c2c_best_ns"] = "host-b", 200
    write(p, a + b)
    out = tmp_path / "o"
    assert report.main([str(p), "--out", str(out), "--quiet"]) == 0
    assert "0 **far**" not in (out / "report.md").read_text()


def test_failed_check_makes_exit_status_1(tmp_path):
    p = tmp_path / "r.jsonl"
    write(p, [rec("serial", 1, 0.1), rec("ws", 2, 0.05, check=False)])
    assert report.main([str(p), "--out", str(tmp_path / "o"), "--quiet"]) == 1
    assert "Failed checks" in (tmp_path / "o" / "report.md").read_text()


def test_corrupt_line_names_file_and_line(tmp_path):
    p = tmp_path / "r.jsonl"
    p.write_text(json.dumps(rec("serial", 1, 0.1)) + "\n{not json\n")
    with pytest.raises(ResultsError, match=r"r.jsonl:2: not a JSON line"):
        load(p)
    p.write_text('{"bench": "heat"}\n')
    with pytest.raises(ResultsError, match="missing field"):
        load(p)
    assert report.main([str(tmp_path / "nope.jsonl"), "--quiet"]) == 2


@pytest.mark.parametrize("field,value,valid", [
    ("median", float("nan"), "a finite number"), ("median", -0.5, "a finite number"),
    ("median", float("inf"), "a finite number"), ("median", "0.1", "a finite number"),
    ("seconds", [0.1, float("nan")], "a finite number"), ("seconds", 0.1, "a list of times"),
    ("workers", 0, "a whole number, 1 or more"), ("workers", 2.5, "a whole number"),
    ("check", "false", "true or false"), ("c2c_ns", -3, "a finite number"),
    ("l3_misses", -1, "a whole number, 0 or more")])
def test_a_field_out_of_range_is_refused_naming_it(tmp_path, field, value, valid):
    # json reads NaN, Infinity and negatives: a median of NaN made a table of "nan" and ratios of nothing, and
    # bool("false") passed a failed check as ok.
    p = tmp_path / "r.jsonl"
    bad = rec("ws", 2, 0.05)
    bad[field] = value
    write(p, [rec("serial", 1, 0.1), bad])
    with pytest.raises(ResultsError, match=rf"r.jsonl:2: field '{field}' is .*{valid}"):
        load(p)


def test_names_and_times_that_roost_bench_never_writes_are_refused(tmp_path):
    # A number for a name was taken, and a median beside no times made a row of dashes (an outside-user
    # campaign).
    p = tmp_path / "r.jsonl"
    for field, value, valid in [("bench", 5, "a non-empty string"), ("variant", "", "a non-empty string"),
                                ("seconds", [], "median 0 for one it did not")]:
        bad = rec("ws", 2, 0.05)
        bad[field] = value
        write(p, [rec("serial", 1, 0.1), bad])
        with pytest.raises(ResultsError, match=rf"r.jsonl:2: field '{field}' is .*{valid}"):
            load(p)


def test_a_chart_is_written_inside_out_whatever_the_benchmarks_name(tmp_path):
    # A name holding "../" wrote its chart outside --out (an outside-user campaign).
    p = tmp_path / "r.jsonl"
    out = tmp_path / "a" / "b" / "out"
    evil = [dict(rec(v, w, m), bench="../../evil") for v, w, m in [("serial", 1, 0.1), ("ws", 2, 0.05)]]
    write(p, evil)
    assert report.main([str(p), "--out", str(out), "--quiet"]) == 0
    assert not (tmp_path / "a" / "evil.png").exists()
    charts = list(out.glob("*.png"))
    assert len(charts) == 1 and charts[0].parent == out, charts
    assert "/" not in report.chart_file_name("../../evil") and not report.chart_file_name(".x").startswith(".")
    assert f"]({charts[0].name})" in (out / "report.md").read_text()


def test_two_benchmarks_whose_names_differ_in_replaced_characters_keep_both_charts(tmp_path):
    # "a/b" and "a?b" both became a-b.png, and the second chart replaced the first.
    p = tmp_path / "r.jsonl"
    out = tmp_path / "out"
    rows = [dict(rec(v, w, m), bench=b) for b in ("a/b", "a?b") for v, w, m in [("serial", 1, 0.1), ("ws", 2, 0.05)]]
    write(p, rows)
    assert report.main([str(p), "--out", str(out), "--quiet"]) == 0
    text = (out / "report.md").read_text()
    assert {c.name for c in out.glob("*.png")} == {"a-b.png", "a-b-2.png"}
    assert "](a-b.png)" in text and "](a-b-2.png)" in text


def test_a_chart_an_earlier_report_left_is_not_shown_for_a_benchmark_without_one(tmp_path):
    # A benchmark with only its serial row draws no chart; an earlier report's file of that name was shown.
    p = tmp_path / "r.jsonl"
    out = tmp_path / "out"
    out.mkdir()
    (out / "solo.png").write_bytes(b"stale")
    write(p, [dict(rec("serial", 1, 0.1), bench="solo")])
    assert report.main([str(p), "--out", str(out), "--quiet"]) == 0
    assert not (out / "solo.png").exists() and "solo.png" not in (out / "report.md").read_text()


def test_a_summary_field_out_of_range_is_refused_naming_it(tmp_path):
    p = tmp_path / "r.jsonl"
    s = summary("ws", 2, 0.05, 0.5, 1.0)
    s["vs_ws"] = float("nan")
    write(p, [rec("serial", 1, 0.1), s])
    with pytest.raises(ResultsError, match=r"r.jsonl:2: field 'vs_ws' is NaN; roost-bench writes a finite number"):
        load_all(p)


@pytest.mark.skipif("ROOST_BENCH" not in os.environ, reason="needs the built roost-bench (run through ctest)")
def test_driver_json_round_trip(tmp_path):
    out = tmp_path / "b.jsonl"
    subprocess.run([os.environ["ROOST_BENCH"], "--bench", "heat,fib", "--small", "--reps", "2", "--warmup", "0",
                    "--workers", "1,2", "--variants", "serial,ws,ws-help,numa,tbb", "--json", str(out)],
                   check=True, capture_output=True, timeout=120)
    ms = load(out)
    got = {(m.bench, m.variant, m.workers) for m in ms}
    assert ("heat", "ws", 2) in got and ("fib", "tbb", 1) in got
    assert all(m.check for m in ms if m.ran)
    assert all(len(m.seconds) == 2 for m in ms if m.ran)
    # Every scheduler is implemented now (numa was the last): its rows are measured and checked.
    assert {(m.bench, m.workers) for m in ms if m.variant == "numa"} == {("heat", 1), ("heat", 2), ("fib", 1), ("fib", 2)}
    assert not [r for r in load_all(out) if isinstance(r, LeftOut) and r.variant == "numa"]
    # The driver times a cache line's trip between two CPUs around each row, and leaves the field out when
    # the two threads could not run at once within its 50 ms (a loaded machine): present, it is positive.
    # Not "at least one row timed": under ctest -j2 beside OpenMP and TBB benchmarks every attempt of this
    # 0.2 s run can give up (16 busy loops on 2 CPUs: 1 row of 18 timed, and this test failed 1 run in 3).
    assert all(m.c2c_ns > 0 for m in ms if m.ran and m.c2c_ns is not None)
    assert report.main([str(out), "--out", str(tmp_path / "rep"), "--quiet"]) == 0


@pytest.mark.skipif("ROOST_BENCH" not in os.environ, reason="needs the built roost-bench (run through ctest)")
def test_driver_refuses_a_results_file_the_runtime_writes_however_it_is_spelt(tmp_path):
    # Relative against absolute, ./x against x, a later runtime's x.2, and cats's profile: each left the
    # runtime's file where the results were, with status 0 (an outside-user campaign).
    cases = [("ROOST_TRACE", "same.jsonl", "./same.jsonl"), ("ROOST_TRACE", str(tmp_path / "nn"), "nn.2"),
             ("ROOST_SIM_REPORT", str(tmp_path / "sr.jsonl"), "sr.jsonl"),
             ("ROOST_CATS_PROFILE", "cp.jsonl", "cp.jsonl")]
    for var, value, json in cases:
        env = dict(os.environ, **{var: value})
        done = subprocess.run([os.environ["ROOST_BENCH"], "--bench", "fib", "--size", "10", "--variants", "ws",
                               "--workers", "1", "--reps", "1", "--json", json], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 2, (var, value, json, done.stderr)
        assert f"--json '{json}' is where {var}='{value}' writes" in done.stderr
        assert not (tmp_path / json).exists()


@pytest.mark.skipif("ROOST_BENCH" not in os.environ, reason="needs the built roost-bench (run through ctest)")
def test_driver_floors_run_once_and_only_where_they_exist(tmp_path):
    out = tmp_path / "f.jsonl"
    # Default variants: fib and fib-invoke get their floors (floor-erased, floor-value and floor-bare are fib-invoke's only), at one worker
    # only, checked; nqueens (which has none) does not list them.
    subprocess.run([os.environ["ROOST_BENCH"], "--bench", "fib,fib-invoke,nqueens", "--small", "--reps", "1", "--warmup",
                    "0", "--workers", "1,2", "--json", str(out)], check=True, capture_output=True, timeout=120)
    ms = load(out)
    floors = {(m.bench, m.variant, m.workers) for m in ms if m.variant.startswith("floor-")}
    assert floors == {(b, v, 1) for b in ("fib", "fib-invoke")
                      for v in ("floor-help", "floor-switch", "floor-call", "floor-linked")} | {("fib-invoke", v, 1) for v in ("floor-erased", "floor-value", "floor-bare")}
    assert all(m.ran and m.check for m in ms if m.variant.startswith("floor-"))
    # Asked for by name, a benchmark without floors says so instead of skipping silently.
    named = tmp_path / "n.jsonl"
    # No row (it cannot exist), but named: a left_out line in the JSON, and a line below the console table.
    done = subprocess.run([os.environ["ROOST_BENCH"], "--bench", "nqueens", "--small", "--reps", "1", "--warmup",
                           "0", "--variants", "floor-help,ws", "--json", str(named)], check=True,
                          capture_output=True, text=True, timeout=120)
    assert {m.variant for m in load(named)} == {"ws"}
    [left] = [r for r in load_all(named) if isinstance(r, LeftOut)]
    assert (left.bench, left.variant) == ("nqueens", "floor-help") and "no such version" in left.note
    assert "floor-help" not in "".join(l for l in done.stdout.splitlines() if not l.strip().startswith("("))
    assert "(nqueens left out: no such version of this benchmark: floor-help)" in done.stdout


def test_a_run_that_measured_nothing_fails_and_says_why():
    # Every variant asked for left out of every benchmark: an empty table is an error, not a success.
    for extra in (["--variants", "floor-help"],
                  ["--variants", "tbb", "--platform", "sim", "--topology", "pack:1 l3:1(size=1MiB) core:2 pu:1"]):
        done = subprocess.run([os.environ["ROOST_BENCH"], "--bench", "nqueens", "--small", "--reps", "1",
                               "--warmup", "0", *extra], capture_output=True, text=True, timeout=120)
        assert done.returncode == 2, (extra, done.returncode, done.stderr)
        assert "nothing was measured" in done.stderr
        assert "(nqueens left out: " in done.stdout


def test_variants_that_cannot_run_have_no_row_and_are_named_once_below_the_table(tmp_path):
    p = tmp_path / "r.jsonl"
    left = {"left_out": True, "bench": "heat", "size": "64x32x4", "variant": "floor-help",
            "note": "no such version of this benchmark"}
    # A file of today's driver (a left_out line) and rows that older files wrote for such variants.
    write(p, [rec("serial", 1, 0.100), left, rec("ws", 2, 0.050),
              rec("omp-clang", 2, 0, note="no such version of this benchmark"),
              rec("tbb", 2, 0, note="tbb threw: out of memory")])
    [run] = report._group(report.load_all(p)).values()
    rows, _ = report.bench_rows(run)
    assert [r["variant"] for r in rows] == ["serial", "ws", "tbb"]  # a failure a user must see keeps its row
    assert report.left_out_line(run) == "no such version of this benchmark: floor-help, omp-clang"
    out = tmp_path / "out"
    report.main([str(p), "--out", str(out), "--quiet"])
    md = (out / "report.md").read_text()
    assert "| floor-help |" not in md and "| omp-clang |" not in md and "| tbb |" in md
    assert md.count("Left out (cannot run for this benchmark): no such version of this benchmark: "
                    "floor-help, omp-clang.") == 1
    assert "left out: no such version of this benchmark: floor-help, omp-clang" in report.console_table(
        report.load_all(p))


def summary(variant, workers, median, vs_serial, vs_ws, rounds_used=2, note=""):
    return {"summary": True, "bench": "heat", "size": "64x32x4", "variant": variant, "workers": workers,
            "median": median, "spread": 2.0 if median else None, "vs_serial": vs_serial, "vs_ws": vs_ws,
            "rounds_used": rounds_used, "rounds": 3, "near_rounds": 2, "check": True, "note": note}


def test_rounds_are_shown_as_the_driver_summarized_them(tmp_path):
    # The rule (far rounds out, ratios inside rounds) is the driver's (bench/driver/rounds.hpp, tested there);
    # the report shows its summary lines, not the rounds' measurements.
    p = tmp_path / "r.jsonl"
    recs = []
    for rnd in (1, 2, 3):
        for r in (rec("serial", 1, 0.100), rec("ws", 2, 0.060), rec("adws", 2, 0.045)):
            r["round"] = rnd
            recs.append(r)
    recs += [summary("serial", 1, 0.150, 1.0, None), summary("ws", 2, 0.090, 0.6, 1.0),
             summary("adws", 2, 0.0675, 0.45, 0.75), summary("cats", 1, None, None, None, 0, "not implemented")]
    write(p, recs)
    [run] = report._group(report.load_all(p)).values()
    rows, how = report.bench_rows(run)
    by = {(r["variant"], r["workers"]): r for r in rows}
    assert len(rows) == 4 and by[("adws", 2)]["rounds"] == 2
    assert by[("adws", 2)]["median_ms"] == pytest.approx(67.5) and by[("adws", 2)]["vs_ws"] == pytest.approx(0.75)
    assert by[("cats", 1)]["median_ms"] is None and by[("cats", 1)]["note"] == "not implemented"
    assert "2 of 3 interleaved rounds (1 left out" in how
    out = tmp_path / "o"
    assert report.main([str(p), "--out", str(out), "--quiet"]) == 0
    md = (out / "report.md").read_text()
    assert md.count("| adws | 2 |") == 1 and "| adws | 2 | 67.50 | 2.00 | 0.45x | 0.75x | ok |" in md
    # A run whose summary was never written (stopped early) still shows its measurements, and says so.
    q = tmp_path / "q.jsonl"
    write(q, recs[:6])
    [cut] = report._group(report.load_all(q)).values()
    rows, how = report.bench_rows(cut)
    assert len(rows) == 6 and "did not finish" in how


@pytest.mark.skipif("ROOST_BENCH" not in os.environ, reason="needs the built roost-bench (run through ctest)")
def test_driver_rounds_interleave_and_summarize(tmp_path):
    out = tmp_path / "r.jsonl"
    run = subprocess.run([os.environ["ROOST_BENCH"], "--bench", "heat", "--small", "--reps", "1", "--warmup", "0",
                          "--workers", "1,2", "--variants", "serial,ws,adws", "--rounds", "3", "--json", str(out)],
                         check=True, capture_output=True, text=True, timeout=120)
    ms = load(out)
    # Interleaved: every variant once per round, rounds in order.
    assert [m.round for m in ms] == [1] * 5 + [2] * 5 + [3] * 5
    assert [(m.variant, m.workers) for m in ms[:5]] == [("serial", 1), ("ws", 1), ("ws", 2), ("adws", 1), ("adws", 2)]
    assert all(m.ran and m.check for m in ms)
    assert "summary of heat" in run.stdout and run.stdout.count("round ") >= 3
    [run_] = report._group(report.load_all(out)).values()
    assert len(run_.summaries) == 5  # the driver's own summary, one line per variant and worker count
    rows, how = report.bench_rows(run_)
    assert len(rows) == 5 and how and all(r["rounds"] >= 1 for r in rows)
    assert {(r["variant"], r["workers"]) for r in rows} == {(m.variant, m.workers) for m in ms}
    assert report.main([str(out), "--out", str(tmp_path / "rep"), "--quiet"]) == 0


@pytest.mark.skipif("ROOST_BENCH" not in os.environ, reason="needs the built roost-bench (run through ctest)")
@pytest.mark.parametrize("value", ["0", "x", "-2", "100001"])
def test_driver_rejects_a_bad_rounds_value(value):
    run = subprocess.run([os.environ["ROOST_BENCH"], "--bench", "heat", "--small", "--rounds", value],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 2
    assert f"--rounds '{value}': expected an integer from 1 to 100000" in run.stderr


@pytest.mark.skipif("ROOST_BENCH" not in os.environ, reason="needs the built roost-bench (run through ctest)")
def test_driver_help_names_every_option_it_parses():
    run = subprocess.run([os.environ["ROOST_BENCH"], "--help"], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0 and run.stdout.startswith("usage: roost-bench")
    source = (Path(__file__).resolve().parents[2] / "bench" / "driver" / "main.cpp").read_text()
    parsed = set(re.findall(r'a == "(--[a-z-]+)"', source))
    assert {"--bench", "--rounds", "--json", "--hint-error", "--demo", "--list"} <= parsed
    missing = [opt for opt in sorted(parsed) if opt not in run.stdout]
    assert not missing, f"roost-bench --help does not mention {missing}"


@pytest.mark.skipif("ROOST_BENCH" not in os.environ, reason="needs the built roost-bench (run through ctest)")
def test_roost_bench_refuses_bad_input_with_status_2_never_an_abort():
    # Each was an uncaught exception (status 134) or silently taken.
    cases = [(["--bench", "fib", "--variants", "ws", "--workers", "99999", "--small"], "from 1 to 4096"),
             # Sizes whose data cannot fit: products that wrapped around segfaulted (an outside-user campaign).
             (["--bench", "ge", "--size", "4294967296", "--variants", "serial"], "GiB); give a smaller size"),
             (["--bench", "decision-tree", "--size", "79511827903920482x12", "--variants", "serial"],
              "does not fit in this machine's memory"),
             (["--bench", "heat2d", "--size", "9223372036854775807x1", "--variants", "serial"], "does not fit in this machine's memory"),
             (["--bench", "fib", "--variants", "ws", "--workers", "1", "--small", "--platform", "sim",
               "--topology", "garbage!!"], "--topology='garbage!!'"),
             (["--bench", "fib", "--variants", "ws", "--workers", "2", "--small", "--platform", "sim",
               "--topology", "pack:1 core:2 pu:1"], "describes no data cache"),
             (["--bench", "fib", "--variants", "ws", "--workers", "4", "--small", "--platform", "sim",
               "--topology", "pack:1 l2:2(size=64KiB) core:1 pu:1"], "at most 2 workers"),
             (["--trace-overhead", "1", "--bench", "fib", "--variants", "tbb", "--workers", "1", "--small"],
              "variant 'tbb' is no roost scheduler"),
             (["--trace-overhead", "1", "--size", "18"], "--size applies to one benchmark"),
             (["--bench", "fib", "--variants", "ws,,adws"], "an empty item"),
             # A misspelt benchmark or variant named the valid ones and suggested none.
             (["--bench", "nqeens", "--small"], "unknown benchmark 'nqeens'; did you mean nqueens? available: "),
             (["--bench", "fib", "--variants", "ws_help", "--small"], "unknown variant 'ws_help'; did you mean ws-help? valid: "),
             (["--bench", "fibonacci", "--small"], "unknown benchmark 'fibonacci'; available: "),
             (["--bench", ""], "an empty item"),
             (["--bench", "fib", "--small", "--paper"], "pick one"),
             (["--bench", "fib", "--size", "18", "--small"], "pick one"),
             (["--bench", "fib", "--hint-error", "det:0.5"], "heat2d's work hints"),
             (["--bench", "heat2d-pfor", "--hint-error", "det:0.5"], "heat2d's work hints"),
             (["--trace-overhead", "1", "--bench", "fib", "--hint-error", "det:0.5"], "heat2d's work hints"),
             (["--trace-overhead", "1", "--bench", "fib", "--size", "18", "--small"], "pick one"),
             (["--bench", "fib", "--workers", "200000"], "from 1 to 4096"),
             (["--bench", "fib", "--size", "abc", "--variants", "ws"], "size 'abc' for fib"),
             (["--trace-overhead", "1", "--bench", "fib", "--size", "x"], "size 'x' for fib"),
             (["--preempt-overhead", "1", "--bench", "heat2d", "--size", "3"], "for heat2d"),
             (["--bench", "fib", "--size", "10", "--platform", "sim", "--topology", "pack:2 core:2 pu:1"],
              "--topology='pack:2 core:2 pu:1': describes no data cache"),
             (["--bench", "fib", "--small", "--platform", "sim", "--topology", "pack:2 l3:1(size=1MiB) core:1 pu:1",
               "--workers", "1,3"], "give at most 2 workers"),
             # Flags after a mode were dropped unread (the mode returned in the middle of the parse).
             (["--preempt-barrier", "1", "--bogus"], "unknown argument '--bogus'"),
             (["--trace-overhead", "1", "--bench", "fib", "--size", "18", "--platform", "sim", "--topology",
               "pack:2 l3:1(size=1MiB) core:1 pu:1"], "--platform does not apply to --trace-overhead"),
             (["--list", "--demo"], "--list and --demo: pick one"),
             # The last of a flag given twice won without a word, and a variant named twice was set against
             # itself; an empty --json or ALPHA was taken; a size too large aborted in std::bad_alloc.
             (["--bench", "fib", "--bench", "nqueens", "--small"], "--bench is given twice; give it once (a list takes commas"),
             (["--bench", "fib", "--small", "--variants", "ws,ws"], "ws is named twice"),
             (["--bench", "fib", "--small", "--json", ""], "--json '': expected a file path"),
             # An empty --topology was "missing" under --platform sim, and taken for none natively.
             (["--bench", "fib", "--small", "--platform", "sim", "--topology", ""], "--topology '': empty"),
             (["--bench", "fib", "--small", "--topology", ""], "--topology '': empty"),
             (["--bench", "fib", "--small", "--platform", "simulated"], "--platform 'simulated': expected native or sim"),
             (["--bench", "heat2d", "--small", "--variants", "adws", "--hint-error", "det:"], "expected det:ALPHA"),
             (["--bench", "quicksort", "--size", "99999999999999", "--variants", "serial"],
              "does not fit in this machine's memory")]
    for args, why in cases:
        modal = args[0] in ("--preempt-barrier", "--list", "--trace-overhead", "--preempt-overhead")
        run = subprocess.run([os.environ["ROOST_BENCH"], *args] if modal
                             else [os.environ["ROOST_BENCH"], "--reps", "1", "--warmup", "0", *args],
                             capture_output=True, text=True, timeout=120)
        assert run.returncode == 2 and why in run.stderr, (args, run.returncode, run.stderr[-500:])
        assert "terminate called" not in run.stderr, args
        if "--size" in args:  # a bad size is found before anything is measured: the error is the only output
            assert run.stdout == "", (args, run.stdout)
        if "--platform" in args:  # so is a simulated machine that cannot take every worker count (no 1-worker row)
            assert run.stdout == "", (args, run.stdout)
    # --platform is read as the runtime reads ROOST_PLATFORM: trimmed, any case ("SIM" was refused). A simulated
    # row's JSON names the seed and parameters besides the topology (runs of two seeds could not be told apart),
    # and roost-report's note says them.
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "sim.jsonl")
        run = subprocess.run([os.environ["ROOST_BENCH"], "--reps", "1", "--warmup", "0", "--bench", "fib", "--size",
                              "12", "--variants", "ws", "--platform", " SIM", "--topology",
                              "pack:1 l3:1(size=1MiB) core:2 pu:1", "--json", out], capture_output=True, text=True,
                             timeout=120, env={**os.environ, "ROOST_SIM_SEED": "7", "ROOST_SIM_PARAMS": "jitter=0.1"})
        assert run.returncode == 0 and "virtual time" in run.stdout, (run.stdout[-500:], run.stderr[-500:])
        [m] = [x for x in load(out) if x.variant == "ws" and x.workers == 2]
        assert (m.sim_seed, m.sim_params, m.topology) == (7, "jitter=0.1", "pack:1 l3:1(size=1MiB) core:2 pu:1")
        report.main([out, "--out", os.path.join(d, "r"), "--quiet"])
        md = open(os.path.join(d, "r", "report.md")).read()
        assert "core:2 pu:1`, seed 7, parameters `jitter=0.1`" in md, md
    # The hint on commas goes with the list flags only (--reps 1,2 is no list, and was suggested).
    run = subprocess.run([os.environ["ROOST_BENCH"], "--reps", "1", "--reps", "2", "--bench", "fib", "--small"],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 2 and "--reps is given twice; give it once" in run.stderr, run.stderr
    assert "commas" not in run.stderr, run.stderr
    # A size refused before anything is measured leaves no --json file (an empty one was made).
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "never.jsonl")
        run = subprocess.run([os.environ["ROOST_BENCH"], "--bench", "heat", "--size", "99x", "--variants", "ws",
                              "--json", out], capture_output=True, text=True, timeout=120)
        assert run.returncode == 2 and "size '99x' for heat" in run.stderr, run.stderr
        assert not os.path.exists(out)
    for args, why in [(["--preempt-cost", "10", "--json", "x.jsonl"], "--json does not apply to --preempt-cost"),
                      (["--trace-overhead", "1", "--reps", "3"], "--reps does not apply to --trace-overhead")]:
        run = subprocess.run([os.environ["ROOST_BENCH"], *args], capture_output=True, text=True, timeout=120)
        assert run.returncode == 2 and why in run.stderr and run.stdout == "", (args, run.returncode, run.stderr[-500:])
    # No temporary directory for a traced variant's trace: an error naming TMPDIR (it aborted).
    run = subprocess.run([os.environ["ROOST_BENCH"], "--bench", "fib", "--small", "--variants", "ws+trace", "--workers",
                          "1", "--reps", "1", "--warmup", "0"], env={**os.environ, "TMPDIR": "/nonexistent-roost"},
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 2 and "TMPDIR='/nonexistent-roost'" in run.stderr, run.stderr
    assert "terminate called" not in run.stderr
    # The environment's platform would have run the roost rows simulated in a table of native times.
    run = subprocess.run([os.environ["ROOST_BENCH"], "--bench", "fib", "--small", "--variants", "ws", "--workers", "1",
                          "--reps", "1", "--warmup", "0"], env={**os.environ, "ROOST_PLATFORM": "sim"},
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 2 and "ROOST_PLATFORM='sim'" in run.stderr and run.stdout == "", run.stderr


@pytest.mark.skipif("ROOST_BENCH" not in os.environ, reason="needs the built roost-bench (run through ctest)")
def test_overhead_modes_take_small_and_simulated_rows_report_each_cache_they_have():
    run = subprocess.run([os.environ["ROOST_BENCH"], "--trace-overhead", "1", "--bench", "fib", "--variants", "ws",
                          "--workers", "1", "--small"], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0 and "fib 18 ws" in run.stdout, run.stdout + run.stderr
    run = subprocess.run([os.environ["ROOST_BENCH"], "--bench", "heat2d", "--variants", "ws", "--workers", "2",
                          "--reps", "1", "--warmup", "0", "--small", "--platform", "sim", "--topology",
                          "pack:2 l3:1(size=1MiB) core:1 pu:1"], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert "L2 misses none (no such cache)" in run.stdout and "L3 misses -1" not in run.stdout, run.stdout


def sim(variant, workers, median, l2=8128, l3=4064, remote=96, c2c=900):
    """A measurement as `roost-bench --platform sim` writes it (bench/driver/main.cpp, common/harness.hpp)."""
    r = rec(variant, workers, median, c2c=c2c)
    r["note"] = (f"virtual time; per timed repetition: L2 misses {l2}, L3 misses {l3}, remote DRAM lines {remote}")
    r.update(l2_misses=l2, l3_misses=l3, remote_dram=remote)
    return r


def test_simulated_runs_are_shown_in_virtual_time_with_their_misses(tmp_path, capsys):
    # A native run, then a simulated one appended to the same file (its serial left out, other worker counts).
    # It was one table "heat", or "heat (run 2)" with no word of virtual time, with the host's c2c column.
    p = tmp_path / "r.jsonl"
    write(p, [rec("serial", 1, 0.100, c2c=60), rec("ws", 2, 0.050, c2c=62), rec("adws", 2, 0.040, c2c=61),
              {"left_out": True, "bench": "heat", "size": "64x32x4", "variant": "serial",
               "note": "not simulated: only roost's schedulers run on the simulated platform"},
              sim("ws", 16, 0.010), sim("adws", 16, 0.005, l2=2000, l3=1000, remote=0)])
    records = load_all(p)
    assert [m.simulated for m in load(p)] == [False, False, False, True, True]
    groups = report._group(records)
    assert list(groups) == ["heat", "heat (simulated)"]
    native, simulated = groups.values()
    assert not native.simulated and not report.left_out_line(native)
    assert simulated.simulated and report.left_out_line(simulated).endswith(": serial")
    rows = {r["variant"]: r for r in report.bench_rows(simulated)[0]}
    assert rows["adws"]["vs_ws"] == pytest.approx(0.5)  # to the simulated ws, never to a native time
    assert (rows["adws"]["l2_misses"], rows["adws"]["l3_misses"], rows["adws"]["remote_dram"]) == (2000, 1000, 0)
    assert rows["ws"]["c2c_ns"] is None and not rows["ws"]["far"]  # 900 ns: the host's, not a far timing
    assert report.best_c2c(load(p)) == 60
    out = tmp_path / "out"
    assert report.main([str(p), "--out", str(out)]) == 0
    md = (out / "report.md").read_text()
    native_md, sim_md = md.split("### heat (simulated)")
    assert "| median ms |" in native_md and "| c2c ns |" in native_md and "| ws | 2 | 50.00 |" in native_md
    assert "virtual" not in native_md
    assert ("| variant | workers | virtual ms (simulated) | max/min | vs serial | vs ws | check | L2 misses | "
            "L3 misses | remote DRAM lines |") in sim_md
    assert "| ws | 16 | 10.00 | 1.22 | - | 1.00x | ok | 8128 | 4064 | 96 |" in sim_md
    assert "| adws | 16 | 5.00 | 1.22 | - | 0.50x | ok | 2000 | 1000 | 0 |" in sim_md
    assert "not this host's" in sim_md and "virtual time of the simulated machine" in sim_md and "c2c ns" not in sim_md and "900" not in sim_md
    assert {f.name for f in out.glob("*.png")} == {"heat.png", "heat-simulated.png"}
    console = capsys.readouterr().out
    assert "heat (simulated) (64x32x4): virtual time of the simulated machine" in console
    assert "virtual ms" in console and "L2 misses" in console
    assert [l.split() for l in console.splitlines() if l.strip().startswith("adws") and " 16 " in l] == \
        [["adws", "16", "5.00", "-", "0.50x", "2000", "1000", "0"]]
    # A simulated run with rounds: the summary lines lack the counts, the rounds' measurements have them.
    q = tmp_path / "q.jsonl"
    rounds = [dict(sim("ws", 4, 0.01), round=1), dict(sim("ws", 4, 0.01), round=2),
              {"summary": True, "bench": "heat", "size": "64x32x4", "variant": "ws", "workers": 4, "median": 0.01,
               "spread": 1.0, "vs_serial": None, "vs_ws": 1.0, "rounds_used": 2, "rounds": 2, "near_rounds": 2,
               "check": True, "note": ""}]
    write(q, [rec("ws", 4, 0.05)] + rounds)
    groups = report._group(load_all(q))
    assert list(groups) == ["heat", "heat (simulated)"]
    [row], how = report.bench_rows(groups["heat (simulated)"])
    assert how and row["rounds"] == 2 and row["l2_misses"] == 8128 and row["remote_dram"] == 96


@pytest.mark.skipif("ROOST_BENCH" not in os.environ, reason="needs the built roost-bench (run through ctest)")
def test_driver_simulated_json_is_reported_as_virtual_time(tmp_path):
    out = tmp_path / "mix.jsonl"
    common = ["--bench", "heat", "--size", "256x128x4", "--reps", "1", "--warmup", "0", "--json", str(out)]
    subprocess.run([os.environ["ROOST_BENCH"], "--variants", "ws", "--workers", "2", *common], check=True,
                   capture_output=True, timeout=120)
    subprocess.run([os.environ["ROOST_BENCH"], "--platform", "sim", "--topology",
                    "pack:4 [numa(memory=4GiB)] l3:1(size=6MiB) l2:4(size=512KiB) core:1 pu:1", "--variants",
                    "ws", "--workers", "16", *common], check=True, capture_output=True, timeout=120)
    [native, simulated] = load(out)
    assert not native.simulated and simulated.simulated
    assert simulated.l2_misses > 0 and simulated.l3_misses > 0 and simulated.remote_dram is not None
    rep = tmp_path / "rep"
    assert report.main([str(out), "--out", str(rep), "--quiet"]) == 0
    md = (rep / "report.md").read_text()
    native_md, sim_md = md.split("### heat (simulated)")
    assert "virtual" not in native_md and "c2c ns" in native_md
    assert "virtual ms (simulated)" in sim_md and "c2c ns" not in sim_md
    assert (f"| ws | 16 | {simulated.median * 1e3:.2f} | 1.00 | - | 1.00x | ok | {simulated.l2_misses} | "
            f"{simulated.l3_misses} | {simulated.remote_dram} |") in sim_md
    # The driver names the simulated machine, and the report says which it was.
    assert not native.topology and simulated.topology.startswith("pack:4 [numa(memory=4GiB)]")
    assert f"the simulated machine `{simulated.topology}`" in sim_md


def test_report_refuses_bad_paths_with_one_line_naming_them(tmp_path, capsys, hang_bound):
    good = tmp_path / "r.jsonl"
    write(good, [rec("serial", 1, 0.1)])
    binary = tmp_path / "b.trace"
    binary.write_bytes(b"ROOSTTRC\x05\x00\x00\x00\xc5\xff")
    obj = tmp_path / "o.jsonl"
    obj.write_text('{"bench": "heat"}\n[1, 2]\n')
    cases = [([str(tmp_path)], f"RESULTS {tmp_path}: a directory; give the JSON lines file that roost-bench --json "
                               f"wrote"),
             ([str(binary)], f"{binary}: not JSON lines (not UTF-8 text at byte 12)"),
             ([str(obj)], f"{obj}:1: missing field(s)"),
             ([str(good), "--out", str(good)], f"--out {good}: a file, not a directory"),
             ([str(good), "--out", str(good / "sub")], f"--out {good / 'sub'}: cannot write")]
    obj2 = tmp_path / "o2.jsonl"
    obj2.write_text('[1, 2]\n')
    cases.append(([str(obj2)], f"{obj2}:1: not a JSON object"))
    fifo = tmp_path / "pipe"  # its read waited for a writer for ever
    os.mkfifo(fifo)
    cases.append(([str(fifo)], f"{fifo}: not a regular file (a named pipe, a device or a socket)"))
    for argv, why in cases:
        capsys.readouterr()
        assert report.main(argv + ["--quiet"]) == 2, argv
        err = capsys.readouterr().err
        assert err.startswith(f"roost-report: {why}") and err.count("\n") == 1, (argv, err)


def test_an_empty_out_is_refused(tmp_path, capsys, monkeypatch):
    # Path("") is the working directory: an empty --out (an unset variable in a script) wrote report.md there.
    p = tmp_path / "r.jsonl"
    write(p, [rec("serial", 1, 0.1), rec("ws", 2, 0.05)])
    monkeypatch.chdir(tmp_path)
    assert report.main([str(p), "--out", "", "--quiet"]) == 2
    assert "--out '': expected the folder" in capsys.readouterr().err
    assert not (tmp_path / "report.md").exists()


@pytest.mark.skipif("ROOST_BENCH" not in os.environ, reason="needs the built roost-bench (run through ctest)")
def test_runs_appended_to_one_file_are_shown_apart_even_with_other_variants(tmp_path):
    """Each line names the invocation that wrote it: a second run of another variant was merged into the
    first's table, its ratios taken to the first run's serial and ws (an outside-user campaign)."""
    out = tmp_path / "two.jsonl"
    base = [os.environ["ROOST_BENCH"], "--bench", "fib", "--size", "12", "--workers", "1", "--reps", "1",
            "--warmup", "0", "--json", str(out)]
    subprocess.run(base + ["--variants", "serial,ws"], check=True, capture_output=True, timeout=120)
    subprocess.run(base + ["--variants", "ws-help"], check=True, capture_output=True, timeout=120)
    runs = {r.run for r in load_all(out)}
    assert len(runs) == 2 and "" not in runs
    groups = report._group(load_all(out))
    assert list(groups) == ["fib", "fib (run 2)"]
    assert [m.variant for m in groups["fib (run 2)"].measurements] == ["ws-help"]


@pytest.mark.skipif("ROOST_BENCH" not in os.environ, reason="needs the built roost-bench (run through ctest)")
def test_a_run_appended_after_a_line_cut_short_is_whole_and_reported(tmp_path, capsys):
    """A file whose last line a failed write cut short: the next run's first line was glued onto it and lost,
    and roost-report refused the whole file (an outside-user campaign)."""
    out = tmp_path / "cut.jsonl"
    base = [os.environ["ROOST_BENCH"], "--bench", "fib", "--size", "12", "--workers", "1", "--reps", "1",
            "--warmup", "0", "--json", str(out)]
    subprocess.run(base + ["--variants", "serial,ws"], check=True, capture_output=True, timeout=120)
    whole = out.read_text()
    cut = whole[: whole.rindex("\n", 0, len(whole) - 1) + 1 + 30]  # the last line cut 30 characters in
    out.write_text(cut)
    run = subprocess.run(base + ["--variants", "serial,ws-help"], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0 and "ended inside a line" in run.stderr, run.stderr
    lines = out.read_text().splitlines()
    cut_line = cut.count("\n") + 1
    assert lines[cut_line - 1] == cut[cut.rindex("\n") + 1:]  # the cut line, on a line of its own
    with pytest.raises(ResultsError, match=f"cut.jsonl:{cut_line}: not a JSON line"):
        load_all(out)  # the library refuses it unless asked to leave it out
    skipped: list[str] = []
    records = load_all(out, skipped)
    assert skipped == [f"{out}:{cut_line}: a line cut short (a write of roost-bench that failed part-way), left out"]
    assert [m.variant for m in records if isinstance(m, Measurement) and m.run == records[-1].run] == \
        ["serial", "ws-help"]  # the new run's every line
    assert report.main([str(out), "--out", str(tmp_path / "o"), "--quiet"]) == 0
    assert "a line cut short" in capsys.readouterr().err
    garbage = tmp_path / "garbage.jsonl"  # any other damage is still refused
    garbage.write_text(whole + "{not json\n")
    assert report.main([str(garbage), "--out", str(tmp_path / "o2"), "--quiet"]) == 2


@pytest.mark.skipif("ROOST_BENCH" not in os.environ, reason="needs the built roost-bench (run through ctest)")
def test_results_that_cannot_be_written_fail_the_run(tmp_path):
    """A --json file or a stdout that cannot take the results (a full disk) was exit status 0; a --json file
    that is also the runtime's trace lost the results to it; --demo emptied out/bench.jsonl before it found
    its arguments bad."""
    small = ["--bench", "fib", "--size", "12", "--variants", "serial,ws", "--workers", "1", "--reps", "1"]
    bench = os.environ["ROOST_BENCH"]
    run = subprocess.run([bench, *small, "--json", "/dev/full"], capture_output=True, text=True, timeout=120)
    assert run.returncode == 1 and "cannot write --json file '/dev/full'" in run.stderr
    # A file-size limit: SIGXFSZ ended the run without a word (exit status 153; an outside-user campaign).
    # subprocess gives the child SIGXFSZ's default action, which Python itself ignores.
    import resource
    limited = tmp_path / "limited.jsonl"
    run = subprocess.run([bench, "--bench", "fib", "--size", "12", "--variants", "serial,ws,ws-help,hws,cab",
                          "--workers", "1,2", "--reps", "3", "--json", str(limited)],
                         capture_output=True, text=True, timeout=120,
                         preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (1024, 1024)))
    assert run.returncode == 1 and f"cannot write --json file '{limited}' (File too large)" in run.stderr, run
    with open("/dev/full", "w") as full:
        run = subprocess.run([bench, *small], stdout=full, stderr=subprocess.PIPE, text=True, timeout=120)
    assert run.returncode == 1 and "standard output" in run.stderr
    clash = tmp_path / "clash.jsonl"
    clash.write_text('{"kept": 1}\n')
    for trace in (clash, tmp_path / "clash"):  # the trace itself, or the FILE.json written beside it
        results = clash if trace == clash else tmp_path / "clash.json"
        run = subprocess.run([bench, *small, "--json", str(results)], capture_output=True, text=True, timeout=120,
                             env={**os.environ, "ROOST_TRACE": str(trace)})
        assert run.returncode == 2 and "ROOST_TRACE" in run.stderr, run.stderr
    assert clash.read_text() == '{"kept": 1}\n'
    # ROOST_TRACE traces the untraced V of a V+trace row too: its ratio compared traced with traced.
    run = subprocess.run([bench, "--bench", "fib", "--size", "12", "--variants", "ws,ws+trace", "--workers", "1",
                          "--reps", "1"], capture_output=True, text=True, timeout=120,
                         env={**os.environ, "ROOST_TRACE": str(tmp_path / "t.trace")})
    assert run.returncode == 2 and "traces every runtime" in run.stderr, run.stderr
    (tmp_path / "out").mkdir()
    kept = tmp_path / "out" / "bench.jsonl"
    kept.write_text('{"kept": 1}\n')
    run = subprocess.run([bench, "--demo", "--bench", "nosuch"], capture_output=True, text=True, timeout=120,
                         cwd=tmp_path)
    assert run.returncode == 2 and "unknown benchmark 'nosuch'" in run.stderr
    assert kept.read_text() == '{"kept": 1}\n'


@pytest.mark.skipif("ROOST_BENCH" not in os.environ, reason="needs the built roost-bench (run through ctest)")
def test_an_interrupted_traced_measurement_leaves_no_temporary_trace(tmp_path, hang_bound):
    # Ctrl-C in the middle of a V+trace measurement left its trace (24 MB) in the temporary directory (an
    # outside-user campaign). The run is interrupted once its trace exists, whenever that is.
    import signal
    import time
    env = dict(os.environ, TMPDIR=str(tmp_path))
    run = subprocess.Popen([os.environ["ROOST_BENCH"], "--bench", "fib", "--size", "40", "--variants", "ws+trace",
                            "--workers", "1", "--reps", "50", "--warmup", "0"], env=env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           # A background job starts with SIGINT ignored, which roost-bench keeps (a review).
                           preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    trace = tmp_path / f"roost-bench-{run.pid}.trace"
    while not trace.exists() and run.poll() is None:
        time.sleep(0.01)
    run.send_signal(signal.SIGINT)
    assert run.wait() == -signal.SIGINT
    assert list(tmp_path.iterdir()) == []


def test_a_file_that_measured_nothing_is_no_report_and_says_why(tmp_path, capsys):
    # Every variant left out (roost-bench's own run exited 2): an empty table with exit status 0 before; a file
    # whose only line was cut short said "no measurements" without naming it (an outside-user campaign).
    p = tmp_path / "r.jsonl"
    left = {"left_out": True, "bench": "heat", "size": "64x32x4", "variant": "floor-help",
            "note": "no such version of this benchmark"}
    write(p, [left, rec("omp-clang", 2, 0, note="no such version of this benchmark")])
    assert report.main([str(p), "--out", str(tmp_path / "out"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "no measurements (heat 64x32x4 floor-help: no such version of this benchmark; heat 64x32x4 omp-clang: " \
           "no such version of this benchmark)" in err, err
    assert not (tmp_path / "out" / "report.md").exists()
    # A variant that failed is a result to show (its row says so), not nothing.
    write(p, [rec("tbb", 2, 0, note="tbb threw: out of memory")])
    assert report.main([str(p), "--out", str(tmp_path / "out"), "--quiet"]) == 0
    p.write_text('{"run":"1-2","bench":"heat","variant":"ws","si')
    assert report.main([str(p), "--out", str(tmp_path / "out2"), "--quiet"]) == 2
    assert "no measurements (line 1 cut short by a write of roost-bench that failed part-way)" in capsys.readouterr().err
    # --out given twice wrote only to the second.
    write(p, [rec("serial", 1, 0.1)])
    with pytest.raises(SystemExit) as exited:
        report.main([str(p), "--out", str(tmp_path / "a"), "--out", str(tmp_path / "b")])
    assert exited.value.code == 2 and "--out is given twice" in capsys.readouterr().err
