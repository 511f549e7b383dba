"""A server's search indexes: the registry that syncs them before each search
(``registry``), the budget they are kept under (``cache``), the readers–writer gate of each
(``gate``), their snapshots (``snapshot``) and the work left for the background (``jobs``)."""
