"""Fake providers speaking the real wire formats, on 127.0.0.1 only."""
