"""`explorer study`: a study is a file. Its sweeps run as `explorer sweep` runs them (the same
verdicts, the same cache), its page says what they found with the bounds of each claim and never
counts an incomplete point as proved, a rerun is free, and a bad study file is a located error.
"""
from __future__ import annotations

import json
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from explorer.lang.errors import SpecError
from explorer.study.page import render
from explorer.study.study import finished_results, finished_sweep, load_study

ROOT = Path(__file__).resolve().parent.parent
DIEHARD = ROOT / "spec/examples/diehard.spec"
BAKERY = "tests/studies/bakery.toml"  # relative to ROOT, where the commands run: the page names it so


def explorer(*args: str, timeout: int = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "explorer", *map(str, args)], capture_output=True, text=True,
                          cwd=ROOT, timeout=timeout)


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_a_study_of_the_bakery_end_to_end(tmp_path):
    """tests/studies/bakery.toml alone: the verdicts are `explorer sweep`'s on the same grid, the
    page has its sections with their bounds, incomplete points are never counted as proved, and a
    rerun searches nothing (the cache; with --reuse, not even the cache)."""
    out = tmp_path / "study"
    proc = explorer("study", BAKERY, "--out", out)
    assert proc.returncode == 3, proc.stdout + proc.stderr  # N = 3 passes the state limit: incomplete, none refuted
    swept = tmp_path / "swept"
    alone = explorer("sweep", "spec/examples/bakery.spec", "--grid", "tests/studies/bakery-sizes.toml", "--out", swept)
    assert alone.returncode == 3
    mine, theirs = (json.loads((d / "sweep.json").read_text()) for d in (out / "sizes", swept))
    assert mine["counts"] == theirs["counts"] == {"proved": 3, "refuted": 0, "incomplete": 2, "error": 0}
    assert [(r["name"], r["verdict"], r["distinct"]) for r in mine["runs"]] == \
        [(r["name"], r["verdict"], r["distinct"]) for r in theirs["runs"]]
    page = (out / "README.md").read_text()
    for title in ("# The bakery algorithm at small sizes", "## Every size", "## The smallest violation",
                  "## What a larger MAX_NAT changes", "## What a process costs"):
        assert f"\n{title}\n" in f"\n{page}", title
    assert "| `sizes` | `tests/studies/bakery-sizes.toml` | 5 | 3 | 0 | 2 | 0 |" in page
    assert "| 2 | proved (2,303 states) | proved (7,161 states) | proved (17,405 states) |" in page
    assert "| 3 | — | incomplete: the state limit was reached (20,000 states) |" in page
    assert "No point is refuted: 3 proved, 2 incomplete (of 5)." in page
    assert "**0 change verdict** with MAX_NAT, 1 do not, 1 undecided" in page
    assert "| `3` | 0 | — | — | — | 2 |" in page  # N = 3: no completed search to count, both left out
    assert page.count("*Bounds*: `tests/studies/bakery-sizes.toml`, 5 points: N in {2, 3}, MAX_NAT in {2, 3, 4} "
                      "(5 of the 6 combinations); checked: every invariant") == 4
    assert page.count("max_states = 20,000") == 4
    again = explorer("study", BAKERY, "--out", out)  # a cut by max_states is cached too: a rerun stops there
    assert again.returncode == 3 and again.stdout.count(" s (cached)") == 5, again.stdout
    page = (out / "README.md").read_text()
    reused = explorer("study", BAKERY, "--out", out, "--reuse")
    assert reused.returncode == 3 and "sizes: reusing" in reused.stdout and "[1/5]" not in reused.stdout
    assert (out / "README.md").read_text() == page


