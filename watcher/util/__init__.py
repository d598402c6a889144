"""Plumbing every floor shares: the HTTP client, paged-read bounds, schedules and calendars, logs, progress, folders, text normalisation."""
