"""What is generated from the server: its OpenAPI document, and the Python SDK's models and methods
(scripts/sdk runs them; tests check the committed copies are current)."""
