"""MEDLINE / PubMed XML (baseline and update files), streamed with bounded memory.

The NLM distributes PubMed as ``pubmedYYnNNNN.xml.gz`` files of ``<PubmedArticleSet>``: each
``<PubmedArticle>`` is one record (a later file's record for the same PMID is a revision), and an
update file may end with ``<DeleteCitation>`` listing PMIDs to remove. This module reads one file
(``.xml`` or ``.xml.gz``) with lxml's ``iterparse``, one record at a time: each finished element is
cleared and its finished siblings dropped, so memory stays bounded by one record, not one file.

Fields kept per record (paths under ``PubmedArticle``):

* ``pmid``    -- ``MedlineCitation/PMID``;
* ``title``   -- ``MedlineCitation/Article/ArticleTitle`` (inline markup flattened);
* ``text``    -- the ``Abstract/AbstractText`` sections in order, a labelled one as ``LABEL: text``;
* ``journal`` -- ``Article/Journal/Title``; ``year`` -- ``JournalIssue/PubDate/Year`` (else the
  first four digits of ``MedlineDate``);
* aliases -- ``PubmedData/ArticleIdList/ArticleId`` with IdType ``doi`` / ``pmc`` (else
  ``Article/ELocationID[@EIdType="doi"]``), canonicalised by :mod:`kit.corpus.identifiers`.

``PubmedBookArticle`` records (NCBI Bookshelf) are counted as skipped.
"""

from __future__ import annotations

import gzip
import re
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from kit.core.errors import InputError, Location
from kit.corpus.document import Document
from kit.corpus.identifiers import canonical

RECORD_TAGS = ("PubmedArticle", "PubmedBookArticle", "DeleteCitation")


def _text(elem: Any) -> str:
    if elem is None:
        return ""
    raw = elem.text or "" if len(elem) == 0 else "".join(elem.itertext())
    return " ".join(raw.split())


def _year(issue: Any) -> int | None:
    if issue is None:
        return None
    y = issue.findtext("PubDate/Year")
    if not y:
        m = re.match(r"\s*([0-9]{4})", issue.findtext("PubDate/MedlineDate") or "")
        y = m.group(1) if m else None
    return int(y) if y and y.isdigit() else None


def record_of(elem: Any, source: str) -> Document:
    """A ``PubmedArticle`` element -> :class:`Document` (InputError names a bad PMID)."""
    cit = elem.find("MedlineCitation")
    raw = (cit.findtext("PMID") or "").strip() if cit is not None else ""
    pmid = canonical(raw, "PMID")
    if pmid is None or pmid.scheme != "PMID":
        raise InputError(
            "bad_pmid",
            f"PubmedArticle without a valid PMID (got {raw!r})",
            where=Location(source, elem.sourceline, "MedlineCitation/PMID"),
        )
    art = cit.find("Article")
    title = journal = doi_text = ""
    year = None
    parts = []
    if art is not None:
        for child in art:
            tag = child.tag
            if tag == "ArticleTitle":
                title = _text(child)
            elif tag == "Abstract":
                for sec in child.iterchildren("AbstractText"):
                    body = _text(sec)
                    label = sec.get("Label")
                    if body:
                        parts.append(f"{label}: {body}" if label else body)
            elif tag == "Journal":
                journal = (child.findtext("Title") or "").strip()
                year = _year(child.find("JournalIssue"))
            elif tag == "ELocationID" and not doi_text:
                if (child.get("EIdType") or "").lower() == "doi":
                    doi_text = (child.text or "").strip()
    aliases: list[tuple[str, str]] = [pmid.key]
    ids = {}
    id_list = elem.find("PubmedData/ArticleIdList")
    if id_list is not None:
        ids = {(a.get("IdType") or "").lower(): (a.text or "").strip() for a in id_list}
    doi_text = ids.get("doi") or doi_text
    for value, scheme in ((doi_text, "DOI"), (ids.get("pmc"), "PMCID")):
        ident = canonical(value, scheme) if value else None
        if ident is not None and ident.key not in aliases:
            aliases.append(ident.key)
    return Document(pmid.label, title, " ".join(parts), journal, year, tuple(aliases))


def _open(path: Path) -> IO[bytes]:
    if path.name.endswith(".gz"):
        return gzip.open(path, "rb")
    return path.open("rb")


def iter_medline(path: Path) -> Iterator[Document | tuple[str, ...]]:
    """Yield each record of one MEDLINE file in order, a ``DeleteCitation`` as the tuple of its
    PMID labels, and a skipped (book) record as the empty tuple. Bounded memory (module doc)."""
    from lxml import etree

    source = str(path)
    with _open(path) as fh:
        events = etree.iterparse(
            fh, events=("end",), tag=RECORD_TAGS, resolve_entities=False, no_network=True
        )
        try:
            for _, elem in events:
                if elem.tag == "PubmedArticle":
                    yield record_of(elem, source)
                elif elem.tag == "DeleteCitation":
                    labels = []
                    for p in elem.findall("PMID"):
                        ident = canonical((p.text or "").strip(), "PMID")
                        if ident is None or ident.scheme != "PMID":
                            raise InputError(
                                "bad_pmid",
                                f"DeleteCitation lists an invalid PMID {p.text!r}",
                                where=Location(source, p.sourceline, "DeleteCitation/PMID"),
                            )
                        labels.append(ident.label)
                    yield tuple(labels)
                else:
                    yield ()
                elem.clear(keep_tail=False)
                parent = elem.getparent()
                while parent is not None and elem.getprevious() is not None:
                    del parent[0]
        except etree.XMLSyntaxError as exc:
            raise InputError(
                "bad_xml",
                f"not well-formed MEDLINE XML: {exc.msg}",
                where=Location(source, exc.lineno),
            ) from None
        except (OSError, EOFError) as exc:  # truncated or corrupt gzip
            raise InputError("bad_xml", f"unreadable file: {exc}", where=Location(source)) from None


def root_element(path: Path) -> str | None:
    """The name of the root element of an XML file (for a message naming what a file holds when
    it holds no PubMed record), or None when it cannot be read."""
    from lxml import etree

    try:
        with _open(path) as fh:
            for _, elem in etree.iterparse(
                fh, events=("start",), resolve_entities=False, no_network=True
            ):
                return str(etree.QName(elem).localname)
    except (etree.XMLSyntaxError, OSError, EOFError):
        return None
    return None
