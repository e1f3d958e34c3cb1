"""Shift check between a calibration sample and the audited citations (pure functions).

Why a check is needed. The split-conformal catch guarantee (seed 001, Section 3; Appendix S6)
holds for unsupported citations *exchangeable with the calibration negatives*. Labels of the
audited citations are unknown, so the condition cannot be verified -- but a violation of it
usually shows in the verifier scores: harder negatives score higher than the calibration
negatives (seed 001 Table S7: mean 0.20 -> 0.50), and the audited score distribution then
differs from the calibration sample's.

Method: black-box shift detection (BBSD) with a two-sample Kolmogorov-Smirnov test on the
verifier's output (Rabanser, Guennemann & Lipton, "Failing Loudly: An Empirical Study of Methods
for Detecting Dataset Shift", NeurIPS 2019, Section 3: a univariate KS test on a black-box
model's output; Lipton, Wang & Smola, ICML 2018, for the black-box-predictor idea). The two
samples are

* the *whole* labelled calibration sample (supported and unsupported scores pooled, in the
  proportions the lab labelled them), and
* the scores of the audited citations (which mix supported and unsupported, labels unknown).

Why the pooled sample and not the unsupported scores alone: audited scores are a mixture of
both classes, so comparing them with unsupported-only calibration scores rejects for every
audit that contains supported citations (a test with no meaning). The pooled labelled sample is
a draw from the population the lab labelled; H0 "the audited citations are exchangeable with
the calibration sample" makes the two score samples identically distributed, and that H0 is the
(sufficient) condition the guarantee is stated under. Statistic D = sup_x |F_cal(x) - F_aud(x)|;
p-value from :func:`scipy.stats.ks_2samp` (exact for small samples, else asymptotic; with tied
scores the test is conservative). The warning fires when p < ``level``.

What it does and does not detect (stated, not hidden):

* It fires when the audited negatives are harder or easier than the calibration negatives, the
  failure that breaks the guarantee -- power measured by simulation in tests/guard/conformal/test_shift.py.
* It also fires when only the prevalence of unsupported citations differs (label shift), under
  which the per-class guarantee still holds; so a warning means "these citations are not like
  the calibration sample; the guarantee is not supported", not proof that the catch is low.
  The lab's labelled sample should be a random sample of the audited system's citations.
* No test on unlabelled scores can see a shift that leaves the score distribution unchanged
  (e.g. negatives that score exactly like supported citations while fewer supported ones are
  cited); a quiet check is not proof of exchangeability.
* Without supported calibration scores (a negatives-only source such as QASA) the check is not
  testable and says so.
* KS assumes independent draws; audited citations cluster by answer, which makes the p-value
  somewhat optimistic (the warning fires a little more often than ``level`` under H0).

Not implemented: weighted conformal prediction under covariate shift (Tibshirani, Barber,
Candes & Ramdas, NeurIPS 2019). Its weights are the density ratio of the *unsupported* class
between deployment and calibration; the audited citations are unlabelled, and a density ratio
fitted on their mixed scores confounds the shift with the share of supported citations, so the
reweighted tau would carry no guarantee. Recalibrating on a labelled sample of the target
(``kit guard calibrate``) is the sound remedy.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kit.core.errors import check_param

METHOD = (
    "two-sample Kolmogorov-Smirnov test (black-box shift detection, Rabanser et al. 2019) of the "
    "verifier scores: whole labelled calibration sample vs audited citations"
)


@dataclass(frozen=True)
class ShiftCheck:
    method: str
    testable: bool
    warning: bool
    level: float
    n_cal: int
    n_audit: int
    statistic: float | None  # KS D
    p_value: float | None
    cal_mean: float | None
    audit_mean: float | None
    message: str

    def to_dict(self) -> dict[str, object]:
        return dict(self.__dict__)


def _finite(x: np.ndarray | list[float] | None) -> np.ndarray:
    if x is None:
        return np.empty(0)
    a = np.asarray(x, dtype=float).ravel()
    return a[np.isfinite(a)]


def ks_shift_check(
    cal_unsupported: np.ndarray | list[float],
    cal_supported: np.ndarray | list[float] | None,
    audit_scores: np.ndarray | list[float],
    level: float = 0.05,
) -> ShiftCheck:
    """KS two-sample shift check (see module doc); warning iff p < level.

    ``cal_supported`` None or empty -> not testable (a negatives-only calibration source cannot
    describe a mixed audited population). Fewer than 2 scores on either side -> not testable.
    """
    check_param("level", level, 0.0 < level < 1.0, "in (0, 1)", "ks_shift_check")
    from scipy.stats import ks_2samp

    sup = _finite(cal_supported)
    pool = np.concatenate([_finite(cal_unsupported), sup])
    aud = _finite(audit_scores)
    common = {"method": METHOD, "level": float(level), "n_cal": int(pool.size)}
    if sup.size == 0:
        return ShiftCheck(
            **common,
            testable=False,
            warning=False,
            n_audit=int(aud.size),
            statistic=None,
            p_value=None,
            cal_mean=None,
            audit_mean=float(aud.mean()) if aud.size else None,
            message="shift check not testable: the calibration source has no supported scores, "
            "so it does not describe a mixed audited population; calibrate on a labelled "
            "sample of both classes (kit guard calibrate)",
        )
    if aud.size < 2 or pool.size < 2:
        return ShiftCheck(
            **common,
            testable=False,
            warning=False,
            n_audit=int(aud.size),
            statistic=None,
            p_value=None,
            cal_mean=float(pool.mean()) if pool.size else None,
            audit_mean=float(aud.mean()) if aud.size else None,
            message=f"shift check not testable: {aud.size} audited score(s)",
        )
    r = ks_2samp(pool, aud, alternative="two-sided", method="auto")
    d, p = float(r.statistic), float(r.pvalue)
    warn = p < level
    cm, am = float(pool.mean()), float(aud.mean())
    if warn:
        msg = (
            f"SHIFT WARNING: the audited scores differ from the calibration sample (KS D = "
            f"{d:.3f}, p = {p:.2g} < {level:g}; mean score {am:.3f} vs {cm:.3f}); the catch "
            "guarantee likely does not hold for these citations -- recalibrate on a labelled "
            "sample of them (kit guard calibrate)"
        )
    else:
        msg = (
            f"no shift detected (KS D = {d:.3f}, p = {p:.2g} >= {level:g}); not proof of "
            "exchangeability"
        )
    return ShiftCheck(
        **common,
        testable=True,
        warning=warn,
        n_audit=int(aud.size),
        statistic=d,
        p_value=p,
        cal_mean=cm,
        audit_mean=am,
        message=msg,
    )
