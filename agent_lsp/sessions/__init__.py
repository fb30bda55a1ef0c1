"""Sessions: the chat service, each conversation (in memory and in the SQLite store), and how a chat is composed."""
