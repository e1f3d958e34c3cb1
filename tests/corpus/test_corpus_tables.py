"""Corpora from tables (JSONL / parquet / CSV with a column mapping) and text folders."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from kit.core.errors import ConfigError, InputError
from kit.corpus.build import BuildSpec, build_corpus, sources_from_options
from kit.corpus.coverage import parse_coverage
from kit.corpus.identifiers import canonical
from kit.corpus.store import CorpusChain, DiskCorpus
from kit.corpus.tabular import parse_mapping

ROWS = [
    {"id": "10.1234/Alpha", "t": "Alpha trial", "abs": "alpha text", "pm": "555", "yr": "2020"},
    {"id": "doi:10.1234/beta", "t": "Beta", "abs": "beta text", "pm": "", "yr": ""},
]


def _write(path: Path, rows: list[dict]) -> Path:
    frame = pd.DataFrame(rows)
    if path.suffix == ".csv":
        frame.to_csv(path, index=False)
    elif path.suffix == ".parquet":
        frame.to_parquet(path)
    else:
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.mark.parametrize("suffix", [".csv", ".jsonl", ".parquet"])
def test_table_with_mapping(tmp_path: Path, suffix: str) -> None:
    src = _write(tmp_path / f"docs{suffix}", ROWS)
    sources = sources_from_options((), (src,), "id=id,title=t,text=abs,pmid=pm,year=yr", (), "DOI")
    spec = BuildSpec("tab", sources, "CC-BY 4.0", root=tmp_path / "c", progress=False,
                     coverage=(parse_coverage("PMID=complete:500-600"),))  # fmt: skip
    m = build_corpus(spec).manifest
    assert m["counts"]["documents"] == 2 and m["sources"][0]["mapping"]["text"] == "abs"
    chain = CorpusChain((DiskCorpus.open(tmp_path / "c" / "tab"),))
    for text, doc in (("https://doi.org/10.1234/ALPHA", "doi:10.1234/alpha"), ("PMID:555", "doi:10.1234/alpha"),
                      ("10.1234/Beta", "doi:10.1234/beta")):  # fmt: skip
        ident = canonical(text)
        r = chain.resolve([ident])[ident]
        assert (r.status, r.doc_id) == ("found", doc)
    ident = canonical("PMID:556")
    assert chain.resolve([ident])[ident].status == "notfound"
    assert chain.passage("DOI", "10.1234/beta") == "Beta beta text"


def test_bad_table_rows_are_located(tmp_path: Path) -> None:
    src = _write(
        tmp_path / "docs.csv", [*ROWS, {"id": "nonsense", "t": "", "abs": "", "pm": "", "yr": ""}]
    )
    spec = BuildSpec("tab", sources_from_options((), (src,), "id=id", (), None), "x",
                     root=tmp_path / "c", progress=False)  # fmt: skip
    with pytest.raises(InputError) as ei:
        build_corpus(spec)
    assert ei.value.where.row == 4 and ei.value.where.column == "id"
    src = _write(tmp_path / "pm.csv", [{"id": "1", "pm": "PMC12"}])
    spec = BuildSpec("tab", sources_from_options((), (src,), "id=id,pmid=pm", (), "PMID"), "x",
                     root=tmp_path / "c", progress=False)  # fmt: skip
    with pytest.raises(InputError, match="not a PMID"):
        build_corpus(spec)
    with pytest.raises(ConfigError, match="needs id"):
        parse_mapping("title=t")
    with pytest.raises(ConfigError, match="unknown field"):
        parse_mapping("id=a,colour=b")
    with pytest.raises(ConfigError, match="--table needs --map"):
        sources_from_options((), (src,), None, (), None)


def test_text_folder(tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    (folder / "sub").mkdir(parents=True)
    (folder / "a.txt").write_text("First title\nbody one\n")
    (folder / "sub" / "b.txt").write_text("\nSecond\nbody two\n")
    spec = BuildSpec("notes", sources_from_options((), (), None, (folder,), None), "own notes",
                     root=tmp_path / "c", progress=False)  # fmt: skip
    m = build_corpus(spec).manifest
    assert m["counts"] == {"documents": 2, "deleted": 0, "aliases": {}} and m["coverage"] == []
    corpus = DiskCorpus.open(tmp_path / "c" / "notes")
    assert corpus.all_texts() == {
        "file:a.txt": "First title body one",
        "file:sub/b.txt": "Second body two",
    }
    ids = tmp_path / "ids"
    ids.mkdir()
    (ids / "123.txt").write_text("T\nx")
    spec = BuildSpec("ids", sources_from_options((), (), None, (ids,), "PMID"), "x",
                     root=tmp_path / "c", progress=False)  # fmt: skip
    assert build_corpus(spec).manifest["counts"]["aliases"] == {"PMID": 1}
