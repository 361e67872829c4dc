"""The compiled knowledge base: the same KB as the source, rebuilt when a file changes, ignored
with a warning when it is corrupt or foreign, never used by the authoring commands."""

from __future__ import annotations

import shutil
from pathlib import Path

import orjson
import pytest

from clusterdx.engine import kb as kb_module
from clusterdx.engine import kbcache
from clusterdx.engine.kb import load_kb, shipped_dirs

INVALID = Path(__file__).parents[1] / "kb_invalid"


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    """A cache folder holding the compiled shipped KB (built once for the module)."""
    folder = tmp_path_factory.mktemp("compiled")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(kbcache.ENV_DIR, str(folder))
        mp.delenv(kbcache.ENV_OFF, raising=False)
        source = load_kb(cache=True)
    files = list(folder.glob("kb-*.json"))
    assert len(files) == 1
    return folder, files[0], source


@pytest.fixture
def cache(compiled, tmp_path, monkeypatch):
    """A fresh cache folder of this test, with the compiled shipped KB in it."""
    _, file, _ = compiled
    folder = tmp_path / "cache"
    folder.mkdir()
    shutil.copy(file, folder / file.name)
    monkeypatch.setenv(kbcache.ENV_DIR, str(folder))
    monkeypatch.delenv(kbcache.ENV_OFF, raising=False)
    return folder / file.name


def _no_source(monkeypatch):
    def refuse(*a, **k):
        raise AssertionError("read the source although a compiled KB was stored")

    monkeypatch.setattr(kb_module, "_load_source", refuse)


def test_a_compiled_kb_is_the_source_kb(compiled, cache, monkeypatch):
    source = compiled[2]
    _no_source(monkeypatch)
    warm = load_kb(cache=True)
    for table in ("rules", "nodes", "remediations", "probes", "questions"):
        assert list(getattr(warm, table)) == list(getattr(source, table)), table
        assert getattr(warm, table) == getattr(source, table), table
    assert warm.files == source.files
    assert warm.problems == source.problems
    assert warm.graph.attenuation == source.graph.attenuation
    for cause in source.graph.root_causes():
        assert warm.graph.path_to_top(cause) == source.graph.path_to_top(cause)
        assert warm.graph.causes_of(cause) == source.graph.causes_of(cause)
    # the DiGraph is still there for whoever asks (kb graph), built from the nodes
    assert sorted(warm.graph.graph.edges) == sorted(source.graph.graph.edges)


def test_a_diagnosis_from_the_compiled_kb_is_the_same(compiled, cache, monkeypatch):
    from clusterdx.engine.diagnose import collect_paths, diagnose

    case = shipped_dirs()[1] / "cases" / "cp-stacked-cstates-numa-balancing" / "input"
    target = collect_paths([case])
    cold = diagnose(target, kb=compiled[2]).model_dump(mode="json")
    warm = diagnose(target, kb=load_kb(cache=True)).model_dump(mode="json")
    assert warm == cold
    assert warm["hypotheses"], "the case should have ranked causes"


def test_a_changed_file_is_another_key(cache, tmp_path, monkeypatch):
    overlay = tmp_path / "site-kb"
    overlay.mkdir()
    node = next((shipped_dirs()[1]).rglob("numa-balancing-enabled.yaml"))
    text = node.read_text(encoding="utf-8")
    (overlay / node.name).write_text(text.replace("\ntitle: ", "\ntitle: Site copy of "), encoding="utf-8")
    roots = [*shipped_dirs(), overlay]
    first = load_kb(roots, cache=True)
    assert first.nodes["numa-balancing-enabled"].title.startswith("Site copy of ")
    assert len(list(cache.parent.glob("kb-*.json"))) == 2
    # the same files again: read from the cache
    with monkeypatch.context() as mp:
        _no_source(mp)
        assert load_kb(roots, cache=True).nodes == first.nodes
    # one byte changed: another key, loaded from source
    (overlay / node.name).write_text(text.replace("\ntitle: ", "\ntitle: Edited "), encoding="utf-8")
    second = load_kb(roots, cache=True)
    assert second.nodes["numa-balancing-enabled"].title.startswith("Edited ")
    assert len(list(cache.parent.glob("kb-*.json"))) == 3


