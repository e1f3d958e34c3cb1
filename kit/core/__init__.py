"""The ground floor: errors and exit codes, atomic writes, file digests, the input boundary,
table and JSON contracts, tables, receipts, the progress display, local / Ray engines.

Every package may import it; it imports nothing of the kit above it (docs/architecture.md,
"The floors").
"""
