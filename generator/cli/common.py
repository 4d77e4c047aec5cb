"""What every `riskapi` command shares: the group that is the one place errors meet the user, the
options several commands take, and how commands speak (quiet, verbose, warnings)."""
from __future__ import annotations

import os
import re
import select
import sys
import traceback
import urllib.parse
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator

import click

from ..history.layout import RELEASES
from ..serve.keys import KeysFile

if TYPE_CHECKING:
    from ..publish.build_release import BuildReport

DATA_OPTION = click.option("--data", "data_dir", type=click.Path(file_okay=False, path_type=Path),
                           default="data", show_default=True, envvar="RISKAPI_DATA",
                           help="Folder with the source CSV files.")
SITE_OPTION = click.option("--site", "site_dir", type=click.Path(file_okay=False, path_type=Path),
                           default="site", show_default=True, envvar="RISKAPI_SITE",
                           help="Folder that holds the releases and the `current` link.")
STRICT_OPTION = click.option("--strict", is_flag=True, help="Treat data warnings as errors.")
KEYS_OPTION = click.option("--keys", "keys_file", type=click.Path(dir_okay=False, path_type=Path),
                           default="keys/keys.csv", show_default=True, envvar="RISKAPI_KEYS",
                           help="The keys file (CSV: user, key, models, active), outside the served tree.")


def options(*decorators: Callable[[Callable], Callable]) -> Callable[[Callable], Callable]:
    """Return several click options as one decorator, in the order written (options commands share)."""
    def apply(command: Callable) -> Callable:
        for option in reversed(decorators):
            command = option(command)
        return command
    return apply


