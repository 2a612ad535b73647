"""What a reviewer looks at: views (the spec's own grid of a trace), --diff traces, --dot/--svg
pictures, the HTML report and a sweep's matrix page, and the same page in a real browser with the
network watched."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from explorer import check, load_model
from explorer.lang.errors import SpecError
from explorer.output.report import check_html, sweep_html
from explorer.output.views import grid_text, grids

ROOT = Path(__file__).resolve().parent.parent
COLLECTOR = ROOT / "spec" / "collector.spec"

JOBS = """\
const N = 3
var done = {}
var busy = {}
action start(i in 0..N - 1):
    require i not in busy and i not in done
    busy' = busy | {i}
action finish(i in 0..N - 1):
    require i in busy
    busy' = busy - {i}
    done' = done | {i}
invariant not_two_done: len(done) < 2
view job(i in 0..N - 1): if i in done then "done" else if i in busy then "busy" else "idle"
"""


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "explorer", *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=300, env=env)


@pytest.fixture
def jobs(tmp_path: Path) -> Path:
    path = tmp_path / "jobs.spec"
    path.write_text(JOBS)
    return path


# ---- views ----
def test_a_view_draws_one_row_per_element_and_one_column_per_state(jobs):
    model = load_model(jobs)
    result = check(model)
    assert [s.label for s in result.trace] == ["Initial predicate", "start(i=0)", "start(i=1)", "finish(i=0)",
                                               "finish(i=1)"]
    (grid,) = grids(model, result.trace)
    assert grid.cells == [["idle", "busy", "busy", "done", "done"],
                          ["idle", "idle", "busy", "busy", "done"],
                          ["idle"] * 5]
    assert grid_text(grid) == """\
View job: one row per i, one column per state

i    1  2  3  4  5
0    I  B  B  D  D
1    I  I  B  B  D
2    I  I  I  I  I

states:
   1. Initial predicate
   2. start(i=0)
   3. start(i=1)
   4. finish(i=0)
   5. finish(i=1)

