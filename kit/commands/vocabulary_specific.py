"""The vocabulary's options of one command: concept -> :class:`Term` (group ``specific``).

Put together with the shared concepts (:mod:`kit.commands.vocabulary_shared`) in
:data:`kit.commands.vocabulary.VOCABULARY`.
"""

from __future__ import annotations

from kit.commands.vocabulary_shared import Term

SPECIFIC_TERMS: dict[str, Term] = {
    # -- options of one command ------------------------------------------------------------
    "gold": Term(
        "--gold",
        "Gold (human) labels: of a uniform random subset of the judged items (kit anchor, kit "
        "audit), or the labelled sample an instrument is validated on (guard validate, grade "
        "validate-judge).",
    ),
    "half_width": Term(
        "--half-width",
        "Target interval half-width of the gold sample size planner (kit anchor, kit audit).",
    ),
    "judge_verdicts": Term("--judge-verdicts", "Imported judge verdicts (kit audit)."),
    "board": Term("--board", "Board score table to place the agent on (kit audit)."),
    "agent_scores": Term("--agent-scores", "The agent's rows for the board (kit audit)."),
    "agent_system": Term("--agent-system", "The agent's system name on the board (kit audit)."),
    "truth": Term("--truth", "Planted truth of a synthetic run set (kit audit)."),
    "failed_lookups": Term("--failed-lookups", "Simulated lookup outages (kit audit)."),
    "targets": Term("--targets", "Per-task normalisation targets for readouts (kit certify)."),
    "null_draws": Term("--null-draws", "Sign-flip draws for the calibration of kit certify."),
    "validate": Term("--validate", "Synthetic null and alternative boards for validity.csv."),
    "calibration_scope": Term(
        "--calibration-scope", "Readout forming the null family (kit certify)."
    ),
    "figure": Term("--figure", "Write the rank-interval figure (--no-figure: skip it)."),
    "k": Term("--k", "Number of search results (kit corpus search)."),
    "citations_out": Term(
        "--citations-out", "Also write one row per citation (grade audit-citations)."
    ),
    "guard_out": Term("--guard-out", "Also write the guard input JSONL (grade runs)."),
    "rates": Term("--rates", "Print solve rates with Wilson CIs (grade checklist)."),
    "agreement": Term("--agreement", "Agreement between two judges (grade checklist)."),
    "roster": Term("--roster", "Roster models that must all fail (grade frozen-core)."),
    "second": Term("--second", "Scores of a second decode (grade frozen-core)."),
    "judge": Term(
        "--judge",
        "The checklist judge: lexical (built in, the default and the baseline) or a card folder "
        "of kind llm-judge (grade judge, audit; written by grade import-judge).",
    ),
    "judge_name": Term("--judge-name", "The judge's name in the verdict table (grade judge)."),
    "replay_cache": Term("--cache", "The record/replay tool cache file (grade replay)."),
    "n_answers": Term("--n-answers", "Planted answers to generate (grade planted)."),
    "p_wrong": Term("--p-wrong", "Planted rate of unsupporting citations (grade planted)."),
    "p_fabricated": Term("--p-fabricated", "Planted rate of fabricated citations (grade planted)."),
    "p_transient": Term("--p-transient", "Planted rate of lookup outages (grade planted)."),
    "audit": Term("--audit", "Also run the audit of the planted set (grade planted)."),
    "lr": Term("--lr", "Learning rate (guard adapt)."),
    "folds": Term(
        "--folds", "Cross-validation / cross-fitting folds (guard adapt, audit --adapt)."
    ),
    "adapt_method": Term(
        "--method",
        "Fine-tune, recombine by a fitted rule, or the better of both (guard adapt, audit "
        "--adapt).",
    ),
    "adapt": Term(
        "--adapt",
        "Adapt the verifier on the gold and anchor on the same gold by cross-PPI (audit).",
    ),
    "pooled": Term("--pooled", "One tau over all negative types (guard calibrate)."),
    "n_test": Term("--n-test", "Test size per split (guard coverage)."),
    "splits": Term("--splits", "Random calibration/test splits (guard coverage)."),
    "type_column": Term("--type-column", "Column of finer negative types (guard evaluate)."),
    "tokenizer": Term("--tokenizer", "The model's tokenizer.json (guard import-verifier)."),
    "labels": Term("--labels", "The model's output labels in order (guard import-verifier)."),
    "scoring": Term(
        "--scoring", "How a verifier's logits become a support score (guard import-verifier)."
    ),
    "relatedness": Term(
        "--relatedness", "A bi-encoder carried as the relatedness signal (guard import-verifier)."
    ),
    "max_length": Term(
        "--max-length", "Token limit of a (claim, passage) pair (guard import-verifier)."
    ),
    "n_items": Term("--n", "PubMedQA items to draw pairs from (guard pairs)."),
    "exclude": Term("--exclude", "An earlier pair table whose items are left out (guard pairs)."),
    "no_reattribute": Term("--no-reattribute", "Flag only, no BM25 re-attribution (guard run)."),
    "keep_types": Term("--keep-types", "pair_type values to keep (guard score)."),
    "engine": Term("--engine", "Where the verifier's model runs: local or ray (guard score)."),
    "ray_address": Term("--ray-address", "The Ray cluster (guard score --engine ray)."),
    "ray_workers": Term("--ray-workers", "Ray actors scoring in parallel (guard score)."),
    "ray_connect_timeout": Term(
        "--ray-connect-timeout", "Seconds to wait for the Ray cluster to answer (guard score)."
    ),
    "base": Term("--base", "The BERT-family model to start training from (guard train)."),
    "cap_per_source": Term("--cap-per-source", "Training pairs per source at most (guard train)."),
    "leave_out": Term("--leave-out", "Train without this source (guard train)."),
    "threads": Term("--threads", "torch CPU threads (guard train)."),
    "model": Term(
        "--model",
        "Model name: of imported runs (import lm-eval), or of the chat model an LLM verifier "
        "or checklist judge asks (guard import-verifier --base-url, grade import-judge).",
    ),
    "base_url": Term(
        "--base-url",
        "An OpenAI-compatible endpoint (vLLM, llama.cpp server, Ollama, a hosted API), up to "
        "/chat/completions (guard import-verifier, grade import-judge).",
    ),
    "api_key_env": Term(
        "--api-key-env",
        "Environment variable an LLM verifier or judge reads its API key from; keys are never "
        "stored.",
    ),
    "answer_rule": Term(
        "--answer-rule",
        "How an LLM's reply is read: a verifier's yes / no from top log-probabilities or the "
        "yes-share of sampled answers; a judge's verdict from the reply's first word, with "
        "log-probabilities as evidence when returned.",
    ),
    "samples": Term("--samples", "Answers sampled per question (LLM verifier, samples rule)."),
    "prompt": Term(
        "--prompt",
        "A frozen prompt template file: {claim} and {passage} (verifier), or {question}, "
        "{criterion} and {answer} (judge).",
    ),
    "concurrency": Term("--concurrency", "Requests in flight at once to a model endpoint."),
    "timeout": Term("--timeout", "Seconds one request to a model endpoint may take."),
    "retries": Term("--retries", "Retries of a failed request (transport error, HTTP 429 or 5xx)."),
    "backoff": Term(
        "--backoff", "Seconds before the first retry; doubled before each next (no jitter)."
    ),
    "task": Term("--task", "Task name of imported runs (import lm-eval)."),
    "lm_eval_filter": Term(
        "--filter", "The lm-eval filter whose lines are read (import lm-eval, certify)."
    ),
    "dvc_cache": Term("--dvc-cache", "DVC cache folder tried first (registry fetch)."),
    "no_dvc_cache": Term("--no-dvc-cache", "Skip the DVC cache (registry fetch)."),
    "offline": Term("--offline", "Never try upstream URLs (registry fetch)."),
    "receipt": Term(
        "--receipt", "Also write a JSON receipt of the fetched files (registry fetch)."
    ),
    "write": Term("--write", "Write DATA_LICENSES (registry licences)."),
    "check": Term("--check", "Exit 1 if DATA_LICENSES is out of date (registry licences)."),
    "manifest": Term("--manifest", "The release manifest to check (release verify)."),
    "make_target": Term("--target", "make target run inside the container (release container)."),
    "image": Term("--image", "Container image (release container)."),
    "host": Term("--host", "Docker API endpoint (release container)."),
    "title": Term("--title", "Page title (report board)."),
    "schema": Term("--schema", "Schema name (schema validate)."),
    "systems": Term("--systems", "True effect per synthetic system (simulate board)."),
    "n_tasks": Term("--tasks", "Synthetic tasks (simulate board)."),
    "clusters": Term("--clusters", "Synthetic task clusters (simulate board)."),
    "cluster_column": Term(
        "--cluster-column",
        "The column of a plain score table, or the sample metadata field of harness logs, "
        "that holds the cluster (certify).",
    ),
    "harness_score": Term(
        "--score",
        "The harness score to certify: inspect_ai scorer (SCORER.KEY of a dict) or lm-eval "
        "metric (certify).",
    ),
    "readouts": Term("--readouts", "Synthetic readouts (simulate board)."),
    "fail_rate": Term("--fail-rate", "Synthetic failure rate (simulate board)."),
    "cluster_sd": Term("--cluster-sd", "SD of the synthetic cluster effects (simulate board)."),
    "noise_sd": Term("--noise-sd", "SD of the synthetic per-task noise (simulate board)."),
    "eps0": Term("--eps0", "Bound on the entry discrepancy W_0 (theory compose)."),
    "L_U": Term("--L-U", "Utility constant L_U (theory compose)."),
    "system_a": Term("--system-a", "First system of a distance (theory distance)."),
    "system_b": Term("--system-b", "Second system of a distance (theory distance)."),
    "gamma": Term("--gamma", "Continuation weight (theory distance)."),
    "beta": Term("--beta", "Label weight (theory distance)."),
    "entries": Term("--entries", "Entry laws for the whole-system distance (theory distance)."),
    "pairs_out": Term(
        "--pairs-out", "Also write the fixed point per state pair (theory distance)."
    ),
    "lam": Term("--lam", "Structure weight of Eq. (20) (theory fgw)."),
    "no_anchors": Term("--no-anchors", "Do not anchor shared paper ids (theory fgw)."),
    "masses": Term("--masses", "Node masses of Eq. (20) (theory fgw)."),
    "pair": Term("--pair", "Compare only these two graphs (theory fgw)."),
    "estimator": Term(
        "--estimator", "Estimator(s) of L_M: ratio_q95, ratio_sup, affine (theory lm)."
    ),
    "q": Term("--q", "Quantile level (theory lm)."),
    "lam_in": Term("--lam-in", "Entry weight of the window radius (theory radius)."),
    "expected": Term("--expected", "The frozen tables to compare against (verify board)."),
    "json_summary": Term("--json", "Also write the summary as JSON (verify board)."),
}
