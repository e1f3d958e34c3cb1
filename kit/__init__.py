"""LitAudit kit."""

__version__ = "0.1.0"
