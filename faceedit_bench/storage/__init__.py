"""Storage: the image store, the ledger, run folders and how files are written."""
