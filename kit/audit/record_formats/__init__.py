"""Tool responses read by record format: a detector and one parser per format (pure).

Search and fetch tools answer with one or several *records* (one per paper), each carrying its
identifiers (PMID, PMCID, DOI, ...), a title, metadata and, when the tool gives it, a passage
(abstract, snippet, full text). :func:`kit.audit.records.split_records` cuts a response into
its records (:class:`~kit.audit.record_formats.record.Record`); every identifier of one record
points at that record's text, wherever in the record it stands, and each record names the
``format`` it was read in, so a user sees how each passage was read:

=========================  ===================================================  ============
format                     what                                                 module
=========================  ===================================================  ============
``pubmed-xml``             efetch ``retmode=xml`` (``<PubmedArticle>``)         eutils_xml
``esummary-xml``           esummary XML (``<DocSum>``; no abstract)             eutils_xml
``europepmc-json``         Europe PMC REST JSON                                 json_records
``esummary-json``          esummary JSON (``result`` keyed by uid)              json_records
``semantic-scholar-json``  Semantic Scholar Graph API JSON                      json_records
``openalex-json``          OpenAlex works (abstract rebuilt from its index)     json_records
``json``                   other JSON with record objects                       json_records
``medline``                efetch ``rettype=medline`` (``PMID- ``, ``AB  - ``)  medline
``pubmed-abstract``        efetch ``rettype=abstract`` text (ids last)          pubmed_text
``key-value``              ``Key: value`` blocks, ids opening or closing each   key_value
``one-paper``              a text response naming one paper                     heuristic
``markdown``               headings or bulleted entries                         heuristic
``numbered``               a numbered list                                      heuristic
``id-led``                 lines opening with an identifier                     heuristic
``heuristic``              the paragraph fallback                               heuristic
=========================  ===================================================  ============

Order (:mod:`~kit.audit.record_formats.detect`): XML, JSON, MEDLINE, PubMed abstract text,
then the text rules of :mod:`~kit.audit.record_formats.heuristic` as the last resort (also for
XML that does not parse and JSON without record objects). Each module's docstring states its
format's rule; :mod:`~kit.audit.record_formats.text_keys` and
:mod:`~kit.audit.record_formats.text_passage` hold what a text record's own identifiers and
its passage are.
"""
