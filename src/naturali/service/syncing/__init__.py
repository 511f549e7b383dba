"""Sources — Git repositories and web sites a project mirrors: their settings, the worker that
syncs them on a lease, and each kind's sync."""
