"""Canonical identifiers of cited documents (pure).

One canonical form per scheme, so that every spelling of one identifier compares equal:

* ``PMID``  -- digits without leading zeros. Accepts ``PMID:123``, ``PMID 123``, ``pmid: 123``,
  ``https://pubmed.ncbi.nlm.nih.gov/123/``, ``https://www.ncbi.nlm.nih.gov/pubmed/123``.
* ``PMCID`` -- ``PMC`` + digits without leading zeros. Accepts ``PMC123``, ``pmc123``,
  ``PMCID: PMC123``, ``https://www.ncbi.nlm.nih.gov/pmc/articles/PMC123/``,
  ``https://pmc.ncbi.nlm.nih.gov/articles/PMC123/``.
* ``DOI``   -- ``10.<registrant>/<suffix>`` lower-cased (DOIs are case-insensitive, DOI Handbook
  section 2.4), percent-decoded, trailing sentence punctuation removed. Accepts ``doi:``,
  ``DOI:``, ``https://doi.org/``, ``http://dx.doi.org/``, ``doi.org/`` forms. A DataCite arXiv
  DOI (``10.48550/arXiv.<id>``) is the arXiv id.
* ``ARXIV`` -- the base id (``2101.00001``; old style ``hep-th/9901001``) with the version
  (``v2``) kept apart: every version of a paper is one document. Accepts ``arXiv:``, ``abs/`` and
  ``pdf/`` URLs.
* ``NCT``   -- ``NCT`` + 8 digits, upper-cased; accepts ClinicalTrials.gov URLs.
* ``URL``   -- any other http(s) URL: scheme and host lower-cased, default port, fragment and a
  trailing slash dropped.

:func:`canonical` returns ``None`` for text that is no identifier; bare digits are a PMID only
when the caller says so (``default_scheme="PMID"``), never by guessing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit, urlunsplit

SCHEMES = ("PMID", "PMCID", "DOI", "ARXIV", "NCT", "URL")
NUMERIC_SCHEMES = ("PMID", "PMCID", "NCT")

_PMID = re.compile(r"^pmid(?:\s*:\s*|\s+)([0-9]{1,9})$", re.I)
_PMID_URL = re.compile(
    r"^(?:pubmed\.ncbi\.nlm\.nih\.gov|(?:www\.)?ncbi\.nlm\.nih\.gov/pubmed)/([0-9]{1,9})/?$"
)
_PMCID = re.compile(r"^(?:pmcid\s*:?\s*)?pmc\s*([0-9]{1,9})$", re.I)
_PMC_URL = re.compile(
    r"^(?:(?:www\.)?ncbi\.nlm\.nih\.gov/pmc|pmc\.ncbi\.nlm\.nih\.gov)/articles/pmc([0-9]{1,9})/?$"
)
_DOI = re.compile(r"^10\.[0-9]{4,9}/\S+$")
_DOI_PREFIX = re.compile(r"^(?:doi\s*:\s*|(?:https?://)?(?:dx\.)?doi\.org/)", re.I)
_ARXIV_NEW = re.compile(r"^([0-9]{4}\.[0-9]{4,5})(?:v([0-9]+))?$")
_ARXIV_OLD = re.compile(r"^([a-z][a-z.-]*(?:\.[a-z]{2})?/[0-9]{7})(?:v([0-9]+))?$", re.I)
_ARXIV_PREFIX = re.compile(
    r"^(?:arxiv\s*:\s*|(?:https?://)?(?:www\.|export\.)?arxiv\.org/(?:abs|pdf)/)", re.I
)
_ARXIV_DOI = re.compile(r"^10\.48550/arxiv\.(.+)$")
_NCT = re.compile(r"^nct([0-9]{8})$", re.I)
_NCT_URL = re.compile(r"^(?:www\.)?clinicaltrials\.gov/(?:study|ct2/show)/(nct[0-9]{8})/?$", re.I)
_TRAILING = ".,;:)]}>\"'"


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


def numeric(ident: Identifier) -> int | None:
    """The number inside a PMID / PMCID / NCT id (for coverage ranges), else None."""
    if ident.scheme == "PMID":
        return int(ident.value)
    if ident.scheme in ("PMCID", "NCT"):
        return int(ident.value[3:])
    return None


def _strip_url(text: str) -> str:
    return re.sub(r"^(?:https?://)", "", text, flags=re.I)


def normalise_doi(text: str) -> str | None:
    """``10.x/y`` lower-cased from any DOI spelling (prefix, URL, percent-encoding), else None."""
    t = _DOI_PREFIX.sub("", text.strip())
    t = unquote(t).strip().rstrip(_TRAILING)
    t = t.lower()
    return t if _DOI.match(t) else None


def _arxiv(text: str) -> Identifier | None:
    t = _ARXIV_PREFIX.sub("", text.strip())
    t = re.sub(r"\.pdf$", "", t, flags=re.I).rstrip("/")
    for pat in (_ARXIV_NEW, _ARXIV_OLD):
        m = pat.match(t)
        if m:
            version = int(m.group(2)) if m.group(2) else None
            return Identifier("ARXIV", m.group(1).lower(), version)
    return None


def normalise_url(text: str) -> str | None:
    """An http(s) URL with scheme and host lower-cased, default port, fragment, empty query and
    trailing slash dropped; else None."""
    parts = urlsplit(text.strip())
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        return None
    scheme = parts.scheme.lower()
    host = parts.hostname.lower()
    default = {"http": 80, "https": 443}[scheme]
    try:
        port = parts.port
    except ValueError:
        return None
    netloc = host if port in (None, default) else f"{host}:{port}"
    path = parts.path.rstrip("/") if parts.path not in ("", "/") else ""
    return urlunsplit((scheme, netloc, path, parts.query, ""))


def _url(t: str) -> Identifier | None:
    url = normalise_url(t)
    return Identifier("URL", url) if url else None


def _as_scheme(t: str, scheme: str) -> Identifier | None:
    """``t`` read as a value of ``scheme`` (bare or prefixed), else None (fast path)."""
    if scheme == "PMID":
        if t.isdigit() and len(t) <= 9 and int(t) > 0:
            return Identifier("PMID", str(int(t)))
        m = _PMID.match(t)
        return Identifier("PMID", str(int(m.group(1)))) if m and int(m.group(1)) > 0 else None
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
        doi = normalise_doi(t)
        if doi is None:
            return None
        m = _ARXIV_DOI.match(doi)
        return (_arxiv(m.group(1)) if m else None) or Identifier("DOI", doi)
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
    identifier, so every spelling of one paper compares equal.
    """
    t = text.strip().rstrip(_TRAILING) if text else ""
    if not t:
        return None
    if default_scheme is not None:
        return _as_scheme(t, default_scheme) or canonical(t)
    m = _PMID.match(t)
    if m and int(m.group(1)) > 0:
        return Identifier("PMID", str(int(m.group(1))))
    m = _PMCID.match(t)
    if m:
        return Identifier("PMCID", f"PMC{int(m.group(1))}")
    m = _NCT.match(t)
    if m:
        return Identifier("NCT", f"NCT{m.group(1)}")
    bare = _strip_url(t)
    low = bare.lower()
    m = _PMID_URL.match(low)
    if m and int(m.group(1)) > 0:
        return Identifier("PMID", str(int(m.group(1))))
    m = _PMC_URL.match(low)
    if m:
        return Identifier("PMCID", f"PMC{int(m.group(1))}")
    m = _NCT_URL.match(low)
    if m:
        return Identifier("NCT", m.group(1).upper())
    if _ARXIV_PREFIX.match(t) or _ARXIV_NEW.match(t):
        got = _arxiv(t)
        if got is not None:
            return got
    doi = normalise_doi(t) if (_DOI_PREFIX.match(t) or t.startswith("10.")) else None
    if doi is not None:
        m = _ARXIV_DOI.match(doi)
        if m:
            arx = _arxiv(m.group(1))
            if arx is not None:
                return arx
        return Identifier("DOI", doi)
    url = normalise_url(t)
    return Identifier("URL", url) if url else None


