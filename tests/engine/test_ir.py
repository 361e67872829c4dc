import pytest

from clusterdx.engine.ir import ConditionError, parse_condition, to_dnf


def dnf(text, aliases):
    return sorted((sorted(p), sorted(n)) for p, n in to_dnf(parse_condition(text, aliases)))


def test_default_condition_is_conjunction_of_all_aliases():
    assert dnf("", ["a", "b"]) == [(["a", "b"], [])]


def test_or_and_not_to_dnf():
    assert dnf("a and (b or not c)", ["a", "b", "c"]) == [(["a"], ["c"]), (["a", "b"], [])]


def test_de_morgan():
    assert dnf("not (a or b) and c", ["a", "b", "c"]) == [(["c"], ["a", "b"])]


def test_one_of_prefix():
    assert dnf("g and 1 of hot_*", ["g", "hot_a", "hot_b"]) == [(["g", "hot_a"], []), (["g", "hot_b"], [])]


def test_contradiction_dropped():
    assert dnf("a and not a", ["a"]) == []


@pytest.mark.parametrize("text,col", [("a and", 6), ("a andd b", 3), ("(a", 3), ("zz", 1)])
def test_errors_carry_a_column(text, col):
    with pytest.raises(ConditionError) as exc:
        parse_condition(text, ["a", "b"])
    assert exc.value.col == col
