"""Inputs that hold no PubMed record, and searches that match little (issue 36).

Well-formed XML that is not PubMed used to build a corpus of 0 documents with exit 0 and no
word: now a source that adds nothing is named on stderr, and a build where no source holds a
document is refused (exit 2, nothing swapped in). `kit corpus search` returns only documents
that share a term with the query, never a top-k padded with score-0 documents."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner, Result

from kit.cli import cli
from kit.corpus.bm25 import BM25Index
from kit.corpus.store import MemoryCorpus
from kit.corpus.synthetic import SynthRecord, write_medline

RSS = '<?xml version="1.0"?>\n<rss version="2.0"><channel><title>news</title></channel></rss>\n'


def _invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def _build(root: Path, name: str, *medline: Path) -> Result:
    args = ["corpus", "build", name, "--licence", "synthetic", "--corpus-root", str(root)]
    for m in medline:
        args += ["--medline", str(m)]
    return _invoke(*args, "--quiet")


@pytest.fixture()
def pubmed(tmp_path: Path) -> Path:
    path = tmp_path / "pubmed" / "pubmed26n0001.xml"
    write_medline(
        path,
        [
            SynthRecord(100, "aspirin and stroke", (("", "aspirin prevents stroke"),)),
            SynthRecord(101, "lace plant cell death", (("", "mitochondria move"),)),
            SynthRecord(102, "statins in the elderly", (("", "statins lower cholesterol"),)),
        ],
    )
    return path


def test_non_pubmed_xml_alone_is_refused_naming_the_file(tmp_path: Path) -> None:
    feed = tmp_path / "feed.xml"
    feed.write_text(RSS)
    root = tmp_path / "corpora"
    r = _build(root, "news", feed)
    assert r.exit_code == 2, r.output
    assert "no_documents" in r.output and str(feed) in r.output and "<rss>" in r.output
    assert not (root / "news" / "current").exists()  # no 0-document corpus swapped in
    empty_set = tmp_path / "empty" / "pubmed26n0009.xml"
    empty_set.parent.mkdir()
    empty_set.write_text("<PubmedArticleSet></PubmedArticleSet>\n")
    r = _build(root, "news", empty_set)
    assert r.exit_code == 2 and "<PubmedArticleSet>" in r.output


def test_non_pubmed_xml_beside_pubmed_is_a_warning_naming_it(pubmed: Path, tmp_path: Path) -> None:
    feed = tmp_path / "feed.xml"
    feed.write_text(RSS)
    root = tmp_path / "corpora"
    r = _build(root, "med", pubmed, feed)
    assert r.exit_code == 0, r.output
    assert "3 documents" in r.stdout
    assert f"warning: {feed}: no PubMed record found (root element <rss>" in r.stderr
    assert str(pubmed) not in r.stderr  # the PubMed file is not warned about


def test_search_returns_only_matching_documents(pubmed: Path, tmp_path: Path) -> None:
    root = tmp_path / "corpora"
    assert _build(root, "med", pubmed).exit_code == 0
    r = _invoke(
        "corpus", "search", "lace plant", "--corpus", "med", "--k", "3",
        "--corpus-root", str(root), "--format", "csv",
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    rows = pd.read_csv(pd.io.common.StringIO(r.output))
    assert list(rows["doc_id"]) == ["PMID:101"] and (rows["score"] > 0).all()
    r = _invoke(
        "corpus", "search", "zebrafish", "--corpus", "med", "--k", "3",
        "--corpus-root", str(root), "--format", "csv",
    )  # fmt: skip
    assert r.exit_code == 0 and len(pd.read_csv(pd.io.common.StringIO(r.output))) == 0
    docs = {"a": "aspirin stroke", "b": "lace plant", "c": "statins"}
    memory = MemoryCorpus("m", "synthetic", (), {}, docs)
    assert [d for d, _ in memory.search("aspirin", 3)] == ["a"]
    index = BM25Index.build([("a", "aspirin stroke"), ("b", "lace plant")])
    assert index.top("", 2, positive=True) == []
    assert [d for d, _ in index.top("aspirin", 2)] == ["a", "b"]  # unchanged without positive