def test_every_kind_of_section_on_the_jugs(tmp_path):
    """tests/studies/diehard.toml: each section says what the matrix holds, with links to the trace
    files the sweep wrote; an inline grid on a base runs as its own sweep; a study's own template
    reads the sections above it."""
    out = tmp_path / "out"
    proc = explorer("study", "tests/studies/diehard.toml", "--out", out)
    assert proc.returncode == 1, proc.stdout + proc.stderr  # some point refuted
    page = (out / "README.md").read_text()
    jugs = json.loads((out / "jugs" / "sweep.json").read_text())
    verdicts = {r["name"]: r["verdict"] for r in jugs["runs"]}
    assert verdicts["BIG=6,SMALL=2"] == "refuted" and verdicts["BIG=6,SMALL=3"] == "proved"
    # matrix, pivoted on SMALL
    assert "| 3 | proved (10 states) | proved (4 states) |" in page
    assert ("| 6 | **refuted**: [not_solved, 3 states](jugs/points/BIG=6,SMALL=2/not_solved.txt) | proved (6 states) |"
            in page)
    # smallest: the first refuting point in size order, with its files and its check command
    assert "The first refuting point in size order is **BIG=4,SMALL=2**" in page and "smallest refuting" not in page
    assert "`python -m explorer check spec/examples/diehard.spec --const BIG=4 --const SMALL=2" in page
    # ablation: one row per BIG, the study's labels, no counterexample at BIG = 3 within its points
    assert ("| `3` | three gallons | no counterexample found within 2 points: SMALL in {2, 3}: 2 proved (of 2) |"
            in page)
    assert "A counterexample for 3 of the 4 values of BIG: `4`, `5`, `6`; none found for `3`" in page
    # flips: only BIG = 6 changes verdict with SMALL
    assert "Of the 4 groups of points equal but for SMALL: **1 change verdict** with SMALL, 3 do not." in page
    assert "Refuted at SMALL=2 and proved at SMALL=3: 1 group." in page
    # cost: distinct states per BIG, over completed searches
    assert "| `5` | 2 | 9 | 11.5 | 14 |  |" in page
    # the inline grid: BIG = 4 checking type_ok alone proves both points
    typed = json.loads((out / "typed" / "sweep.json").read_text())
    assert typed["grid"] == "tests/studies/diehard.toml#typed" and typed["checks"]["invariants"] == ["type_ok"]
    assert typed["counts"] == {"proved": 2, "refuted": 0, "incomplete": 0, "error": 0}
    assert "Four gallons can be measured with a big jug of 4, 5, 6 gallons, among the 8 points searched." in page
    assert "\n### In words\n" in page  # a section's heading at its level
    # the export: the first refuted point with BIG = 4, its trace set at OUT/four.*
    assert "four: jugs's BIG=4,SMALL=2 copied to" in proc.stdout
    for suffix in (".txt", ".json", ".itf.json"):
        assert (out / f"four{suffix}").read_bytes() == (out / "jugs/points/BIG=4,SMALL=2" / f"not_solved{suffix}").read_bytes()
    # the template read the point's trace steps and the study's data file
    assert "The first refuted point, BIG=4,SMALL=2, reaches 4 gallons by fill_big_jug (big = 4)." in page
    links = re.findall(r"\]\(([^)]+)\)", page)
    assert len(links) >= 15 and all((out / link).exists() for link in links)  # each trace linked, and there


CLIMB = """# a counter that climbs to TOP (or to TOP + 1 when SLIP): `bounded` is a bound, MAX the rule's cost
const TOP = 2
const SLIP = false
const MAX = 10
var x = 0
action up:
    require x < TOP or (SLIP and x == TOP)
    x' = x + 1
invariant bounded: x <= MAX
"""


def climb_study(tmp_path: Path, grid: str, section: str) -> tuple[Path, subprocess.CompletedProcess]:
    """A study of CLIMB over `grid` with one section (TOML lines); its output folder and its run."""
    write(tmp_path / "climb.spec", CLIMB)
    write(tmp_path / "grid.toml", grid)
    study = write(tmp_path / "study.toml", 'title = "climb"\nspec = "climb.spec"\n[[sweeps]]\nname = "climb"\n'
                  'grid = "grid.toml"\n[[sections]]\ntitle = "A section"\nsweep = "climb"\n' + section)
    return tmp_path / "out", explorer("study", study, "--out", tmp_path / "out")


def test_a_least_section_gives_the_cost_of_each_configuration_as_a_bound(tmp_path):
    """`least`: per group, the least value of an integer axis at which the checks were proved, bold
    when the value below it was refuted (with that trace); an upper bound only when nothing just
    below was refuted; "more than" when no value was proved; and every cell agrees with the matrix."""
    out, proc = climb_study(tmp_path, "[[points]]\nTOP = [1, 2]\nSLIP = [false, true]\nMAX = [0, 1, 2]\n"
                                      "[[points]]\nTOP = 3\nSLIP = false\nMAX = [3, 4]\n"
                                      "[check]\ninvariants = [\"bounded\"]\ndeadlock = false\n",
                            'kind = "least"\naxis = "MAX"\n')
    assert proc.returncode == 1, proc.stdout + proc.stderr
    page = (out / "README.md").read_text()
    runs = json.loads((out / "climb" / "sweep.json").read_text())["runs"]
    verdict = {(r["shown"]["TOP"], r["shown"]["SLIP"], int(r["shown"]["MAX"])): r["verdict"] for r in runs}
    assert verdict[("2", "true", 2)] == "refuted" and verdict[("2", "false", 2)] == "proved"
    rows = {tuple(c.strip() for c in line.split("|")[1:3]): line for line in page.splitlines()
            if line.startswith("| ") and line.count("|") == 6}
    assert "| **1** | refuted at [bounded" in rows[("1", "false")]  # x reaches 1: MAX = 0 refuted
    assert "| **2** |" in rows[("1", "true")] and "| **2** |" in rows[("2", "false")]
    assert "| more than 2 | 3 **refuted** (of 3) |" in rows[("2", "true")]  # x reaches 3: none searched holds
    assert "| at most 3 | no smaller MAX searched |" in rows[("3", "false")]
    assert "the least MAX at which bounded was proved. Tight (bold) in 3 of the 5 groups" in page
    assert "an upper bound only in 1" in page and "no value proved in 1" in page
    link = re.search(r"refuted at \[[^]]*\]\(([^)]+)\)", rows[("1", "false")]).group(1)
    assert (out / link).exists() and "MAX=0" in link


