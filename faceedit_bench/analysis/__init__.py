"""Aggregating scores: session metrics, per-group aggregation, statistics, disparity."""
