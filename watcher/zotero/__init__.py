"""Zotero: the Web API client and a profile's examples as stored (client), the sync in the cycle (sync)."""