def test_a_sweep_over_named_configurations_shows_their_names(tmp_path):
    """Points taken from configurations (`config` in [[points]]) carry the name into sweep.json,
    and a section may group by `config` as by an axis."""
    write(tmp_path / "climb.toml", "[low]\nTOP = 1\n[high]\nTOP = 3\nSLIP = true\n")
    out, proc = climb_study(tmp_path, '[[points]]\nconfig = ["low", "high"]\nMAX = [1, 4]\n'
                                      '[check]\ninvariants = ["bounded"]\ndeadlock = false\n',
                            'kind = "matrix"\nrows = ["config"]\npivot = "MAX"\n')
    assert proc.returncode == 1, proc.stdout + proc.stderr
    runs = json.loads((out / "climb" / "sweep.json").read_text())["runs"]
    assert sorted((r["config"], r["shown"]["MAX"], r["verdict"]) for r in runs) == [
        ("high", "1", "refuted"), ("high", "4", "proved"), ("low", "1", "proved"), ("low", "4", "proved")]
    page = (out / "README.md").read_text()
    assert "| config | MAX=1 | MAX=4 |" in page and "| low | proved (2 states) | proved (2 states) |" in page
    assert "| high | **refuted**: [bounded, 3 states" in page
    assert "MAX in {1, 4}, config in {low, high}" in page and "by configuration: TOP, SLIP" in page  # the bounds


def test_a_study_replays_a_trace_at_every_point_of_its_grid(tmp_path):
    """[[replays]]: each trace replayed at each point as `explorer replay` replays it (the same
    output, file for file), a `replay` section's table says what the spec says of each, `--reuse`
    takes the replays as they are, and a changed trace is replayed again."""
    write(tmp_path / "up3.trace", "up\nup\nup\n")
    write(tmp_path / "climb.spec", CLIMB)
    write(tmp_path / "grid.toml", "[constants]\nTOP = [2, 3]\n[check]\ninvariants = [\"bounded\"]\ndeadlock = false\n")
    study = write(tmp_path / "study.toml", 'title = "climb"\nspec = "climb.spec"\n[[sweeps]]\nname = "climb"\n'
                  'grid = "grid.toml"\n[[replays]]\nname = "story"\ntraces = ["up3.trace"]\n'
                  '[replays.grid]\nbase = "grid.toml"\n[replays.grid.constants]\nSLIP = [false, true]\nMAX = 2\n'
                  '[[sections]]\nkind = "replay"\ntitle = "The story"\nreplay = "story"\n')
    out = tmp_path / "out"
    proc = explorer("study", study, "--out", out)
    assert proc.returncode == 0, proc.stdout + proc.stderr  # the sweep's verdicts alone decide the exit code
    page = (out / "README.md").read_text()
    assert "| trace | TOP | SLIP | what the spec says | output |" in page
    said = {tuple(c.strip() for c in line.split("|")[2:4]): line.split("|")[4].strip()
            for line in page.splitlines() if line.startswith("| `up3.trace`")}
    assert said == {("2", "false"): "not a behaviour: step `up` is not enabled",
                    ("2", "true"): "a behaviour; bounded violated at state 4",
                    ("3", "false"): "a behaviour; bounded violated at state 4",
                    ("3", "true"): "a behaviour; bounded violated at state 4"}
    assert "3 of the 4 replays are behaviours of the spec, 3 of them violating an invariant" in page
    assert "fixed: MAX = 2; checked along each trace: bounded" in page
    for link in re.findall(r"\]\((story/[^)]+)\)", page):  # each output is what `explorer replay` prints
        point = dict(kv.split("=") for kv in link.split("/")[2].split(","))
        alone = explorer("replay", tmp_path / "climb.spec", "--trace", tmp_path / "up3.trace",
                         "--const=MAX=2", *(f"--const={k}={v}" for k, v in point.items()))
        assert alone.stdout == (out / link).read_text(), link
    again = explorer("study", study, "--out", out, "--reuse")
    assert "story: reusing" in again.stdout and (out / "README.md").read_text() == page
    write(tmp_path / "up3.trace", "up\nup\n")
    changed = explorer("study", study, "--out", out, "--reuse")
    assert "story: replaying" in changed.stdout and "no invariant violated" in (out / "README.md").read_text()


def test_a_separate_sweep_is_never_run_by_the_study_and_read_as_it_stands(tmp_path):
    """`separate = true`: a sweep too long for a study's run. The study never runs it: before
    `explorer sweep` has written its folder the page says nothing about it; after, it reads its
    sweep.json as it stands, and says when that sweep has not finished."""
    write(tmp_path / "climb.spec", CLIMB)
    write(tmp_path / "grid.toml", '[constants]\nTOP = [1, 2]\n[check]\ninvariants = ["bounded"]\ndeadlock = false\n')
    study = write(tmp_path / "study.toml", 'title = "climb"\nspec = "climb.spec"\n[[sweeps]]\nname = "long"\n'
                  'grid = "grid.toml"\nseparate = true\n[[sections]]\nkind = "matrix"\ntitle = "Long"\nsweep = "long"\n')
    out = tmp_path / "out"
    first = explorer("study", study, "--out", out)
    assert first.returncode == 0 and "long: not run by the study (separate = true); no " in first.stdout
    assert not (out / "long").exists() and "has no finished matrix here" in (out / "README.md").read_text()
    assert explorer("sweep", tmp_path / "climb.spec", "--grid", tmp_path / "grid.toml", "--out", out / "long").returncode == 0
    data = json.loads((out / "long" / "sweep.json").read_text())
    data["finished"] = False  # as a sweep stopped part way leaves it
    (out / "long" / "sweep.json").write_text(json.dumps(data))
    again = explorer("study", study, "--out", out)
    assert "reading" in again.stdout and "sweeping" not in again.stdout
    page = (out / "README.md").read_text()
    assert "**the sweep has not finished**" in page and "| 1 | proved (2 states) |" in page.replace("TOP=", "")


