"""Checks layer: claims, verdicts, the command line."""
