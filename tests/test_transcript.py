import doctest
from pathlib import Path

import pytest

from clusterdx.facts import transcript
from clusterdx.facts.document import split_lines
from clusterdx.facts.transcript import parse_prompt, split_transcript

FORMATS = Path(__file__).parent / "fixtures" / "formats"


def test_doctests():
    assert doctest.testmod(transcript).failed == 0


@pytest.mark.parametrize(
    "line, command, host",
    [
        ("$ lscpu", "lscpu", None),
        ("$ nvidia-smi topo -m", "nvidia-smi topo -m", None),
        ("alice@gpu-node-017:~$ lscpu -e", "lscpu -e", "gpu-node-017"),
        ("alice@gpu-node-017:/data/runs$ ls", "ls", "gpu-node-017"),
        ("alice@login01$ hostname", "hostname", "login01"),
        ("[alice@gpu-node-017 ~]$ numactl --hardware", "numactl --hardware", "gpu-node-017"),
        ("[alice@gpu-node-017 runs]$ ibstat", "ibstat", "gpu-node-017"),
        ("root@dgx-b07:~# dmesg -T", "dmesg -T", "dgx-b07"),
        ("[root@dgx-b07 ~]# cat /proc/cmdline", "cat /proc/cmdline", "dgx-b07"),
        ("(venv) alice@login01$ python -c 'print(1)'", "python -c 'print(1)'", "login01"),
        ("(base) [alice@hpc-3 ~]$ env", "env", "hpc-3"),
        ("bob@mac-7 ~ % sysctl -a", "sysctl -a", "mac-7"),
        ("  $ indented", "indented", None),
    ],
)
def test_prompt_styles(line, command, host):
    p = parse_prompt(line)
    assert p is not None
    assert (p.command, p.host) == (command, host)


@pytest.mark.parametrize(
    "line",
    [
        "# Overhead  Command          Shared Object                 Symbol",
        "#  Rank  0 Group  0 Pid 112233 on gpu-node-017 device  0 [0x18] NVIDIA H100",
        "# ",
        "#",
        "$HOME is not set",
        "0: # nccl-tests version 2.19.6",
        "dgx-b07:40211:40211 [0] NCCL INFO Bootstrap : Using ibp24s0",
        "Maintainer: alice@example.com",
        "## annotation line",
        "kernel.numa_balancing = 1",
        "",
    ],
)
def test_not_prompts(line):
    assert parse_prompt(line) is None


def test_preamble_commands_and_hosts():
    lines = [
        "Hello, output below.",   # 1
        "$ uname -r",             # 2
        "6.8.0-1021-nvidia",      # 3
        "",                       # 4
        "[root@gpu-7 ~]# hostname",  # 5
        "gpu-7",                  # 6
    ]
    segs = split_transcript(lines)
    assert [s.command for s in segs] == [None, "uname -r", "hostname"]
    assert segs[0].lines == ["Hello, output below."] and segs[0].first_line == 1
    assert segs[1].lines == ["6.8.0-1021-nvidia"] and segs[1].first_line == 3
    assert (segs[1].prompt_line, segs[1].last_line) == (2, 3)
    assert segs[2].host == "gpu-7" and segs[2].user == "root"
    assert segs[2].first_line == 6


def test_annotations_are_dropped_and_line_numbers_stay_true():
    lines = [
        "## first annotation",    # 1
        "$ cat x",                # 2
        "## inside the output",   # 3  (leading: cut)
        "a",                      # 4
        "## interior",            # 5  (blanked)
        "b",                      # 6
        "## trailing",            # 7  (cut)
    ]
    [seg] = split_transcript(lines)
    assert seg.command == "cat x"
    assert seg.lines == ["a", "", "b"]
    assert seg.first_line == 4
    for i, text in enumerate(seg.lines):
        if text:
            assert lines[seg.first_line + i - 1] == text


def test_no_prompt_is_one_segment_with_offset():
    segs = split_transcript(["", "line one", "# perf comment", "line two", ""], first_line=10)
    assert len(segs) == 1
    seg = segs[0]
    assert seg.command is None and seg.host is None
    assert seg.lines == ["line one", "# perf comment", "line two"]
    assert seg.first_line == 11


def test_blank_and_annotation_only_input_gives_nothing():
    assert split_transcript([]) == []
    assert split_transcript(["", "## only notes", "  "]) == []


def test_command_without_output_is_kept():
    segs = split_transcript(["$ export A=1", "$ echo $A", "1"])
    assert [(s.command, s.lines) for s in segs] == [("export A=1", []), ("echo $A", ["1"])]
    assert segs[0].last_line == 1


def test_backslash_continuation():
    lines = ["$ srun -N1 \\", "> --container-image=x \\", ">   env", "A=1"]
    [seg] = split_transcript(lines)
    assert seg.command == "srun -N1 --container-image=x env"
    assert seg.lines == ["A=1"] and seg.first_line == 4


def test_empty_prompt_ends_a_segment():
    segs = split_transcript(["$ lscpu", "Architecture: x86_64", "alice@h1:~$ ", ""])
    assert [s.command for s in segs] == ["lscpu"]


def test_virt_detect_fixture():
    path = FORMATS / "virt-detect.txt"
    lines = split_lines(path.read_text())
    segs = split_transcript(lines)
    cmds = [s.command for s in segs]
    assert cmds[0] == "systemd-detect-virt"
    assert cmds.count("systemd-detect-virt") == 5
    assert all(s.command for s in segs)  # only annotations before the first prompt
    for s in segs:
        assert lines[s.prompt_line - 1].startswith("$ ")
        for i, text in enumerate(s.lines):
            if text:
                assert lines[s.first_line + i - 1] == text
        assert not any(t.startswith("## ") for t in s.lines)
