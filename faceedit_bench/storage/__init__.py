"""Where results live: the image store, the ledger, run folders and the workspace that holds them."""