legend: D done, B busy, I idle
"""


def test_an_alarm_status_is_drawn_red_and_only_it(tmp_path):
    from explorer.output.views import ALARM, PALETTE
    spec = tmp_path / "a.spec"
    spec.write_text('var x = 0\naction a: x\' = x + 1\ninvariant i: x < 2\n'
                    'view v(k in 0..1) alarm "bad": if x > k then "bad" else "ok"\n')
    model = load_model(str(spec))
    (grid,) = grids(model, check(model).trace)
    assert grid.alarm == {"bad"} and grid.colors == {"ok": PALETTE[0], "bad": ALARM}
    assert ALARM not in PALETTE and grid_text(grid).endswith("legend: B bad (alarm), O ok\n")
    spec.write_text(spec.read_text().replace('alarm "bad"', 'alarm "bda"'))
    with pytest.raises(SpecError) as err:
        load_model(str(spec))
    assert (err.value.loc.line, err.value.loc.col) == (4, 25) and "'bda' is not a status the view can give" in str(err.value)


def test_the_collector_view_is_the_studys_prompt_picture():
    """The committed picture (traces/frontier-smallest.view.txt, the study's export of its smallest
    loss) is this view drawn now, cell by cell, and it marks the prompt the invariant names."""
    from explorer.output.views import grid_text

    committed_json = json.loads((ROOT / "traces" / "frontier-smallest.json").read_text())
    model = load_model(COLLECTOR, committed_json["constants"])  # the constants the study found smallest
    result = check(model, deadlock=False)
    (grid,) = grids(model, result.trace, ["prompt"])
    assert (ROOT / "traces" / "frontier-smallest.view.txt").read_text().strip() == grid_text(grid).strip()
    lost = committed_json["witness"]["p"]
    assert grid.cells[lost][-1] == "LOST"  # the prompt the invariant names


def test_a_view_that_is_not_a_string_is_a_located_error(tmp_path):
    path = tmp_path / "bad.spec"
    path.write_text(JOBS.replace('view job(i in 0..N - 1): if i in done then "done" else if i in busy then "busy" else "idle"',
                                 "view job(i in 0..N - 1): i in done"))
    with pytest.raises(SpecError) as err:
        load_model(path)
    text = str(err.value)
    assert f"{path}:12:26: error: view job must give a string (a status), but this expression is a boolean" in text
    assert text.splitlines()[-1].index("^") == 4 + 25


def test_a_status_that_is_not_a_string_at_run_time_is_a_located_error(tmp_path):
    path = tmp_path / "runtime.spec"
    path.write_text(JOBS.replace("view job(i in 0..N - 1): if", 'var names = {0: "zero", 1: 1, 2: "two"}\n'
                                 "view job(i in 0..N - 1): if i == 1 then names[i] else if"))
    run = run_cli("check", str(path), "--view", "job")
    assert run.returncode == 2, run.stdout + run.stderr
    assert "Traceback" not in run.stderr
    assert f"{path}:13:26: error: view job must give a string (a status), but for i = 1 in state 1 of the trace " \
           "it gives the integer 1" in run.stderr


def test_views_are_checked_like_every_declaration(tmp_path, jobs):
    twice = tmp_path / "twice.spec"
    twice.write_text(JOBS + 'view job(i in 0..N - 1): "x"\n')
    with pytest.raises(SpecError, match="view job is already defined"):
        load_model(twice)
    run = run_cli("check", str(jobs), "--view", "nope")
    assert run.returncode == 2 and "no view named nope (the spec's views: job)" in run.stderr


def test_check_prints_the_view_and_writes_its_picture(jobs, tmp_path):
    run = run_cli("check", str(jobs), "--view", "job", "--view-dot", str(tmp_path / "v.dot"), "--quiet")
    assert run.returncode == 1
    assert run.stdout.rstrip().endswith("legend: D done, B busy, I idle")
    dot = (tmp_path / "v.dot").read_text()
    assert "view job" in dot and dot.count("<TR>") >= 4


def test_the_exporter_leaves_a_view_as_a_comment(jobs, tmp_path):
    run = run_cli("export-tla", str(jobs), "-o", str(tmp_path / "out"))
    assert run.returncode == 0, run.stderr
    tla = (tmp_path / "out" / "jobs.tla").read_text()
    assert "\\* View job is not exported: it only draws traces" in tla
    assert '"busy"' not in tla  # its statuses are nowhere in the module


# ---- --diff ----
def test_diff_prints_only_what_changed_and_json_keeps_whole_states(jobs, tmp_path):
    full = run_cli("check", str(jobs), "--quiet")
    diff = run_cli("check", str(jobs), "--quiet", "--diff", "--json", str(tmp_path / "r.json"))
    assert diff.returncode == full.returncode == 1
    states = re.split(r"\n(?=State \d+:)", diff.stdout.split("Error: The behavior up to this point is:\n")[1])
    assert states[0] == "State 1: <Initial predicate>\n/\\ done = {}\n/\\ busy = {}\n"
    assert states[1] == "State 2: <start(i=0)>\n/\\ busy = {0}\n"
    assert states[2] == "State 3: <start(i=1)>\n/\\ busy = {0, 1}\n"
    assert states[3] == "State 4: <finish(i=0)>\n/\\ done = {0}\n/\\ busy = {1}\n"
    assert full.stdout.count("/\\ ") == 10 and diff.stdout.count("/\\ ") == 8
    data = json.loads((tmp_path / "r.json").read_text())
    assert all(set(step["state"]) == {"done", "busy"} for step in data["trace"])


# ---- a trace a person reads (issue 50) ----
# 21 variables, more than a screen's worth: one of them changes at each step
WIDE = "".join(f"var v{i} = 0\n" for i in range(20)) + """\
var r = [a = 1, s = [1, 2], m = {"k": true}]
action a: v0' = v0 + 1
invariant small: v0 < 3
"""


def _states(stdout: str) -> list[list[str]]:
    """The trace's states, each as its lines (`State n: <action>`, then `/\\ name = value` ones)."""
    states: list[list[str]] = []
    for line in stdout.split("Error: The behavior up to this point is:\n")[1].splitlines():
        if line.startswith("State "):
            states.append([line])
        elif line.startswith("/\\ ") and states:
            states[-1].append(line)
        elif line:
            break
    return states


