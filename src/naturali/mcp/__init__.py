"""The MCP server for agents: ``naturali mcp --project … --store …``."""
