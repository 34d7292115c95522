"""Aggregating scores: session metrics, per-group and per-test-set aggregation, statistics, disparity."""
