"""The compiled KB's key found without reading the files (kbcache.load_key): always the content
key (kbcache.source_key) of the files as they are now, however they were changed."""

from __future__ import annotations

import os
import time

import pytest

from clusterdx.engine import kbcache


@pytest.fixture
def tree(tmp_path, monkeypatch):
    monkeypatch.setenv(kbcache.ENV_DIR, str(tmp_path / "cache"))
    monkeypatch.delenv(kbcache.ENV_OFF, raising=False)
    root = tmp_path / "kb"
    (root / "rules").mkdir(parents=True)
    for name, text in (("a.yaml", "schema: x\nid: a\nthreshold: 10\n"), ("rules/b.yaml", "schema: x\nid: b\n")):
        (root / name).write_text(text)
    return root


def _files(root):
    return {root: sorted(root.rglob("*.yaml"))}


def _aliases(tmp_path):
    return sorted((tmp_path / "cache").glob(f"{kbcache.ALIAS_PREFIX}-*.json"))


def _no_hashing(monkeypatch):
    def refuse(*a, **k):
        raise AssertionError("read the files although their key was stored")

    monkeypatch.setattr(kbcache, "source_key", refuse)


def test_settled_files_are_keyed_by_their_stat(tree, tmp_path, monkeypatch):
    monkeypatch.setattr(kbcache, "SETTLED_NS", 0)
    key = kbcache.load_key([tree], _files(tree))
    assert key == kbcache.source_key([tree], _files(tree))
    assert len(_aliases(tmp_path)) == 1
    _no_hashing(monkeypatch)
    assert kbcache.load_key([tree], _files(tree)) == key


@pytest.mark.parametrize("change", ["same size", "other size", "new file", "removed", "renamed", "touched"])
def test_a_changed_file_is_another_key(tree, tmp_path, monkeypatch, change):
    monkeypatch.setattr(kbcache, "SETTLED_NS", 0)
    before = kbcache.load_key([tree], _files(tree))
    time.sleep(0.05)  # past one tick of the file clock: the settle time is off in this test
    a = tree / "a.yaml"
    if change == "same size":
        a.write_text(a.read_text().replace("10", "20"))
    elif change == "other size":
        a.write_text(a.read_text().replace("10", "100"))
    elif change == "new file":
        (tree / "c.yaml").write_text("schema: x\nid: c\n")
    elif change == "removed":
        (tree / "rules" / "b.yaml").unlink()
    elif change == "renamed":
        (tree / "rules" / "b.yaml").rename(tree / "rules" / "b2.yaml")
    else:  # the same bytes, new times: another stat key, the same content key
        os.utime(a)
    after = kbcache.load_key([tree], _files(tree))
    assert after == kbcache.source_key([tree], _files(tree))
    assert (after == before) == (change == "touched")


def test_a_file_changed_just_now_is_read(tree, tmp_path):
    """The look-alike of a settled file: written within the settle time, so a rewrite in the same
    tick of the file clock (same size, same times) must still be seen."""
    a = tree / "a.yaml"
    first = kbcache.load_key([tree], _files(tree))
    assert not _aliases(tmp_path)
    st = a.stat()
    a.write_text(a.read_text().replace("10", "20"))
    os.utime(a, ns=(st.st_atime_ns, st.st_mtime_ns))  # the same mtime, as a fast rewrite keeps it
    second = kbcache.load_key([tree], _files(tree))
    assert second != first and second == kbcache.source_key([tree], _files(tree))


def test_a_stored_alias_that_is_no_key_is_ignored(tree, tmp_path, monkeypatch):
    monkeypatch.setattr(kbcache, "SETTLED_NS", 0)
    key = kbcache.load_key([tree], _files(tree))
    (alias,) = _aliases(tmp_path)
    import orjson

    data = orjson.loads(alias.read_bytes())
    for bad in ("../../etc", 42, "f" * 39):
        data["source_key"] = bad
        alias.write_bytes(orjson.dumps(data))
        assert kbcache.load_key([tree], _files(tree)) == key


def test_cache_off_stores_no_alias(tree, tmp_path, monkeypatch):
    from clusterdx.engine.kb import load_kb

    monkeypatch.setenv(kbcache.ENV_OFF, "1")
    monkeypatch.setattr(kbcache, "SETTLED_NS", 0)
    with pytest.raises(Exception):
        load_kb([tree], cache=True)  # not a knowledge base: the point is what it leaves behind
    assert not _aliases(tmp_path)
