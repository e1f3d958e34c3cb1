"""MEDLINE ingestion, update files, aliases and declared coverage (issue 14, "Done when")."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import duckdb
import pandas as pd
import pytest
from click.testing import CliRunner

from kit.cli import cli
from kit.core.errors import ConfigError, InputError
from kit.core.schema import read_table, validate_json
from kit.corpus.build import BuildSpec, build_corpus, medline_sources
from kit.corpus.coverage import parse_coverage
from kit.corpus.identifiers import Identifier, canonical
from kit.corpus.store import CorpusChain, DiskCorpus
from kit.corpus.synthetic import SynthRecord, write_medline

COVERAGE = "PMID=complete:100-110"


def _rec(pmid: int, title: str, **kw: str) -> SynthRecord:
    return SynthRecord(pmid, title, (("BACKGROUND", f"{title} background"), ("", "results")), **kw)


@pytest.fixture()
def medline(tmp_path: Path) -> Path:
    """A baseline (PMIDs 100-104) and an update that revises 102 and deletes 103."""
    d = tmp_path / "pubmed"
    write_medline(
        d / "pubmed26n0001.xml",
        [
            _rec(100, "aspirin and stroke"),
            _rec(101, "statins in the elderly", doi="10.1000/ABC.101", pmcid="PMC5101"),
            _rec(102, "old title of 102", doi="10.1000/x.102"),
            _rec(103, "a record to be deleted", doi="10.1000/x.103"),
            _rec(104, "lace plant cell death"),
        ],
    )
    write_medline(
        d / "pubmed26n0002.xml.gz", [_rec(102, "revised title of 102", doi="10.1000/x.102")], [103]
    )
    return d


def _build(medline: Path, root: Path, name: str = "med") -> dict:
    spec = BuildSpec(
        name=name,
        sources=tuple(medline_sources([medline])),
        licence="synthetic test data (no licence needed)",
        description="SYNTHETIC MEDLINE test corpus",
        coverage=(parse_coverage(COVERAGE, "every record of the synthetic baseline"),),
        root=root,
        progress=False,
    )
    return build_corpus(spec).manifest


def test_done_when(medline: Path, tmp_path: Path) -> None:
    root = tmp_path / "corpora"
    manifest = _build(medline, root)
    chain = CorpusChain((DiskCorpus.open(root / "med"),))

    def l1(text: str) -> tuple[str, str, str]:
        ident = canonical(text)
        assert ident is not None, text
        r = chain.resolve([ident])[ident]
        return r.status, r.corpus, r.doc_id

    # inside declared complete coverage but absent: notfound (possible fabrication)
    assert l1("PMID:107") == ("notfound", "med", "")
    # outside the declared range (a real PMID of a published trial): unchecked, never notfound
    assert l1("PMID:32445440") == ("unchecked", "", "")
    # a DOI in three spellings and the PMCID alias resolve to the record of PMID 101
    for spelling in ("doi:10.1000/abc.101", "https://doi.org/10.1000/ABC.101", "10.1000/Abc.101"):
        assert l1(spelling) == ("found", "med", "PMID:101")
    assert l1("PMC5101") == ("found", "med", "PMID:101") == l1("PMID:101")
    # DOI and PMCID schemes are only samples here: an absent DOI is unchecked
    assert l1("doi:10.1000/nope")[0] == "unchecked"
    # the deleted record is gone (and, having existed, is not called fabricated)
    assert l1("PMID:103")[0] == "unchecked" and l1("doi:10.1000/x.103")[0] == "unchecked"
    docs = read_table(root / "med" / "current" / "documents.parquet", "corpus_documents")
    assert sorted(docs["doc_id"]) == ["PMID:100", "PMID:101", "PMID:102", "PMID:104"]
    # the revision from the update file replaced the baseline record
    rev = docs.set_index("doc_id").loc["PMID:102"]
    assert rev["title"] == "revised title of 102" and rev["source"] == "pubmed26n0002.xml.gz"
    assert "BACKGROUND: revised title of 102 background" in rev["text"]
    aliases = read_table(root / "med" / "current" / "aliases.parquet", "corpus_aliases")
    assert set(aliases.loc[aliases["doc_id"] == "PMID:101", "value"]) == {
        "101",
        "10.1000/abc.101",
        "PMC5101",
    }
    assert "PMID:103" not in set(aliases["doc_id"])
    # the manifest: sources in order with sha256, counts and the declared coverage
    validate_json(manifest, "corpus_manifest")
    assert [s["name"] for s in manifest["sources"]] == ["pubmed26n0001.xml", "pubmed26n0002.xml.gz"]
    assert [(s["records"], s["deletions"]) for s in manifest["sources"]] == [(5, 0), (1, 1)]
    assert manifest["counts"] == {
        "documents": 4,
        "deleted": 1,
        "aliases": {"DOI": 2, "PMCID": 1, "PMID": 4},
    }
    assert manifest["observed"]["PMID"] == {"min": 100, "max": 104}
    kinds = {c["scheme"]: c["kind"] for c in manifest["coverage"]}
    assert kinds == {"PMID": "complete", "PMCID": "sample", "DOI": "sample"}
    assert "--medline" in manifest["build_command"] and COVERAGE in manifest["build_command"]


def test_resume_per_file_and_later_update(medline: Path, tmp_path: Path) -> None:
    root = tmp_path / "corpora"
    spec_args = dict(
        name="med",
        licence="synthetic",
        coverage=(parse_coverage(COVERAGE),),
        root=root,
        progress=False,
    )
    first = build_corpus(BuildSpec(sources=tuple(medline_sources([medline])), **spec_args))
    assert first.parsed == ["pubmed26n0001.xml", "pubmed26n0002.xml.gz"]
    again = build_corpus(BuildSpec(sources=tuple(medline_sources([medline])), **spec_args))
    assert again.parsed == [] and len(again.reused) == 2
    assert again.manifest["files"] == first.manifest["files"]  # identical tables
    # a later update file re-adds 103 and deletes 100: applied after the others
    write_medline(medline / "pubmed26n0003.xml", [_rec(103, "103 is back")], [100])
    third = build_corpus(BuildSpec(sources=tuple(medline_sources([medline])), **spec_args))
    assert third.parsed == ["pubmed26n0003.xml"]
    docs = pd.read_parquet(root / "med" / "current" / "documents.parquet")
    assert sorted(docs["doc_id"]) == ["PMID:101", "PMID:102", "PMID:103", "PMID:104"]


def test_bad_inputs(tmp_path: Path) -> None:
    bad = tmp_path / "pubmed26n0001.xml"
    bad.write_text("<PubmedArticleSet>\n<PubmedArticle><MedlineCitation>\n</PubmedArticleSet>\n")
    spec = BuildSpec("bad", tuple(medline_sources([bad])), "x", root=tmp_path / "c", progress=False)
    with pytest.raises(InputError) as ei:
        build_corpus(spec)
    assert ei.value.reason == "bad_xml" and ei.value.where.row == 3
    assert not (tmp_path / "c" / "bad" / "current").exists()  # nothing swapped in
    nopmid = tmp_path / "n" / "pubmed26n0001.xml.gz"
    nopmid.parent.mkdir()
    with gzip.open(nopmid, "wt") as fh:
        fh.write("<PubmedArticleSet><PubmedArticle><MedlineCitation><PMID>abc</PMID>")
        fh.write("</MedlineCitation></PubmedArticle></PubmedArticleSet>")
    spec = BuildSpec("nopmid", tuple(medline_sources([nopmid])), "x", root=tmp_path / "c")
    with pytest.raises(InputError, match="without a valid PMID"):
        build_corpus(spec)
    with pytest.raises(ConfigError, match="only numbered schemes"):
        parse_coverage("DOI=complete:1-5")
    with pytest.raises(ConfigError, match="built in"):
        build_corpus(BuildSpec("pubmedqa", tuple(medline_sources([bad])), "x", root=tmp_path))


def test_transient_when_the_database_is_unreadable(medline: Path, tmp_path: Path) -> None:
    root = tmp_path / "corpora"
    _build(medline, root)
    corpus = DiskCorpus.open(root / "med")
    (root / "med" / "current" / "corpus.duckdb").write_bytes(b"not a database")
    got = CorpusChain((corpus,)).resolve([Identifier("PMID", "107")])
    assert got[Identifier("PMID", "107")].status == "transient"  # never notfound
    with pytest.raises(duckdb.Error):
        duckdb.connect(str(root / "med" / "current" / "corpus.duckdb"), read_only=True)


def test_cli_build_list_show_search(medline: Path, tmp_path: Path, registry_raw: Path) -> None:
    root = tmp_path / "corpora"
    run = CliRunner()
    common = ["--corpus-root", str(root)]
    r = run.invoke(
        cli,
        ["corpus", "build", "med", "--medline", str(medline), "--licence", "synthetic",
         "--coverage", f"{COVERAGE};every synthetic record", "--quiet", *common],
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    assert "4 documents, 1 deleted" in r.output and "PMID complete 100..110" in r.output
    r = run.invoke(cli, ["corpus", "list", *common, "--raw", str(registry_raw), "--format", "csv"])
    assert r.exit_code == 0, r.output
    rows = {ln.split(",")[0]: ln for ln in r.output.splitlines()[1:]}
    assert set(rows) == {"pubmedqa", "med"}
    assert "PMID sample" in rows["pubmedqa"] and "PMID complete 100..110" in rows["med"]
    r = run.invoke(cli, ["corpus", "show", "https://doi.org/10.1000/ABC.101", *common,
                         "--raw", str(registry_raw)])  # fmt: skip
    assert r.exit_code == 0, r.output
    shown = json.loads(r.output)
    assert shown["l1"] == "found" and shown["corpus"] == "med"
    assert (
        shown["document"]["doc_id"] == "PMID:101" and "PMC5101" in shown["document"]["aliases"][1]
    )
    r = run.invoke(cli, ["corpus", "show", "PMID:107", "--corpus", "pubmedqa,med", *common,
                         "--raw", str(registry_raw)])  # fmt: skip
    shown = json.loads(r.output)
    assert (shown["l1"], shown["corpus"], shown["order"]) == (
        "notfound",
        "med",
        ["pubmedqa", "med"],
    )
    r = run.invoke(cli, ["corpus", "search", "lace plant death", "--corpus", "med", "--k", "2",
                         *common, "--format", "csv"])  # fmt: skip
    assert r.exit_code == 0, r.output
    assert r.output.splitlines()[1].startswith("1,PMID:104,")
    r = run.invoke(cli, ["corpus", "show", "nonsense", *common, "--raw", str(registry_raw)])
    assert r.exit_code == 2 and "neither a corpus name nor an identifier" in r.output
    r = run.invoke(cli, ["corpus", "search", "x", "--corpus", "nope", *common])
    assert r.exit_code == 2 and "no corpus 'nope'" in r.output
