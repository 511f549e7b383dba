"""Memory stores and their knowledge records: the records tools (grep, lookup, inventory, dates),
the journaled writes, the stores themselves and their memories."""
