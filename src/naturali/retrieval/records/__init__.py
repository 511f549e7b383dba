"""The records tools' retrieval over a memory store: the grep query's contract, which records a
query may see (eligibility), the timeline's building blocks, and the hits and citations the
tools answer with."""
