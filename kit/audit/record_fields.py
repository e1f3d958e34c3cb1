"""The field vocabulary of tool records and the words of a passage (pure).

Shared by :mod:`kit.audit.record_formats` (text responses) and :mod:`kit.audit.records_json`
(JSON responses):

* **Text fields** (:func:`is_text_field`): the fields whose values are a paper's passage -- a
  name whose first or last word (plural or not) is one of :data:`TEXT_WORDS`: ``abstract``,
  ``abstractText``, ``text``, ``body``, ``snippet``, ``summary``, ``passage``, MEDLINE ``AB``,
  in a text record also the section labels of a structured abstract (``BACKGROUND``,
  ``METHODS``, ``RESULTS``, ...: :data:`SECTION_WORDS`).
  Every other field (title, journal, authors, ``journalTitle``, ``authorString``,
  ``fulljournalname``, ids, dates, scores) is metadata.
* **Id fields** (:func:`id_field_scheme`, :func:`is_id_field`): the fields that name the
  record's own identifiers -- ``pmid``, ``pmcid``, ``doi``, Semantic Scholar's ``PubMed`` /
  ``PubMedCentral`` / ``DOI`` / ``ArXiv``, ``uid``, generic ``id`` / ``ids`` /
  ``identifiers`` / ``url`` / ``link``, MEDLINE ``PMID``, ``PMC``, ``AID``, ``LID``. A value
  of a field named after a scheme is read in that scheme (a bare ``21645374`` under ``pmid``
  is that PMID); any other value by :func:`kit.corpus.identifiers.find_identifiers`.
* **Words** (:func:`count_words`): whitespace tokens of at least two letters and no digit (a
  hex id, ``CE(1)``, ``2011;11:102`` are no words), once identifiers, links, markdown link
  texts (a link's text is a title) and "no abstract available" / "Abstract unavailable for
  this record" notes are removed.
"""

from __future__ import annotations

import re

from kit.corpus.identifiers import SCHEMES, canonical, find_identifiers

TEXT_WORDS = frozenset(
    (
        "abstract", "text", "body", "snippet", "summary", "passage", "content", "excerpt",
        "highlight", "context", "paragraph", "section", "description", "tldr", "chunk", "quote",
        "ab", "oab",
    )
)  # fmt: skip
# the section labels of a structured abstract: text fields of a text record only (a JSON
# "result" / "resultList" is a wrapper, not an abstract's results)
SECTION_WORDS = frozenset(
    (
        "background", "introduction", "objective", "aim", "purpose", "method", "result",
        "finding", "conclusion", "discussion", "interpretation", "significance", "importance",
        "design", "setting", "participant", "patient", "intervention", "measurement", "measure",
        "outcome", "limitation", "evidence",
    )
)  # fmt: skip
META_FIELDS = frozenset(
    (
        "title", "article title", "authors", "author", "author list", "first author",
        "last author", "journal", "journal title", "source", "venue", "publication",
        "publisher", "year", "date", "pub date", "pubdate", "publication date", "published",
        "volume", "issue", "pages", "url", "link", "links", "pmid", "pmcid", "doi", "nct",
        "nct id", "arxiv", "arxiv id", "id", "ids", "identifier", "identifiers", "uid", "type",
        "publication type", "publication types", "article type", "language", "keywords", "mesh",
        "mesh terms", "affiliation", "affiliations", "citation", "score", "rank", "relevance",
        "status", "license", "author information", "mesh heading list", "keyword list",
        "pub type list", "pub type",
    )
)  # fmt: skip
# fields whose continuation lines (up to a blank line) wrap a list: an author list, addresses
LIST_FIELDS = frozenset(
    ("authors", "author list", "affiliation", "affiliations", "keywords", "author information")
)
# a field named after a scheme (compact lower-case name -> scheme)
_ID_SCHEME = {
    "pmid": "PMID", "pmids": "PMID", "pubmed": "PMID", "pubmedid": "PMID", "pmcid": "PMCID",
    "pmc": "PMCID", "pmcids": "PMCID", "pubmedcentral": "PMCID", "pmcidv": "PMCID",
    "doi": "DOI", "dois": "DOI", "arxiv": "ARXIV", "arxivid": "ARXIV", "nct": "NCT",
    "nctid": "NCT", "nctnumber": "NCT",
}  # fmt: skip
# a field naming the record's identifiers in any scheme (MEDLINE AID / LID / SO included)
_ID_GENERIC = frozenset(
    ("id", "ids", "identifier", "identifiers", "uid", "url", "link", "aid", "lid", "so",
     "citation", "externalids", "articleids", "articleidlist")
)  # fmt: skip
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_NAME_WORD = re.compile(r"[a-z]+")
_MD_LINK = re.compile(r"!?\[([^\]\n]*)\]\([^)\s]*\)")
_URL = re.compile(r"https?://\S+", re.I)
_NO_TEXT = re.compile(
    r"\[?\s*\b(?:no abstract|abstract\s+(?:is\s+)?(?:unavailable|not\s+available|not\s+provided|"
    r"missing))\b[^.\n\]]*[.\]]?|\b(?:not available|unavailable|n/a)\b",
    re.I,
)
_WORD = re.compile(r"[^\W\d_]{2,}(?:['’-][^\W\d_]+)*")
_HEX = re.compile(r"[0-9a-fA-F]{8,}")
_PUNCT = ".,;:!?()[]{}<>\"'“”‘’«»*_#|`~=+/\\·•–—-"


