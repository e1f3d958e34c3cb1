"""Canonical identifiers of cited documents (pure).

One canonical form per scheme, so that every spelling of one identifier compares equal:

* ``PMID``  -- digits without leading zeros. Accepts ``PMID:123``, ``PMID 123``, ``pmid: 123``,
  ``PMID=123``, ``PMID- 123`` (MEDLINE), ``PMID #123``, ``PubMed ID 123``; PubMed links
  ``https://pubmed.ncbi.nlm.nih.gov/123/``, ``https://www.ncbi.nlm.nih.gov/pubmed/123`` (a query
  string such as ``?dopt=Abstract`` or a fragment is ignored) and Europe PMC
  ``https://europepmc.org/abstract/MED/123`` / ``.../article/MED/123``.
* ``PMCID`` -- ``PMC`` + digits without leading zeros. Accepts ``PMC123``, ``pmc123``,
  ``PMCID: PMC123``, ``https://www.ncbi.nlm.nih.gov/pmc/articles/PMC123/``,
  ``https://pmc.ncbi.nlm.nih.gov/articles/PMC123/`` (also its pages ``/pdf/...``,
  ``/figure/F1/``, a query or a fragment; not an image file of it), ``https://europepmc.org/article/PMC/PMC123``, ``https://europepmc.org/articles/PMC123``.
* ``DOI``   -- ``10.<registrant>/<suffix>`` lower-cased (DOIs are case-insensitive, DOI Handbook
  section 2.4: ``10.1000/ABC`` and ``10.1000/abc`` are one paper, everywhere an identifier is
  keyed), percent-decoded, trailing sentence punctuation removed. The registrant is 4-9 digits
  without a leading zero (registrant codes start at 1000), the suffix is not empty. Accepts
  ``doi:``, ``DOI:``, ``https://doi.org/``, ``http://dx.doi.org/``, ``doi.org/`` forms and
  publisher links that carry the DOI in their path (``.../doi/10.x/y``, ``.../doi/full/10.x/y``,
  ``.../article/10.x/y``, ``.../articles/10.x/y/full``, ``.../content/10.1101/...v1.full``
  (bioRxiv / medRxiv, the version dropped), ``.../content/pdf/10.x/y.pdf``) or in a ``doi=`` /
  ``id=`` query field. Balanced parentheses belong to the DOI (``10.1016/S0140-6736(20)30183-5``);
  an unbalanced closing one does not. A DataCite arXiv DOI (``10.48550/arXiv.<id>``) is the arXiv
  id.
* ``ARXIV`` -- the base id (``2101.00001``; old style ``hep-th/9901001``) with the version
  (``v2``) kept apart: every version of a paper is one document. Accepts ``arXiv:``, ``abs/`` and
  ``pdf/`` URLs.
* ``NCT``   -- ``NCT`` + 8 digits, upper-cased; accepts ClinicalTrials.gov URLs (``/study/``,
  ``/ct2/show/``, a query or fragment ignored).
* ``URL``   -- any other http(s) URL: scheme and host lower-cased, default port, fragment and a
  trailing slash dropped.

:func:`canonical` returns ``None`` for text that is no identifier; bare digits are a PMID only
when the caller says so (``default_scheme="PMID"``), never by guessing. Markdown / quoting around
a value (``*``, ``_``, backticks, ``<...>``, quotes, CJK brackets) is not part of it.

**Identifiers in free text** (:func:`find_identifiers`: an agent's answer, a tool response, a
page). Identifiers are printable ASCII: any other character ends one, so CJK punctuation
(``，。；：（）「」【】``) and typographic quotes never stick to it; so do whitespace, ``"'<>``
(but for a SICI item, item 6), backticks, ``|``, ``[]{}`` and ``*`` (markdown emphasis, table
cells, autolinks ``<...>``). A
``(`` is part of a URL or DOI only with its matching ``)``, so ``(doi:10.1000/abc)`` and a
markdown link ``[text](https://doi.org/...)`` end before the ``)``. Trailing ``.,;:!?`` is
sentence punctuation, and a trailing ``_`` closes an ``_emphasis_`` that opened before the
identifier. Read, in this order (an earlier span wins an overlap):

1. http(s) URLs (a PubMed / PMC / Europe PMC / doi.org / publisher DOI / arXiv / trial link is
   that identifier);
2. XML elements ``<PMID Version="1">123</PMID>``, ``<ArticleId IdType="pubmed">123</ArticleId>``;
3. labelled PMIDs: ``PMID`` / ``PMIDs`` / ``PubMed ID(s)`` / ``PubMed identifier``, then
   spaces, quotes or markdown ``*`` / ``_`` and at most one ``:`` ``=`` ``#`` ``-``
   (``PMID:123``, ``PMID=123``, ``PMID- 123``, ``**PMID:** 123``, ``"pmid": "123"``); after a
   plural label a list ``PMIDs: 111, 222 and 333`` (``,`` ``;`` ``and`` ``&`` ``or``) gives one
   identifier per number (the first span holds the label, the others are the bare numbers);
   a singular label reads one number (``PMID: 1, 2020`` is not two PMIDs);
4. PMCIDs: ``PMCID`` (any case) followed by a number or ``PMC`` + number, or a bare ``PMC`` +
   digits written in capitals; a lower-case bare ``pmc1`` or one inside a longer token
   (``hPMC12``, ``PMC1-KO``) is no identifier;
5. ``NCT`` + 8 digits; ``arXiv:`` ids;
6. DOIs: labelled (``doi:``, ``DOI``, scheme-less ``doi.org/``) or bare ``10.NNNN/...`` standing
   alone (not after a letter, digit, ``.``, ``/`` or ``-``). A bare DOI whose suffix is digits
   only needs at least :data:`MIN_BARE_NUMERIC_SUFFIX` of them: ``version 10.1234/5`` is a
   version, ``10.2307/2529310`` (JSTOR) a DOI; a labelled one (``doi:10.1234/5``) is read as
   written. A SICI-style DOI is read whole, its ``<issue::item>`` part included
   (``10.1002/(SICI)1097-4636(199708)36:2<192::AID-JBM8>3.0.CO;2-B``, bare, labelled or in a
   doi.org link); no other ``<`` or ``>`` joins an identifier (an autolink ``<https://...>``
   or an HTML tag around one is not part of it).

Bare numbers are never read as PMIDs (no guessing).

**Which URLs are cited papers** (``find_identifiers(text, urls="scholarly")``, the reading of
every citation extractor: :mod:`kit.runs.citations`, :mod:`kit.runs.extract`). A URL in prose is
a citation only when it is scholarly (:func:`is_cited_paper`): a link that reads as an identifier
above, or a page of a scholarly registry that the corpus may not resolve
(:data:`SCHOLARLY_HOSTS`: PubMed / NCBI, PMC, Europe PMC, doi.org, arXiv, ClinicalTrials.gov,
bioRxiv, medRxiv) with a path beyond the site's home page; such a ``URL`` citation stays on the
audit's ``unchecked`` path. Any other URL -- a society's or a journal's web page, a figure image
(a path ending in an image, style or script extension) -- is not a cited paper: it stays in the
claim's text. A publisher page without a DOI in its address (``nature.com/articles/s41586-...``)
is therefore not read; a run that means it lists it in its ``citations`` (any URL there is
kept). ``urls="all"`` (the default) reads every URL, for readers of tool output, where any link
may be the key of a record.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass, field
from urllib.parse import parse_qsl, unquote, urlsplit, urlunsplit

from kit.core.errors import check_param

SCHEMES = ("PMID", "PMCID", "DOI", "ARXIV", "NCT", "URL")
NUMERIC_SCHEMES = ("PMID", "PMCID", "NCT")
URL_MODES = ("all", "scholarly")
MIN_BARE_NUMERIC_SUFFIX = 3

# Hosts (and their subdomains) whose pages are scholarly records even when no identifier is read
# from the address (a PubMed search, an NCBI Bookshelf chapter, a Europe PMC preprint page).
SCHOLARLY_HOSTS = (
    "ncbi.nlm.nih.gov",
    "europepmc.org",
    "doi.org",
    "arxiv.org",
    "clinicaltrials.gov",
    "biorxiv.org",
    "medrxiv.org",
)
_ASSET = re.compile(r"\.(?:png|jpe?g|gif|svg|webp|tiff?|bmp|ico|css|js)$", re.I)

# --- whole values (canonical) ------------------------------------------------------------------
# PMID label: "PMID", "PubMed ID", "PubMed identifier", then ":" "=" "#" "-" or a space (markdown
# emphasis around them allowed: "**PMID:** 1"), digits. "PMID123" (no separator) is not a PMID.
_PMID = re.compile(
    r"^(?:pmid|pubmed[\s_-]*(?:id|identifier))(?:[\s*_]*[:=#-][\s*_]*|[*_]*\s[\s*_]*)"
    r"([0-9]{1,9})$",
    re.I,
)
_PMCID = re.compile(r"^(?:pmcid\s*[:=#-]?\s*)?pmc\s*([0-9]{1,9})$", re.I)
# DOI: "10." + registrant (4-9 digits, no leading zero) + "/" + a non-empty suffix.
_DOI = re.compile(r"^10\.[1-9][0-9]{3,8}/\S+$")
_DOI_PREFIX = re.compile(r"^(?:doi\s*:\s*|(?:https?://)?(?:dx\.|www\.)?doi\.org/)", re.I)
_ARXIV_NEW = re.compile(r"^([0-9]{4}\.[0-9]{4,5})(?:v([0-9]+))?$")
_ARXIV_OLD = re.compile(r"^([a-z][a-z.-]*(?:\.[a-z]{2})?/[0-9]{7})(?:v([0-9]+))?$", re.I)
_ARXIV_PREFIX = re.compile(
    r"^(?:arxiv\s*:\s*|(?:https?://)?(?:www\.|export\.)?arxiv\.org/(?:abs|pdf)/)", re.I
)
_ARXIV_DOI = re.compile(r"^10\.48550/arxiv\.(.+)$")
_NCT = re.compile(r"^nct([0-9]{8})$", re.I)
_HAS_SCHEME = re.compile(r"^https?://", re.I)

# --- links (paths matched after the host, query and fragment already split off) ----------------
_PUBMED_PATH = re.compile(r"^/([0-9]{1,9})/?$")  # pubmed.ncbi.nlm.nih.gov/123/
_NCBI_PUBMED_PATH = re.compile(r"^/pubmed/([0-9]{1,9})/?$")  # www.ncbi.nlm.nih.gov/pubmed/123
# .../articles/PMC123/ and its pages (.../PMC123/pdf/name.pdf, .../PMC123/figure/F1/): the
# article; a file of it that is an image (.../PMC123/bin/fig1.jpg) is not (link_identifier)
_PMC_TAIL = r"PMC([0-9]{1,9})(?:/[^?#]*)?$"
_NCBI_PMC_PATH = re.compile(r"^/pmc/articles/" + _PMC_TAIL, re.I)
_PMC_PATH = re.compile(r"^/articles/" + _PMC_TAIL, re.I)  # pmc.ncbi.nlm.nih.gov
_EPMC_MED_PATH = re.compile(r"^/(?:abstract|article)/MED/([0-9]{1,9})/?$", re.I)
_EPMC_PMC_PATH = re.compile(
    r"^/(?:(?:abstract|article)/PMC/(?:PMC)?|articles/PMC)([0-9]{1,9})/?$", re.I
)
_NCT_PATH = re.compile(r"^/(?:study|ct2/show(?:/record)?)/(NCT[0-9]{8})/?$", re.I)
# A publisher link with the DOI in its path: /doi/10.x/y, /doi/full/10.x/y, /article/10.x/y,
# /articles/10.x/y, /chapter/10.x/y, /content/10.x/y, /content/pdf/10.x/y.pdf.
_PUBLISHER_DOI_PATH = re.compile(
    r"/(?:doi(?:/(?:full|abs|pdf|epdf|epub|pdfdirect|fulltext|reader|book))?|articles?|chapter"
    r"|content(?:/pdf)?)/(10\.[1-9][0-9]{3,8}/.+)$",
    re.I,
)
# What a publisher appends to the DOI in a link: /full, /abstract, .pdf, .full.pdf, ...
_PUBLISHER_TAIL = re.compile(
    r"(?:/(?:full|abstract|abs|pdf|fulltext|html|epdf)|\.(?:full|abstract|pdf|html)"
    r"|\.supplementary-material)+/?$",
    re.I,
)
_PREPRINT_VERSION = re.compile(r"^(10\.1101/.+?)v[0-9]+$", re.I)  # bioRxiv / medRxiv "...v2"

# --- free text (find_identifiers) --------------------------------------------------------------
# Characters of a URL (printable ASCII without whitespace, quotes, <>, backtick, |, [], {}, \, ^,
# * and parentheses); a "(" joins only with its ")", one level deep: "(20)" in a DOI link.
_URL_CHARS = r"[A-Za-z0-9\-._~:/?#@!$&+,;=%]"
# The "<issue::item>" part of a SICI-style DOI ("10.1002/(SICI)1097-4636(199708)36:2
# <192::AID-JBM8>3.0.CO;2-B"): "<", a short alphanumeric code, one or two ":", an item code,
# ">". Nothing else with "<>" joins a DOI or URL, so an autolink "<https://doi.org/...>" or an
# HTML tag ("<i>", "</b>": no ":") ends one.
_SICI_ITEM = r"<[A-Za-z0-9]{1,12}::?[A-Za-z0-9-]{1,60}>"
_URL_BODY = rf"(?:{_URL_CHARS}|\({_URL_CHARS}*\)|{_SICI_ITEM})+"
# Characters of a DOI suffix (Crossref's recommended set a-z A-Z 0-9 - . _ ; : / plus + and %
# for percent-encoding), parentheses balanced as in URLs, and a SICI item.
_DOI_CHARS = r"[A-Za-z0-9\-._;:/+%]"
_DOI_BODY = rf"(?:{_DOI_CHARS}|\({_DOI_CHARS}*\)|{_SICI_ITEM})+"
_WORD_START = r"(?<![A-Za-z0-9])"  # "_PMID" (emphasis) starts a word; "xPMID" does not
# Between a label and its value: quotes, spaces and markdown emphasis, at most one : = # -.
_LABEL_SEP = r"[\s\"'*_]{0,6}(?:[:=#-][\s\"'*_]{0,6})?"
_NUMBER_END = r"(?![A-Za-z0-9])"

_FIND_URL = re.compile(rf"https?://{_URL_BODY}", re.I)
_FIND_XML_PMID = re.compile(
    r"<pmid\b[^<>]{0,100}>\s*([0-9]{1,9})\s*</pmid\s*>"
    r"|<articleid\s+idtype\s*=\s*[\"']pubmed[\"']\s*>\s*([0-9]{1,9})\s*</articleid\s*>",
    re.I,
)
_FIND_PMID = re.compile(
    rf"{_WORD_START}(?:pmid(s)?|pubmed[ _-]?(?:id|identifier)(s)?){_LABEL_SEP}"
    rf"([0-9]{{1,9}}){_NUMBER_END}",
    re.I,
)
# One more item of a list after a plural label: ", 222", "; 222", " and 333", ", & 444".
_FIND_PMID_NEXT = re.compile(
    rf"[ \t]*(?:[,;]|(?:,[ \t]*)?(?:and|or|&))[ \t]*([0-9]{{1,9}}){_NUMBER_END}"
)
_FIND_PMCID = re.compile(
    rf"{_WORD_START}(?:(?i:pmcid){_LABEL_SEP}(?i:pmc)?|PMC)([0-9]{{1,9}})(?![A-Za-z0-9]|-[A-Za-z0-9])"
)
_FIND_NCT = re.compile(rf"{_WORD_START}nct[0-9]{{8}}{_NUMBER_END}", re.I)
_FIND_ARXIV = re.compile(
    r"\barxiv\s*:\s*(?:[0-9]{4}\.[0-9]{4,5}|[a-z][a-z.-]*/[0-9]{7})(?:v[0-9]+)?" + _NUMBER_END,
    re.I,
)
# A DOI: labelled ("doi:", "DOI ", "**DOI:** ", a scheme-less "doi.org/") or bare, standing alone.
_FIND_DOI = re.compile(
    rf"(?:(?P<label>{_WORD_START}doi{_LABEL_SEP}|(?<![A-Za-z0-9./-])(?:dx\.|www\.)?doi\.org/)"
    rf"|(?<![A-Za-z0-9./-]))"
    rf"(?P<doi>10\.[1-9][0-9]{{3,8}}/{_DOI_BODY})",
    re.I,
)
_SENTENCE_END = ".,;:!?"
_EMPHASIS = "*_~`"


@dataclass(frozen=True)
class Identifier:
    """A canonical identifier: ``scheme`` in :data:`SCHEMES`, ``value`` canonical, ``version``
    only for arXiv (None = unversioned)."""

    scheme: str
    value: str
    version: int | None = None

    @property
    def label(self) -> str:
        """The one written form: ``PMID:123``, ``PMC123``, ``doi:10.x/y``, ``arXiv:2101.00001v2``,
        ``NCT01234567`` or the URL."""
        if self.scheme == "PMID":
            return f"PMID:{self.value}"
        if self.scheme == "DOI":
            return f"doi:{self.value}"
        if self.scheme == "ARXIV":
            return f"arXiv:{self.value}" + (f"v{self.version}" if self.version else "")
        return self.value

    @property
    def key(self) -> tuple[str, str]:
        """What resolution compares: (scheme, value), the arXiv version dropped."""
        return (self.scheme, self.value)


@dataclass
class Spans:
    """Non-overlapping spans ``[a, b)`` of a text, kept sorted, so that whether a new span is
    free is a binary search (linear-time readers of long answers, not quadratic)."""

    starts: list[int] = field(default_factory=list)
    ends: list[int] = field(default_factory=list)

    def free(self, a: int, b: int) -> bool:
        """True when ``[a, b)`` overlaps no span held."""
        i = bisect_right(self.starts, a)
        return not (
            (i > 0 and self.ends[i - 1] > a) or (i < len(self.starts) and self.starts[i] < b)
        )

    def add(self, a: int, b: int) -> None:
        """Hold ``[a, b)`` (the caller checked it is :meth:`free`)."""
        i = bisect_right(self.starts, a)
        self.starts.insert(i, a)
        self.ends.insert(i, b)


def numeric(ident: Identifier) -> int | None:
    """The number inside a PMID / PMCID / NCT id (for coverage ranges), else None."""
    if ident.scheme == "PMID":
        return int(ident.value)
    if ident.scheme in ("PMCID", "NCT"):
        return int(ident.value[3:])
    return None


def strip_trailing(text: str) -> str:
    """``text`` without trailing sentence punctuation, quotes, ``>`` and closing brackets that
    close nothing inside it: ``"10.1/x(1))."`` -> ``"10.1/x(1)"``; ``"(20)30183-5"`` is kept."""
    t = text
    while t:
        last = t[-1]
        if last in _SENTENCE_END + "\"'>":
            t = t[:-1]
        elif last in ")]}":
            opener = {")": "(", "]": "[", "}": "{"}[last]
            if t.count(opener) >= t.count(last):
                break
            t = t[:-1]
        else:
            break
    return t


def unwrap(text: str) -> str:
    """``text`` without the formatting around it: surrounding whitespace, markdown emphasis and
    code (``*``, ``_``, ``~``, backticks: as many trailing as leading), ``<...>``, quotes
    (ASCII and typographic), CJK brackets and punctuation, then :func:`strip_trailing`."""
    t = text.strip()
    t = t.lstrip("\"'<“‘「『【（〈《")
    lead = len(t) - len(t.lstrip(_EMPHASIS))
    head, t = t[:lead], t[lead:]
    t = t.rstrip("\"'>”’」』】）〉》，。；：、！？ \t\n")
    for ch in reversed(head):
        if t.endswith(ch):
            t = t[:-1]
    return strip_trailing(t.rstrip())


def normalise_doi(text: str) -> str | None:
    """``10.x/y`` lower-cased from any DOI spelling (prefix, URL, percent-encoding), else None."""
    t = _DOI_PREFIX.sub("", text.strip())
    t = strip_trailing(unquote(t).strip())
    t = t.lower()
    return t if _DOI.match(t) else None


def plausible_bare_doi(doi: str) -> bool:
    """True when ``doi`` (``10.x/suffix``) written without ``doi:`` / doi.org is read as a DOI:
    a suffix of digits only needs :data:`MIN_BARE_NUMERIC_SUFFIX` of them (``version
    10.1234/5`` is no DOI; JSTOR's ``10.2307/2529310`` is)."""
    suffix = doi.split("/", 1)[1] if "/" in doi else ""
    return bool(suffix) and (not suffix.isdigit() or len(suffix) >= MIN_BARE_NUMERIC_SUFFIX)


def _arxiv(text: str) -> Identifier | None:
    t = _ARXIV_PREFIX.sub("", text.strip())
    t = re.sub(r"\.pdf$", "", t, flags=re.I).rstrip("/")
    for pat in (_ARXIV_NEW, _ARXIV_OLD):
        m = pat.match(t)
        if m:
            version = int(m.group(2)) if m.group(2) else None
            return Identifier("ARXIV", m.group(1).lower(), version)
    return None


def _doi_identifier(text: str) -> Identifier | None:
    """A DOI spelling as its identifier: the arXiv id for a DataCite arXiv DOI, else the DOI."""
    doi = normalise_doi(text)
    if doi is None:
        return None
    m = _ARXIV_DOI.match(doi)
    return (_arxiv(m.group(1)) if m else None) or Identifier("DOI", doi)


def normalise_url(text: str) -> str | None:
    """An http(s) URL with scheme and host lower-cased, default port, fragment, empty query and
    trailing slash dropped; else None."""
    try:
        parts = urlsplit(text.strip())
        hostname = parts.hostname
    except ValueError:  # an unclosed "[" of an IPv6 host
        return None
    if parts.scheme.lower() not in ("http", "https") or not hostname:
        return None
    scheme = parts.scheme.lower()
    host = hostname.lower()
    default = {"http": 80, "https": 443}[scheme]
    try:
        port = parts.port
    except ValueError:
        return None
    netloc = host if port in (None, default) else f"{host}:{port}"
    path = parts.path.rstrip("/") if parts.path not in ("", "/") else ""
    return urlunsplit((scheme, netloc, path, parts.query, ""))


def _host(url: str) -> str:
    """The host of ``url`` lower-cased without ``www.``; "" when it has none."""
    try:
        host = (urlsplit(url).hostname or "").lower()
    except ValueError:
        return ""
    return host[4:] if host.startswith("www.") else host


def _on(host: str, domain: str) -> bool:
    return host == domain or host.endswith("." + domain)


def _publisher_doi(path: str, query: str) -> Identifier | None:
    """The DOI a publisher link carries in its path or in a ``doi=`` / ``id=`` query field."""
    m = _PUBLISHER_DOI_PATH.search(unquote(path))
    if m:
        doi = _PUBLISHER_TAIL.sub("", m.group(1))
        v = _PREPRINT_VERSION.match(doi)
        return _doi_identifier(v.group(1) if v else doi)
    for name, value in parse_qsl(query):
        if name.lower() in ("doi", "id") and value.startswith("10."):
            return _doi_identifier(value)
    return None


def link_identifier(url: str) -> Identifier | None:
    """The identifier a link names (module doc: PubMed, PMC, Europe PMC, doi.org, publisher DOI,
    arXiv and ClinicalTrials.gov links; a scheme-less ``pubmed.ncbi.nlm.nih.gov/123`` too), else
    None (a URL of no scheme, or no URL)."""
    u = url.strip()
    if not _HAS_SCHEME.match(u):
        u = "https://" + u
    try:
        parts = urlsplit(u)
    except ValueError:
        return None
    host = _host(u)
    path = parts.path
    if _ASSET.search(path):
        return None  # an image, a style sheet or a script is no paper, whoever serves it
    if host == "pubmed.ncbi.nlm.nih.gov" and (m := _PUBMED_PATH.match(path)):
        return _pmid(m.group(1))
    if host == "ncbi.nlm.nih.gov":
        if m := _NCBI_PUBMED_PATH.match(path):
            return _pmid(m.group(1))
        if m := _NCBI_PMC_PATH.match(path):
            return Identifier("PMCID", f"PMC{int(m.group(1))}")
    if host == "pmc.ncbi.nlm.nih.gov" and (m := _PMC_PATH.match(path)):
        return Identifier("PMCID", f"PMC{int(m.group(1))}")
    if host == "europepmc.org":
        if m := _EPMC_MED_PATH.match(path):
            return _pmid(m.group(1))
        if m := _EPMC_PMC_PATH.match(path):
            return Identifier("PMCID", f"PMC{int(m.group(1))}")
    if host in ("doi.org", "dx.doi.org"):
        return _doi_identifier(path.lstrip("/"))
    if host in ("arxiv.org", "export.arxiv.org") and re.match(r"^/(?:abs|pdf)/", path):
        return _arxiv(path.split("/", 2)[2])
    if _on(host, "clinicaltrials.gov") and (m := _NCT_PATH.match(path)):
        return Identifier("NCT", m.group(1).upper())
    if host:
        return _publisher_doi(path, parts.query)
    return None


def is_cited_paper(ident: Identifier) -> bool:
    """True unless ``ident`` is a URL that is no scholarly record (module doc, *Which URLs are
    cited papers*): a URL citation needs a host in :data:`SCHOLARLY_HOSTS`, a path beyond the
    site's home page and no image / style / script extension."""
    if ident.scheme != "URL":
        return True
    parts = urlsplit(ident.value)
    host = _host(ident.value)
    if not any(_on(host, h) for h in SCHOLARLY_HOSTS):
        return False
    if parts.path in ("", "/") and not parts.query:
        return False
    return not _ASSET.search(parts.path)


def _pmid(digits: str) -> Identifier | None:
    return Identifier("PMID", str(int(digits))) if int(digits) > 0 else None


def _url(t: str) -> Identifier | None:
    url = normalise_url(t)
    return Identifier("URL", url) if url else None


def _as_scheme(t: str, scheme: str) -> Identifier | None:
    """``t`` read as a value of ``scheme`` (bare or prefixed), else None (fast path)."""
    if scheme == "PMID":
        if t.isdigit() and len(t) <= 9:
            return _pmid(t)
        m = _PMID.match(t)
        return _pmid(m.group(1)) if m else None
    if scheme == "PMCID":
        if t.isdigit() and len(t) <= 9:
            return Identifier("PMCID", f"PMC{int(t)}")
        m = _PMCID.match(t)
        return Identifier("PMCID", f"PMC{int(m.group(1))}") if m else None
    if scheme == "NCT":
        if t.isdigit() and len(t) == 8:
            return Identifier("NCT", f"NCT{t}")
        m = _NCT.match(t)
        return Identifier("NCT", f"NCT{m.group(1)}") if m else None
    if scheme == "DOI":
        return _doi_identifier(t)
    if scheme == "ARXIV":
        return _arxiv(t)
    if scheme == "URL":  # a PubMed / PMC / doi.org / arXiv / trial link is that identifier
        got = canonical(t)
        return got if got is not None and got.scheme != "URL" else _url(t)
    return None


def canonical(text: str, default_scheme: str | None = None) -> Identifier | None:
    """The canonical :class:`Identifier` written in ``text``, or None when it is none.

    ``default_scheme`` names the scheme of a bare value (``"PMID"`` for a column of PMIDs); a
    column of URLs (``"URL"``) still reads a PubMed / PMC / doi.org / arXiv / trial link as that
    identifier, so every spelling of one paper compares equal. Formatting around the value is
    dropped first (:func:`unwrap`).
    """
    t = unwrap(text) if text else ""
    if not t:
        return None
    if default_scheme is not None:
        return _as_scheme(t, default_scheme) or canonical(t)
    m = _PMID.match(t)
    if m:
        return _pmid(m.group(1))
    m = _PMCID.match(t)
    if m:
        return Identifier("PMCID", f"PMC{int(m.group(1))}")
    m = _NCT.match(t)
    if m:
        return Identifier("NCT", f"NCT{m.group(1)}")
    if not t[:1].isdigit() and not _DOI_PREFIX.match(t) and "/" in t:
        got = link_identifier(t)  # a link, with or without its scheme
        if got is not None:
            return got
    if _ARXIV_PREFIX.match(t) or _ARXIV_NEW.match(t):
        got = _arxiv(t)
        if got is not None:
            return got
    if _DOI_PREFIX.match(t) or t.startswith("10."):
        got = _doi_identifier(t)
        if got is not None:
            return got
    return _url(t)


def _check_urls(urls: str) -> None:
    check_param("urls", urls, urls in URL_MODES, f"one of {URL_MODES}", "find_identifiers")


def _trim(text: str, start: int, end: int) -> int:
    """The end of a span ``text[start:end]`` without trailing sentence punctuation, and without a
    trailing ``_`` / ``~`` when the span stands inside ``_..._`` / ``~..~``."""
    while end > start:
        last = text[end - 1]
        if last in _SENTENCE_END or (last in "_~" and start > 0 and text[start - 1] == last):
            end -= 1
        else:
            break
    return end


def _find_urls(
    text: str, urls: str
) -> tuple[list[tuple[int, int, Identifier]], list[tuple[int, int]]]:
    """(identifiers, spans of URLs that are none) in ``text``: a skipped URL still holds its
    span, so a DOI-like piece of an unscholarly address is not read on its own."""
    found, skipped = [], []
    for m in _FIND_URL.finditer(text):
        a, b = m.start(), _trim(text, m.start(), m.end())
        ident = canonical(text[a:b])
        if ident is None or (urls == "scholarly" and not is_cited_paper(ident)):
            skipped.append((a, b))
        else:
            found.append((a, b, ident))
    return found, skipped


def _find_pmids(text: str) -> list[tuple[int, int, Identifier]]:
    """Labelled PMIDs; after a plural label every number of the list that follows."""
    out = []
    for m in _FIND_PMID.finditer(text):
        ident = _pmid(m.group(3))
        if ident is None:
            continue
        out.append((m.start(), m.end(), ident))
        if not (m.group(1) or m.group(2)):
            continue  # a singular label names one PMID
        pos = m.end()
        while nxt := _FIND_PMID_NEXT.match(text, pos):
            got = _pmid(nxt.group(1))
            if got is not None:
                out.append((nxt.start(1), nxt.end(1), got))
            pos = nxt.end()
    return out


def _find_dois(text: str) -> list[tuple[int, int, Identifier]]:
    out = []
    for m in _FIND_DOI.finditer(text):
        end = _trim(text, m.start(), m.end())
        doi = text[m.start("doi") : end]
        if not m.group("label") and not plausible_bare_doi(doi):
            continue
        ident = _doi_identifier(doi)
        if ident is not None:
            out.append((m.start(), end, ident))
    return out


def _find_simple(text: str, pattern: re.Pattern[str]) -> list[tuple[int, int, Identifier]]:
    out = []
    for m in pattern.finditer(text):
        ident = canonical(m.group(0))
        if ident is not None:
            out.append((m.start(), m.end(), ident))
    return out


def _find_pmcids(text: str) -> list[tuple[int, int, Identifier]]:
    return [
        (m.start(), m.end(), Identifier("PMCID", f"PMC{int(m.group(1))}"))
        for m in _FIND_PMCID.finditer(text)
    ]


def _find_xml_pmids(text: str) -> list[tuple[int, int, Identifier]]:
    out = []
    for m in _FIND_XML_PMID.finditer(text):
        ident = _pmid(m.group(1) or m.group(2))
        if ident is not None:
            out.append((m.start(), m.end(), ident))
    return out


def find_identifiers(text: str, urls: str = "all") -> list[tuple[int, int, Identifier]]:
    """Every identifier written in free ``text`` (a tool response, a page, an answer), in order,
    as (start, end, canonical :class:`Identifier`); ``text[start:end]`` is the identifier as
    written, its label included, formatting and sentence punctuation around it left out.

    What is read, and in which order, is the module doc's *Identifiers in free text*. ``urls``:
    ``"all"`` reads every other http(s) URL as a ``URL`` identifier; ``"scholarly"`` only those
    that are cited papers (:func:`is_cited_paper`; module doc, *Which URLs are cited papers*).
    Bare numbers are never read as PMIDs (no guessing)."""
    _check_urls(urls)
    url_found, url_skipped = _find_urls(text, urls)
    taken = Spans()
    for a, b in url_skipped:
        taken.add(a, b)
    found: list[tuple[int, int, Identifier]] = []
    passes = (
        url_found,
        _find_xml_pmids(text),
        _find_pmids(text),
        _find_pmcids(text),
        _find_simple(text, _FIND_NCT),
        _find_simple(text, _FIND_ARXIV),
        _find_dois(text),
    )
    for spans in passes:
        for a, b, ident in spans:
            if taken.free(a, b):
                found.append((a, b, ident))
                taken.add(a, b)
    return sorted(found, key=lambda t: (t[0], t[1]))
