"""A certified comparison straight from harness logs (pure; docs/certify.md "From harness logs").

The logs (:class:`kit.runs.importers.harness_scores.HarnessLog`, one per model) become the
full-format score table of ``schemas/scores.yaml`` so that the one engine
(:func:`kit.certify.engine.certify_board`) does every statistic. In order:

1. **One benchmark** (:func:`check_one_benchmark`): every log has the same ``task`` and
   ``dataset.name`` (:data:`RUN_FIELDS`), and one log per system; otherwise the whole run is
   refused (exit 2), naming the field, both values and both files.
2. **Admissibility from the declared conditions** (:func:`pair_refusals`), before any score is
   read: a pair of logs that differs in any condition both record (:data:`CONDITION_FIELDS`:
   task version and arguments, dataset location and sample ids, scorers, tools offered, limits,
   solver plan, generation config) or in the content of a common sample (input, choices and
   target; lm-eval: doc, target and prompt hashes) is refused, with a reason naming every
   differing field and both values. The refusals enter the design (``Design.refused``) and the
   engine applies them in Definition 1, so the Bonferroni family, the ranks, the calibration
   and the validity boards all see them.
3. **The score table** (:func:`score_frame`): one row per (sample, model): ``task_id`` the
   sample id (pairing by sample id), ``cluster`` the sample metadata field ``--cluster-column``
   names (default: each sample its own cluster), ``readout`` the score read, ``score`` the mean
   of the sample's epochs, ``failed`` when any epoch errored, hit a limit, was not scored or
   never ran (counted, never dropped). The entry metadata, where that is honest: ``entry_hash``
   the sha256 of what the sample gave the model and its target, ``backbone`` the model,
   ``entry_condition`` ``fixed_input`` (every model receives the sample's own input),
   ``length_view`` ``full_length`` (the harness scores whole outputs; nothing is
   length-matched).
4. **The conventional analysis beside it** (:func:`sample_means`, :func:`unpaired_tests`): per
   model the mean with a normal CI treating samples as independent, and per pair the unpaired
   two-sample z-test of the means (what lm-eval's comparator and most lab notebooks report),
   uncorrected, next to the certified verdict of the same pair.
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np
import pandas as pd

from kit.core.errors import InputError, Location
from kit.core.hashing import json_sha256
from kit.runs.importers.harness_scores import (
    CONDITION_FIELDS,
    RUN_FIELDS,
    HarnessLog,
    SampleScore,
    canonical,
)

REFUSAL = "condition_differs"
GENERIC_READOUT = "score"  # the readout when each log's only scorer has another name
ENTRY_CONDITION = "fixed_input"
LENGTH_VIEW = "full_length"
MEANS_LABEL = "conventional: normal CI, samples independent"
_SHOWN = 96  # characters of a condition value shown in a reason


def check_one_benchmark(logs: Sequence[HarnessLog]) -> None:
    """Raise :class:`InputError` unless the logs are at least two, one per system, all of one
    task and dataset (:data:`RUN_FIELDS`)."""
    if len(logs) < 2:
        where = Location(logs[0].source if logs else None)
        raise InputError(
            "too_few_logs",
            f"{len(logs)} log(s): a comparison needs the logs of at least two models",
            where=where,
        )
    first = logs[0]
    for field in RUN_FIELDS:
        for log in logs[1:]:
            va, vb = first.conditions.get(field), log.conditions.get(field)
            if va != vb:
                raise InputError(
                    "not_one_benchmark",
                    f"{field} differs: {first.source} has {va!r}, {log.source} has {vb!r}: one "
                    "certification compares models on one task and one dataset; certify each "
                    "task apart",
                    where=Location(log.source, column=field),
                )
    by_system: dict[str, str] = {}
    for log in logs:
        if log.system in by_system:
            raise InputError(
                "duplicate_system",
                f"model {log.system!r} has two logs ({by_system[log.system]} and {log.source}): "
                "one log per model (a rerun of the same eval: keep one; more epochs: run them "
                "in one eval)",
                where=Location(log.source, column="eval.model"),
            )
        by_system[log.system] = log.source


def _shown(value: str | None) -> str:
    text = "(not recorded)" if value is None else value
    if len(text) <= _SHOWN:
        return text
    return f"{text[: _SHOWN - 30]}... (sha256 {json_sha256(text)[:12]})"


def _leaves(field: str, va: str, vb: str) -> list[tuple[str, str, str]]:
    """Where two differing condition texts differ: the keys of JSON objects followed down to
    the values that differ (``solver.num_fewshot``), else the two texts, shortened."""
    try:
        xa, xb = json.loads(va), json.loads(vb)
    except ValueError:
        return [(field, _shown(va), _shown(vb))]
    if not (isinstance(xa, dict) and isinstance(xb, dict)):
        return [(field, _shown(va), _shown(vb))]
    out = []
    for key in sorted(set(xa) | set(xb), key=str):
        ka = canonical(xa.get(key)) if key in xa else "(absent)"
        kb = canonical(xb.get(key)) if key in xb else "(absent)"
        if ka != kb:
            out.extend(_leaves(f"{field}.{key}", ka, kb))
    return out


def _content(log: HarnessLog) -> dict[str, Mapping[str, str]]:
    """Sample id -> the content hashes the log records for it (first epoch that has any)."""
    out: dict[str, Mapping[str, str]] = {}
    for s in log.samples:
        if s.content and s.sample_id not in out:
            out[s.sample_id] = s.content
    return out


def differing_fields(a: HarnessLog, b: HarnessLog) -> list[tuple[str, str, str]]:
    """(field, a's value, b's value) for every declared condition both logs record that
    differs, then every content field that differs on a sample both logs hold. Reads no
    score."""
    out = []
    for field in CONDITION_FIELDS:
        if field in RUN_FIELDS:
            continue
        va, vb = a.conditions.get(field), b.conditions.get(field)
        if va is not None and vb is not None and va != vb:
            out.extend(_leaves(field, va, vb))
    ca, cb = _content(a), _content(b)
    common = sorted(set(ca) & set(cb))
    keys = sorted({k for i in common for k in (*ca[i], *cb[i])})
    for key in keys:
        differ = [i for i in common if ca[i].get(key) != cb[i].get(key)]
        if differ:
            ha = json_sha256([ca[i].get(key) for i in common])[:16]
            hb = json_sha256([cb[i].get(key) for i in common])[:16]
            what = f"{len(differ)} of {len(common)} common samples differ, first {differ[0]!r}"
            out.append((f"{key} ({what})", f"sha256 {ha}", f"sha256 {hb}"))
    return out


def pair_refusals(logs: Sequence[HarnessLog]) -> dict[tuple[str, str], str]:
    """(system, system), sorted -> the refusal reason of every pair of logs whose declared
    conditions differ: ``condition_differs: FIELD: A = ..., B = ...`` for each field."""
    out: dict[tuple[str, str], str] = {}
    for x, y in itertools.combinations(sorted(logs, key=lambda lg: lg.system), 2):
        fields = differing_fields(x, y)
        if fields:
            out[(x.system, y.system)] = f"{REFUSAL}: " + "; ".join(
                f"{f}: {x.system} = {va}, {y.system} = {vb}" for f, va, vb in fields
            )
    return out


@dataclass(frozen=True)
class HarnessFrame:
    """The logs as the engine's full-format score table, and how they were read, in words."""

    frame: pd.DataFrame  # schemas/scores.yaml
    notes: tuple[str, ...]
    fates: Mapping[str, int]  # (sample, epoch) records by fate, over every log
    failed_samples: int  # (model, sample) rows failed


