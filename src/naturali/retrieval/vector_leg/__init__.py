"""The vector leg: the exact int8 scan of a project's vectors held in memory, and the store's own
nearest-vector search for a project too large to hold."""
