"""The pages as a reader meets them (issue 50): every Markdown file renders (its code fences close,
by CommonMark's rules), the commands they show run as written after the README's set-up line,
the README's usage names every option of each command, and the figures they state are the
code's (the temporal forms, which engine has the 1,000,000-state threshold)."""
from __future__ import annotations

import argparse
import re
import subprocess
import tomllib
from pathlib import Path

import pytest

from explorer.cli import build_parser

ROOT = Path(__file__).resolve().parent.parent
PAGES = ["README.md", "CHANGELOG.md", "bench/README.md", "traces/README.md", *(f"docs/{p.name}" for p in
         sorted((ROOT / "docs").glob("*.md"))), *(f"conformance/{p.name}" for p in sorted((ROOT / "conformance").glob("*.md")))]
OPEN = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")


def markdown_files() -> list[str]:
    """Every Markdown file git tracks (the generated traces/*/sweep.md too), or the named pages
    outside a checkout."""
    listed = subprocess.run(["git", "ls-files", "*.md"], cwd=ROOT, capture_output=True, text=True)
    return sorted(set(listed.stdout.split()) | set(PAGES)) if listed.returncode == 0 and listed.stdout else PAGES


def unclosed_fence(text: str) -> int | None:
    """The line of a code fence that never closes, or None. A fence closes only with the same
    character, at least as many of them and nothing after them: "``` text" opens nothing and
    closes nothing, so everything after it renders inside out."""
    fence, start = None, 0
    for n, line in enumerate(text.splitlines(), 1):
        m = OPEN.match(line)
        if m is None:
            continue
        marks, rest = m.groups()
        if fence is None:
            if not (marks[0] == "`" and "`" in rest):  # a backtick fence's info string has no backtick
                fence, start = marks, n
        elif marks[0] == fence[0] and len(marks) >= len(fence) and not rest.strip():
            fence = None
    return start if fence is not None else None


def test_the_checker_sees_the_fence_that_broke_docs_language_md():
    assert unclosed_fence("text\n```\ncode\n``` Keywords are whole words:\nmore\n") == 2
    assert unclosed_fence("```python\nx = 1\n````\n~~~\n```\n~~~\n") is None


@pytest.mark.parametrize("page", markdown_files())
def test_every_code_fence_closes(page):
    where = unclosed_fence((ROOT / page).read_text(encoding="utf-8"))
    assert where is None, f"{page}:{where}: this code fence never closes"


def usage_lines() -> dict[str, str]:
    """The README's usage block, command -> its lines (comments aside)."""
    block = (ROOT / "README.md").read_text().split("## Using it", 1)[1].split("```", 2)[1]
    usage: dict[str, str] = {}
    command = None
    for line in block.splitlines():
        m = re.match(r"python -m explorer (\S+)", line)
        if m:
            command = m.group(1)
        if command:
            usage[command] = usage.get(command, "") + line.split("#", 1)[0] + "\n"
    return usage


def test_the_readme_usage_names_every_option_of_every_command():
    usage = usage_lines()
    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices
    for name, parser in commands.items():
        options = {s for a in parser._actions for s in a.option_strings if s.startswith("--") and s != "--help"}
        shown = set(re.findall(r"--[a-z][a-z-]*", usage.get(name, "")))
        shown |= {a.option_strings[-1] for a in parser._actions if a.option_strings[:1] == ["-o"]
                  and " -o " in usage.get(name, "")}
        assert options == shown, f"{name}: missing {sorted(options - shown)}, unknown {sorted(shown - options)}"


def test_the_commands_the_pages_show_run_as_written_after_the_set_up_line():
    """The pages say `python -m explorer` (and `pip install`): the README's first line activates the
    .venv it installs into, and says how to in a new shell, so those commands run as written."""
    readme = (ROOT / "README.md").read_text()
    setup = readme.split("\n\n", 1)[0]
    first = setup.splitlines()[0]
    assert re.search(r"python3\.11 -m venv \.venv && \. \.venv/bin/activate && pip install", first), first
    assert "python -m explorer check spec/collector.spec" in first and "python -m pytest" in setup
    assert "\n    .venv/bin/" not in setup  # one way, not two
    assert re.search(r"in a new shell,\s+`\. \.venv/bin/activate`", readme[:3000])
    for page in PAGES:
        text = (ROOT / page).read_text()
        assert ".venv/bin/python -m explorer" not in text, page  # the pages' one form: `python -m explorer`
    for template in sorted((ROOT / "spec" / "study").glob("*.j2")):
        assert ".venv/bin/python -m explorer" not in template.read_text(), template.name
    # `explorer eval ...` as the pages and --help's examples write it: the console script of that name
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["explorer"] == "explorer.cli:run"


