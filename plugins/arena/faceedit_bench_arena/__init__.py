"""Pairwise arena: editors ranked by Bradley-Terry ratings from pairwise battles."""
