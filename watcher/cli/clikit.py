"""What every ``watcher`` command shares (docs/cli.md): the :class:`Context` with the lazily loaded
config, :func:`handle_errors` (watcher's errors as one line and an exit code), ``pass_ctx``,
``--sample``'s help and :func:`reading_config`. :mod:`watcher.cli` (the ``watcher`` group) and
the modules of its commands (:mod:`watcher.cli.cli_init`, :mod:`watcher.cli.cli_ratings`) import it, so
the command modules need not import the group they are added to.

Exit status: 0 all good; 1 the run finished but a source, digest or channel failed (said on
stderr), or the database could not be used, or the output could not be written (a full disk),
or watcher hit a bug (one line; the traceback with --log-level debug); 2 bad usage or bad config
(one line naming the file, key and problem; never a traceback), or a file or folder named that
cannot be written (read-only, a path through a file).
"""

from __future__ import annotations

import errno
import functools
import logging
import os
import sys

import click

from ..config import Config, find_config, load_config, secret_value_errors
from ..errors import MAX_ERROR, ConfigError, ConfigErrors, InputError, QuerySyntaxError, StoreError, WatcherError
from ..masking import redact
from ..util.text import shorten

log = logging.getLogger("watcher")


def fail(message: str, code: int) -> None:
    """Print ``watcher: message`` on stderr and exit with ``code``."""
    click.echo(f"watcher: {shorten(redact(message), MAX_ERROR)}", err=True)  # a server may echo a secret (AUTH PLAIN)
    sys.exit(code)


# A file or folder the user named that cannot be written (a path through a file, a read-only
# file system, no permission): theirs to fix, exit 2. Other write failures (a full disk, an
# I/O error, a closed output) are a failed run, exit 1.
USER_ERRNOS = {errno.EROFS, errno.ENOTDIR, errno.EISDIR, errno.EACCES, errno.EPERM, errno.ENOENT,
               errno.EEXIST, errno.ENAMETOOLONG}


def _drop_stdout() -> None:
    """Point stdout at /dev/null: no second error when Python flushes it at exit."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


def write_failed(e: OSError) -> None:
    """One line for an OSError that reached the command line and the exit code it means. The
    command line's own reading goes through the config and the store (their errors are caught
    before), so what arrives here is a file being written, or the output (no file name)."""
    reason = (e.strerror or str(e)).lower()
    where = e.filename if e.filename is not None else "the output"
    code = 2 if e.filename is not None and e.errno in USER_ERRNOS else 1
    if e.filename is None:  # stdout itself
        _drop_stdout()
    fail(f"cannot write {where}: {reason}", code)


def handle_errors(fn):
    """Turn watcher's errors into one-line messages and exit codes."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except ConfigErrors as e:  # every problem of the config, one line each
            for one in e.errors:
                click.echo(f"watcher: {redact(str(one))}", err=True)
                if isinstance(one, QuerySyntaxError):
                    click.echo(one.caret(), err=True)
            sys.exit(2)
        except QuerySyntaxError as e:
            click.echo(f"watcher: {e}\n{e.caret()}", err=True)
            sys.exit(2)
        except (ConfigError, InputError) as e:
            fail(str(e), 2)
        except (StoreError, WatcherError) as e:
            fail(str(e), 1)
        except KeyboardInterrupt:
            fail("interrupted", 130)
        except (click.ClickException, click.exceptions.Exit, click.Abort, BrokenPipeError):
            raise  # a closed stdout ends quietly in _Commands.invoke
        except OSError as e:
            write_failed(e)
        except Exception as e:  # a bug: one line here, the traceback with --log-level debug
            log.error("internal error: %s: %s", type(e).__name__, e, exc_info=e)
            sys.exit(1)

    return wrapper


class Context:
    """Lazily loaded config, shared by the subcommands."""

    def __init__(self, config_path: str | None, log_level: str = "warning", log_level_given: bool = False):
        self.config_path = config_path
        self.log_level = log_level
        self.log_level_given = log_level_given
        self.daemon_log = False  # ``watcher run``: the daemon's log format
        self._config: Config | None = None
        self.used: Config | None = None  # the config whose database the command uses (sample?)

    @property
    def database(self):
        """The database this command really uses, for its error messages: the sample one when
        it chose that (:func:`reading_config`, ``once --sample``), else the configured one."""
        config = self.used or self._config
        return config.settings.database if config else "the database"

    @property
    def config(self) -> Config:
        """The validated config (ConfigError when missing or invalid, or when a secret it names
        holds a control character: :func:`~watcher.config.secret_value_errors`); from then on
        the log masks the secrets it names."""
        if self._config is None:
            config = load_config(find_config(self.config_path))
            errors = secret_value_errors(config)
            if errors:
                raise ConfigErrors.of(errors)
            self._config = config
            self.configure_logging()
        return self._config

    def configure_logging(self) -> None:
        """Log to stderr at the chosen level, masking the loaded config's secrets."""
        from ..util.logs import configure

        configure(self.log_level, daemon=self.daemon_log, config=self._config)


pass_ctx = click.make_pass_decorator(Context)

SAMPLE_HELP = ("Use the sample database of 'watcher once --sample' (the default when only "
               "that one exists).")


def sample_hint(ctx: Context, config: Config) -> str:
    """``; the sample's papers are in watcher-sample.db: add --sample`` for a command that found
    nothing in the configured database (``config`` is the configured one) while the sample
    database of 'watcher once --sample' exists; else ""."""
    from ..cycle.sampledb import sample_database

    other = sample_database(ctx.config)
    return f"; the sample's papers are in {other}: add --sample" if config is ctx.config and other.exists() else ""


def reading_config(ctx: Context, sample: bool) -> Config:
    """The config of a reading command (status, explain, rate, ratings, saved): with the
    sample database when asked or when only it exists, saying so on stderr."""
    from ..cycle.sampledb import reading_config as resolve

    config, note = resolve(ctx.config, sample)
    if note and config.settings.database.exists():  # else the command's own error says to make it
        click.echo(f"watcher: using {note}", err=True)
    ctx.used = config
    return config
