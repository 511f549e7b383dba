"""Sources a project mirrors: what is fetched from a Git repository (and, later, a web site),
under the network rules of ``addresses``."""
