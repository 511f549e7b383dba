"""Retrievers for the frameworks agents are built with — LangChain (``naturali[langchain]``)
and LlamaIndex (``naturali[llamaindex]``) — over a naturali server through the Python SDK."""
