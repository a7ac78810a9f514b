"""Text analysis and the concept indexes (Scan now; FTS5 later)."""
