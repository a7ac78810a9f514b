"""Extraction of durable knowledge from conversations, and the redaction it relies on."""
