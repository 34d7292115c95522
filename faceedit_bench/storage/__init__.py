"""Keeping results: the content-addressed image store, the ledger, image decoding, run folders and the workspace."""
