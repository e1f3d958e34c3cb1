"""The kit's error types: one place, one message template.

Two families, as in pandera's split between "the schema is wrong" and "the data is wrong":

* :class:`InputError` -- the data's fault (a file, a row, a column, a value). Exit status 2.
* :class:`ConfigError` -- the caller's fault (a flag, a design file, a parameter). Exit status 2.
* :class:`IntegrityError` -- bytes that do not match their pinned hash. Exit status 2.
* :class:`ClusterError` -- the Ray cluster cannot be reached, or was lost mid-run. Exit status 2.

Every error carries a machine-readable ``reason`` code and a message that says what was
expected, what was found, and (where there is one) how to fix it. The CLI maps all of them to
one line on stderr and exit status 2 -- never a traceback.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Location:
    """Where in an input the problem sits. Rows are 1-based *file* rows (header = row 1)."""

    file: str | None = None
    row: int | None = None
    column: str | None = None

    def __str__(self) -> str:
        parts = []
        if self.file is not None:
            parts.append(str(self.file))
        if self.row is not None:
            parts.append(f"row {self.row}")
        if self.column is not None:
            parts.append(f"column '{self.column}'")
        return ", ".join(parts)


class KitError(Exception):
    """Base class: a clear, expected failure that the CLI reports with exit status 2."""

    exit_code: int = 2

    def __init__(self, reason: str, message: str, *, details: list[str] | None = None) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message
        self.details = list(details or [])

    def render(self) -> str:
        lines = [f"error [{self.reason}]: {self.message}"]
        lines.extend(f"  {d}" for d in self.details)
        return "\n".join(lines)


class InputError(KitError):
    """The data is wrong: names file, row, column, what was expected and what was found."""

    def __init__(
        self,
        reason: str,
        message: str,
        *,
        where: Location | None = None,
        details: list[str] | None = None,
    ) -> None:
        self.where = where or Location()
        text = f"{self.where}: {message}" if str(self.where) else message
        super().__init__(reason, text, details=details)


class ConfigError(KitError):
    """The caller is wrong: a parameter, flag or design value out of its domain."""


class IntegrityError(KitError):
    """Bytes that do not match their pinned sha256 (or a broken receipt chain)."""


class ClusterError(KitError):
    """The compute cluster failed: unreachable at connection, or lost mid-run (``--engine
    ray``). Nothing is written; the score store keeps what was finished."""


@dataclass(frozen=True)
class Problem:
    """One structured validation failure (a row of a lazy validation report)."""

    reason: str
    where: Location
    check: str
    got: str
    expected: str = ""
    extra: dict[str, str] = field(default_factory=dict)

    def __str__(self) -> str:
        exp = f"; expected {self.expected}" if self.expected else ""
        return f"{self.where}: failed {self.check} (got {self.got!s}{exp})"


def check_param(name: str, value: object, ok: bool, expected: str, func: str = "") -> None:
    """Raise :class:`ConfigError` with scikit-learn's message template when ``ok`` is false.

    >>> check_param("alpha", 1.5, 0 < 1.5 < 1, "in (0, 1)", "cluster_radius")
    Traceback (most recent call last):
    ...
    kit.core.errors.ConfigError: The 'alpha' parameter of cluster_radius must be in (0, 1). Got 1.5 instead.
    """
    if not ok:
        of = f" of {func}" if func else ""
        raise ConfigError(
            "bad_parameter",
            f"The '{name}' parameter{of} must be {expected}. Got {value!r} instead.",
        )
