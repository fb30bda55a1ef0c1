"""Sessions: the runtime of each conversation (its chat task, confirmations, seq) and, later, its store."""