def test_the_pages_count_the_temporal_forms_the_parser_has():
    """docs/language.md's first property block has one line per fixed form; the pages say how many."""
    from explorer.lang.model import load_spec

    language = (ROOT / "docs/language.md").read_text()
    block = language.split("## Temporal properties and fairness", 1)[1].split("```", 2)[1]
    lines = [line.split("#", 1)[0] for line in block.strip().splitlines()][:12]
    spec = ("const CLIENTS = {1}\nconst RESOURCES = {1}\nvar x = 0\nvar request = false\nvar response = false\n"
            "var done = false\nvar stable = false\nvar started = false\nvar running = false\n"
            "action send: x' = 1\naction receive: x' = 0\naction reply: x' = 1 - x\n" + "\n".join(lines) + "\n")
    forms = {p.form for p in load_spec(spec).properties}
    assert "ltl" not in forms and len(forms) == 12 == len(lines)
    for page in ("README.md", "docs/language.md"):
        text = (ROOT / page).read_text()
        assert "three forms" not in text, page
        assert "twelve fixed forms" in text, page


def test_the_readme_says_which_engine_has_the_million_state_threshold():
    from explorer.engine.explore import AUTO_FINGERPRINTS

    readme = (ROOT / "README.md").read_text()
    said = [m.start() for m in re.finditer(r"1,000,000 states", readme)]
    assert said and f"{AUTO_FINGERPRINTS:,}" == "1,000,000"
    for at in said:
        assert "Python engine" in readme[max(0, at - 120):at], readme[at - 120:at + 40]
    assert "native engine has no such threshold" in readme


LINK = re.compile(r"\]\(([^)\s]*)#([^)\s]+)\)")


def anchors(text: str) -> set[str]:
    """The anchors GitHub gives a page's headings (lower case, punctuation dropped, spaces to
    hyphens, a repeated one suffixed -1, -2, ...), outside code fences, and its explicit ids."""
    found: set[str] = set(re.findall(r"<a (?:id|name)=\"([^\"]+)\"", text))
    seen: dict[str, int] = {}
    fence = None
    for line in text.splitlines():
        m = OPEN.match(line)
        if m:
            fence = None if fence and m.group(1)[0] == fence else (fence or m.group(1)[0])
            continue
        heading = re.match(r"^#{1,6} +(.*?) *#*$", line)
        if fence or not heading:
            continue
        slug = re.sub(r"[^\w\- ]", "", heading.group(1).lower()).replace(" ", "-")
        found.add(slug if slug not in seen else f"{slug}-{seen[slug]}")
        seen[slug] = seen.get(slug, 0) + 1
    return found


def test_the_anchor_checker_slugs_as_github_does():
    text = "# Which parts of `ledger` are needed: the code's checkpoint\n## A\n## A\n```\n# not\n```\n"
    assert anchors(text) == {"which-parts-of-ledger-are-needed-the-codes-checkpoint", "a", "a-1"}


@pytest.mark.parametrize("page", markdown_files())
def test_every_link_to_a_section_finds_its_heading(page):
    """A reader who follows "kept" or "Superseded" lands on the section, not on the page's top."""
    text = (ROOT / page).read_text(encoding="utf-8")
    for target, anchor in LINK.findall(text):
        if "://" in target or not (target == "" or target.endswith(".md")):
            continue
        path = (ROOT / page).parent / target if target else ROOT / page
        assert path.is_file(), f"{page}: {target}#{anchor}: no such page"
        assert anchor in anchors(path.read_text(encoding="utf-8")), f"{page}: {target}#{anchor}: no such heading"
