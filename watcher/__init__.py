"""watcher: a daemon that tells you every morning which new papers matter to you."""

__version__ = "0.1.0"