class RiskApiGroup(click.Group):
    """The one place where errors meet the user (exit codes: 0 ok, 1 failure, 2 usage).

    A RiskApiError prints its message; an OSError (a full disk, a permission) prints the path and
    the reason; anything else is a bug and says so. Tracebacks only with -v."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.exceptions.Exit, click.exceptions.Abort, click.UsageError):
            raise
        except click.ClickException:
            _traceback_if_verbose(ctx)
            raise
        except BrokenPipeError as error:
            if not reader_went_away():
                raise click.ClickException(describe_os_error(error)) from error  # a socket's, not ours
            # `riskapi releases | head -1`: the reader has what it wanted; end quietly, as a listing ends
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            raise click.exceptions.Exit(0) from None
        except OSError as error:
            _traceback_if_verbose(ctx)
            raise click.ClickException(describe_os_error(error)) from error
        except Exception as error:
            if out_of_memory(error):
                _traceback_if_verbose(ctx)
                raise click.ClickException(f"out of memory ({type(error).__name__}: {error or 'no room left'}): "
                                           "nothing was published or changed; raise the memory limit (ulimit -v, "
                                           "the container's) and run it again") from error
            _traceback_if_verbose(ctx)
            raise click.ClickException(f"internal error: {type(error).__name__}: {error}; "
                                       "run with -v for the traceback") from error


def reader_went_away() -> bool:
    """Return whether our own standard output is a pipe whose reader has closed it (poll says POLLERR), as
    opposed to a broken pipe of a socket or a child process."""
    try:
        descriptor = sys.stdout.fileno()
    except (AttributeError, ValueError, OSError):
        return False
    poller = select.poll()
    poller.register(descriptor, select.POLLOUT)
    return any(events & select.POLLERR for _, events in poller.poll(0))


def out_of_memory(error: Exception) -> bool:
    """Return whether an error is the process running out of memory, however the library says it (Python's
    MemoryError, a thread that cannot get its stack, orjson's allocation failure, a shared library that
    cannot be mapped, Arrow's failures to allocate or to start a thread)."""
    arrow = type(error).__module__.startswith("pyarrow")
    return isinstance(error, MemoryError) or (
        isinstance(error, (RuntimeError, ValueError, ImportError)) or arrow) and any(
            words in str(error).lower() for words in ("can't start new thread", "memory allocation failed",
                                                      "not enough memory", "failed to map segment",
                                                      "failed to launch worker thread", "bad_alloc"))


def describe_os_error(error: OSError) -> str:
    """Return `site/releases: No space left on device`: the path and the reason, without the errno noise; a file of
    a release that a prune removed while the command read it, said as such."""
    reason = error.strerror or str(error)
    if error.filename is None:
        return reason
    pruned = pruned_meanwhile(error)
    if pruned:
        return (f"{error.filename}: {reason}: release {pruned} was removed (pruned by a build) while this command "
                "read it; nothing was changed: run it again")
    return f"{error.filename}: {reason}"


def pruned_meanwhile(error: OSError) -> str | None:
    """Return the release whose folder went while it was read (a prune), where `error` is a file of it not found."""
    if not isinstance(error, FileNotFoundError) or not isinstance(error.filename, (str, os.PathLike)):
        return None
    path = Path(os.fsdecode(error.filename))
    folder = next((p for p in [path, *path.parents] if p.parent.name == RELEASES), None)
    return folder.name if folder is not None and not folder.exists() else None


def _traceback_if_verbose(ctx: click.Context) -> None:
    if (ctx.obj or {}).get("verbose"):
        traceback.print_exc()


def _stages(report: BuildReport) -> str:
    return ", ".join(f"{stage} {seconds:.2f}s" for stage, seconds in report.stages.items())


def _more_verbose(ctx: click.Context, _param: click.Parameter, count: int) -> None:
    ctx.ensure_object(dict)
    ctx.obj["verbose"] = ctx.obj.get("verbose", 0) + count


def _quiet(ctx: click.Context, _param: click.Parameter, quiet: bool) -> None:
    ctx.ensure_object(dict)
    ctx.obj["quiet"] = ctx.obj.get("quiet", False) or quiet


def verbosity_options() -> list[click.Option]:
    """Return -v and -q, taken before the command (`riskapi -q build`) and after it (`riskapi build -q`) alike."""
    return [click.Option(["-v", "--verbose"], count=True, expose_value=False, callback=_more_verbose,
                         help="More output; -v also shows tracebacks."),
            click.Option(["-q", "--quiet"], is_flag=True, expose_value=False, callback=_quiet,
                         help="Print errors only.")]


@click.group(cls=RiskApiGroup, context_settings={"help_option_names": ["-h", "--help"]}, params=verbosity_options())
def main() -> None:
    """Build and publish the country risk API as static files."""


def accept_verbosity_after(group: click.Group) -> None:
    """Give every command -v and -q of its own, so `riskapi build -q` means `riskapi -q build`."""
    for command in group.commands.values():
        if isinstance(command, click.Group):
            accept_verbosity_after(command)
        else:
            command.params += verbosity_options()


def _say(ctx: click.Context, message: str, level: int = 0) -> None:
    if not ctx.obj["quiet"] and ctx.obj["verbose"] >= level:
        click.echo(message)


def _warnings(ctx: click.Context, report: BuildReport) -> None:
    if report.warnings and not ctx.obj["quiet"]:
        click.echo(f"{len(report.warnings)} warning(s) (--strict makes them errors):", err=True)
        for warning in report.warnings[: None if ctx.obj["verbose"] else 10]:
            click.echo(f"  {warning}", err=True)
        if len(report.warnings) > 10 and not ctx.obj["verbose"]:
            click.echo(f"  … and {len(report.warnings) - 10} more (-v lists them all)", err=True)


def _site_url(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """Return an http(s) address without a trailing slash, path allowed (a site served under a prefix)."""
    if value is None:
        return None
    parsed = urllib.parse.urlsplit(value)
    if parsed.scheme not in ("http", "https") or not parsed.netloc or parsed.query or parsed.fragment:
        raise click.BadParameter(f"{value!r} is not a site address: write it like https://risk.example.com "
                                 "or http://127.0.0.1:8080")
    return value.rstrip("/")




def _cache_control(_ctx: click.Context, param: click.Parameter, value: str) -> str:
    """Return a Cache-Control value as nginx can carry it: directives only (a `$` would be an nginx variable)."""
    if not re.fullmatch(r'[A-Za-z0-9 ,=\-_."]+', value):
        raise click.BadParameter(f"{value!r} is not a Cache-Control value: use directives such as "
                                 "'public, max-age=300'", param=param)
    return value


def command_table() -> list[tuple[str, str]]:
    """Yield every riskapi command with its one-line help, in the order `riskapi --help` lists them (for the
    reference page)."""
    def walk(group: click.Group, prefix: str) -> Iterator[tuple[str, str]]:
        for name, command in sorted(group.commands.items()):
            if isinstance(command, click.Group):
                yield from walk(command, f"{prefix} {name}")
            else:
                yield f"{prefix} {name}", command.get_short_help_str(limit=120)
    return list(walk(main, "riskapi"))


def warn_of_keys_problems(keys_read: KeysFile) -> None:
    """Warn of a keys file's bad lines (summarised), on stderr: they serve no key; the command itself went through."""
    if keys_read.warning():
        click.echo(f"warning: {keys_read.warning()}", err=True)