def _cluster(
    log: HarnessLog, sid: str, epochs: Sequence[SampleScore], column: str | None
) -> str | None:
    if column is None:
        return None
    for s in epochs:
        if column in s.metadata:
            value = s.metadata[column]
            if value is None or isinstance(value, dict | list) or str(value) == "":
                break
            return str(value)
    if all(not s.metadata for s in epochs):  # a sample never run records no metadata
        return None
    raise InputError(
        "missing_cluster",
        f"sample {sid!r} has no usable metadata field {column!r} (--cluster-column): every "
        "sample needs its cluster (a string or number); unknown clusters are never made "
        "singletons",
        where=Location(log.source, column=f"samples[{sid!r}].metadata.{column}"),
    )


def score_frame(logs: Sequence[HarnessLog], cluster_column: str | None = None) -> HarnessFrame:
    """The full-format score table of ``logs`` (module doc, step 3). Raises
    :class:`InputError` naming the file and field for a sample without its cluster field, or
    one sample id under two clusters in two logs."""
    grouped: list[tuple[HarnessLog, dict[str, list[SampleScore]]]] = []
    for log in logs:
        by_id: dict[str, list[SampleScore]] = {}
        for s in log.samples:
            by_id.setdefault(s.sample_id, []).append(s)
        grouped.append((log, by_id))
    known: dict[str, str] = {}  # sample id -> an entry hash some log records for it
    for log in logs:
        for sid, content in _content(log).items():
            known.setdefault(sid, json_sha256(dict(content)))
    clusters: dict[str, tuple[str, str]] = {}  # sample id -> (cluster, file)
    rows = []
    fates: dict[str, int] = {}
    for log, by_id in grouped:
        for sid in sorted(by_id):
            epochs = by_id[sid]
            for s in epochs:
                fates[s.fate] = fates.get(s.fate, 0) + 1
            cluster = _cluster(log, sid, epochs, cluster_column)
            if cluster is not None:
                seen = clusters.setdefault(sid, (cluster, log.source))
                if seen[0] != cluster:
                    raise InputError(
                        "task_in_two_clusters",
                        f"sample {sid!r} is in cluster {seen[0]!r} in {seen[1]} and "
                        f"{cluster!r} here ({cluster_column})",
                        where=Location(
                            log.source, column=f"samples[{sid!r}].metadata.{cluster_column}"
                        ),
                    )
            failed = any(s.fate != "ok" or s.score is None for s in epochs)
            own = next((s.content for s in epochs if s.content), None)
            entry = json_sha256(dict(own)) if own else known.get(sid, json_sha256(sid))
            rows.append(
                {
                    "task_id": sid,
                    "cluster": cluster,
                    "system": log.system,
                    "readout": log.readout,
                    "score": math.nan if failed else float(np.mean([s.score for s in epochs])),
                    "failed": failed,
                    "entry_hash": f"sha256:{entry}",
                    "backbone": log.system,
                    "entry_condition": ENTRY_CONDITION,
                    "length_view": LENGTH_VIEW,
                }
            )
    frame = pd.DataFrame(rows)
    if cluster_column is None:
        frame["cluster"] = frame["task_id"]
    else:  # a sample only some log never ran takes the cluster the others record
        frame["cluster"] = [
            c if c is not None else clusters.get(t, (None, ""))[0]
            for c, t in zip(frame["cluster"], frame["task_id"], strict=True)
        ]
        if frame["cluster"].isna().any():
            t = frame.loc[frame["cluster"].isna(), "task_id"].iloc[0]
            raise InputError(
                "missing_cluster",
                f"sample {t!r} never ran in any log, so no log records its {cluster_column!r}",
                where=Location(logs[0].source, column=cluster_column),
            )
    notes = list(_notes(logs, frame, cluster_column, fates))
    readouts = sorted({log.readout for log in logs})
    if len(readouts) > 1:  # each log's only scorer, and they differ (a --score is in every log)
        frame["readout"] = GENERIC_READOUT
        notes.append(
            f"the logs' scorers differ ({', '.join(readouts)}): readout {GENERIC_READOUT!r} is "
            "each log's only scorer; a pair of logs with different scorers is refused"
        )
    n_failed = int(frame["failed"].sum())
    return HarnessFrame(frame, tuple(notes), fates, n_failed)


