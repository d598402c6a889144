"""The ``feed`` channel: an Atom 1.0 file per digest that any feed reader can follow (docs/channels.md).

Each delivery adds one ``<entry>`` per new paper to the feed at ``path`` (a template with
``{digest}``, such as ``feeds/{digest}.atom``) and keeps the newest ``max_entries``: the new
papers first, then the entries already in the file. The file is rewritten atomically (a
temporary file and a rename), so a reader never sees half a feed.

An entry's ``<id>`` is the paper's arXiv abstract URL (or ``urn:watcher:paper:…`` for a paper
without an arXiv id): the same for a paper however often the feed is rewritten, so a reader
never shows one twice. The entry carries the title, authors, categories, ``<published>``, links
to the abstract and PDF, the TL;DR as ``<summary>``, and as ``<content type="html">`` (the template ``feed_entry.html``,
which a ``templates_dir`` may replace) the TL;DR, the reasons it matched, the shortened abstract
and the digest's rating links — every piece of paper text escaped, so a hostile title stays text in any reader. The feed links itself
(``rel="self"``) and, with ``[web] base_url``, the digest's page in the web inbox.

A file that cannot be written, or an existing file that is not an Atom feed, fails this channel
only (the ledger keeps the papers for the next run); the existing file is never overwritten
with less than it held.

:func:`feed_path` and :func:`read_feed` give the web server's ``/feeds/{digest}.atom`` its
answer in one call.
"""

from __future__ import annotations

import hashlib
import xml.etree.ElementTree as ET
from datetime import datetime, timezone
from pathlib import Path

from ..errors import DeliveryError, InputError, RenderError
from ..formats.xmlsafe import check_prolog
from ..present.latex import title_text
from ..present.links import digest_page, feed_url
from ..models import Digest, Match, Paper
from ..present.render import call_macro, safe_url, xml_text
from ..present.tldr import tldr_of
from ..kinds import Kind, option, options
from .base import Channel, folder_problem, path_problems
from .file import atomic_write

ATOM = "http://www.w3.org/2005/Atom"
MAX_AUTHORS = 20  # names per entry; more become "et al."

ET.register_namespace("", ATOM)


def _q(tag: str) -> str:
    return f"{{{ATOM}}}{tag}"


_text = xml_text


