"""Rendering at the edge: tables (csv / markdown / LaTeX / console), figures, pages."""
