"""`kit corpus ...`: build corpora a lab brings, list them, show an identifier, search (kit.corpus)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from kit.commands.options import PathDefault, deprecated_command, format_option, raw_option
from kit.core.tables import render
from kit.corpus.build import DEFAULT_ROOT

_dir = click.Path(file_okay=False, path_type=Path)
_path = click.Path(path_type=Path)
SCHEME_CHOICE = click.Choice(["PMID", "PMCID", "DOI", "ARXIV", "NCT", "URL"], case_sensitive=False)

root_option = click.option(
    "--corpus-root",
    type=_dir,
    default=DEFAULT_ROOT,
    show_default=True,
    cls=PathDefault,
    help="Folder holding built corpora (one NAME/ folder each).",
)


@click.group()
def corpus() -> None:
    """Corpora for citation resolution: build, list, show, search.

    \b
    A corpus declares its coverage per identifier scheme: complete over a stated range (an
    absent identifier inside it is `notfound`, a possible fabrication) or a sample (absent =
    `unchecked`, never fabricated). The built-in `pubmedqa` (1,000 registry abstracts) is a sample.
    """


@corpus.command("build")
@click.argument("name")
@click.option(
    "--medline",
    type=_path,
    multiple=True,
    help="MEDLINE .xml/.xml.gz file or folder (repeatable; applied in file-name order).",
)
@click.option(
    "--table",
    type=click.Path(dir_okay=False, path_type=Path),
    multiple=True,
    help="JSONL / parquet / CSV of documents (repeatable).",
)
@click.option(
    "--map",
    "mapping",
    default=None,
    help="Column mapping for --table: id=COL,title=COL,text=COL,doi=COL,...",
)
@click.option(
    "--text-folder", type=_dir, multiple=True, help="A folder of .txt files (repeatable)."
)
@click.option(
    "--id-scheme",
    type=SCHEME_CHOICE,
    default=None,
    help="How to read a bare identifier (e.g. PMID for digits).",
)
@click.option(
    "--coverage",
    multiple=True,
    help="Declared coverage, repeatable: 'PMID=complete:1-40000000;every record of the 2026 "
    "baseline' or 'DOI=sample'. Undeclared schemes are samples.",
)
@click.option("--licence", required=True, help="The sources' licence (recorded in the manifest).")
@click.option("--description", default="", help="One line saying what the corpus is.")
@root_option
@click.option("--quiet", is_flag=True, help="No progress on stderr.")
def build(
    name: str,
    medline: tuple[Path, ...],
    table: tuple[Path, ...],
    mapping: str | None,
    text_folder: tuple[Path, ...],
    id_scheme: str | None,
    coverage: tuple[str, ...],
    licence: str,
    description: str,
    corpus_root: Path,
    quiet: bool,
) -> None:
    """Build (or resume, or update) corpus NAME under --corpus-root/NAME/.

    \b
    Each source is parsed once into part files (a rerun skips parsed sources; an added MEDLINE
    update file is applied after the baseline, deletions included), then the corpus is swapped
    into place atomically with its manifest (sources with sha256, licence, counts, coverage).

    \b
    Example:
      kit corpus build medline26 --medline data/pubmed/ --licence "NLM terms" \\
        --coverage "PMID=complete:1-40000000;every record of the 2026 baseline"
    """
    from kit.corpus.build import BuildSpec, build_corpus, sources_from_options

    spec = BuildSpec(
        name=name,
        sources=sources_from_options(medline, table, mapping, text_folder, id_scheme),
        licence=licence,
        description=description,
        coverage=tuple(_coverages(coverage)),
        root=corpus_root,
        progress=not quiet,
    )
    res = build_corpus(spec)
    for w in res.warnings:
        click.echo(f"warning: {w}", err=True)
    m = res.manifest
    c = m["counts"]
    click.echo(
        f"corpus {name}: {c['documents']} documents, {c['deleted']} deleted; aliases "
        + ", ".join(f"{k} {v}" for k, v in sorted(c["aliases"].items()))
        + f"; sources parsed {len(res.parsed)}, reused {len(res.reused)} -> {corpus_root / name}"
    )
    for cov in m["coverage"]:
        rng = f" {cov['lo']}..{cov['hi']}" if cov["kind"] == "complete" else ""
        click.echo(f"  coverage {cov['scheme']} {cov['kind']}{rng}: {cov['statement']}")


def _coverages(specs: tuple[str, ...]) -> list:
    from kit.corpus.coverage import parse_coverage

    out = []
    for s in specs:
        spec, _, statement = s.partition(";")
        out.append(parse_coverage(spec, statement.strip()))
    return out


corpus.add_command(deprecated_command(build, "kit corpus ingest", "kit corpus build"))


@corpus.command("list")
@root_option
@raw_option
@format_option
def list_cmd(corpus_root: Path, raw: Path, fmt: str) -> None:
    """Every corpus a run can be audited against, with its declared coverage.

    Example: kit corpus list --format markdown
    """
    from kit.corpus.query import list_corpora

    click.echo(render(list_corpora(corpus_root, raw), fmt), nl=False)


@corpus.command("show")
@click.argument("ident")
@click.option("--corpus", "names", default=None, help="NAME[,NAME] in resolution order [all].")
@root_option
@raw_option
def show_cmd(ident: str, names: str | None, corpus_root: Path, raw: Path) -> None:
    """Show a corpus (IDENT = its name) or resolve an identifier (any spelling) and its document.

    \b
    Examples:
      kit corpus show medline26
      kit corpus show https://doi.org/10.1056/NEJMoa2007764 --corpus medline26,pubmedqa
    """
    from kit.corpus.query import show

    click.echo(
        json.dumps(show(ident, names, corpus_root, raw), indent=2, sort_keys=True, default=str)
    )


@corpus.command("search")
@click.argument("query")
@click.option(
    "--corpus", "name", default="pubmedqa", show_default=True, help="The corpus to search."
)
@click.option("--k", type=click.IntRange(min=1), default=10, show_default=True, help="Results.")
@root_option
@raw_option
@format_option
def search_cmd(query: str, name: str, k: int, corpus_root: Path, raw: Path, fmt: str) -> None:
    """The K best documents of a corpus for QUERY by BM25 (Lucene idf, k1 = 1.5, b = 0.75).

    Example: kit corpus search "aspirin stroke prevention" --corpus pubmedqa --k 5
    """
    from kit.corpus.query import search

    click.echo(render(search(query, name, k, corpus_root, raw), fmt), nl=False)
