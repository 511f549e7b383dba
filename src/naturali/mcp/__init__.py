"""The MCP server for agents: ``naturali mcp --project-id … --store-id …``."""
