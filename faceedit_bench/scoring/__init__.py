"""Scoring stored images: identity (FSS) from embeddings, judge metrics, overediting."""