def test_a_page_template_places_sections_itself(tmp_path):
    """`page`: the study's own frame for the whole page; `section(id)` puts a section where the frame
    wants it (drawn as the default page draws it), `rest()` every section it has not placed, in the
    study's order, and a mistake in the frame is a located error."""
    write(tmp_path / "climb.spec", CLIMB)
    write(tmp_path / "grid.toml", '[constants]\nTOP = [1, 2]\n[check]\ninvariants = ["bounded"]\ndeadlock = false\n')
    write(tmp_path / "frame.md.j2", '# My frame\n\n{{ section("second") }}\n\nBetween.\n\n{{ rest() }}\n')
    sections = "".join(f'[[sections]]\nkind = "matrix"\ntitle = "{t}"\nid = "{i}"\nsweep = "climb"\n'
                       for t, i in (("First", "first"), ("Second", "second"), ("Third", "third")))
    study = write(tmp_path / "study.toml", 'title = "climb"\nspec = "climb.spec"\npage = "frame.md.j2"\n[[sweeps]]\n'
                  'name = "climb"\ngrid = "grid.toml"\n' + sections)
    proc = explorer("study", study, "--out", tmp_path / "out")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    page = (tmp_path / "out" / "README.md").read_text()
    assert page.startswith("# My frame\n\n## Second\n") and "\n\nBetween.\n\n## First\n" in page
    assert page.index("## First") < page.index("## Third") and page.count("## Second") == 1
    assert page.index("`climb`: 2 points") > page.index("## First")  # the sweep's line: its first section in the study
    write(tmp_path / "frame.md.j2", '{{ section("fourth") }}\n')
    bad = explorer("study", study, "--out", tmp_path / "out")
    assert bad.returncode == 2 and "no section has the id 'fourth'" in bad.stderr and "Traceback" not in bad.stderr


def test_a_page_whose_sweeps_have_not_all_finished_is_still_drawn(tmp_path):
    """A study stopped before some sweep (or redrawn without it): a template section or page template
    that reads that sweep says so instead of failing, and the page is written; with every sweep here,
    the same mistake in a template is the template's error."""
    write(tmp_path / "climb.spec", CLIMB)
    write(tmp_path / "grid.toml", '[constants]\nTOP = [1, 2]\n[check]\ninvariants = ["bounded"]\ndeadlock = false\n')
    write(tmp_path / "words.md.j2", "The second sweep has {{ sweeps.second.data.points }} points.\n")
    write(tmp_path / "frame.md.j2", '# Frame\n\n{{ sweeps.second.data.points }} points\n\n{{ rest() }}\n')
    study = write(tmp_path / "study.toml", 'title = "climb"\nspec = "climb.spec"\n'
                  '[[sweeps]]\nname = "first"\ngrid = "grid.toml"\n[[sweeps]]\nname = "second"\ngrid = "grid.toml"\n'
                  '[[sections]]\nkind = "template"\ntitle = "Words"\nfile = "words.md.j2"\n')
    out = tmp_path / "out"
    assert explorer("study", study, "--out", out).returncode == 0
    assert "The second sweep has 2 points." in (out / "README.md").read_text()
    (out / "second" / "sweep.json").unlink()
    page = render(load_study(study), finished_results(load_study(study), out))
    assert "Not drawn: the template reads what is not here" in page and "the sweeps second have not finished" in page
    write(study, study.read_text().replace('spec = "climb.spec"\n', 'spec = "climb.spec"\npage = "frame.md.j2"\n'))
    page = render(load_study(study), finished_results(load_study(study), out))
    assert "reads sweeps that have not finished here (second): this is the default page" in page
    assert "## Words" in page
    write(tmp_path / "words.md.j2", "{{ sweeps.secnd.data.points }}\n")  # a typo, with every sweep there
    assert explorer("study", study, "--out", out).returncode == 2


def test_a_least_section_needs_an_integer_axis(tmp_path):
    _, proc = climb_study(tmp_path, "[constants]\nSLIP = [false, true]\n[check]\ninvariants = [\"bounded\"]\n",
                          'kind = "least"\naxis = "SLIP"\n')
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert f"{tmp_path / 'study.toml'}:10:1: error: axis: 'SLIP' must be an integer axis" in proc.stderr


