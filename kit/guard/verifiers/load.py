"""Loading a verifier by its card: built-in names, card folders, the sha256 check, the variant.

``--verifier`` is a built-in name (:data:`BUILTIN_VERIFIERS`) or a folder holding a card.json;
:func:`load_verifier` checks the ONNX file against the card's sha256 and returns an
:class:`~kit.guard.verifiers.session.OnnxBiEncoder`, an
:class:`~kit.guard.verifiers.session.OnnxCrossEncoder` (with its relatedness bi-encoder when the
card names one) or an LLM verifier (:mod:`kit.guard.verifiers.llm.verifier`). docs/architecture.md,
"Citation guard".
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kit.core import boundary
from kit.core.errors import ConfigError, InputError, Location
from kit.guard.scoring.windows import WindowSpec
from kit.guard.verifiers.card import DEFAULT_WINDOW, ModelCard
from kit.guard.verifiers.card_file import check_card
from kit.guard.verifiers.fitted_rule import (
    rule_from_dict,
)
from kit.guard.verifiers.rules import FITTED_RULE, SCORING_RULES
from kit.guard.verifiers.session import OnnxBiEncoder, OnnxCrossEncoder

_ROOT = Path(__file__).resolve().parents[3]  # the checkout, as for the registry's data/raw


BUILTIN_VERIFIERS: dict[str, Path] = {
    # name -> the folder its DVC stage writes (dvc.yaml); `--verifier NAME` resolves through here
    "minilm-nli": _ROOT / "data" / "verifier-nli",
    "minilm-bi": _ROOT / "data" / "verifier",
}


DEFAULT_VERIFIER = "minilm-nli"


VERIFIER_HELP = (
    "Verifier: a built-in name (minilm-nli = the kit-trained cross-encoder, the default; "
    "minilm-bi = the similarity bi-encoder) or a folder holding a card.json "
    "(from `kit guard train`, `kit guard adapt` or `kit guard import-verifier`; an LLM "
    "behind an OpenAI-compatible endpoint: `kit guard import-verifier --base-url`)."
)


RELATEDNESS_DIR = "relatedness"  # a cross-encoder card's companion bi-encoder card folder


def resolve_verifier(spec: str | Path) -> Path:
    """The card folder of ``spec``: a built-in name or a folder path (nothing is loaded)."""
    text = str(spec)
    if text in BUILTIN_VERIFIERS:
        folder = BUILTIN_VERIFIERS[text]
        if not (folder / "card.json").is_file():
            build = "make reproduce" if text == DEFAULT_VERIFIER else "kit guard build-verifier"
            raise ConfigError(
                "missing_verifier",
                f"verifier {text!r} is not built yet ({folder}/card.json is missing); "
                f"build it with `{build}` (or `dvc repro`), or pass a card folder",
            )
        return folder
    folder = Path(text)
    if not (folder / "card.json").is_file():
        names = ", ".join(BUILTIN_VERIFIERS)
        raise ConfigError(
            "missing_verifier",
            f"--verifier {text!r} is neither a built-in name ({names}) nor a folder with a "
            "card.json",
        )
    return folder


def load_card(verifier_dir: Path) -> dict[str, Any]:
    """The card.json of ``verifier_dir``, checked against the card schema (a card that breaks
    it: an InputError naming the file and each field's path). The checks that had their own
    words before the schema (an LLM card's schema, the validation block, the ONNX card's
    fields, a cross-encoder's extra) run first and keep them."""
    path = Path(verifier_dir) / "card.json"
    if not path.is_file():
        raise InputError(
            "missing_file",
            "no verifier card here; build one with `kit guard build-verifier --out DIR`",
            where=Location(str(path)),
        )
    card = boundary.read_json(path, allow_non_finite=True)  # a kit-written card: NaN metrics
    if not isinstance(card, dict):
        raise InputError("bad_card", "card.json is not a JSON object", where=Location(str(path)))
    from kit.core.schema import validate_json

    if card.get("kind") == "llm":  # a chat model behind an endpoint (kit.guard.verifiers.llm)
        validate_json(card, "llm_verifier_card", str(path))  # the words load_llm_verifier uses
    if "validation" in card:  # kit guard validate's block (schemas/json/instrument_validation)
        validate_json(card["validation"], "instrument_validation", str(path))
    if card.get("kind") == "llm":
        check_card(card, str(path))
        return card
    missing = [k for k in ("kind", "onnx_file", "onnx_sha256", "tokenizer") if k not in card]
    if missing:
        raise InputError(
            "bad_card", f"card.json lacks {', '.join(missing)}", where=Location(str(path))
        )
    if card["kind"] == "cross-encoder":
        _check_cross_extra(card.get("extra", {}), Location(str(path)))
    check_card(card, str(path))  # schemas/json/verifier_card.schema.json
    return card


def _check_cross_extra(extra: dict[str, Any], where: Location) -> None:
    """A cross-encoder card's label order, scoring rule and relatedness pointer, each with its
    own message (the card schema checks them too, with the schema's words)."""
    labels = [str(x) for x in extra.get("labels", [])]
    if "entailment" not in labels:
        raise InputError(
            "bad_card",
            f"a cross-encoder card needs extra.labels naming 'entailment'; got {labels}",
            where=where,
        )
    scoring = extra.get("scoring", "entailment")
    if scoring not in SCORING_RULES:
        raise InputError(
            "bad_card",
            f"extra.scoring must be one of {', '.join(SCORING_RULES)}; got {scoring!r}",
            where=where,
        )
    rel = extra.get("relatedness")
    if rel is not None and (not isinstance(rel, dict) or not {"folder", "card_sha256"} <= set(rel)):
        raise InputError(
            "bad_card", "extra.relatedness must name a folder and its card_sha256", where=where
        )
    if scoring == "two_signal" and rel is None:
        raise InputError(
            "bad_card",
            "extra.scoring is two_signal but the card names no relatedness bi-encoder "
            "(extra.relatedness)",
            where=where,
        )


def _checked_model(verifier_dir: Path, d: dict[str, Any], variant: str) -> tuple[Path, str]:
    from kit.core.errors import IntegrityError
    from kit.core.hashing import file_sha256

    extra = d.get("extra", {})
    if variant == "fp32":
        fname, sha = d["onnx_file"], d["onnx_sha256"]
    elif variant == "int8":
        if "int8_file" not in extra:
            raise ConfigError("bad_parameter", f"{verifier_dir}: this verifier has no int8 variant")
        fname, sha = extra["int8_file"], extra["int8_sha256"]
    else:
        raise ConfigError("bad_parameter", f"variant must be 'fp32' or 'int8'; got {variant!r}")
    path = Path(verifier_dir) / fname
    if not path.is_file():
        raise InputError("missing_file", "ONNX model not found", where=Location(str(path)))
    got = file_sha256(path)
    if got != sha:
        raise IntegrityError("sha256_mismatch", f"{path}: sha256 {got} != card {sha}")
    return path, sha


def _relatedness(
    folder: Path,
    extra: dict[str, Any],
    variant: str,
    device: str,
    batch_size: int,
    threads: int,
) -> OnnxBiEncoder | None:
    """A cross-encoder card's companion bi-encoder (``extra.relatedness``), its card.json
    checked against the sha256 the cross-encoder's card pins; None when the card has none."""
    from kit.core.errors import IntegrityError
    from kit.core.hashing import file_sha256

    rel = extra.get("relatedness")
    if rel is None:
        return None
    where = Location(str(folder / "card.json"))
    sub = folder / str(rel["folder"])
    if sub.resolve().parent != folder.resolve() or not (sub / "card.json").is_file():
        raise InputError(
            "bad_card",
            f"extra.relatedness.folder must be a subfolder of the card holding a card.json; "
            f"got {rel['folder']!r}",
            where=where,
        )
    got = file_sha256(sub / "card.json")
    if got != rel["card_sha256"]:
        raise IntegrityError(
            "sha256_mismatch", f"{sub / 'card.json'}: sha256 {got} != card {rel['card_sha256']}"
        )
    bi = load_verifier(sub, variant, device, batch_size, False, threads)
    if not isinstance(bi, OnnxBiEncoder):
        raise InputError("bad_card", "extra.relatedness must be a bi-encoder card", where=where)
    return bi


def load_verifier(
    spec: str | Path = DEFAULT_VERIFIER,
    variant: str = "fp32",
    device: str = "cpu",
    batch_size: int = 32,
    progress: bool = False,
    threads: int = 0,
) -> OnnxBiEncoder | OnnxCrossEncoder:
    """The verifier a card describes (``spec``: a built-in name or a card folder).

    The card's ``kind`` selects the code path -- ``bi-encoder``, ``cross-encoder`` or ``llm``
    (a chat model behind an OpenAI-compatible endpoint, :mod:`kit.guard.verifiers.llm.verifier`) -- and the
    ONNX file's (or the LLM card's instrument) sha256 is checked against the card before use. A cross-encoder card carries its
    label order (``extra.labels``, must include ``entailment``) and its scoring rule
    (``extra.scoring``, one of :data:`SCORING_RULES`).
    """
    folder = resolve_verifier(spec)
    d = load_card(folder)
    if d["kind"] == "llm":  # model + endpoint + prompt sha256 + decoding + answer rule
        from kit.guard.verifiers.llm.verifier import load_llm_verifier

        return load_llm_verifier(folder, d, variant)  # type: ignore[return-value]
    path, sha = _checked_model(folder, d, variant)
    fields = set(ModelCard.__dataclass_fields__)
    card = ModelCard(
        **{
            k: v
            for k, v in {**d, "onnx_file": path.name, "onnx_sha256": sha}.items()
            if k in fields
        }
    )
    tok = folder / d.get("tokenizer_file", "tokenizer.json")
    if d["kind"] == "bi-encoder":
        return OnnxBiEncoder(
            path,
            tok,
            card,
            device=device,
            batch_size=batch_size,
            progress=progress,
            threads=threads,
        )
    if d["kind"] == "cross-encoder":
        extra = d.get("extra", {})
        labels = [str(x) for x in extra.get("labels", [])]
        scoring = extra.get("scoring", "entailment")
        window = WindowSpec(**extra["window"]) if "window" in extra else DEFAULT_WINDOW
        relatedness = _relatedness(folder, extra, variant, device, batch_size, threads)
        fitted = None
        if scoring == FITTED_RULE or "fitted" in extra:
            try:
                fitted = rule_from_dict(extra.get("fitted") or {})
            except (ValueError, TypeError, AttributeError) as exc:
                raise InputError(
                    "bad_card",
                    f"extra.fitted must hold the fitted rule's features, weights and "
                    f"intercept: {exc}",
                    where=Location(str(folder / "card.json")),
                ) from None
            if "relatedness" in fitted.features and relatedness is None:
                raise InputError(
                    "bad_card",
                    "extra.fitted reads relatedness but the card names no relatedness "
                    "bi-encoder (extra.relatedness)",
                    where=Location(str(folder / "card.json")),
                )
        return OnnxCrossEncoder(
            path,
            tok,
            card,
            labels=labels,
            scoring=scoring,
            device=device,
            batch_size=batch_size,
            window=window,
            progress=progress,
            threads=threads,
            relatedness=relatedness,
            fitted=fitted,
        )
    raise InputError(
        "bad_card",
        f"card kind must be 'bi-encoder', 'cross-encoder' or 'llm'; got {d['kind']!r}",
        where=Location(str(folder / "card.json")),
    )
