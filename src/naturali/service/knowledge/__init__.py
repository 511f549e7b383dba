"""A project's knowledge search: the search service and its second stage, the query vectors it
embeds and caches, the background indexer of memories, and the overview of what a project holds."""