# (the study file's text, its line and column of the error, words of the message)
HEAD = 'title = "t"\nspec = "../../spec/examples/diehard.spec"\n[[sweeps]]\nname = "a"\ngrid = "../grids/diehard.toml"\n'
STUDY_ERRORS = [
    ('title = "t"\nspec = "../../spec/examples/diehard.spec"\nsweps = []\n', 3, 1,
     "unknown key sweps (did you mean sweeps?)"),
    ('spec = "../../spec/examples/diehard.spec"\n[[sweeps]]\nname = "a"\ngrid = "../grids/diehard.toml"\n', None, None,
     "a study file needs `title`"),
    ('title = "t"\nspec = "nope.spec"\n[[sweeps]]\nname = "a"\ngrid = "../grids/diehard.toml"\n', 2, 1, "spec: cannot read"),
    ('title = "t"\nspec = "../../spec/examples/diehard.spec"\n[[sweeps]]\nname = "a"\ngrid = "nope.toml"\n', 5, 1,
     "grid: no grid file"),
    ('title = "t"\nspec = "../../spec/examples/diehard.spec"\n[[sweeps]]\nname = "a/b"\ngrid = "../grids/diehard.toml"\n',
     4, 1, "name: the sweep's folder in OUT"),
    (HEAD + '[[sweeps]]\nname = "a"\ngrid = "../grids/diehard.toml"\n', 7, 1, "two sweeps are named 'a'"),
    ('title = "t"\nspec = "../../spec/examples/diehard.spec"\n[[sweeps]]\nname = "a"\n[sweeps.grid]\n'
     'base = "../grids/diehard.toml"\n[sweeps.grid.constants]\nBIGG = 4\n', 8, 1,
     "unknown constant BIGG (did you mean BIG?)"),
    (HEAD + '[[sections]]\nkind = "matrx"\ntitle = "m"\nsweep = "a"\n', 7, 1, "kind must be one of matrix"),
    (HEAD + '[[sections]]\nkind = "matrix"\ntitle = "m"\nsweep = "b"\n', 9, 1, "sweep: no sweep named 'b'"),
    (HEAD + '[[sections]]\nkind = "flips"\ntitle = "m"\nsweep = "a"\naxis = "SMAL"\n', 10, 1,
     "axis: 'SMAL' is not an axis of the sweep's grid (did you mean SMALL?)"),
    (HEAD + '[[sections]]\nkind = "cost"\ntitle = "m"\nsweep = "a"\naxis = "BIG"\nmetric = "states"\n', 11, 1,
     "metric: one of distinct"),
    (HEAD + '[[sections]]\nkind = "ablation"\ntitle = "m"\nsweep = "a"\n', 6, 1, "a ablation section needs `axis`"),
    (HEAD + '[[sections]]\nkind = "template"\ntitle = "m"\nfile = "nope.md.j2"\n', 9, 1, "file: no template 'nope.md.j2'"),
    (HEAD + '[[sections]]\nkind = "matrix"\ntitle = "m"\nsweep = "a"\npivot = 3\n', 10, 1, "pivot must be a string"),
    (HEAD + '[[sections]\n', 6, 11, "bad TOML"),
    (HEAD + '[[sections]]\nkind = "replay"\ntitle = "m"\nreplay = "b"\n', 9, 1, "replay: no replay set named 'b'"),
    (HEAD + '[[replays]]\nname = "r"\ntraces = ["nope.trace"]\ngrid = "../grids/diehard.toml"\n', 8, 1,
     "traces: no trace file"),
    (HEAD + '[[replays]]\nname = "a"\ntraces = ["diehard.toml"]\ngrid = "../grids/diehard.toml"\n', 7, 1,
     "two sweeps or replay sets are named 'a'"),
    (HEAD + '[[replays]]\nname = "r"\ngrid = "../grids/diehard.toml"\n', 6, 1, "[[replays]] #1 needs `traces`"),
    ('title = "t"\nspec = "../../spec/examples/diehard.spec"\n[data]\nfacts = "nope.json"\n[[sweeps]]\nname = "a"\n'
     'grid = "../grids/diehard.toml"\n', 4, 1, "data.facts: no file"),
    ('title = "t"\nspec = "../../spec/examples/diehard.spec"\n[data]\nfacts = { out = "../x.json" }\n[[sweeps]]\n'
     'name = "a"\ngrid = "../grids/diehard.toml"\n', 4, 1, 'or { out = "NAME" }, a file in the output folder'),
    (HEAD + '[[sections]]\nkind = "matrix"\ntitle = "m"\nsweep = "a"\nlevel = 7\n', 10, 1, "level: the heading's depth"),
    (HEAD + '[[exports]]\nname = "x"\nsweep = "a"\nat = { BIGG = 4 }\n', 9, 1,
     "at: BIGG is not a constant the sweep's grid sets (did you mean BIG?)"),
    (HEAD + '[[sections]]\nkind = "matrix"\ntitle = "m"\nid = "box"\nsweep = "a"\n[[copies]]\nfile = "../grids/diehard.toml"\n'
     'section = "bx"\nout = "o"\n', 13, 1, "no section has the id 'bx' (did you mean box?)"),
    (HEAD + '[[sections]]\nkind = "matrix"\ntitle = "m"\nid = "box"\nsweep = "a"\n[[copies]]\nfile = "../grids/diehard.toml"\n'
     'section = "box"\nout = "o"\n', 12, 1, "has no place for the copy: put the lines"),
]