def _notes(
    logs: Sequence[HarnessLog],
    frame: pd.DataFrame,
    cluster_column: str | None,
    fates: Mapping[str, int],
) -> tuple[str, ...]:
    epochs = sorted({log.epochs for log in logs})
    k = frame["cluster"].nunique()
    notes = [
        f"{len(logs)} {logs[0].harness} logs of task {logs[0].conditions.get('task')!r}, score "
        f"{logs[0].readout!r}; pairs are formed by sample id",
        f"epochs ({', '.join(map(str, epochs))}): a (model, sample) score is the mean of its "
        "epochs; a sample with any epoch errored, cut by a limit, unscored or never run is a "
        "failed run (dropped from every pair it is in, and counted)",
        "(sample, epoch) records: " + ", ".join(f"{v} {k2}" for k2, v in sorted(fates.items())),
    ]
    if cluster_column is None:
        notes.append(
            f"no --cluster-column: each sample is its own cluster (K = {k}); give the sample "
            "metadata field that holds a sample's source when samples share one"
        )
    else:
        notes.append(f"clusters from sample metadata field {cluster_column!r}: K = {k}")
    return tuple(notes)


def sample_means(frame: pd.DataFrame, alpha: float) -> pd.DataFrame:
    """Per model: the mean over its scored samples with a normal (1 - alpha) CI treating the
    samples as independent (se = sd / sqrt(n)), as a harness's summary reports it."""
    z = NormalDist().inv_cdf(1 - alpha / 2)
    rows = []
    for (system, readout), grp in frame.groupby(["system", "readout"], sort=True):
        s = grp.loc[~grp["failed"], "score"].to_numpy(dtype=float)
        n = len(s)
        mean = float(s.mean()) if n else math.nan
        se = float(s.std(ddof=1) / math.sqrt(n)) if n > 1 else math.nan
        rows.append(
            {
                "system": system,
                "readout": readout,
                "n_samples": len(grp),
                "n_failed": int(grp["failed"].sum()),
                "mean": mean,
                "se": se,
                "ci_lo": mean - z * se,
                "ci_hi": mean + z * se,
                "method": MEANS_LABEL,
            }
        )
    return pd.DataFrame(rows)


