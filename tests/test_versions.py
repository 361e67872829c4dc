import doctest

import pytest

from clusterdx.facts import versions
from clusterdx.facts.versions import compare_versions, parse_version, version_at_least


def test_doctests():
    assert doctest.testmod(versions).failed == 0


@pytest.mark.parametrize("text, parsed", [
    ("2.4.8", (2, 4, 8)), ("2.4.8+cuda10.1", (2, 4, 8)), (" v2.30.4-1", (2, 30, 4)),
    ("12.6", (12, 6)), ("2.", (2,)), ("2.x", (2,)), ("", None), ("+cuda", None), ("v", None),
    ("١٢.٣", None),  # non-ASCII digits are not version numbers
    ("1234567890.1", None),  # absurdly long part
])
def test_parse(text, parsed):
    assert parse_version(text) == parsed


def test_numeric_not_lexicographic():
    assert compare_versions("2.10.3", "2.9.9") == 1  # a string compare says -1
    assert compare_versions("2.9.9", "2.10.3") == -1
    assert compare_versions("2.18", "2.18.0") == 0
    assert compare_versions((2, 18, 1), "2.18.3") == -1


def test_at_least_both_sides_of_the_threshold():
    assert version_at_least("2.6.4", "2.6") is True
    assert version_at_least("2.6.0", "2.6") is True
    assert version_at_least("2.5.7", "2.6") is False
    assert version_at_least("junk", "2.6") is None
    assert version_at_least("2.6", "junk") is None
