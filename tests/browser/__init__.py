"""Tests that drive a real (headless) browser."""