@pytest.mark.parametrize("command", [["check"], ["simulate", "--traces", "5"]])
def test_a_wide_state_prints_what_each_step_changed_and_full_prints_it_all(tmp_path, command):
    """A state of 33 variables printed whole at every step buried what each step did (issue 50):
    past 20 variables, the states after the first show only what changed, and say so; --full is
    TLC's form, every variable of every state."""
    spec = tmp_path / "wide.spec"
    spec.write_text(WIDE)
    short = run_cli(*command[:1], str(spec), *command[1:])
    full = run_cli(*command[:1], str(spec), *command[1:], "--full")
    assert short.returncode == full.returncode == 1, short.stdout + short.stderr
    assert "only the variables its step changed, as a state has 21 variables: --full prints every variable" in short.stdout
    states = _states(short.stdout)
    assert len(states) == 4 and len(states[0]) == 22
    assert states[1] == ["State 2: <a>", "/\\ v0 = 1"] and states[3] == ["State 4: <a>", "/\\ v0 = 3"]
    assert "--full prints" not in full.stdout
    assert [len(s) for s in _states(full.stdout)] == [22] * 4
    assert run_cli(*command[:1], str(spec), *command[1:], "--full", "--diff").returncode == 2  # one or the other


def test_a_sweeps_trace_files_follow_the_same_printer(tmp_path):
    from explorer.run.limits import Limits
    from explorer.study.sweep import search_point

    spec = tmp_path / "wide.spec"
    spec.write_text(WIDE)
    record = search_point(str(spec), {}, None, True, Limits(), False, 1)
    assert record["verdict"] == "refuted"
    assert [len(s) for s in _states(record["traces"]["txt"])] == [22, 2, 2, 2]


def test_values_are_written_the_same_way_in_text_html_svg_and_eval(tmp_path):
    """One notation for a person (the spec language's, docs/language.md): the text trace wrote
    TLA+ (`<<1, 2>>`, `[a |-> 1]`, `TRUE`) where the HTML page, the picture and `eval` wrote the
    spec's (`[1, 2]`, `[a = 1]`, `true`); `eval --full` wrote Python's (`(1, 2)`)."""
    spec = tmp_path / "wide.spec"
    spec.write_text(WIDE)
    written = '[a = 1, m = {"k": true}, s = [1, 2]]'
    run = run_cli("check", str(spec), "--full", "--json", str(tmp_path / "r.json"), "--html", str(tmp_path / "r.html"),
                  "--dot", str(tmp_path / "r.dot"))
    assert run.returncode == 1 and f"/\\ r = {written}\n" in run.stdout, run.stdout
    html = (tmp_path / "r.html").read_text()
    assert written.replace('"', "&#34;") in html or written.replace('"', "&quot;") in html
    assert f"r = {written}".replace('"', '\\"') in (tmp_path / "r.dot").read_text()
    for full in ([], ["--full"]):
        shown = run_cli("eval", str(spec), "--trace", str(tmp_path / "r.json"), "r", *full)
        assert shown.returncode == 0 and shown.stdout.count(written) == 4, shown.stdout


