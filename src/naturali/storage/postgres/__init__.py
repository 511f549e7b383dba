"""The PostgreSQL adapters (the ``postgres`` extra): the catalog and the durable part of each
memory store's state, shared by every server on one database."""
