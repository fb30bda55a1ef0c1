"""The agent without an editor: transcript, update vocabulary, ports and the loop. Imports nothing outside core."""
