"""The format cache: black's output by the unformatted text, never a different result than black."""

from __future__ import annotations

from pathlib import Path

import jinja2
import pytest
from gen_support import is_hook_module

from generator.base import format_cache
from generator.base.diagnostics import DiagnosticError
from generator.base.format_cache import Caches, FormatCache, default_directory
from generator.render import files as render

SOURCE = "def f( a,b ):\n  return {'x':a,\n 'y':b}\n"
MODE = f"{render.BLACK_TARGET} {render.BLACK_LINE_LENGTH}"


@pytest.fixture
def black_calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    calls: list[str] = []
    real = render._black

    def counting(source: str, template: str) -> str:
        calls.append(source)
        return real(source, template)

    monkeypatch.setattr(render, "_black", counting)
    return calls


def test_a_hit_is_blacks_output_without_running_black(tmp_path: Path, black_calls: list[str]) -> None:
    cache = FormatCache(tmp_path, MODE)
    first = render.format_python(SOURCE, "t.py.jinja", cache)
    second = render.format_python(SOURCE, "t.py.jinja", cache)
    assert first == second == render._black(SOURCE, "t.py.jinja")
    assert first == "def f(a, b):\n    return {\"x\": a, \"y\": b}\n"
    assert len(black_calls) == 2  # the first format_python, and the direct call above


def test_other_text_or_mode_or_black_version_misses(tmp_path: Path, black_calls: list[str]) -> None:
    cache = FormatCache(tmp_path, MODE)
    render.format_python(SOURCE, "t", cache)
    render.format_python(SOURCE + "x = 1\n", "t", cache)
    assert len(black_calls) == 2
    assert FormatCache(tmp_path, "PY312 88").get(SOURCE) is None
    assert cache.key(SOURCE) != FormatCache(tmp_path, "PY312 88").key(SOURCE)


def test_entries_are_written_only_on_flush_and_read_by_the_next_process(
    tmp_path: Path, black_calls: list[str]
) -> None:
    cache = FormatCache(tmp_path, MODE)
    good = render.format_python(SOURCE, "t", cache)
    assert list(tmp_path.iterdir()) == []  # generate() stays free of writes
    cache.flush()
    later = FormatCache(tmp_path, MODE)  # another run
    assert render.format_python(SOURCE, "t", later) == good
    assert len(black_calls) == 1


def test_a_damaged_entry_is_a_miss_and_is_rewritten(tmp_path: Path, black_calls: list[str]) -> None:
    cache = FormatCache(tmp_path, MODE)
    good = render.format_python(SOURCE, "t", cache)
    cache.flush()
    [entry] = list(tmp_path.glob("*.py.txt"))
    entry.write_text(entry.read_text(encoding="utf-8") + "import os\n", encoding="utf-8")
    later = FormatCache(tmp_path, MODE)
    assert later.get(SOURCE) is None
    assert render.format_python(SOURCE, "t", later) == good
    assert len(black_calls) == 2
    later.flush()
    assert FormatCache(tmp_path, MODE).get(SOURCE) == good


def test_invalid_source_is_reported_and_never_cached(tmp_path: Path) -> None:
    cache = FormatCache(tmp_path, MODE)
    for _ in range(2):
        with pytest.raises(DiagnosticError) as caught:
            render.format_python("def (:\n", "server.py.jinja", cache)
        assert "templates/server.py.jinja" in caught.value.diagnostics[0].render()
    cache.flush()
    assert list(tmp_path.iterdir()) == []


def test_off_always_runs_black(black_calls: list[str]) -> None:
    cache = FormatCache(None, MODE)
    render.format_python(SOURCE, "t", cache)
    render.format_python(SOURCE, "t", cache)
    assert len(black_calls) == 2


def test_the_cache_is_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(format_cache, "MAX_ENTRIES", 3)
    cache = FormatCache(tmp_path, MODE)
    for i in range(6):
        cache.put(f"x = {i}\n", f"x = {i}\n")
        cache.flush()
    assert len(list(tmp_path.glob("*.py.txt"))) == 3


