"""A run's page (filled in below)."""

from __future__ import annotations

from fastapi import APIRouter

router = APIRouter()
