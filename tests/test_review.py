"""Issue 31: every artefact says exactly what was checked. Each report lists what each check
established, and naming `--invariant` checks that invariant alone, so a command that verifies a
fix exits with the verdict on what it names."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "explorer", *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=300)


def checks_of(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess, dict[str, tuple[str, str]]]:
    out = tmp_path / "r.json"
    proc = cli("check", "spec/collector.spec", *args, "--json", str(out), "--quiet")
    data = json.loads(out.read_text())
    return proc, {f"{c['kind']} {c['name']}": (c["outcome"], c["detail"]) for c in data["checks"]}


def test_a_violated_invariant_says_nothing_of_the_others(tmp_path):
    proc, found = checks_of(tmp_path, "--no-deadlock")
    assert proc.returncode == 1
    assert found["invariant no_prompt_lost"][0] == "violated"
    assert found["invariant retrained_bounded"][0] == "unrefuted"
    assert found["deadlock deadlock"] == ("unchecked", "not checked (--no-deadlock)")
    assert found["property trains(s=0)"][0] == found["property trains(s=1)"][0] == "unchecked"
    assert "  invariant no_prompt_lost: violated: a shortest trace of" in proc.stdout


def test_a_temporal_violation_names_the_invariants_that_hold(tmp_path):
    proc, found = checks_of(tmp_path, "--no-deadlock", "--const", "CUT=safe")
    assert proc.returncode == 1
    assert found["invariant no_prompt_lost"] == ("holds", "holds in all 11,543 reachable states")
    assert found["property trains(s=0)"][0] == "violated" and "(a stall)" in found["property trains(s=0)"][1]
    assert found["property trains(s=1)"][0] == "unchecked"
    assert "  invariant no_prompt_lost: holds in all 11,543 reachable states" in proc.stdout


def test_naming_an_invariant_checks_it_alone(tmp_path):
    proc, found = checks_of(tmp_path, "--no-deadlock", "--const", "CUT=safe", "--invariant", "no_prompt_lost")
    assert proc.returncode == 0, proc.stdout
    assert set(found) == {"invariant no_prompt_lost", "deadlock deadlock"}
    assert found["invariant no_prompt_lost"][0] == "holds"
    # a property named beside it is checked too
    proc, found = checks_of(tmp_path, "--no-deadlock", "--const", "CUT=safe", "--invariant", "no_prompt_lost",
                            "--property", "trains")
    assert proc.returncode == 1 and found["property trains(s=0)"][0] == "violated"


def test_the_html_report_lists_the_checks(tmp_path):
    page = tmp_path / "r.html"
    assert cli("check", "spec/collector.spec", "--no-deadlock", "--const", "CUT=safe", "--html", str(page),
               "--quiet").returncode == 1
    text = page.read_text()
    assert '<table id="checks">' in text
    assert '<tr class="check-violated"><th>property trains(s=0)</th>' in text


# ---- did you mean ----

def spec_file(tmp_path: Path, text: str) -> str:
    path = tmp_path / "t.spec"
    path.write_text(text)
    return str(path)


def test_a_misspelt_keyword_or_name_gets_a_suggestion(tmp_path):
    proc = cli("check", spec_file(tmp_path, "var flag = false\naction a:\n    requre flag\n    flag' = true\n"))
    assert proc.returncode == 2 and "did you mean 'require'?" in proc.stderr, proc.stderr
    proc = cli("check", spec_file(tmp_path, "var flag = false\naction a:\n    require flg\n    flag' = true\n"))
    assert proc.returncode == 2 and "unknown name flg (did you mean flag?)" in proc.stderr, proc.stderr
    proc = cli("check", spec_file(tmp_path, "var x = 0\naction a: x' = 1\ninvarient i: x < 2\n"))
    assert proc.returncode == 2 and "did you mean 'invariant'?" in proc.stderr, proc.stderr


def test_misspelt_command_line_names_get_a_suggestion():
    for args, want in [(["--invariant", "no_promt_lost"], "did you mean no_prompt_lost?"),
                       (["--const", "CUTT=frontier"], "did you mean CUT?"),
                       (["--config", "route-interleavin"], "did you mean route-interleaving?"),
                       (["--view", "promt"], "did you mean prompt?"),
                       (["--property", "train"], "did you mean trains?")]:
        proc = cli("check", "spec/collector.spec", *args)
        assert proc.returncode == 2 and want in proc.stderr, (args, proc.stderr)


# ---- explorer info, and exit codes and examples in every subcommand's help ----

def test_info_lists_what_the_spec_declares():
    proc = cli("info", "spec/collector.spec")
    assert proc.returncode == 0, proc.stderr
    text = proc.stdout
    for want in ("Constants (--const NAME=VALUE):", "  CUT = \"frontier\"", "Configurations (--config NAME):",
                 "  route-interleaving: ", "Invariants (--invariant NAME):", "  no_prompt_lost",
                 "Temporal properties (--property NAME):", "  trains(s in ", "Views (--view NAME):",
                 "  prompt(p in ", "Actions:", "fair dispatch"):
        assert want in text, want
    assert ": step == s and alive leads_to step > s or not alive" in text  # each property's formula
    steps = cli("info", "tests/specs/steps.spec").stdout
    assert "  no_reset: always [up | skip_to]\n" in steps and "  resets_strongly: strong fair reset\n" in steps
    assert cli("info", "spec/nope.spec").returncode == 2


def test_every_subcommand_help_gives_exit_codes_and_examples():
    from explorer.cli import _EPILOGS, build_parser

    commands = build_parser()._subparsers._group_actions[0].choices
    assert set(commands) == set(_EPILOGS)
    for name in commands:
        text = cli(name, "--help").stdout
        assert "exit codes: " in text and "examples:\n  explorer " + name in text, name


# ---- replay takes the constants the trace was found with ----

def test_replay_takes_the_constants_from_the_trace(tmp_path):
    for option in ("--json", "--itf"):
        trace = tmp_path / f"t{option}.json"
        proc = cli("check", "spec/examples/diehard.spec", "--const", "BIG=7", "--const", "SMALL=4", option, str(trace),
                   "--quiet")
        assert proc.returncode == 1
        proc = cli("replay", "spec/examples/diehard.spec", "--trace", str(trace))  # no --const: the trace's
        assert proc.returncode == 1, proc.stdout  # a behaviour, violating not_solved
        assert "Constants from the trace's metadata." in proc.stdout
        assert "Constants: SMALL = 4, BIG = 7" in proc.stdout


def test_replay_under_other_constants_says_which_and_where_it_leaves_the_trace(tmp_path):
    trace = tmp_path / "t.json"
    assert cli("check", "spec/examples/diehard.spec", "--json", str(trace), "--quiet").returncode == 1
    proc = cli("replay", "spec/examples/diehard.spec", "--trace", str(trace), "--const", "BIG=6")
    assert proc.returncode == 4
    assert "except BIG = 6 (the trace: 5)" in proc.stdout
    assert "<fill_big_jug> does NOT reach the recorded state" in proc.stdout
    assert "big = 6 where the trace has 5" in proc.stdout


# ---- eval: an expression at every state of a trace ----

def test_eval_prints_an_expression_at_every_state_of_a_trace():
    trace = json.loads((ROOT / "traces" / "frontier-smallest.json").read_text())["trace"]
    proc = cli("eval", "spec/collector.spec", "--trace", "traces/frontier-smallest.json", "[step, F, ckpt.cut]")
    assert proc.returncode == 0, proc.stderr
    rows = proc.stdout.splitlines()[1:]
    assert len(rows) == len(trace) and rows[0].split()[:3] == ["1", "Initial", "predicate"]
    for row, step in zip(rows, trace):  # the values the trace itself records
        s = step["state"]
        assert row.endswith(f"[{s['step']}, {s['F']}, {s['ckpt']['cut']}]") and step["label"] in row, (row, s)


def test_eval_locates_a_mistake_in_the_expression():
    proc = cli("eval", "spec/collector.spec", "--trace", "traces/frontier-smallest.json", "outstandin + 1")
    assert proc.returncode == 2
    assert proc.stderr.startswith("<expression>:1:1: error:") and "did you mean outstanding?" in proc.stderr
    assert "    outstandin + 1\n    ^" in proc.stderr
    proc = cli("eval", "spec/collector.spec", "--trace", "traces/frontier-smallest.json", "step +")
    assert proc.returncode == 2 and proc.stderr.startswith("<expression>:1:")


def test_eval_of_an_expression_that_fails_at_every_state_is_bad_input_with_did_you_mean():
    proc = cli("eval", "spec/collector.spec", "--trace", "traces/frontier-smallest.json", "1 + ckpt.cutt")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "has no field cutt (did you mean cut?)" in proc.stdout  # each state's line says why
    assert proc.stderr.startswith("<expression>:1:10: error: the expression fails at every state")
    assert "    1 + ckpt.cutt\n             ^" in proc.stderr


# ---- simulate: until the first violation by default, and the same artefacts as check ----

def test_simulate_runs_until_the_first_violation_and_writes_what_check_writes(tmp_path):
    out = {k: tmp_path / f"sim.{k}" for k in ("json", "itf", "html", "dot")}
    proc = cli("simulate", "spec/examples/diehard.spec", "--seed", "4", "--diff", *[a for k, p in out.items()
                                                                                  for a in (f"--{k}", str(p))])
    assert proc.returncode == 1, proc.stdout + proc.stderr
    data = json.loads(out["json"].read_text())
    assert data["verdict"] == "violated" and data["mode"] == "simulation" and data["behaviours"] >= 1
    assert "digraph" in out["dot"].read_text() and "<html" in out["html"].read_text().lower()
    replayed = cli("replay", "spec/examples/diehard.spec", "--trace", str(out["itf"]))
    assert replayed.returncode == 1 and "is violated here" in replayed.stdout  # the ITF trace is the behaviour found


def test_simulate_without_a_violation_stops_at_its_time_budget():
    proc = cli("simulate", "spec/examples/diehard.spec", "--invariant", "type_ok", "--max-seconds", "1")
    assert proc.returncode == 3 and "proves nothing" in proc.stdout and "time limit" in proc.stdout


def test_json_reports_start_up_and_search_time_apart(tmp_path):
    out = tmp_path / "r.json"
    proc = cli("check", "spec/examples/diehard.spec", "--json", str(out))
    data = json.loads(out.read_text())
    assert proc.returncode == 1 and data["startup_seconds"] > 0 and data["search_seconds"] >= 0
    assert abs(data["startup_seconds"] + data["search_seconds"] - data["seconds"]) < 0.01


def test_simulate_says_when_it_used_its_default_budget(monkeypatch, capsys):
    import explorer.cli as command_line
    monkeypatch.setattr(command_line, "SIMULATE_SECONDS", 1)
    code = command_line.main(["simulate", str(ROOT / "spec/examples/diehard.spec"), "--invariant", "type_ok"])
    assert code == 3 and "It used its 1-second budget" in capsys.readouterr().out


# ---- the HTML report as a reviewer uses it ----

def test_the_report_shows_the_view_first_and_marks_the_failing_row_and_the_loop(tmp_path):
    page = tmp_path / "loss.html"
    assert cli("check", "spec/collector.spec", "--no-deadlock", "--html", str(page), "--quiet").returncode == 1
    html = page.read_text()
    assert html.index('id="verdict"') < html.index('id="view-prompt"') < html.index('id="checks"') < html.index('id="trace"')
    failing = re.findall(r'<tr class="failing"><th>([^<&]*)', html)
    assert failing == ["2 "]  # the prompt the invariant fails for (its witness, p = 2)
    assert 'href="#state-1"' in html and 'id="state-1"' in html  # grid columns link to the trace's rows
    if "<svg" in html:
        assert '<details id="trace-picture-box"><summary>' in html  # the graphviz picture, collapsed
    lasso = tmp_path / "lasso.html"
    assert cli("check", "spec/collector.spec", "--no-deadlock", "--const", "CUT=safe", "--html", str(lasso),
               "--quiet").returncode == 1
    html = lasso.read_text()
    start = int(re.search(r'<td>(\d+) <span class="note">\(the loop starts here\)', html).group(1))
    marked = [int(n) for n in re.findall(r'<tr class="step loop" id="state-(\d+)"', html)]
    assert marked and marked[0] == start and marked == list(range(start, start + len(marked)))
