"""The result models of every operation: what the service returns and the interfaces show.

Records-side models (``records``) carry the spec's camelCase wire names as aliases; the
documents-and-memories side (``resources``) is snake_case on the wire as in Python.
"""