# ---- pictures ----
def test_dot_and_svg_of_the_trace(jobs, tmp_path):
    if not shutil.which("dot"):
        pytest.skip("graphviz's dot is not installed")
    run = run_cli("check", str(jobs), "--quiet", "--dot", str(tmp_path / "t.dot"), "--svg", str(tmp_path / "t.svg"))
    assert run.returncode == 1, run.stderr
    assert (tmp_path / "t.dot").read_text().startswith("digraph trace")
    svg = (tmp_path / "t.svg").read_text()
    assert "<svg" in svg and "start(i=1)" in svg


def _without_dot() -> dict[str, str]:
    """An environment whose PATH has no graphviz (the interpreter is called by its full path)."""
    return {**os.environ, "PATH": "/nonexistent"}


def test_svg_without_graphviz_is_a_clear_error_before_the_search(jobs, tmp_path):
    run = run_cli("check", str(jobs), "--svg", str(tmp_path / "t.svg"), env=_without_dot())
    assert run.returncode == 2
    assert "--svg needs graphviz's `dot` program, which is not installed" in run.stderr
    assert "Traceback" not in run.stderr and run.stdout == "" and not (tmp_path / "t.svg").exists()


def test_the_report_says_so_when_graphviz_is_missing(jobs, tmp_path):
    run = run_cli("check", str(jobs), "--quiet", "--html", str(tmp_path / "r.html"), env=_without_dot())
    assert run.returncode == 1, run.stderr
    page = (tmp_path / "r.html").read_text()
    assert "No picture: graphviz&#39;s `dot` program is not installed" in page


# ---- the HTML report ----
def _no_external_references(page: str) -> None:
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", page, re.I)
    assert "<script" not in page.lower() and "@import" not in page and "url(" not in page


def test_the_report_of_a_counterexample(jobs):
    model = load_model(jobs)
    result = check(model)
    page = check_html(model, result, "jobs.spec")
    _no_external_references(page)
    assert "Invariant not_two_done is violated: the trace below, of 5 states, is a shortest behaviour" in page
    rows = re.findall(r'<tr class="step" id="state-\d+">(.*?)</tr>\n(?=<tr class="step"|</tbody>)', page, re.S)
    assert len(rows) == 5
    changed = [re.findall(r'<div class="changed"><code>(.*?)</code>', r) for r in rows]
    assert changed == [[], ["busy = {0}"], ["busy = {0, 1}"], ["done = {0}", "busy = {1}"], ["done = {0, 1}", "busy = {}"]]
    assert all("<details><summary>full state</summary>" in r for r in rows[1:])
    assert 'id="view-job"' in page and ">D</td>" in page
    if shutil.which("dot"):
        assert '<figure id="trace-picture"><svg' in page
    # a table of contents, and each step's action linked to its line in the spec, shown at the end
    contents = re.search(r'<nav id="contents">(.*?)</nav>', page).group(1)
    targets = re.findall(r'href="#([^"]+)"', contents)
    assert targets[0] == "view-job-section" and "trace-section" in targets and targets[-1] == "spec-section"
    assert all(f'id="{t}"' in page for t in targets)
    source = model.spec.text.splitlines()
    for r in rows[1:]:
        line = int(re.search(r'<a href="#spec-L(\d+)"', r).group(1))
        action = re.search(r"<code>(\w+)", r).group(1)
        assert f'id="spec-L{line}"' in page and re.match(rf"\s*(fair\s+)?action {action}\b", source[line - 1])


def _ids(page: str) -> list[str]:
    """Every element's id, as an HTML parser reads the page."""
    from html.parser import HTMLParser

    found: list[str] = []

    class Ids(HTMLParser):
        def handle_starttag(self, tag, attrs):
            found.extend(v for k, v in attrs if k == "id")

    Ids().feed(page)
    return found


def test_every_id_of_a_report_is_unique_and_every_link_in_it_lands(jobs):
    model = load_model(jobs)
    proof = load_model(jobs, {"N": 1})
    for page in (check_html(model, check(model), "jobs.spec"), check_html(proof, check(proof), "jobs.spec")):
        ids = _ids(page)
        assert len(ids) == len(set(ids)), sorted({i for i in ids if ids.count(i) > 1})
        assert {"constants-section", "statistics-section", "constants", "statistics"} <= set(ids)
        assert set(re.findall(r'href="#([^"]+)"', page)) <= set(ids)


