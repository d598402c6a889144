"""Presentation: templates and their filters, TL;DRs, LaTeX to text, BibTeX, summaries."""
