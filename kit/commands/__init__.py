"""CLI command groups, one module per group; ``kit/cli.py`` registers every entry here.

To add a group: write ``kit/commands/<name>.py`` exposing a ``click.Group`` (or command) and
append it to ``COMMAND_GROUPS`` below.
"""

from __future__ import annotations

import click

from kit.commands.audit import audit
from kit.commands.board import board
from kit.commands.certify import certify, simulate
from kit.commands.corpus import corpus
from kit.commands.db import db, query
from kit.commands.grade import grade
from kit.commands.guard import guard
from kit.commands.registry import registry
from kit.commands.release import release
from kit.commands.report import report
from kit.commands.reproduce import reproduce
from kit.commands.schema import schema
from kit.commands.theory import theory
from kit.commands.verify import verify

COMMAND_GROUPS: list[click.Command] = [
    registry,
    db,
    query,
    board,
    reproduce,
    verify,
    schema,
    report,
    guard,
    certify,
    simulate,
    release,
    grade,
    theory,
    audit,
    corpus,
]
