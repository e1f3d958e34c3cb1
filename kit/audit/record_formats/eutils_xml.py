"""``pubmed-xml`` and ``esummary-xml``: E-utilities XML (pure).

* ``pubmed-xml`` -- efetch ``retmode=xml``: ``<PubmedArticleSet>`` of ``<PubmedArticle>``;
  own identifiers: ``MedlineCitation/PMID`` and ``PubmedData/ArticleIdList/ArticleId``
  (``IdType`` ``pubmed`` / ``pmc`` / ``doi``), ``Article/ELocationID[@EIdType="doi"]`` --
  never the ids of a ``ReferenceList`` or ``CommentsCorrections`` (other papers); passage: the
  ``Abstract/AbstractText`` elements (``Label`` kept as ``LABEL:``, inline markup read as its
  text).
* ``esummary-xml`` -- esummary: ``<eSummaryResult>`` of ``<DocSum>`` (``<Id>``, ``<Item
  Name="Title">``, ``<Item Name="DOI">``, ``<Item Name="ArticleIds">`` of ``pubmed`` /
  ``pmc`` / ``doi`` items); an esummary holds no abstract: ``passage=False``.

A record's text is its fields written ``Key: value``, one a line (``PMID``, ``PMCID``,
``DOI``, ``Title``, ``Journal``, ``Year``, ``Abstract``). **Safety**: the response is parsed
with :mod:`xml.etree.ElementTree` only when it declares no entity and no internal DTD subset
(``<!ENTITY``, ``<!DOCTYPE ... [``); a plain ``<!DOCTYPE PubmedArticleSet PUBLIC ...>`` line
(which NCBI prints) is removed first and never fetched. XML that is refused or does not parse
gives None: the text rules read it instead.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from kit.audit.record_fields import count_words, value_ids
from kit.audit.record_formats.record import MIN_PASSAGE_WORDS, Key, Record

PUBMED_XML = "pubmed-xml"
ESUMMARY_XML = "esummary-xml"
MAX_XML_CHARS = 5_000_000
_PLAIN_DOCTYPE = re.compile(r"<!DOCTYPE\s[^\[\]>]*>", re.I)
_UNSAFE = re.compile(r"<!(?:DOCTYPE|ENTITY)", re.I)
_ROOTS = ("<PubmedArticleSet", "<PubmedArticle", "<eSummaryResult")
_SCHEME = {"pubmed": "PMID", "pmid": "PMID", "pmc": "PMCID", "pmcid": "PMCID", "doi": "DOI"}


def is_eutils_xml(text: str) -> bool:
    """The response looks like E-utilities XML (its root element is one of module doc's)."""
    head = text.lstrip()[:2000]
    return head.startswith("<") and any(r in head for r in _ROOTS)


def safe_parse(text: str) -> ET.Element | None:
    """The root element of ``text``, or None when it is refused (module doc) or no XML."""
    if len(text) > MAX_XML_CHARS:
        return None
    body = _PLAIN_DOCTYPE.sub("", text.strip(), count=1)
    if _UNSAFE.search(body):
        return None
    body = re.sub(r"^<\?xml[^>]*\?>", "", body.strip()).strip()
    try:
        return ET.fromstring(body)
    except ET.ParseError:
        return None


def _text(el: ET.Element | None) -> str:
    return " ".join("".join(el.itertext()).split()) if el is not None else ""


def _ids(pairs: list[tuple[str, str]]) -> frozenset[Key]:
    out: set[Key] = set()
    for kind, value in pairs:
        scheme = _SCHEME.get(kind.strip().lower())
        if scheme is not None and value.strip():
            out |= value_ids(value.strip(), scheme)
    return frozenset(out)


def _lines(keys: frozenset[Key], fields: list[tuple[str, str]]) -> str:
    ids = [f"{s}: {v}" for s, v in sorted(keys)]
    return "\n".join([*ids, *(f"{k}: {v}" for k, v in fields if v)])


def _article(node: ET.Element) -> Record | None:
    """One ``<PubmedArticle>``."""
    cit = node.find("MedlineCitation")
    if cit is None:
        return None
    art = cit.find("Article")
    pairs = [("pubmed", _text(cit.find("PMID")))]
    pairs += [
        (e.get("IdType", ""), _text(e)) for e in node.findall("PubmedData/ArticleIdList/ArticleId")
    ]
    if art is not None:
        pairs += [(e.get("EIdType", ""), _text(e)) for e in art.findall("ELocationID")]
    sections = []
    for e in [] if art is None else art.findall("Abstract/AbstractText"):
        label = e.get("Label")
        sections.append(f"{label}: {_text(e)}" if label else _text(e))
    abstract = " ".join(s for s in sections if s.strip())
    fields = [
        ("Title", _text(None if art is None else art.find("ArticleTitle"))),
        ("Journal", _text(None if art is None else art.find("Journal/Title"))),
        ("Year", _text(None if art is None else art.find("Journal/JournalIssue/PubDate/Year"))),
        ("Abstract", abstract),
    ]
    keys = _ids(pairs)
    words = count_words(abstract)
    return Record(_lines(keys, fields), keys, words >= MIN_PASSAGE_WORDS, PUBMED_XML)


def _docsum(node: ET.Element) -> Record:
    """One esummary ``<DocSum>``."""
    items = {e.get("Name", ""): _text(e) for e in node.findall("Item")}
    pairs = [("pubmed", _text(node.find("Id"))), ("doi", items.get("DOI", ""))]
    pairs += [(e.get("Name", ""), _text(e)) for e in node.findall("Item[@Name='ArticleIds']/Item")]
    keys = _ids(pairs)
    fields = [(k, items.get(k, "")) for k in ("Title", "Source", "PubDate", "AuthorList")]
    return Record(_lines(keys, fields), keys, False, ESUMMARY_XML)


def eutils_xml_records(text: str) -> list[Record] | None:
    """The records of an E-utilities XML response (module doc), else None."""
    root = safe_parse(text)
    if root is None:
        return None
    if root.tag == "eSummaryResult":
        return [_docsum(d) for d in root.iter("DocSum")]
    articles = [root] if root.tag == "PubmedArticle" else root.findall("PubmedArticle")
    recs = [r for r in map(_article, articles) if r is not None]
    return recs if root.tag in ("PubmedArticleSet", "PubmedArticle") else None
