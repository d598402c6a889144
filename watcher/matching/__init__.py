"""Matching: the query language, the compiled profile matchers, the index, and what goes into a digest."""
