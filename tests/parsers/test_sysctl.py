import doctest

import pytest
from hypothesis import given, settings, strategies as st

from clusterdx.facts.base import NotApplicable, ParseError
from clusterdx.facts.parsers import sysctl
from tests.parsers.helpers import of_type, parse_text


def test_doctests():
    assert doctest.testmod(sysctl).failed == 0


def test_windows_line_ends_and_permission_warnings():
    ctx = parse_text("sysctl", "kernel.numa_balancing = 0\r\nsysctl: permission denied on key 'x.y'\r\n")
    [f] = of_type(ctx, "kernel.sysctl")
    assert f.key == "kernel.numa_balancing" and f.value_num == 0
    assert ctx.warnings and ctx.warnings[0][0] == 2


def test_dash_n_uses_key_from_command():
    ctx = parse_text("sysctl", "1\n", command="sysctl -n kernel.numa_balancing")
    [f] = ctx.facts
    assert (f.key, f.value_num) == ("kernel.numa_balancing", 1)


def test_no_sysctl_lines_is_not_applicable():
    with pytest.raises(NotApplicable):
        parse_text("sysctl", "hello world\n")


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=2000))
def test_never_raises_anything_else(text):
    try:
        parse_text("sysctl", text)
    except (ParseError, NotApplicable):
        pass
