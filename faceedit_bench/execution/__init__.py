"""Making calls: concurrency, limits, retries, budget, batching, cost, secrets."""