# Spans that may hold an identifier, tried in this order (an earlier span wins an overlap):
# URLs first (a DOI or PubMed link is read whole), then the prefixed forms, then a bare DOI.
_FIND = (
    ("", re.compile(r"https?://[^\s\"'<>\]\[(){}]+", re.I)),
    ("PMID:", re.compile(r"\bpmid[\"']?\s*[:=]?\s*[\"']?([0-9]{1,9})\b", re.I)),
    ("", re.compile(r"\b(?:pmcid[\"']?\s*[:=]?\s*[\"']?)?pmc[0-9]{1,9}\b", re.I)),
    ("", re.compile(r"\bnct[0-9]{8}\b", re.I)),
    (
        "",
        re.compile(
            r"\barxiv\s*:\s*(?:[0-9]{4}\.[0-9]{4,5}|[a-z][a-z.-]*/[0-9]{7})(?:v[0-9]+)?", re.I
        ),
    ),
    ("", re.compile(r"(?:\bdoi\s*:\s*)?\b10\.[0-9]{4,9}/[^\s\"'<>]+", re.I)),
)


def find_identifiers(text: str) -> list[tuple[int, int, Identifier]]:
    """Every identifier written in free ``text`` (a tool response, a page), in order, as
    (start, end, canonical :class:`Identifier`).

    Read in any spelling :func:`canonical` accepts -- ``PMID: 123``, ``"pmid": "123"`` (a JSON
    field), PubMed / PMC / ClinicalTrials.gov / arXiv / doi.org links, ``PMC123``, ``NCT...``,
    ``arXiv:...``, ``doi:10...`` and bare ``10.x/y`` DOIs; a URL that is none of these is a
    ``URL`` identifier. Bare numbers are never read as PMIDs (no guessing)."""
    found: list[tuple[int, int, Identifier]] = []
    taken: list[tuple[int, int]] = []
    for prefix, pattern in _FIND:
        for m in pattern.finditer(text):
            if any(m.start() < e and s < m.end() for s, e in taken):
                continue
            raw = prefix + m.group(1) if prefix else m.group(0)
            ident = canonical(raw)
            if ident is not None:
                found.append((m.start(), m.end(), ident))
                taken.append((m.start(), m.end()))
    return sorted(found, key=lambda t: (t[0], t[1]))