def test_the_report_of_a_proof_flags_actions_that_never_fired(tmp_path):
    path = tmp_path / "proof.spec"
    path.write_text("var x = 0\naction up:\n    require x < 2\n    x' = x + 1\naction never:\n    require x > 5\n"
                    "    x' = 0\ninvariant small: x <= 2\n")
    model = load_model(path)
    page = check_html(model, check(model, deadlock=False), str(path))
    assert "Every invariant holds in all 3 reachable states: a proof, for these constants" in page
    assert '<tr class="never"><td><a href="#spec-L5">never</a></td>' in page and "Never fired: never." in page
    assert '<span id="spec-L5"><span class="n">5</span>action never:</span>' in page
    assert 'id="trace"' not in page


def test_an_action_the_constants_rule_out_is_explained_not_flagged(tmp_path):
    """The collector's `pull` and `reserve` need ATOMIC_DISPATCH = false and `refit` needs
    IN_FLIGHT_UPDATES = false: at the defaults they cannot fire, and every output says why
    instead of listing them among the guards that never held."""
    from explorer.output.traces import format_result, result_json
    model = load_model(COLLECTOR, {"CUT": "lowest_unfinished"}, invariants=["no_prompt_lost"])
    result = check(model, deadlock=False)
    assert result.verdict == "holds"
    why = '`require not ATOMIC_DISPATCH and CKPT == "atomic"` is false'
    split_only = '`require CKPT == "split"` is false'  # the split checkpoint's loop and reads (issue 49)
    split = ("take", "pull_stamp", "filter", "process_start", "reserve_split", "process_end", "store", "ck_read",
             "ck_loader", "ck_save")
    assert result_json(model, result)["impossible"] == {
        "pull": why, "reserve": "`require not ATOMIC_DISPATCH` is false", **{a: split_only for a in split},
        "loop_dies": "`require LOOP_FAILURES > 0` is false", "refit": "`require not IN_FLIGHT_UPDATES` is false"}
    assert f"  pull: 0 / 0  (impossible with these constants: {why})" in format_result(model, result)
    page = check_html(model, result, COLLECTOR)
    assert "Never fired" not in page and '<tr class="never">' not in page
    assert "Impossible with these constants (not a guard that failed to hold): pull (" in page
    split = load_model(COLLECTOR, {"CUT": "lowest_unfinished", "ATOMIC_DISPATCH": False, "IN_FLIGHT_UPDATES": False},
                       invariants=["no_prompt_lost"])
    assert [a for a in ("pull", "reserve", "dispatch", "refit") if split.impossible(a)] == ["dispatch"]
    assert split.impossible("take") and split.impossible("pull_stamp")


def test_the_report_of_the_collector_from_the_command_line(tmp_path):
    """The issue's command: the report shows each step's changed variables and the prompt grid."""
    html, svg = tmp_path / "out.html", tmp_path / "out.svg"
    run = run_cli("check", str(COLLECTOR), "--no-deadlock", "--html", str(html), "--svg", str(svg), "--diff")
    assert run.returncode == 1, run.stderr
    page = html.read_text()
    _no_external_references(page)
    assert len(re.findall(r'<tr class="step" id="state-\d+">', page)) == 11
    assert 'id="view-prompt"' in page and 'title="LOST"' in page
    assert '<div class="changed"><code>next_ord = 1</code></div>' in page
    if shutil.which("dot"):
        assert svg.read_text().lstrip().startswith("<?xml")