@pytest.mark.parametrize("text,line,col,words", STUDY_ERRORS)
def test_bad_study_files_are_located(tmp_path, text, line, col, words):
    """A study file lives beside the grids it names (paths are relative to it): written into
    tests/studies/ for the test, removed after."""
    study = ROOT / "tests" / "studies" / f"bad-{tmp_path.name}.toml"
    try:
        study.write_text(text)
        proc = explorer("study", study, "--out", tmp_path / "out", timeout=60)
    finally:
        study.unlink()
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stdout + proc.stderr
    first = proc.stderr.splitlines()[0]
    where = f"{study}:{line}:{col}: error: " if line else f"{study}: error: "
    assert first.startswith(where) and words in first, first
    if line:
        assert proc.stderr.splitlines()[1] == "    " + text.splitlines()[line - 1]
    assert not (tmp_path / "out").exists()  # nothing is run for a bad study


def test_a_template_mistake_is_located_in_the_template(tmp_path):
    (tmp_path / "words.md.j2").write_text("fine\n{% if %}\n")
    study = write(tmp_path / "s.toml", f'title = "t"\nspec = "{DIEHARD}"\n[[sweeps]]\nname = "a"\n'
                                       f'grid = "{ROOT / "tests/grids/diehard.toml"}"\n'
                                       '[[sections]]\nkind = "template"\ntitle = "w"\nfile = "words.md.j2"\n')
    with pytest.raises(SpecError) as err:
        load_study(study)
    assert err.value.path == str(tmp_path / "words.md.j2") and err.value.loc.line == 2


