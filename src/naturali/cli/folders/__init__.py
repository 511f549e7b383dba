"""``naturali sync`` and ``naturali ingest``: a local folder mirrored into a project, and how the
folder is read (what is sent, what is left out and why)."""