def unpaired_tests(means: pd.DataFrame, pairs: pd.DataFrame, alpha: float) -> pd.DataFrame:
    """Per pair of the table's readout: the unpaired two-sample z-test of the two means (se =
    sqrt(se_a^2 + se_b^2), two-sided p, significant at ``alpha`` uncorrected), beside the
    certified row of the same pair (paired gap, radius q, eps_outside, verdict, reason)."""
    by = means.set_index("system")
    readouts = set(means["readout"])
    rows = []
    for p in pairs[pairs["readout"].isin(readouts)].itertuples(index=False):
        a, b = by.loc[p.system_a], by.loc[p.system_b]
        diff = float(a["mean"] - b["mean"])
        se = math.sqrt(float(a["se"]) ** 2 + float(b["se"]) ** 2)
        z = diff / se if se > 0 else math.nan
        pval = math.erfc(abs(z) / math.sqrt(2)) if math.isfinite(z) else math.nan
        rows.append(
            {
                "system_a": p.system_a,
                "system_b": p.system_b,
                "readout": p.readout,
                "mean_a": float(a["mean"]),
                "mean_b": float(b["mean"]),
                "diff_unpaired": diff,
                "se_unpaired": se,
                "z_unpaired": z,
                "p_unpaired": pval,
                "significant_unpaired": bool(pval < alpha),
                "n_common": int(p.n_common),
                "gap_paired": float(p.gap),
                "q": float(p.q),
                "eps_outside": float(p.eps_outside),
                "verdict": p.verdict,
                "winner": p.winner,
                "reason": p.reason,
            }
        )
    return pd.DataFrame(rows)


def log_table(logs: Sequence[HarnessLog]) -> pd.DataFrame:
    """One row per log: file, sha256, harness, system, task, score, epochs, sample records by
    fate, and what is shown but never compared (eval id, revision, harness version, filter)."""
    rows = []
    for log in logs:
        fates = {f: sum(1 for s in log.samples if s.fate == f) for f in ("ok", "error", "limit")}
        rows.append(
            {
                "log": log.source,
                "sha256": log.sha256,
                "harness": log.harness,
                "system": log.system,
                "task": log.conditions.get("task"),
                "readout": log.readout,
                "epochs": log.epochs,
                "n_records": len(log.samples),
                "n_ok": fates["ok"],
                "n_error": fates["error"],
                "n_limit": fates["limit"],
                "n_other_failed": len(log.samples) - sum(fates.values()),
                "info": "; ".join(f"{k}={v}" for k, v in sorted(log.info.items()) if v),
            }
        )
    return pd.DataFrame(rows)


def condition_table(logs: Sequence[HarnessLog]) -> pd.DataFrame:
    """The declared conditions of every log, long: system, field, value (empty: not recorded),
    and whether every log that records the field agrees."""
    rows = []
    for field in CONDITION_FIELDS:
        recorded = {log.conditions.get(field) for log in logs} - {None}
        for log in sorted(logs, key=lambda lg: lg.system):
            value = log.conditions.get(field)
            rows.append(
                {
                    "system": log.system,
                    "field": field,
                    "value": value,
                    "checked": "whole run" if field in RUN_FIELDS else "per pair",
                    "all_equal": len(recorded) <= 1,
                }
            )
    return pd.DataFrame(rows)