def _stamp(dt: datetime) -> str:
    return dt.astimezone(timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")


def entry_id(paper: Paper) -> str:
    """The entry's permanent id: the arXiv abstract URL, else a URN from the paper's key."""
    if paper.arxiv_id:
        return paper.abs_url
    return "urn:watcher:paper:" + hashlib.sha256(paper.key.encode("utf-8")).hexdigest()[:32]


def entry_html(m: Match, links=None, user_dir=None) -> str:
    """The entry's HTML content (the template ``feed_entry.html``, the user's ``templates_dir``
    first): TL;DR, reasons, shortened abstract, the venue and links (abstract, PDF, DOI; the
    digest's rating links and the paper's page in the web inbox when it has them), all escaped."""
    return call_macro("feed_entry.html", "content", user_dir, m, links)


def build_entry(m: Match, delivered: datetime, links=None, user_dir=None) -> ET.Element:
    """One ``<entry>`` for a matched paper delivered at ``delivered``; ``<published>`` is the
    first version's submission, else the day a listing announced it, else the delivery."""
    p = m.paper
    entry = ET.Element(_q("entry"))
    ET.SubElement(entry, _q("id")).text = entry_id(p)
    ET.SubElement(entry, _q("title"), type="text").text = _text(title_text(p.title)) or "(untitled)"
    ET.SubElement(entry, _q("updated")).text = _stamp(delivered)
    ET.SubElement(entry, _q("published")).text = _stamp(p.entry_date or delivered)
    names = [_text(a) for a in p.authors if _text(a)]
    for name in names[:MAX_AUTHORS]:
        ET.SubElement(ET.SubElement(entry, _q("author")), _q("name")).text = name
    if len(names) > MAX_AUTHORS:
        ET.SubElement(ET.SubElement(entry, _q("author")), _q("name")).text = \
            f"et al. ({len(names)} authors)"
    if safe_url(p.abs_url):
        ET.SubElement(entry, _q("link"), rel="alternate", type="text/html", href=safe_url(p.abs_url))
    if safe_url(p.pdf_url):
        ET.SubElement(entry, _q("link"), rel="related", type="application/pdf", href=safe_url(p.pdf_url))
    if safe_url(p.doi_url) and p.doi_url != p.abs_url:  # as arXiv's own Atom links a DOI
        ET.SubElement(entry, _q("link"), rel="related", title="doi", href=safe_url(p.doi_url))
    for category in p.categories:
        if _text(category):
            ET.SubElement(entry, _q("category"), term=_text(category))
    if _text(tldr_of(m)):  # none without an abstract (the title again would say nothing)
        ET.SubElement(entry, _q("summary"), type="text").text = _text(tldr_of(m))
    ET.SubElement(entry, _q("content"), type="html").text = entry_html(m, links, user_dir)
    return entry


def existing_entries(data: bytes | None, origin: str) -> list[ET.Element]:
    """The ``<entry>`` elements of a feed file watcher wrote before; InputError when it is not
    an Atom feed (a DOCTYPE is refused, as for every XML watcher reads)."""
    if not data or not data.strip():
        return []
    try:
        root_name = check_prolog(data, origin)
        root = ET.fromstring(data)
    except ET.ParseError as e:
        raise InputError(f"{origin}: not well-formed XML ({e})") from e
    if root.tag != _q("feed"):
        raise InputError(f"{origin}: not an Atom feed (root element {root_name or root.tag!r})")
    return root.findall(_q("entry"))


def merge_feed(digest: Digest, old: list[ET.Element], delivered: datetime,
               max_entries: int, self_url: str | None = None, web_url: str | None = None,
               user_dir=None) -> str:
    """The feed document: ``digest``'s papers first, then ``old`` entries with other ids, the
    first ``max_entries`` kept. ``self_url`` is where the feed is read (``rel="self"``);
    ``web_url`` the web inbox, whose page of the digest is the feed's ``rel="alternate"``."""
    feed = ET.Element(_q("feed"))
    ET.SubElement(feed, _q("id")).text = "urn:watcher:feed:" + _text(digest.name)
    ET.SubElement(feed, _q("title"), type="text").text = _text(digest.title)
    if safe_url(self_url) or (self_url or "").startswith("file:"):
        ET.SubElement(feed, _q("link"), rel="self", type="application/atom+xml", href=self_url)
    if web_url and safe_url(digest_page(web_url, digest.name)):
        ET.SubElement(feed, _q("link"), rel="alternate", type="text/html",
                      href=digest_page(web_url, digest.name))
    ET.SubElement(feed, _q("subtitle"), type="text").text = f"New papers of the watcher digest {_text(digest.name)}"
    ET.SubElement(feed, _q("updated")).text = _stamp(delivered)
    ET.SubElement(ET.SubElement(feed, _q("author")), _q("name")).text = "watcher"
    ET.SubElement(feed, _q("generator")).text = "watcher"
    new = [build_entry(m, delivered, digest.links, user_dir) for m in digest.matches]
    seen = set()
    kept = []
    for entry in [*new, *old]:
        ident = entry.findtext(_q("id"))
        if ident in seen:
            continue
        seen.add(ident)
        kept.append(entry)
    feed.extend(kept[:max_entries])
    ET.indent(feed)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(feed, encoding="unicode") + "\n"


def feed_path(cfg, base_dir: Path, digest: str) -> Path:
    """Where the feed channel ``cfg`` keeps the feed of ``digest``."""
    return base_dir / cfg.options.path.format(digest=digest, ext="atom", format="atom")


def feed_file(config, digest: str) -> Path | None:
    """Where the first ``feed`` channel of ``digest`` keeps its feed, or None when the digest
    is unknown or has no feed channel."""
    dcfg = config.digests.get(digest)
    if dcfg is None:
        return None
    for name in dcfg.channels:
        cfg = config.channels[name]
        if cfg.type == "feed":
            return feed_path(cfg, config.base_dir, digest)
    return None


def read_feed(config, digest: str) -> bytes | None:
    """The Atom feed of ``digest`` as last written by its first ``feed`` channel, or None when
    the digest has no feed channel or nothing was delivered to it yet (for ``/feeds/{digest}.atom``)."""
    path = feed_file(config, digest)
    if path is None:
        return None
    try:
        return path.read_bytes()
    except (FileNotFoundError, NotADirectoryError):
        return None


class FeedChannel(Channel):
    """Adds the digest's papers to an Atom feed file."""

    path: Path

    def formats(self) -> tuple[str, ...]:
        """None: the feed is built from the digest itself."""
        return ()

    def send(self, digest: Digest, rendered: dict[str, str], now: datetime | None = None) -> None:
        """Merge the new papers into the feed and write it atomically; DeliveryError otherwise."""
        name = self.cfg.name
        self.path = path = feed_path(self.cfg, self.ctx.base_dir, digest.name)
        try:
            data = path.read_bytes()
        except (FileNotFoundError, NotADirectoryError):  # a first delivery (or a path the
            data = None  # write below refuses, saying why)
        except OSError as e:
            raise DeliveryError(f"channel {name}: cannot read {path}: {e.strerror}") from e
        try:
            old = existing_entries(data, str(path))
        except InputError as e:
            raise DeliveryError(f"channel {name}: {e}; move the file away and the next run "
                                "starts a new feed") from e
        web = self.ctx.web_url
        try:
            body = merge_feed(digest, old, now or self.ctx.now or datetime.now(timezone.utc), self.cfg.options.max_entries,
                              feed_url(web, digest.name) if web else path.resolve().as_uri(), web,
                              self.ctx.templates_dir)
        except RenderError as e:
            raise DeliveryError(f"channel {name}: {e}") from e
        try:
            atomic_write(path, body)
        except OSError as e:
            raise DeliveryError(f"channel {name}: cannot write {path}: {e.strerror}") from e


__all__ = ["FeedChannel", "build_entry", "entry_id", "feed_path", "merge_feed", "read_feed"]


PATH_FIELDS = ("digest",)  # one file a reader follows: no {date}


def _validate(r, where: str, v: dict) -> None:
    r.path_template(f"{where}.path", v["path"], PATH_FIELDS)
    if v["max_entries"] < 1:
        raise r.fail(f"{where}.max_entries", f"must be at least 1, got {v['max_entries']}")


def check_paths(config, where: str, ch) -> list[str]:
    """A feed channel writes its file under its path's folder, made when missing: each
    digest's folder must pass :func:`~watcher.deliver.base.folder_problem`, and its path must
    not be an existing folder. One line per folder."""
    def problem(path: Path) -> str | None:
        return f"{path} is a folder, not a feed file" if path.is_dir() else folder_problem(path.parent)

    return path_problems(config, where, ch, lambda d: [problem(feed_path(ch, config.base_dir, d.name))])


@options
class FeedOptions:
    path: str = option(help="where the feed is written, relative to the config's folder; "
                            "`{digest}` is the one field (one file a reader follows: no `{date}`)")
    max_entries: int = option(200, help="entries the feed keeps, newest first (at least 1)")


KIND = Kind("feed", FeedChannel, FeedOptions, _validate, check=check_paths)