def test_the_collector_study_reuses_the_committed_sweeps(tmp_path, monkeypatch):
    """spec/study/collector.toml names the sweeps committed in traces/: with --reuse it runs
    nothing, and its page says what their sweep.json files hold."""
    monkeypatch.chdir(ROOT)
    study = load_study("spec/study/collector.toml")  # as the command names it (ROOT is the working folder)
    finished = [p.parent.name for p in (ROOT / "traces").glob("*/sweep.json") if finished_sweep(p.parent)]
    ran = [s.name for s in study.sweeps if not s.separate]  # a separate sweep is read as it stands, never run
    assert sorted(ran) == sorted(n for n in finished if n in ran)  # every sweep the study runs has finished
    assert [s.name for s in study.sweeps if s.separate] == ["ring-lowest", "proof-lowest", "split-proof", "split-proof-deep", "split-proof-deeper", "split-ablation", "split-recipes"]
    for s in study.sweeps:
        (tmp_path / s.name).mkdir()
        shutil.copy(ROOT / "traces" / s.name / "sweep.json", tmp_path / s.name / "sweep.json")
        if (ROOT / "traces" / s.name / "points").exists():  # the traces a template reads
            shutil.copytree(ROOT / "traces" / s.name / "points", tmp_path / s.name / "points")
    shutil.copy(ROOT / "traces" / "results.json", tmp_path / "results.json")  # the study's data in OUT
    proc = explorer("study", "spec/study/collector.toml", "--reuse", "--out", tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr  # the earlier rules are refuted
    assert proc.stdout.count(": reusing ") == len(ran) and "sweeping" not in proc.stdout
    assert "proof-lowest: not run by the study (separate = true); reading" in proc.stdout
    assert "ring-lowest: not run by the study (separate = true); reading" in proc.stdout
    page = (tmp_path / "README.md").read_text()  # the study's page is traces/README.md (its frame: `page`)
    assert page == (ROOT / "traces" / "README.md").read_text()  # what is committed is what the study draws
    for section in study.sections:
        assert f"\n{'#' * section.level} {section.title}\n" in page
    bounds = json.loads((tmp_path / "bounds" / "sweep.json").read_text())
    at = [r for r in bounds["runs"] if r["shown"]["P"] == "2" and r["shown"]["PROMPTS"] == "8" and r["shown"]["STEPS"] == "3"]
    tally = ", ".join(f"{n} {w}" for n, w in ((sum(r["verdict"] == "proved" for r in at), "proved"),
                                              (sum(r["verdict"] == "refuted" for r in at), "**refuted**"),
                                              (sum(r["stopped_by"] == "not-run" for r in at), "not run")) if n)
    assert "| 2 | 8 | " in page and f"| {tally} (of {len(at)}) |" in page.split("## Issue 10's grid: `unfinished` ")[1]
    lowest = json.loads((tmp_path / "ablation-lowest" / "sweep.json").read_text())
    terms = {r["constants"]["ABLATE"] for r in lowest["runs"]}
    assert {r["constants"]["ABLATE"] for r in lowest["runs"] if r["verdict"] == "refuted"} == terms  # each term needed
    assert f"A counterexample for {len(terms)} of the {len(terms)} values of ABLATE" in page
    assert "**The weakest rule found is `lowest_unfinished`**" in page
    assert page.count("    # needed") == len(terms)
    assert render(study, finished_results(study, tmp_path)) == page  # the page is what the API renders
    # a page that places some sections itself (traces/README.md): those alone, or all but those
    found = finished_results(study, tmp_path)
    alone, rest = render(study, found, whole=False, ids={"retrain"}), render(study, found, whole=False, skip={"retrain"})
    titles = [s.title for s in study.sections]
    retrain = next(s.title for s in study.sections if s.id == "retrain")
    assert re.findall(r"^##+ (.*)$", alone, re.M) == [retrain]
    assert re.findall(r"^##+ (.*)$", rest, re.M) == [t for t in titles if t != retrain]
    assert "`retrain`: 72 points" in alone and "| any | frontier | **1** |" in alone


def test_the_page_says_when_a_sweep_searched_another_text_of_its_spec(tmp_path):
    """A committed matrix is only current while the spec text it searched is the checkout's: a
    sweep's line says how many of its searches were made from another text, and nothing when none."""
    spec, grid = tmp_path / "diehard.spec", tmp_path / "diehard.toml"
    spec.write_text(DIEHARD.read_text())
    grid.write_text((ROOT / "tests/grids/diehard.toml").read_text())
    study = write(tmp_path / "s.toml", 'title = "t"\nspec = "diehard.spec"\n[[sweeps]]\nname = "jugs"\n'
                                       'grid = "diehard.toml"\n[[sections]]\nkind = "matrix"\ntitle = "m"\n'
                                       'sweep = "jugs"\n')
    out = tmp_path / "out"
    assert explorer("study", study, "--out", out).returncode == 1
    page = (out / "README.md").read_text()
    assert "`jugs`: 8 points, **3 proved, 5 refuted, 0 incomplete**" in page and "give now" not in page
    spec.write_text(spec.read_text() + "\n# a comment changes the text, so every key\n")
    again = load_study(study)
    assert (f"8 of its 8 searches are not what `{grid}` and `{spec}` give now"
            in render(again, finished_results(again, out)))


def test_a_stopped_study_writes_its_page_and_runs_no_later_sweep(tmp_path):
    """SIGTERM during a sweep: that sweep writes its matrix (its unfinished points incomplete), the
    later sweeps do not run, the page says so, and --reuse would not take the stopped sweep."""
    write(tmp_path / "slow.toml", """
[constants]
CUT = "safe"
AGE = 2
TOLERATED_FAILURES = 1
[[points]]
FAILURES = 0
PROMPTS = 3
[[points]]
FAILURES = [2, 3]
PROMPTS = 8
STEPS = 6
CRASHES = 3
[check]
invariants = ["retrained_bounded"]  # holds (MAX_RETRAINED = 1000): the big points search for minutes
deadlock = false
""")
    study = write(tmp_path / "s.toml", f'title = "t"\nspec = "{ROOT / "spec/collector.spec"}"\n'
                                       '[[sweeps]]\nname = "slow"\ngrid = "slow.toml"\n'
                                       '[[sweeps]]\nname = "later"\ngrid = "slow.toml"\n'
                                       '[[sections]]\nkind = "matrix"\ntitle = "m"\nsweep = "later"\n')
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "explorer", "study", str(study), "--out", str(out)], cwd=ROOT,
                            stdout=subprocess.PIPE, text=True, start_new_session=True)
    while not (line := proc.stdout.readline()).startswith("slow [1/3]"):  # the first (small) point is done
        assert line, "the study ended before its first point"
    time.sleep(3)  # the second point is searching
    proc.send_signal(signal.SIGTERM)
    rest, _ = proc.communicate(timeout=60)
    assert proc.returncode == 3, rest
    data = json.loads((out / "slow" / "sweep.json").read_text())
    assert data["runs"][0]["verdict"] == "proved" and all(r["verdict"] == "incomplete" for r in data["runs"][1:])
    assert not (out / "later").exists() and "later:" not in rest
    page = (out / "README.md").read_text()
    assert "**The study was terminated**: later did not run" in page
    assert "The sweep `later` has no finished matrix here" in page
    assert finished_sweep(out / "slow") is None  # stopped: --reuse runs it again (from its cache)


def test_a_page_drawn_after_a_run_says_what_its_sweep_json_says(tmp_path, monkeypatch):
    """The page a study draws as it runs is the one `--reuse` draws from the files: a sweep's data
    is its sweep.json as written, not the matrix read again later (a clock read twice gave the
    page 233 s and the file 232.5)."""
    from explorer.study import matrix
    from explorer.study.study import run_sweep
    ticks = iter(range(10**6))
    monkeypatch.setattr(matrix.time, "monotonic", lambda: next(ticks) * 0.37)  # every reading later
    grid = load_study(ROOT / "tests/studies/diehard.toml").sweeps[0].grid
    done = run_sweep(grid, tmp_path / "out")
    assert done.data == json.loads((tmp_path / "out" / "sweep.json").read_text())