# ---- a sweep's matrix ----
SWEEP = [
    {"constants": {"P": 1, "CUT": "frontier", "AGE": 1}, "verdict": "proved"},
    {"constants": {"P": 1, "CUT": "frontier", "AGE": 2}, "verdict": "refuted", "link": "frontier-age2.html"},
    {"constants": {"P": 1, "CUT": "in_flight", "AGE": 1}, "verdict": "proved"},
    {"constants": {"P": 1, "CUT": "in_flight", "AGE": 2}, "verdict": "incomplete"},
]


def test_the_sweep_matrix_links_each_refuted_cell_to_its_trace():
    page = sweep_html(SWEEP, "cut rules")
    _no_external_references(page)
    assert "4 points: 2 proved, 1 refuted, 1 incomplete." in page
    assert "For every point: <code>P = 1</code>." in page
    rows = re.findall(r"<tr><th>(CUT=.*?)</th>(.*?)</tr>", page)
    assert [r[0] for r in rows] == ['CUT=&#34;frontier&#34;', 'CUT=&#34;in_<wbr>flight&#34;']  # may break after _
    matrix = page.split('<table id="matrix">')[1]
    assert re.findall(r"<th>(\d)</th>", matrix) == ["1", "2"]  # the columns: AGE
    assert '<td class="refuted"><a href="frontier-age2.html">refuted</a></td>' in rows[0][1]
    assert '<td class="incomplete">incomplete</td>' in rows[1][1]
    with pytest.raises(SpecError, match="does not vary"):
        sweep_html(SWEEP, columns="P")
    with pytest.raises(SpecError, match=r"by P \(by\): it does not vary"):
        sweep_html(SWEEP, by="P")


def test_the_sweep_page_says_what_was_checked_and_sums_up_each_value_of_an_axis():
    """Issue 31: the page opens with what the sweep checked, its limits and time; a summary per
    value of the chosen axis (verdicts and the smallest refuting point, linked), and the matrix
    pivoted on that axis."""
    about = [("Checked", "no_prompt_lost; deadlock off"), ("Limits per point", "max_states = 1000"),
             ("Time", "3.2 s with 2 job(s)"), ("Status", "Finished")]
    page = sweep_html(SWEEP, "cut rules", about=about, by="CUT")
    assert page.index('<dl id="about">') < page.index('<table id="by-axis">') < page.index('<table id="matrix">')
    assert "<dt>Checked</dt><dd>no_prompt_lost; deadlock off</dd>" in page
    summary = page.split('<table id="by-axis">')[1].split("</table>")[0]
    rows = re.findall(r"<tr><th>([^<]*)</th>(.*?)</tr>", summary)[1:]  # under the header
    assert [r[0] for r in rows] == ["&#34;frontier&#34;", "&#34;in_flight&#34;"]
    cells = [re.findall(r"<td[^>]*>(.*?)</td>", r[1]) for r in rows]
    assert cells[0] == ["2", "1", "1", "0", "0", '<a href="frontier-age2.html">CUT=&#34;frontier&#34;, AGE=2</a>']
    assert cells[1] == ["2", "1", "0", "1", "0", "&ndash;"]
    matrix = page.split('<table id="matrix">')[1]
    assert re.findall(r"<tr><th>(AGE=\d)</th>", matrix) == ["AGE=1", "AGE=2"]  # pivoted: CUT is the columns
    assert "CUT" in matrix.split("</tr>")[0] and "frontier" in matrix.split("</tr>")[0]


# ---- in a real browser ----
BROWSER = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--no-first-run", "--disable-sync", "--disable-default-apps",
         "--host-resolver-rules=MAP * ~NOTFOUND"]  # a page that fetches cannot reach anything