def test_an_unwritable_directory_only_disables_caching(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    cache = FormatCache(blocker / "cache", MODE)
    assert render.format_python(SOURCE, "t", cache) == render._black(SOURCE, "t")
    cache.flush()


def test_location_from_the_environment(tmp_path: Path) -> None:
    assert default_directory({"GHMCP_FORMAT_CACHE": "off"}) is None
    assert default_directory({"GHMCP_FORMAT_CACHE": str(tmp_path)}) == tmp_path
    assert default_directory({"XDG_CACHE_HOME": str(tmp_path)}) == tmp_path / "ghmcp-generator"


def test_templates_compile_once_and_are_written_on_flush(tmp_path: Path) -> None:
    caches = Caches(tmp_path, MODE)
    assert caches.templates is not None
    env = jinja2.Environment(loader=jinja2.DictLoader({"t": "{{ x }}!"}), bytecode_cache=caches.templates)
    assert env.get_template("t").render(x=1) == "1!"
    assert not (tmp_path / "jinja").exists()
    caches.flush()
    assert len(list((tmp_path / "jinja").iterdir())) == 1
    later = Caches(tmp_path, MODE)
    compiled: list[str] = []
    again = jinja2.Environment(loader=jinja2.DictLoader({"t": "{{ x }}!"}), bytecode_cache=later.templates)
    real = again.compile
    again.compile = lambda *a, **k: compiled.append("x") or real(*a, **k)  # type: ignore[method-assign]
    assert again.get_template("t").render(x=2) == "2!"
    assert compiled == []  # loaded from the bytecode cache
    assert Caches(None, MODE).templates is None


def test_the_command_line_flushes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from generator import __main__ as cli
    from generator.pipeline.result_cache import ResultCache

    monkeypatch.setattr(render, "CACHES", Caches(tmp_path, MODE))
    monkeypatch.setattr(cli, "RESULTS", ResultCache(None, ""))  # every file rendered, none reused
    out = tmp_path / "out"
    assert cli.main(["generate", "--quiet", "--out", str(out)]) == 0
    formatted = {p.read_text(encoding="utf-8") for p in out.rglob("*.py") if not is_hook_module(p.name)}
    assert len(list((tmp_path / "black").glob("*.py.txt"))) == len(formatted) >= 5
    assert list((tmp_path / "jinja").iterdir())


def test_derived_packaging_and_schema_are_kept_and_follow_their_inputs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from generator.language import overrides
    from generator.packaging import requirements as packaging

    derived = packaging._derive()
    schema = overrides._schema_text()
    monkeypatch.setattr(packaging, "STORE", format_cache.TextStore(tmp_path / "p", "t\n", ".json"))
    monkeypatch.setattr(overrides, "SCHEMA_STORE", format_cache.TextStore(tmp_path / "s", "t\n", ".json"))
    packaging.current_packaging.cache_clear()
    assert packaging.current_packaging() == derived and overrides.schema_text() == schema
    assert not (tmp_path / "p").exists() and not (tmp_path / "s").exists()  # only flush() writes
    packaging.STORE.flush()
    overrides.SCHEMA_STORE.flush()

    def never() -> None:
        raise AssertionError("derived again although nothing it reads changed")

    monkeypatch.setattr(packaging, "_derive", never)
    monkeypatch.setattr(overrides, "_schema_text", never)
    packaging.current_packaging.cache_clear()
    assert packaging.current_packaging() == derived and overrides.schema_text() == schema

    # another input (an installed distribution, a runtime source) is another key: derived again
    monkeypatch.setattr(packaging, "_derive", lambda: derived)
    monkeypatch.setattr(packaging, "derivation_inputs", lambda: "something else")
    packaging.current_packaging.cache_clear()
    assert packaging.current_packaging() == derived
    monkeypatch.setattr(overrides, "sources_text", lambda *dirs: "other sources")
    monkeypatch.setattr(overrides, "_schema_text", lambda: "fresh")
    assert overrides.schema_text() == "fresh"
    packaging.current_packaging.cache_clear()


def test_a_damaged_packaging_entry_is_derived_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from generator.packaging import requirements as packaging

    derived = packaging._derive()
    store = format_cache.TextStore(tmp_path, "t\n", ".json")
    monkeypatch.setattr(packaging, "STORE", store)
    store.put(packaging.derivation_inputs(), '{"layout": "of another version"}')
    packaging.current_packaging.cache_clear()
    assert packaging.current_packaging() == derived
    packaging.current_packaging.cache_clear()