def name_words(name: str) -> list[str]:
    """The lower-case words of a field name (``abstractText`` -> abstract, text)."""
    return _NAME_WORD.findall(_CAMEL.sub(" ", name).lower())


def compact(name: str) -> str:
    """A field name lower-cased without separators (``PubMedCentral`` -> pubmedcentral)."""
    return "".join(name_words(name))


def is_meta_field(name: str) -> bool:
    """True for a metadata field (title, authors, journal, ids, ...: :data:`META_FIELDS`)."""
    return " ".join(name_words(name)) in META_FIELDS


def _singular(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") else word


def is_text_field(name: str, sections: bool = True) -> bool:
    """True for a field whose value is passage text (module doc); ``sections``: a structured
    abstract's section labels count (text records, not JSON keys)."""
    words = {_singular(w) for w in name_words(name)[:1] + name_words(name)[-1:]}
    return bool(words & TEXT_WORDS) or (sections and bool(words & SECTION_WORDS))


def id_field_scheme(name: str) -> str | None:
    """The scheme a field is named after (``pmid`` -> PMID), else None."""
    return _ID_SCHEME.get(compact(name))


def is_id_field(name: str) -> bool:
    """True for a field that names the record's own identifiers (module doc)."""
    c = compact(name)
    return c in _ID_SCHEME or c in _ID_GENERIC


def value_ids(value: str, scheme: str | None = None) -> set[tuple[str, str]]:
    """The identifiers an id field's ``value`` names: read in ``scheme`` when the field is
    named after one (its first token: ``21645374 [Indexed for MEDLINE]``), and every
    identifier written in it."""
    out = {ident.key for _, _, ident in find_identifiers(value)}
    token = value.strip().split(maxsplit=1)[0] if value.strip() else ""
    if scheme in SCHEMES and token:
        ident = canonical(token, default_scheme=scheme)
        if ident is not None:
            out.add(ident.key)
    return out


def strip_ids(text: str) -> str:
    """``text`` without its identifiers and links."""
    out, pos = [], 0
    for a, b, _ in find_identifiers(text):
        out.append(text[pos:a])
        pos = max(pos, b)
    out.append(text[pos:])
    return _URL.sub(" ", "".join(out))


def count_words(text: str) -> int:
    """The words of a passage (module doc)."""
    bare = _NO_TEXT.sub(" ", strip_ids(_MD_LINK.sub(" ", text)))
    n = 0
    for token in bare.split():
        core = token.strip(_PUNCT)
        if _WORD.fullmatch(core) and not _HEX.search(core):
            n += 1
    return n