def test_a_section_is_copied_into_another_file_between_its_markers(tmp_path):
    """`[[copies]]`: a section also written into a file outside OUT (a repository's README), between
    its markers, the rest of the file kept and every link made relative to that file."""
    from explorer.study.study import copy_markers

    write(tmp_path / "climb.spec", CLIMB)
    write(tmp_path / "grid.toml", '[constants]\nTOP = [1, 2]\n[check]\ninvariants = ["bounded"]\ndeadlock = false\n')
    write(tmp_path / "box.md.j2", 'See [the matrix](climb/sweep.md) and [the top](#box).\n')
    study = write(tmp_path / "study.toml", 'title = "climb"\nspec = "climb.spec"\n[[sweeps]]\nname = "climb"\n'
                  'grid = "grid.toml"\n[[sections]]\nkind = "template"\ntitle = "Box"\nid = "box"\nfile = "box.md.j2"\n'
                  '[[copies]]\nfile = "doc/README.md"\nsection = "box"\nout = "out"\n')
    begin, end = copy_markers(str(study), "box")
    (tmp_path / "doc").mkdir()
    write(tmp_path / "doc" / "README.md", f"# Mine\n\n{begin}\nold text\n{end}\n\nThe rest.\n")
    proc = explorer("study", study, "--out", tmp_path / "out")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    doc = (tmp_path / "doc" / "README.md").read_text()
    assert doc.startswith(f"# Mine\n\n{begin}\n## Box\n") and doc.endswith(f"{end}\n\nThe rest.\n")
    assert "old text" not in doc
    assert "See [the matrix](../out/climb/sweep.md) and [the top](../out/README.md#box)." in doc
    proc = explorer("study", study, "--reuse", "--out", tmp_path / "elsewhere")  # drawn elsewhere: not copied
    assert proc.returncode == 0 and (tmp_path / "doc" / "README.md").read_text() == doc


def test_a_schedule_is_one_line_with_repeated_blocks_counted():
    """`schedule` (for the study's templates): a trace's step labels in one line, a block of one to
    four steps repeated in a row written once with its count, the initial state left out."""
    from explorer.study.page import schedule

    steps = [{"label": "Initial predicate"}] + [{"label": x} for x in
                                                ["a", "b", "a", "b", "a", "b", "c", "c", "c", "d(x=1)", "a", "b"]]
    assert schedule(steps) == "(a, b) ×3, c ×3, d(x=1), a, b"
    assert schedule([{"label": "Initial predicate"}]) == ""


def test_a_deeper_sweep_decides_only_what_the_shallow_one_left_undecided():
    """SweepView.deepened (the answer's split-proof with split-proof-deep): an undecided point takes
    the deeper sweep's verdict for the same search (cache key), a decided one keeps its own, a point
    the deeper sweep also cut stays undecided at the deeper limit (`cuts`), a chain of three reads as
    one, and a deeper sweep of another engine adds nothing."""
    from types import SimpleNamespace
    from explorer.study.page import SweepView

    def row(key: str, verdict: str, files: tuple[str, ...] = (), cut: bool = True) -> dict:
        return {"key": key, "verdict": verdict, "files": list(files), "shown": {}, "checks": "all",
                **({"stopped_by": "max-states"} if verdict == "incomplete" and cut else {})}

    def view(name: str, engine: str, rows: list[dict], limit: int) -> SweepView:
        data = {"runs": rows, "axes": [], "checks": {"separately": False}, "engine": engine,
                "counts": {"proved": 0, "refuted": 0, "incomplete": 0, "error": 0}, "limits": {"max_states": limit}}
        return SweepView(SimpleNamespace(name=name, grid=None), data, "")

    shallow = view("s", "e1", [row("a", "proved"), row("b", "incomplete"), row("c", "incomplete"), row("d", "incomplete"),
                               row("e", "incomplete"), row("f", "incomplete"), row("g", "incomplete")], 30)
    deep = view("d", "e1", [row("a", "incomplete"), row("b", "proved"), row("c", "refuted", ("c.txt",)), row("d", "incomplete"),
                            {**row("f", "incomplete", cut=False), "stopped_by": "max-memory"}, {**row("g", "incomplete", cut=False), "stopped_by": "not-run"}], 100)
    both = shallow.deepened(deep)
    assert [r["verdict"] for r in both.rows] == ["proved", "proved", "refuted"] + ["incomplete"] * 4
    assert both.data["counts"] == {"proved": 2, "refuted": 1, "incomplete": 4, "error": 0}
    assert both.file(both.rows[2], "txt") == "d/c.txt" and [r["verdict"] for r in shallow.rows][1] == "incomplete"
    # d was cut again at 100; e was not searched deeper (still cut at 30, to be searched deeper); f was
    # stopped deeper by memory (no longer a state cut: the template says "stopped before the end"); g
    # was not run by the deeper sweep (an interrupted one), so what is known of it is the shallow cut
    assert [r.get("stopped_by") for r in both.rows][5] == "max-memory"
    assert both.cuts() == [(100, 1, False), (30, 2, True)] and shallow.cuts() == [(30, 6, False)]
    deeper = view("x", "e1", [row("d", "proved"), row("e", "incomplete")], 400)
    three = both.deepened(deeper)
    assert [r.get("sweep") for r in three.rows] == [None, "d", "d", "x", "x", "d", None]
    assert three.cuts() == [(400, 1, False), (30, 1, True)]
    assert shallow.deepened(view("d", "e2", deep.rows, 100)) is shallow and shallow.deepened(None) is shallow