@pytest.mark.parametrize("content", [
    b"{not json",
    # each case rebuilds from source (a second or so): the other shapes run with the slow tests
    pytest.param(b"[1, 2, 3]", marks=pytest.mark.slow),
    pytest.param(orjson.dumps({"format": "someone-else/9", "key": "x"}), marks=pytest.mark.slow),
])
def test_a_corrupt_or_foreign_cache_is_ignored_with_a_warning_and_rebuilt(cache, capsys, content):
    good = cache.read_bytes()
    cache.write_bytes(content)
    kb = load_kb(cache=True)
    assert "numa-balancing-enabled" in kb.nodes
    err = capsys.readouterr().err
    assert "warning" in err and str(cache) in err
    assert cache.read_bytes() == good  # rebuilt from source


def test_a_cache_whose_documents_do_not_validate_is_ignored(cache, capsys):
    data = orjson.loads(cache.read_bytes())
    rule = next(d for d in data["docs"] if d["kind"] == "Rule")
    rule["data"]["evidence"] = "everything"
    cache.write_bytes(orjson.dumps(data))
    kb = load_kb(cache=True)
    assert kb.rules[rule["data"]["id"]].evidence != "everything"
    assert "does not hold one" in capsys.readouterr().err
    assert orjson.loads(cache.read_bytes())["docs"] != data["docs"]


def test_no_cache_reads_the_source_and_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv(kbcache.ENV_DIR, str(tmp_path / "c"))
    monkeypatch.setenv(kbcache.ENV_OFF, "1")
    load_kb(cache=True)
    assert not (tmp_path / "c").exists()


def test_a_kb_with_errors_is_not_cached(tmp_path, monkeypatch):
    monkeypatch.setenv(kbcache.ENV_DIR, str(tmp_path / "c"))
    bad = tmp_path / "bad"
    bad.mkdir()
    shutil.copy(INVALID / "unknown-node.yaml", bad)
    kb = load_kb([*shipped_dirs(), bad], strict=False, cache=True)
    assert kb.errors
    assert not list((tmp_path / "c").glob("kb-*.json")) if (tmp_path / "c").exists() else True


def test_tables_are_cached_only_when_json_keeps_them(tmp_path, monkeypatch):
    monkeypatch.setenv(kbcache.ENV_DIR, str(tmp_path))
    monkeypatch.delenv(kbcache.ENV_OFF, raising=False)
    text = "schema: x/v1\nrows:\n  - {name: a, gbs: 1.5}\n"
    assert kbcache.table_data(text) == {"schema": "x/v1", "rows": [{"name": "a", "gbs": 1.5}]}
    assert len(list(tmp_path.glob("table-*.json"))) == 1
    assert kbcache.table_data(text) == {"schema": "x/v1", "rows": [{"name": "a", "gbs": 1.5}]}
    dated = "released: 2024-05-01\n1: one\n"
    first = kbcache.table_data(dated)
    assert kbcache.table_data(dated) == first and not isinstance(first["released"], str)
    assert len(list(tmp_path.glob("table-*.json"))) == 1


def test_authoring_commands_read_the_source(cache, monkeypatch):
    from typer.testing import CliRunner

    from clusterdx.cli import _register_commands, app

    def refuse(key, prefix="kb"):
        if prefix == "kb":
            raise AssertionError("kb commands must not read the compiled KB")
        return None

    monkeypatch.setattr(kbcache, "read", refuse)
    _register_commands()
    result = CliRunner().invoke(app, ["kb", "list"])
    assert result.exit_code == 0, result.output


def test_no_cache_option_sets_the_bypass(monkeypatch):
    from typer.testing import CliRunner

    from clusterdx.cli import _register_commands, app

    monkeypatch.delenv(kbcache.ENV_OFF, raising=False)
    seen = {}
    monkeypatch.setattr(kb_module, "load_kb", lambda *a, **k: seen.setdefault("enabled", kbcache.enabled())
                        or (_ for _ in ()).throw(SystemExit(0)))
    _register_commands()
    CliRunner().invoke(app, ["--no-cache", "explain", "numa-balancing-enabled"])
    assert seen == {"enabled": False}


def test_a_cache_file_others_can_write_is_ignored(cache, capsys):
    cache.chmod(0o666)
    kb = load_kb(cache=True)
    assert "numa-balancing-enabled" in kb.nodes
    assert "writable by others" in capsys.readouterr().err
    assert cache.stat().st_mode & 0o777 == 0o600  # rebuilt, private
