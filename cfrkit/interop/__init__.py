"""Bridges to other toolkits (imported lazily: their packages are optional)."""
