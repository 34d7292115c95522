"""Builtin plugins: registered through the same hooks as external ones."""
