"""The data registry: declared sources, sha256-pinned fetch, licences, the DuckDB catalog."""
