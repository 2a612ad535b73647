"""Fixtures shared by the test modules."""
from __future__ import annotations

import pytest

from explorer.study.crosscheck import find_tlc


@pytest.fixture(scope="session")
def tlc() -> tuple[str, str]:
    """TLC's java and jar, or the test skipped with the reason TLC cannot run here."""
    java, jar, reason = find_tlc()
    if reason:
        pytest.skip(f"TLC cannot run here: {reason}")
    return java, jar
