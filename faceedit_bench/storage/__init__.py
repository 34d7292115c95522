"""Keeping results: the content-addressed image store, the ledger, image decoding."""