def render(page: Path, tmp_path: Path) -> tuple[str, list[str]]:
    """The DOM chromium built from `page`, and every request the page itself made (from
    chromium's network log: requests of the page's file:// origin, not the browser's own)."""
    netlog = tmp_path / f"{page.stem}.netlog.json"
    run = subprocess.run([BROWSER, *FLAGS, f"--log-net-log={netlog}", "--dump-dom", page.as_uri()],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    log = json.loads(netlog.read_text())
    start_job = log["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"]
    requests = [e["params"]["url"] for e in log["events"] if e["type"] == start_job
                and e.get("params", {}).get("network_isolation_key", "").startswith("file://")
                and not e["params"]["url"].startswith(("file:", "data:"))]
    return run.stdout, requests


@pytest.mark.skipif(BROWSER is None, reason="chromium is not installed (Debian: apt-get install chromium)")
def test_the_network_watch_catches_a_page_that_fetches(tmp_path):
    """The check below can fail: a page with an external image and stylesheet is caught."""
    page = tmp_path / "fetching.html"
    page.write_text('<!DOCTYPE html><html><body><img src="http://example.invalid/x.png">'
                    '<link rel="stylesheet" href="https://fonts.example.invalid/a.css"></body></html>')
    _, requests = render(page, tmp_path)
    assert sorted(requests) == ["http://example.invalid/x.png", "https://fonts.example.invalid/a.css"]


@pytest.mark.skipif(BROWSER is None, reason="chromium is not installed (Debian: apt-get install chromium)")
def test_the_report_renders_in_a_browser_and_fetches_nothing(tmp_path):
    html, js = tmp_path / "out.html", tmp_path / "out.json"
    run = run_cli("check", str(COLLECTOR), "--no-deadlock", "--html", str(html), "--json", str(js), "--quiet")
    assert run.returncode == 1, run.stderr
    dom, requests = render(html, tmp_path)
    assert requests == []
    steps = len(json.loads(js.read_text())["trace"])
    body = dom.split('<table id="trace">')[1].split("</table>\n\n<h2>")[0]
    assert len(re.findall(r'<tr class="step" id="state-\d+">', body)) == steps == 11
    assert '<table class="grid view" id="view-prompt">' in dom
    assert dom.index('id="verdict"') < dom.index('id="view-prompt"') < dom.index('id="checks"')  # the grid first
    assert '<tr class="failing"><th>2 ' in dom  # the lost prompt's row, marked
    lost_cell = dom.split('<tr class="failing">')[1].split("</tr>")[0].split("<td")[-1]
    assert 'class="alarm"' in lost_cell and 'title="LOST"' in lost_cell and "#e53935" in lost_cell  # drawn red
    assert "Invariant no_prompt_lost is violated (it fails for p = 2)" in dom
    if shutil.which("dot"):
        assert '<figure id="trace-picture"><svg' in dom
    sweep = tmp_path / "sweep.html"
    sweep.write_text(sweep_html(SWEEP, "cut rules", about=[("Checked", "no_prompt_lost")], by="CUT"))
    dom, requests = render(sweep, tmp_path)
    assert requests == [] and '<a href="frontier-age2.html">refuted</a>' in dom
    summary = dom.split('<table id="by-axis">')[1].split("</table>")[0]  # the per-rule summary, drawn
    assert '<a href="frontier-age2.html">CUT="frontier", AGE=2</a>' in summary.replace("&quot;", '"')


def test_the_report_of_a_liveness_violation_describes_its_lasso(tmp_path):
    """SimpleAllocator2 (tlaplus/Examples): TLC's 6-state lasso, ending by stuttering in state 5."""
    page = tmp_path / "live.html"
    proc = subprocess.run([sys.executable, "-m", "explorer", "check", "spec/examples/simple_allocator2.spec",
                           "--html", str(page)], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    html = page.read_text()
    verdict = re.search(r'<p class="verdict violated" id="verdict">(.*?)</p>', html, re.S).group(1)
    assert "Property" in verdict and "loops (State 6: Stuttering)" in verdict and "stutter there forever" in verdict
    assert len(re.findall(r'<tr class="step( loop)?" id="state-\d+">', html)) == 5 and "The trace (5 states)" in html
    assert re.findall(r'<tr class="step loop" id="state-(\d+)">', html) == ["5"]  # it stutters in its last state
