import bz2
import doctest
import gzip
import io
import lzma
import os
import stat
import tarfile
import zipfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from clusterdx.facts import archive
from clusterdx.facts.archive import Budget, Limits, detect, member_name_problem, open_archive
from clusterdx.facts.parsers.sysctl import FORMATS as _SYSCTL_FORMATS
from clusterdx.facts.ingest import ingest

#: the sysctl format, from its own module: the registry (every parser) is imported when a test needs it
SYSCTL = next(f for f in _SYSCTL_FORMATS if f.name == "sysctl")
SYSCTL_TEXT = b"kernel.numa_balancing = 1\nvm.swappiness = 60\n"


@pytest.fixture
def work(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def make_tar(entries, compression=""):
    """entries: (name, bytes) for files, or (name, TarInfo-type, linkname) for other kinds."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:" + compression) as tf:
        for entry in entries:
            if len(entry) == 2:
                name, data = entry
                info = tarfile.TarInfo(name)
                info.size = len(data)
                tf.addfile(info, io.BytesIO(data))
            else:
                name, kind, link = entry
                info = tarfile.TarInfo(name)
                info.type = kind
                info.linkname = link
                tf.addfile(info)
    return buf.getvalue()


def make_zip(entries):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name, data, *mode in entries:
            info = zipfile.ZipInfo(name)
            info.compress_type = zipfile.ZIP_DEFLATED
            if mode:
                info.external_attr = mode[0] << 16
            zf.writestr(info, data)
    return buf.getvalue()


def by_path(res):
    return {r.path: r for r in res.inputs}


def test_doctests():
    assert doctest.testmod(archive).failed == 0


@pytest.mark.parametrize(
    "data, kind",
    [
        (gzip.compress(b"x"), "gzip"), (bz2.compress(b"x"), "bzip2"), (lzma.compress(b"x"), "xz"),
        (make_zip([("a", b"x")]), "zip"), (make_tar([("a", b"x")]), "tar"),
        (b"plain text\n" * 100, None), (b"", None), (b"BZh plain", None),
    ],
    # gzip's header holds the time: ids from the bytes differ between xdist workers a second apart
    ids=["gzip", "bzip2", "xz", "zip", "tar", "plain", "empty", "bzh-prefix-plain"],
)
def test_detect_by_magic(data, kind):
    assert detect(data[:512]) == kind


@pytest.mark.parametrize(
    "name, problem",
    [("sub/x.txt", None), ("./x", None), ("/etc/passwd", "absolute path"),
     ("C:/x", "absolute path"), ("a/../../b", "path with a '..' component"),
     ("..\\x", "path with a '..' component"), ("", "empty or invalid member name")],
)
def test_member_names(name, problem):
    assert member_name_problem(name) == problem


def test_tgz_bundle_with_manifest_named_anything(work):
    data = make_tar([
        ("node3/manifest.json", b'{"host": "gpu-node-003", "scope": "container"}'),
        ("node3/sub/sysctl.txt", SYSCTL_TEXT),
        ("node3/host/sysctl.txt", SYSCTL_TEXT),
        ("node3/notes.txt", b"hello\n"),
        ("node3/emptydir/", tarfile.DIRTYPE, ""),
    ], "gz")
    Path("attachment.bin").write_bytes(data)  # the name says nothing; the magic bytes do
    res = ingest(["attachment.bin"], formats=[SYSCTL])
    assert [r.path for r in res.inputs] == [
        "attachment.bin!/node3/host/sysctl.txt",
        "attachment.bin!/node3/manifest.json",
        "attachment.bin!/node3/notes.txt",
        "attachment.bin!/node3/sub/sysctl.txt",
    ]
    recs = by_path(res)
    assert recs["attachment.bin!/node3/manifest.json"].format == "manifest"
    assert {r.node for r in res.inputs} == {"gpu-node-003"}
    assert recs["attachment.bin!/node3/sub/sysctl.txt"].scope == "container"
    # a folder named "host" is no evidence: the manifest's scope holds for every file below it
    assert recs["attachment.bin!/node3/host/sysctl.txt"].scope == "container"
    assert recs["attachment.bin!/node3/sub/sysctl.txt"].status == "parsed"
    assert {f.source.input for f in res.facts} == {"attachment.bin!/node3/host/sysctl.txt",
                                                   "attachment.bin!/node3/sub/sysctl.txt"}


def test_text_named_like_an_archive_is_text(work):
    Path("x.tgz").write_bytes(SYSCTL_TEXT)
    [r] = ingest(["x.tgz"], formats=[SYSCTL]).inputs
    assert (r.path, r.format) == ("x.tgz", "sysctl")


def test_zip_and_single_compressed_files(work):
    Path("a.zip").write_bytes(make_zip([("d/s.txt", SYSCTL_TEXT), ("d/", b"")]))
    Path("b.gz").write_bytes(gzip.compress(SYSCTL_TEXT))
    with open("c.gz", "wb") as raw:  # gzip CLI style: original name in the header
        with gzip.GzipFile(filename="orig-sysctl.txt", mode="wb", fileobj=raw, mtime=0) as gz:
            gz.write(SYSCTL_TEXT)
    Path("d.log.bz2").write_bytes(bz2.compress(SYSCTL_TEXT))
    Path("e.xz").write_bytes(lzma.compress(SYSCTL_TEXT))
    res = ingest(["a.zip", "b.gz", "c.gz", "d.log.bz2", "e.xz"], formats=[SYSCTL])
    assert [(r.path, r.format, r.facts) for r in res.inputs] == [
        ("a.zip!/d/s.txt", "sysctl", 2),
        ("b.gz!/b", "sysctl", 2),
        ("c.gz!/orig-sysctl.txt", "sysctl", 2),
        ("d.log.bz2!/d.log", "sysctl", 2),
        ("e.xz!/e", "sysctl", 2),
    ]


def test_transcript_inside_an_archive(work):
    Path("t.tar").write_bytes(make_tar([("s.txt", b"[root@n9 ~]# sysctl -a\nvm.swappiness = 1\n")]))
    [r] = ingest(["t.tar"], formats=[SYSCTL]).inputs
    assert (r.path, r.node, r.format, r.confidence) == ("t.tar!/s.txt#1", "n9", "sysctl", 0.97)


def test_hostile_tar_members_are_listed_not_extracted(work):
    data = make_tar([
        ("/etc/passwd", b"root:x:0:0\n"),
        ("../../escape.txt", b"x\n"),
        ("ok/../../../escape2.txt", b"x\n"),
        ("link", tarfile.SYMTYPE, "/etc/shadow"),
        ("hard", tarfile.LNKTYPE, "ok.txt"),
        ("dev", tarfile.CHRTYPE, ""),
        ("blk", tarfile.BLKTYPE, ""),
        ("fifo", tarfile.FIFOTYPE, ""),
        ("ok.txt", SYSCTL_TEXT),
    ])
    Path("evil.tar").write_bytes(data)
    before = set(Path(".").rglob("*"))
    recs = by_path(ingest(["evil.tar"], formats=[SYSCTL]))
    assert set(Path(".").rglob("*")) == before  # nothing written anywhere
    assert recs["evil.tar!/etc/passwd"].reason == "absolute path"
    assert recs["evil.tar!/../../escape.txt"].reason == "path with a '..' component"
    assert recs["evil.tar!/ok/../../../escape2.txt"].status == "skipped"
    assert "symbolic link" in recs["evil.tar!/link"].reason
    assert "hard link" in recs["evil.tar!/hard"].reason
    assert recs["evil.tar!/dev"].reason == "device file"
    assert recs["evil.tar!/blk"].reason == "device file"
    assert recs["evil.tar!/fifo"].reason == "FIFO"
    assert all(r.status == "skipped" for p, r in recs.items() if p != "evil.tar!/ok.txt")
    assert recs["evil.tar!/ok.txt"].status == "parsed"


def test_hostile_zip_members(work):
    data = make_zip([
        ("/abs.txt", b"x"),
        ("../up.txt", b"x"),
        ("link", b"/etc/shadow", stat.S_IFLNK | 0o777),
        ("ok.txt", SYSCTL_TEXT, stat.S_IFREG | 0o644),
    ])
    Path("evil.zip").write_bytes(data)
    recs = by_path(ingest(["evil.zip"], formats=[SYSCTL]))
    assert recs["evil.zip!/abs.txt"].reason == "absolute path"
    assert recs["evil.zip!/../up.txt"].status == "skipped"
    assert "symbolic link" in recs["evil.zip!/link"].reason
    assert recs["evil.zip!/ok.txt"].status == "parsed"


def test_nested_archives_once(work):
    inner = make_tar([("inner.txt", SYSCTL_TEXT)], "gz")
    middle = make_zip([("inner.tgz", inner), ("m.txt", SYSCTL_TEXT)])
    outer = make_tar([("middle.zip", middle), ("o.txt", SYSCTL_TEXT)], "gz")
    Path("outer.tgz").write_bytes(outer)
    Path("middle.zip").write_bytes(middle)
    res = ingest(["outer.tgz", "middle.zip"], formats=[SYSCTL])
    got = [(r.path, r.status) for r in res.inputs]
    assert got == [
        ("outer.tgz!/middle.zip!/inner.tgz", "skipped"),
        ("outer.tgz!/middle.zip!/m.txt", "parsed"),
        ("outer.tgz!/o.txt", "parsed"),
        ("middle.zip!/inner.tgz!/inner.txt", "parsed"),
        ("middle.zip!/m.txt", "parsed"),
    ]
    assert "nested" in res.inputs[0].reason


def test_gzip_bomb_is_stopped(work):
    bomb = gzip.compress(b"\0" * (8 << 20))  # 8 MiB of zeros in ~8 KiB
    Path("bomb.gz").write_bytes(bomb)
    Path("bomb.tgz").write_bytes(make_tar([("zeros.txt", b"\0" * (8 << 20))], "gz"))
    limits = Limits(max_ratio=50, ratio_min_bytes=64 << 10, chunk_bytes=64 << 10)
    res = ingest(["bomb.gz", "bomb.tgz"], formats=[SYSCTL], limits=limits)
    assert not res.facts
    [b1] = [r for r in res.inputs if r.path == "bomb.gz"]
    assert b1.status == "skipped" and "decompression bomb" in b1.reason
    assert any(r.path == "bomb.tgz" and "decompression bomb" in r.reason for r in res.inputs)


def test_zip_bomb_member_is_stopped(work):
    Path("z.zip").write_bytes(make_zip([("zeros", b"\0" * (4 << 20)), ("ok.txt", SYSCTL_TEXT)]))
    limits = Limits(max_ratio=50, ratio_min_bytes=64 << 10, chunk_bytes=64 << 10)
    recs = by_path(ingest(["z.zip"], formats=[SYSCTL], limits=limits))
    assert recs["z.zip!/zeros"].status == "skipped"
    assert "decompression bomb" in recs["z.zip!/zeros"].reason
    assert recs["z.zip!/ok.txt"].status == "parsed"


def test_decompressed_total_cap(work):
    Path("big.gz").write_bytes(gzip.compress(b"vm.swappiness = 60\n" * 10000))
    [r] = ingest(["big.gz"], formats=[SYSCTL], limits=Limits(max_total_bytes=50_000)).inputs
    assert r.status == "skipped" and "total size limit" in r.reason


def test_member_size_cap_truncates(work):
    line = b"vm.swappiness = 60\n"
    Path("t.tar").write_bytes(make_tar([("big.txt", line * 100)]))
    Path("t.zip").write_bytes(make_zip([("big.txt", line * 100)]))
    res = ingest(["t.tar", "t.zip"], formats=[SYSCTL], limits=Limits(max_file_bytes=len(line) * 10))
    for r in res.inputs:
        assert r.status == "partial" and r.reason.startswith("truncated at"), r
        assert r.facts == 10


def test_member_count_cap(work):
    entries = [(f"f{i:02}.txt", SYSCTL_TEXT) for i in range(20)]
    Path("many.tar").write_bytes(make_tar(entries))
    Path("many.zip").write_bytes(make_zip(entries))
    res = ingest(["many.tar", "many.zip"], formats=[SYSCTL], limits=Limits(max_members=5))
    tar_recs = [r for r in res.inputs if r.path.startswith("many.tar")]
    zip_recs = [r for r in res.inputs if r.path.startswith("many.zip")]
    for recs in (tar_recs, zip_recs):
        assert len(recs) == 6
        [note] = [r for r in recs if r.status == "skipped"]
        assert "15 more archive entries" in note.reason


def test_member_count_cap_covers_nested_archives(work):
    inner = make_tar([(f"i{i}.txt", SYSCTL_TEXT) for i in range(10)])
    Path("o.tar").write_bytes(make_tar([("inner.tar", inner)]))
    res = ingest(["o.tar"], formats=[SYSCTL], limits=Limits(max_members=4))
    parsed = [r for r in res.inputs if r.status == "parsed"]
    assert len(parsed) == 3  # one entry went to inner.tar itself
    assert any("more archive entries" in r.reason for r in res.inputs)


def test_corrupt_and_truncated_archives(work):
    good = make_tar([("a.txt", SYSCTL_TEXT), ("b.txt", os.urandom(20000))], "gz")
    Path("cut.tgz").write_bytes(good[: len(good) // 2])
    Path("junk.gz").write_bytes(b"\x1f\x8b\x08\x00garbage garbage garbage")
    Path("junk.zip").write_bytes(b"PK\x03\x04" + b"\xff" * 100)
    Path("empty.tar").write_bytes(make_tar([]) or b"")
    res = ingest(["cut.tgz", "junk.gz", "junk.zip"], formats=[SYSCTL])
    recs = by_path(res)
    assert recs["cut.tgz!/a.txt"].status == "parsed"
    assert any(r.path.startswith("cut.tgz") and "truncated" in r.reason for r in res.inputs)
    assert recs["junk.gz"].status == "error"
    assert recs["junk.zip"].status == "error"


def test_empty_archive_is_listed(work):
    Path("e.zip").write_bytes(make_zip([]))
    [r] = ingest(["e.zip"], formats=[SYSCTL]).inputs
    assert r.status == "skipped" and "no files" in r.reason


def test_open_archive_budget_is_charged():
    budget = Budget(1 << 20)
    data = gzip.compress(b"a" * 1000)
    listing = open_archive(data, "x.gz", Limits(), budget)
    assert listing.members[0].data == b"a" * 1000
    assert budget.left == (1 << 20) - 1000


def test_single_compressed_file_over_the_member_cap(work):
    line = b"vm.swappiness = 60\n"
    Path("big.gz").write_bytes(gzip.compress(line * 100))
    [r] = ingest(["big.gz"], formats=[SYSCTL], limits=Limits(max_file_bytes=len(line) * 10)).inputs
    assert (r.path, r.status, r.facts) == ("big.gz!/big", "partial", 10)
    assert r.reason.startswith("truncated at")


def test_unsupported_compression_is_named(work):
    Path("x.zst").write_bytes(b"\x28\xb5\x2f\xfd" + b"\x00" * 20)
    [r] = ingest(["x.zst"], formats=[SYSCTL]).inputs
    assert r.status == "skipped" and "zstd" in r.reason


_GOOD = [make_tar([("a/s.txt", SYSCTL_TEXT), ("b.bin", bytes(range(256)) * 8)], c) for c in ("", "gz", "bz2", "xz")]
_GOOD.append(make_zip([("a/s.txt", SYSCTL_TEXT), ("b.bin", bytes(range(256)) * 8)]))


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(base=st.sampled_from(_GOOD), cut=st.integers(0, 6000), flip=st.integers(0, 6000),
       junk=st.binary(max_size=64))
def test_damaged_archives_never_crash(tmp_path, base, cut, flip, junk):
    data = bytearray(base[:cut] if cut < len(base) else base)
    if data and flip < len(data):
        data[flip] ^= 0xFF
    p = tmp_path / "damaged"
    p.write_bytes(bytes(data) + junk)
    res = ingest([p], formats=[SYSCTL], limits=Limits(max_members=50))
    assert res.inputs


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(magic=st.sampled_from([b"\x1f\x8b", b"\x1f\x8b\x08\x00", b"PK\x03\x04", b"PK\x05\x06",
                              b"BZh91AY&SY", b"\xfd7zXZ\x00"]), rest=st.binary(max_size=600))
def test_random_bytes_behind_archive_magic_never_crash(tmp_path, magic, rest):
    p = tmp_path / "blob"
    p.write_bytes(magic + rest)
    assert ingest([p], formats=[SYSCTL]).inputs
