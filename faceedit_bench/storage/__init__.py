"""Storage: content-addressed images, the ledger, and how stored bytes become pixels."""
