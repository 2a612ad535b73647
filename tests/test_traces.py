"""traces/ is the collector study's output (`explorer study spec/study/collector.toml`), never
written by hand: searching an exported counterexample's point again gives byte for byte what is
committed (timings aside), and the page covers every run."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

from explorer.engine.native.loader import compiler

ROOT = Path(__file__).resolve().parent.parent
TRACES = ROOT / "traces"
EXPORTED = {"txt": ".txt", "json": ".json", "itf": ".itf.json", "dot": ".dot", "view": ".view.txt"}  # trace set -> file


ENGINE_KEYS = ("engine", "engine_note", "fingerprints", "fingerprint_bits", "fingerprint_collision_probability")
ENGINE_LINES = r"^(States were remembered by \d+-bit fingerprint;|The Python engine ran:).*\n"


def normalized(path: Path, engine_blind: bool = False) -> str:
    """Timings aside; `engine_blind` also sets aside which engine ran and how it remembered states
    (what a machine without a C compiler cannot reproduce of a native search's files)."""
    text = path.read_text()
    if path.name.endswith(".json"):
        data = json.loads(text)
        timing = ("seconds", "startup_seconds", "search_seconds", "spot_checked", "spot_check_seconds")  # spot checks: bounded by time
        for key in timing + (ENGINE_KEYS if engine_blind else ()):
            data.pop(key, None)
        return json.dumps(data, indent=1, sort_keys=True)
    if engine_blind:
        text = re.sub(ENGINE_LINES, "", text, flags=re.M)
    text = re.sub(r"^Spot checks: .*$", "Spot checks: <a number bounded by time>", text, flags=re.M)
    return re.sub(r"^Finished in .*$", "Finished in <time>", text, flags=re.M)


def test_the_exported_counterexamples_regenerate_as_committed(tmp_path, monkeypatch):
    """traces/frontier-smallest.* and liveness-default.* (the study's [[exports]]): each is its
    sweep's first counterexample where the export's constants hold, and that point searched again
    as the sweep searches it gives its files byte for byte."""
    from explorer.study.study import load_study
    from explorer.study.sweep import search_point

    monkeypatch.chdir(ROOT)  # the study names the spec as spec/collector.spec, as the traces record it
    study = load_study("spec/study/collector.toml")
    assert sorted(e.name for e in study.exports) == ["frontier-smallest", "liveness-default"]
    for export in study.exports:
        sweep = next(s for s in study.sweeps if s.name == export.sweep)
        runs = json.loads((TRACES / export.sweep / "sweep.json").read_text())["runs"]
        row = next(r for r in runs if r["verdict"] == "refuted" and all(r["constants"][k] == v for k, v in export.at.items()))
        point = next(p for p in sweep.grid.points if p.name == row["name"])
        g = sweep.grid
        record = search_point(g.spec, point.constants, g.invariants, g.deadlock, g.limits, g.fingerprints, g.workers,
                              g.properties)
        assert record["verdict"] == "refuted" and record["trace_length"] == row["trace_length"]
        blind = compiler() is None  # the committed files were written by the native engine
        for kind, suffix in EXPORTED.items():
            fresh = tmp_path / f"{export.name}{suffix}"
            data = record["traces"][kind]
            fresh.write_text(json.dumps(data) if kind in ("json", "itf") else data + ("\n" if kind == "txt" else ""))
            committed = TRACES / f"{export.name}{suffix}"
            assert normalized(fresh, blind) == normalized(committed, blind), (export.name, suffix)


def test_the_report_covers_every_run_in_the_results():
    results = json.loads((TRACES / "results.json").read_text())
    grid = json.loads((TRACES / "rules" / "sweep.json").read_text())  # the grid is the study's sweep `rules`
    readme = (TRACES / "README.md").read_text()
    routes = json.loads((TRACES / "routes" / "sweep.json").read_text())  # and the loss routes, `routes`
    stuck = json.loads((TRACES / "stuck" / "sweep.json").read_text())  # and the stuck runs, `stuck`
    live = json.loads((TRACES / "live" / "sweep.json").read_text())  # and liveness, `live` and `live-beyond`
    assert len(grid["runs"]) >= 100 and len(routes["runs"]) >= 100 and len(stuck["runs"]) >= 100 and results["smallest"]
    assert len(live["runs"]) == len(stuck["runs"]) and all("loop" in r for r in live["runs"] if r["verdict"] == "refuted")
    section = readme.split("\n## The grid (no_prompt_lost", 1)[1].split("\n## ", 1)[0]
    cells = [c.strip() for line in section.splitlines() if line.startswith(("| any |", "| eager |"))
             for c in line.strip("|").split("|")[7:]]  # one column per rule
    assert len(cells) == len(grid["runs"])
    for verdict, word in (("proved", "proved ("), ("refuted", "**refuted**"), ("incomplete", "incomplete")):
        assert sum(c.startswith(word) for c in cells) == sum(r["verdict"] == verdict for r in grid["runs"]), verdict
    assert "Loss routes" in readme and "Can the run get stuck?" in readme and "replayed" in readme


def test_the_committed_counterexample_names_the_lost_prompt():
    text = (TRACES / "frontier-smallest.txt").read_text()
    assert "Error: Invariant no_prompt_lost is violated." in text
    assert re.search(r"Error: It fails for p = \d+\.", text)
    picture = (TRACES / "frontier-smallest.view.txt").read_text()
    assert " L" in picture  # the lost prompt is marked in its last column


def test_the_committed_liveness_lasso_is_a_stall_that_needs_no_crash():
    text = (TRACES / "liveness-default.txt").read_text()
    assert "Error: Property trains(s=0) is violated." in text and "Stuttering" in text
    assert "only restart, which need not fire" in text and "<restart" not in text
    data = json.loads((TRACES / "liveness-default.json").read_text())
    assert data["loop_action"] is None and data["lasso_length"] == len(data["trace"]) + 1


def test_sets_of_integer_sets_and_sequences_are_ordered_as_sort_key_orders_them():
    # the fast path for a set of subsets (printing and --json of a large state) keeps the canonical order
    import random

    from explorer.lang.values import FALSE, TRUE, ordered, sort_key
    rng = random.Random(7)
    for _ in range(200):
        sets = frozenset(frozenset(rng.sample(range(-3, 6), rng.randint(0, 4))) for _ in range(rng.randint(1, 12)))
        seqs = frozenset(tuple(rng.choice(range(-3, 6)) for _ in range(rng.randint(0, 3))) for _ in range(12))
        mixed = sets | seqs | frozenset(rng.sample([1, 2, "a", "b", TRUE, FALSE], 3))
        for s in (sets, seqs, mixed):
            assert ordered(s) == sorted(s, key=sort_key)


def test_itf_of_a_set_of_subsets_is_the_general_encoding():
    # a set mixing kinds, with integer subsets (each written by the plain-integer path)
    from explorer.lang.values import to_itf
    s = frozenset({frozenset({2, 1}), frozenset(), "m", frozenset({3}), 7})
    assert to_itf(s) == {"#set": [7, "m", {"#set": []}, {"#set": [3]}, {"#set": [1, 2]}]}


def test_the_bounds_summary_says_what_rests_on_incomplete_points(tmp_path):
    """The README's section on issue 10's grid is drawn from the sweep's own matrix (a matrix
    section of a study, as spec/study/collector.toml has): each stream shape's tally adds up to the
    sweep's verdicts, a shape with a cut or skipped point is named as not proved, and the plain
    words (the collector study's template, spec/study/collector-deeper.md.j2) never call the rule
    proved there."""
    for template in ("collector-deeper.md.j2", "collector.j2"):  # a study's templates sit beside it
        shutil.copy(ROOT / "spec" / "study" / template, tmp_path / template)
    (tmp_path / "bounds.toml").write_text("""
description = "a small bounds grid"
where = "STEPS * P <= PROMPTS"
[constants]
CUT = "unfinished"
CRASHES = 1
FAILURES = 1
P = 1
AGE = 1
PROMPTS = [3, 4]
STEPS = [2, 3]
TOLERATED_FAILURES = [0, 1]
[check]
invariants = ["no_prompt_lost"]
properties = []
deadlock = false
[limits]
max_states = 1500
skip_beyond_cut = true
""")
    study = tmp_path / "study.toml"
    study.write_text(f'title = "bounds"\nspec = "{ROOT / "spec/collector.spec"}"\n'
                     '[[sweeps]]\nname = "bounds"\ngrid = "bounds.toml"\n'
                     '[[sections]]\nkind = "matrix"\ntitle = "Issue 10\'s grid"\nsweep = "bounds"\n'
                     'rows = ["PROMPTS"]\npivot = "STEPS"\n'
                     '[[sections]]\nkind = "template"\ntitle = "In plain words"\nfile = "collector-deeper.md.j2"\n')
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-m", "explorer", "study", str(study), "--out", str(out)],
                          capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    data = json.loads((out / "bounds" / "sweep.json").read_text())
    verdicts = {(r["shown"]["PROMPTS"], r["shown"]["STEPS"], r["shown"]["TOLERATED_FAILURES"]):
                (r["verdict"], r["stopped_by"]) for r in data["runs"]}
    assert ("proved", None) in verdicts.values() and ("incomplete", "max-states") in verdicts.values()
    assert ("incomplete", "not-run") in verdicts.values()  # something lies beyond a cut point
    table = (out / "README.md").read_text()
    for prompts, steps in {(k[0], k[1]) for k in verdicts}:
        here = [v for k, v in verdicts.items() if k[:2] == (prompts, steps)]
        words = [f"{n} {w}" for n, w in ((sum(v == ("proved", None) for v in here), "proved"),
                                         (sum(v == ("incomplete", "max-states") for v in here), "incomplete"),
                                         (sum(v[1] == "not-run" for v in here), "not run")) if n]
        assert f"{', '.join(words)} (of {len(here)})" in table.split(f"\n| {prompts} |")[1].split("\n")[0]
    summary = table.split("\n## In plain words\n", 1)[1]
    c = data["counts"]
    assert f"{c['proved']} proved, 0 refuted, {c['incomplete']} incomplete" in summary
    shapes = {(k[0], k[1]) for k, v in verdicts.items() if v[0] == "incomplete"}
    assert f"at the other {len(shapes)} shapes" in summary and "**is not proved**" in summary


def test_the_answer_says_what_the_real_code_did_under_the_rule():
    """Issue 30: the (now superseded) answer's line on the real code is conformance/results.json's count, recounted
    here: the model-based tests of the patched tree, its losses, and every divergence explained or
    called a finding."""
    from conformance.mbt import EXPLAINED

    readme = (TRACES / "README.md").read_text()
    top = readme.split("## Superseded: the rule recommended on the one-step checkpoint", 1)[1].split("\n## ", 1)[0]
    row = next(line for line in top.splitlines() if line.startswith("| `lowest_unfinished` on the real code |"))
    data = json.loads((ROOT / "conformance" / "results.json").read_text())
    mbt = [r for r in data["mbt"] if r["rule"] == "lowest_unfinished" and r.get("walk", "uniform") == "uniform"]
    assert ("Model-based tests" in row) == bool(mbt)  # a run with no such walks (`--mbt 0`) claims none
    if mbt:
        assert all(r["behaviours"] >= 60 for r in mbt)
        assert f"{sum(r['behaviours'] for r in mbt):,} random behaviours" in row
        assert f"followed the model in {sum(r['followed'] for r in mbt):,} and diverged in {sum(r['diverged'] for r in mbt)}" in row
        assert f"by the code in {sum(r['code_lost'] for r in mbt)} " in row
        unexplained = sum(v["count"] for r in mbt for k, v in r["kinds"].items() if k not in EXPLAINED)
        assert (f"{unexplained} unexplained, a finding" in row) == (unexplained > 0)
    fixed = [r for r in data["fixed"] if r.get("fix_of") and r["fix"] == "lowest_unfinished"]
    assert not any(r.get("code_lost") for r in fixed) and "and 0 lose one" in row
    assert "`python -m conformance.results --pre TREE --post TREE` (0;" in row


def test_the_readme_opens_with_the_answer_and_each_claim_runs():
    """Issues 31 and 49: the top of traces/README.md names PR #3599's rule, one claim per rule on the
    code's checkpoint (the superseded one-step model's claims in a section of their own, never in the
    answer), the recommended rule's formula, each part of it the ablation shows needed, and a command
    per claim whose exit code is the one written beside it."""
    readme = (TRACES / "README.md").read_text()
    top = readme.split("## The answer, for PR #3599's reviewer", 1)[1].split("\n## ", 1)[0]
    assert readme.index("## The answer") < readme.index("## In plain words") < readme.index("## Superseded")
    assert len(top.splitlines()) <= 40
    assert len(top) <= 10_000  # read in two minutes: no list grows with the number of runs behind it
    assert "`min(lowest in-flight ordinal, trained frontier F)`: rule `in_flight`" in top
    assert "**Recommended: `ledger`.**" in top and "cut = min(ledger | {next_ord})" in top
    assert "**`ledger` keeps every prompt**" in top
    for cited in ("proof-lowest", "ring-lowest", "bounds-frontierless", "ATOMIC_DISPATCH"):
        assert cited not in top, f"the answer cites {cited}, a sweep of the superseded one-step model"
    split = json.loads((TRACES / "split-rules" / "sweep.json").read_text())["runs"]
    for rule in ("in_flight", "frontier"):
        rows = [r for r in split if r["shown"]["CUT"] == rule and r["shown"]["SCHEDULE"] == "any"]
        for kind, words in (("no_prompt_skipped", "skips a prompt"), ("no_group_discarded", "discards a group")):
            mine = [r for r in rows if r["checks"] == kind]
            bad = [r for r in mine if r["verdict"] == "refuted"]
            assert f"{words} on {len(bad)} of {len(mine)} loss routes" in top
    ablation = json.loads((TRACES / "split-ablation" / "sweep.json").read_text())["runs"]
    parts = list(dict.fromkeys(r["shown"]["ABLATE"] for r in ablation))
    needed = [p for p in parts if any(r["shown"]["ABLATE"] == p and r["verdict"] == "refuted" for r in ablation)]
    row = next(line for line in top.splitlines() if line.startswith("| each part of `ledger` is needed |"))
    for p in parts:
        assert (f"`{p}` loses " in row) == (p in needed), p
    claims = re.findall(r"`(python -m explorer [^`]+)` \((\d)\)", top)
    assert len(claims) == 6
    for command, code in claims:
        run = subprocess.run([sys.executable, *command.split()[1:]], capture_output=True, text=True, cwd=ROOT,
                             timeout=600)
        assert run.returncode == int(code), (command, run.stdout[-2000:], run.stderr[-2000:])


def test_the_pending_rules_ablation_sits_at_the_smallest_counterexamples_it_names():
    """spec/study/ablation-pending.toml writes out, by hand, the constants where each term's
    removal first lost a prompt for `unfinished` (traces/ablation) and where `unfinished` itself was
    first refuted (traces/bounds: the pending term). When a spec change moves those points, this
    fails until the grid is re-picked (it went stale once, silently)."""
    from explorer.study.grid import load_grid

    def smallest(name: str) -> list[dict]:
        data = json.loads((TRACES / name / "sweep.json").read_text())
        return [data["runs"][s["index"]]["shown"] for s in data["smallest_refuting"]]

    grid = load_grid(ROOT / "spec/study/ablation-pending.toml", ROOT / "spec/collector.spec")
    points = [{k: str(v).lower() if isinstance(v, bool) else str(v) for k, v in p.constants.items()}
              for p in grid.points]
    wanted = smallest("ablation") + [dict(s, ABLATE="pending") for s in smallest("bounds")]
    axes = ("ABLATE", "P", "AGE", "STEPS", "PROMPTS", "CRASHES", "FAILURES", "TOLERATED_FAILURES", "LOAD_REPLAY_BUFFER")
    for want in wanted:
        assert any(all(p.get(a) == want[a] for a in axes) for p in points), \
            f"no point of ablation-pending.toml at {', '.join(f'{a}={want[a]}' for a in axes)}"


NEEDS = {  # each ingredient a loss may need, taken away where the route has it (spec/study/collector-needs.md.j2)
    "a tolerated failure": lambda c: {"TOLERATED_FAILURES": 0} if c["FAILURES"] >= 1 and c["TOLERATED_FAILURES"] >= 1 else None,
    "a fatal failure": lambda c: {"FAILURES": c["TOLERATED_FAILURES"]} if c["FAILURES"] > c["TOLERATED_FAILURES"] else None,
    "a crash": lambda c: {"CRASHES": 0} if c["CRASHES"] >= 1 else None,
    "no buffer restore": lambda c: {"LOAD_REPLAY_BUFFER": True} if not c["LOAD_REPLAY_BUFFER"] else None,
}  # (a stalled loader, SCHEDULE = eager, is the routes sweep's own eager half)


def test_the_needs_grid_takes_away_each_ingredient():
    """spec/study/needs.toml is written by hand: it must hold exactly each loss route (spec/study/routes.toml,
    SCHEDULE = any) with each ingredient taken away where the route has it, against every rule, so
    the README's "What each loss needs" (which finds each by the one constant it changes) reads
    the runs it names, and a route missing one says "—" only when the route does not have it."""
    from explorer.lang.values import normalize
    from explorer.study.grid import load_grid

    spec = ROOT / "spec/collector.spec"
    grid = load_grid(ROOT / "spec/study/needs.toml", spec)
    routes = load_grid(ROOT / "spec/study/routes.toml", spec)
    written = sorted((p.config, repr(sorted(p.constants.items()))) for p in grid.points)
    meant = [(p.config, repr(sorted({**p.constants, **{k: normalize(v) for k, v in delta.items()}}.items())))
             for p in routes.points if p.constants["SCHEDULE"] == "any"
             for change in NEEDS.values() if (delta := change(p.constants)) is not None]
    assert len(meant) > 50 and written == sorted(meant)


def _box(text: str) -> str:
    return text.split("## The answer in one screen\n", 1)[1].split("\n## ", 1)[0].strip()


def test_the_answer_box_answers_the_four_questions_from_the_sweeps():
    """Issue 50: at the top of traces/README.md and README.md, at most 8 lines and 150 words: whether
    PR #3599's rule loses prompts (the count of loss routes where it skips one, from split-rules), its
    shortest skip as one line of steps with its picture, the recommended rule with its patch, and how
    sure (split-proof's count, with the points split-proof-deep and -deeper decided beyond it, collision
    chance and engine), each figure the sweeps' own."""
    from explorer.study.page import schedule

    readme = (TRACES / "README.md").read_text()
    assert readme.index("## The answer in one screen") < readme.index("## The answer, for PR #3599's reviewer")
    box = _box(readme)
    assert len(box.splitlines()) <= 8
    assert len(re.sub(r"\]\([^)]*\)", "]", box).split()) <= 150
    split = json.loads((TRACES / "split-rules" / "sweep.json").read_text())["runs"]
    pr = [r for r in split if r["shown"]["CUT"] == "in_flight" and r["shown"]["SCHEDULE"] == "any"]
    skip = [r for r in pr if r["checks"] == "no_prompt_skipped"]
    skipped = [r for r in skip if r["verdict"] == "refuted"]
    discarded = [r for r in pr if r["checks"] == "no_group_discarded" and r["verdict"] == "refuted"]
    assert skipped, "the box below is written for a rule that skips prompts"
    barrier = [r for r in skipped if r["constants"]["BARRIER"]]
    assert (f"Yes: on the code's checkpoint `in_flight` skips a prompt (never trained) on {len(skipped)} of "
            f"{len(skip)} loss routes ({len(barrier)} with the code's startup barrier), and discards a finished group "
            f"on {len(discarded)}") in box
    shortest = min(skipped, key=lambda r: (not r["constants"]["BARRIER"], r["trace_length"], r["config"]))
    trace = json.loads((TRACES / "split-rules" / next(f for f in shortest["files"] if f.endswith(".json")
                                                        and not f.endswith(".itf.json"))).read_text())["trace"]
    assert f"({shortest['trace_length']} states, *{shortest['config'][6:]}*, prompt {shortest['witness']}): `{schedule(trace)}`" in box
    picture = re.search(r"\[picture\]\(([^)]+)\)", box).group(1)
    assert picture.endswith(".view.svg") and (TRACES / picture).is_file()
    assert "cut = min(ledger ∪ {cursor})" in box and "(../conformance/patches/ledger.patch)" in box
    proof = json.loads((TRACES / "split-proof" / "sweep.json").read_text())
    runs = proof["runs"]
    for deeper in ("split-proof-deep", "split-proof-deeper"):  # each point from the deepest sweep that decided it
        deep = json.loads((TRACES / deeper / "sweep.json").read_text())
        # a deeper sweep of another engine adds nothing (its proofs are not this engine's)
        decided = ({r["key"]: r for r in deep["runs"] if r["verdict"] in ("proved", "refuted")}
                   if deep["engine"] == proof["engine"] else {})
        runs = [r if r["verdict"] in ("proved", "refuted") else decided.get(r["key"], r) for r in runs]
    proved = [r for r in runs if r["verdict"] == "proved"]
    refuted = [r for r in runs if r["verdict"] == "refuted"]
    from explorer.study.matrix import collision_risk
    _, total, _ = collision_risk(proved)
    assert total < 1e-9
    assert (f"`ledger`: proved at {len(proved)} points" in box and f"refuted at {len(refuted)}, "
            f"collision chance {total:.0e}, engine {proof['engine'][:12]}" in box)
    from explorer.study.grid import load_grid
    undecided = len(load_grid(str(ROOT / "spec/study/split-proof.toml"), str(ROOT / "spec/collector.spec")).points) \
        - len(proved) - len(refuted)
    assert (f"; {undecided} larger points undecided here" in box) == bool(undecided)
    # the same box opens the repository's README.md, its links pointing into traces/
    top = (ROOT / "README.md").read_text()
    assert top.index("## The answer in one screen") < top.index("## Using it")
    copied = _box(top.split("<!-- end of answer-box -->", 1)[0])
    assert copied == re.sub(r"\]\((?!\.\./)([^)#][^)]*)\)", r"](traces/\1)", box).replace("](../", "](")
    for link in re.findall(r"\]\(([^)#]+)\)", copied):
        assert (ROOT / link).exists(), link
