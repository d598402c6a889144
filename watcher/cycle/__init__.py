"""One cycle (fetch, store, match, deliver, record, upkeep), the sample database, its status, and ``watcher run``, the daemon that schedules it."""
